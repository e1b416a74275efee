//! In-engine baselines, each a pure function of the frame its seat gets.
//!
//! * `hold`: every ant stays.
//! * `forage`: every ant walks toward the nearest food in view (a
//!   breadth-first search over squares not known to be water), or toward
//!   the nearest square never seen when no food is in view, and otherwise
//!   wanders; it never moves onto a square one of its own ants holds or has
//!   already claimed this turn, so it never collides with itself. An ant
//!   next to food stays and gathers it.

use super::geometry::{Dir, Torus};
use super::orders::Orders;
use super::protocol::Frame;
use super::state::Ants;
use crate::grid;

/// The baselines, as the registry lists them.
pub const NAMES: [&str; 2] = ["hold", "forage"];

/// The orders baseline `name` gives `seat` now; `None` for another name.
pub fn orders(game: &Ants, name: &str, seat: usize) -> Option<Orders> {
    let frame = game.frame(seat);
    match name {
        "hold" => Some(Orders(vec![Dir::Stay; frame.mine.len()])),
        "forage" => Some(forage(&frame)),
        _ => None,
    }
}

fn forage(frame: &Frame) -> Orders {
    let t = Torus {
        rows: frame.rows,
        cols: frame.cols,
    };
    let known: Vec<u8> = frame.map.iter().flat_map(|row| row.bytes()).collect();
    if known.len() != t.len() {
        return Orders(vec![Dir::Stay; frame.mine.len()]);
    }
    let mut food = vec![false; t.len()];
    for &[r, c] in &frame.food {
        food[t.square(r, c)] = true;
    }
    let targets: Vec<usize> = if frame.food.is_empty() {
        (0..t.len()).filter(|&sq| known[sq] == b'?').collect()
    } else {
        frame.food.iter().map(|&[r, c]| t.square(r, c)).collect()
    };
    let dist = distances(t, &known, &targets);
    let mut held: Vec<bool> = vec![false; t.len()];
    for &[r, c] in &frame.mine {
        held[t.square(r, c)] = true;
    }
    let turn = frame.turn as usize;
    let mut orders = Vec::with_capacity(frame.mine.len());
    for (i, &[r, c]) in frame.mine.iter().enumerate() {
        let here = t.square(r, c);
        let open = |sq: usize| known[sq] != b'%' && !food[sq] && !held[sq];
        let moves = Dir::MOVES.map(|d| (d, t.step(here, d)));
        let toward = moves
            .iter()
            .filter(|&&(_, sq)| open(sq) && dist[sq] < dist[here])
            .min_by_key(|&&(_, sq)| dist[sq]);
        let gathering = !frame.food.is_empty() && dist[here] <= 1;
        let choice = if gathering {
            None
        } else if let Some(&(d, sq)) = toward {
            Some((d, sq))
        } else {
            // Wander: a direction that changes every few turns, per ant.
            (0..4)
                .map(|k| moves[(turn / 8 + i + k) % 4])
                .find(|&(_, sq)| open(sq))
        };
        match choice {
            Some((d, sq)) => {
                held[sq] = true;
                orders.push(d);
            }
            None => orders.push(Dir::Stay),
        }
    }
    Orders(orders)
}

/// Steps from every square to the nearest target, over squares not known
/// to be water; `u32::MAX` where none is reachable.
fn distances(t: Torus, known: &[u8], targets: &[usize]) -> Vec<u32> {
    let (mut dist, mut queue) = (Vec::new(), Vec::new());
    let open = |sq: usize| known[sq] != b'%';
    let targets = targets.iter().copied();
    grid::bfs(t, targets, open, grid::UNREACHABLE, &mut dist, &mut queue);
    dist
}
