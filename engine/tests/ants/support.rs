//! Hand-made boards and a driver that plays reply lines through the
//! public `Game` API, as the runner would.

use arena_engine::Game;
use arena_engine::ants::{Ants, Map, Params};

/// A map file of `rows` (each a string of squares) with `players` seats
/// and `shift`.
pub fn text(players: usize, shift: (i64, i64), rows: &[&str]) -> String {
    let mut t = format!(
        "rows {}\ncols {}\nplayers {players}\nshift {} {}\n",
        rows.len(),
        rows[0].chars().count(),
        shift.0,
        shift.1
    );
    for r in rows {
        t.push_str("m ");
        t.push_str(r);
        t.push('\n');
    }
    t
}

/// A match on `rows` with no random food.
pub fn board(players: usize, shift: (i64, i64), rows: &[&str]) -> Ants {
    with_params(
        Params {
            food_rate: 0,
            ..Params::standard(players)
        },
        shift,
        rows,
    )
}

/// A match on `rows` with `params`.
pub fn with_params(params: Params, shift: (i64, i64), rows: &[&str]) -> Ants {
    let map = Map::parse(&text(params.players, shift, rows)).expect("a valid hand-made map");
    Ants::new(params, map, 1).expect("a valid hand-made match")
}

/// The reply line carrying `letters`.
pub fn reply(letters: &str) -> String {
    format!(r#"{{"orders":"{letters}"}}"#)
}

/// Plays one turn: `letters[seat]` goes through `parse_action` for every
/// due seat (and must parse); seats not due get `None`.
pub fn turn(game: &mut Ants, letters: &[&str]) -> Option<arena_engine::Outcome> {
    let actions: Vec<_> = (0..game.seats())
        .map(|seat| {
            game.is_due(seat).then(|| {
                game.parse_action(seat, reply(letters[seat]).as_bytes())
                    .unwrap_or_else(|e| panic!("seat {seat}: {e}"))
            })
        })
        .collect();
    game.step(&actions)
}

/// `[row, col]` of `seat`'s ants in mine order.
pub fn mine(game: &Ants, seat: usize) -> Vec<[usize; 2]> {
    let t = game.torus();
    game.mine(seat)
        .map(|sq| {
            let (r, c) = t.row_col(sq);
            [r, c]
        })
        .collect()
}

/// The frame `seat` would receive now, parsed.
pub fn frame(game: &Ants, seat: usize) -> serde_json::Value {
    let mut out = Vec::new();
    game.write_frame(seat, &mut out);
    assert_eq!(out.last(), Some(&b'\n'));
    serde_json::from_slice(&out).expect("a frame is one JSON line")
}
