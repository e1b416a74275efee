//! A random player: picks a random legal action cheaply, for benchmarks,
//! property tests and as an opponent of last resort.

use super::action::{Action, Direction};
use super::board::{Generals, Kind};
use crate::rng::SplitMix64;

/// A random legal action for `player`: a move (whole or half) from a random
/// owned cell that can move, now and then a castle build where one is
/// affordable, or a pass when a few samples find nothing.
pub fn random_legal_action(game: &Generals, player: usize, rng: &mut SplitMix64) -> Action {
    let owned = game.owned_cells(player);
    if owned.is_empty() {
        return Action::PASS;
    }
    for _ in 0..8 {
        let draw = rng.next_u64();
        let cell = owned[((draw >> 32) % owned.len() as u64) as usize] as usize;
        let army = game.army[cell];
        if draw & 0xF == 0
            && game.kind[cell] == Kind::Plain
            && army >= game.build_cost(player, cell)
        {
            let (row, col) = (cell / game.width, cell % game.width);
            return Action::build(row as i64, col as i64);
        }
        if army < 2 {
            continue;
        }
        let dir = Direction::ALL[((draw >> 4) & 3) as usize];
        let (row, col) = ((cell / game.width) as i64, (cell % game.width) as i64);
        let (dr, dc) = dir.delta();
        if let Some(dst) = game.cell_at(row + dr, col + dc)
            && game.kind[dst] != Kind::Mountain
        {
            return Action::movement(row, col, dir, (draw >> 6) & 1 == 1);
        }
    }
    Action::PASS
}
