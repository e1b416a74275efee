//! A random player: picks a random legal action cheaply, for benchmarks,
//! property tests and as an opponent of last resort.

use super::action::{Action, Direction};
use super::board::{Generals, Kind};
use crate::rng::SplitMix64;

/// A random legal action for `player`: from a random starting point in its
/// owned cells, the first cell that can move sends its army (whole or half) in
/// the first open direction from a random one; one draw in sixteen builds a
/// castle there instead when it is affordable. A pass only when nothing can move.
///
/// One random draw per call: the scan, not rejection sampling, finds a mover,
/// so thinly spread armies do not make it slow.
pub fn random_legal_action(game: &Generals, player: usize, rng: &mut SplitMix64) -> Action {
    let owned = game.owned_cells(player);
    if owned.is_empty() {
        return Action::PASS;
    }
    let draw = rng.next_u64();
    // Multiply-shift maps the high half onto the list without a division.
    let first = (((draw >> 32) * owned.len() as u64) >> 32) as usize;
    let wants_build = draw & 0xF == 0;
    let half = (draw >> 4) & 1 == 1;
    let first_dir = ((draw >> 5) & 3) as usize;
    let (head, tail) = owned.split_at(first);
    for &cell in tail.iter().chain(head) {
        let cell = cell as usize;
        let army = game.army[cell];
        // The base price bounds the real one from below: check it before
        // walking the structures for the surcharge.
        if wants_build
            && army >= game.params.build_base_cost
            && game.kind[cell] == Kind::Plain
            && army >= game.build_cost(player, cell)
        {
            let (row, col) = (cell / game.width, cell % game.width);
            return Action::build(row as i64, col as i64);
        }
        if army < 2 {
            continue;
        }
        let (row, col) = ((cell / game.width) as i64, (cell % game.width) as i64);
        for turn in 0..4 {
            let dir = Direction::ALL[(first_dir + turn) & 3];
            let (dr, dc) = dir.delta();
            if let Some(dst) = game.cell_at(row + dr, col + dc)
                && game.kind[dst] != Kind::Mountain
            {
                return Action::movement(row, col, dir, half);
            }
        }
    }
    Action::PASS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generals::{ActionKind, Params};

    #[test]
    fn random_play_only_makes_legal_moves() {
        for seed in 0..20 {
            let mut game = Generals::from_seed(seed, Params::default());
            let mut rng = SplitMix64::new(seed);
            while !game.is_over() {
                let actions = [0, 1].map(|p| random_legal_action(&game, p, &mut rng));
                for (p, a) in actions.iter().enumerate() {
                    if a.kind == ActionKind::Move {
                        let src = game.cell_at(a.row, a.col).expect("source on the board");
                        assert_eq!(usize::from(game.owner[src]), p + 1);
                        assert!(game.army[src] >= 2);
                    }
                }
                game.step_pair(actions);
            }
        }
    }
}
