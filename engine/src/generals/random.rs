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
/// so thinly spread armies do not make it slow. The price is a bias: a mover
/// right after cells that cannot move is picked more often than others, which
/// a benchmark or test opponent does not mind.
#[inline]
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
    let first_dir = ((draw >> 5) & 3) as u32;
    let movement = |cell: usize| {
        // The first open direction from `first_dir` on, turning 0→1→2→3→0.
        let open = u32::from(game.open[cell]);
        let rotated = ((open | open << 4) >> first_dir) & 0xF;
        let dir = Direction::ALL[((first_dir + rotated.trailing_zeros()) & 3) as usize];
        let (row, col) = game.coords(cell);
        Action::movement(row as i64, col as i64, dir, half)
    };
    // The common case without a data-dependent branch: one of the first two
    // cells of the walk can move (about one cell in five cannot, so a branch
    // per cell would mispredict often). This picks what the walk below would.
    if !wants_build {
        let second = if first + 1 == owned.len() {
            0
        } else {
            first + 1
        };
        let (a, b) = (owned[first] as usize, owned[second] as usize);
        let (a_moves, b_moves) = (can_move(game, a), can_move(game, b));
        if a_moves | b_moves {
            return movement(std::hint::select_unpredictable(a_moves, a, b));
        }
    }
    // The walk: from `first` on, wrapping once, the first cell that can build
    // (when a build is wanted) or move.
    let mut index = first;
    loop {
        let cell = owned[index] as usize;
        // The base price bounds the real one from below: check it before
        // walking the structures for the surcharge.
        if wants_build
            && game.army[cell] >= game.params.build_base_cost
            && can_build(game, player, cell)
        {
            let (row, col) = game.coords(cell);
            return Action::build(row as i64, col as i64);
        }
        if can_move(game, cell) {
            return movement(cell);
        }
        index += 1;
        if index == owned.len() {
            index = 0;
        }
        if index == first {
            return Action::PASS;
        }
    }
}

/// A cell with an army to send and somewhere to send it.
#[inline]
fn can_move(game: &Generals, cell: usize) -> bool {
    (game.army[cell] >= 2) & (game.open[cell] != 0)
}

/// Whether `player` may build on its `cell` now. Rarely reached, so kept out
/// of line: the random player's common path stays small enough to inline.
#[cold]
#[inline(never)]
fn can_build(game: &Generals, player: usize, cell: usize) -> bool {
    game.kind[cell] == Kind::Plain && game.army[cell] >= game.build_cost(player, cell)
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
