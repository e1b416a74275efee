//! The wire: the handshake, the frame a seat reads each turn, the reply it
//! writes, and the state line `arena replay dump` prints.
//!
//! Frames speak in relative owners (0 is the reader, `k` the seat
//! `(you + k) mod players`); the dump speaks in absolute seats.

use serde::Serialize;
use serde_json::Value;

use super::orders::Orders;
use super::state::{Ants, Death, Razing};
use crate::game::Malformed;

/// The line a seat reads once, before its first frame.
#[derive(Serialize)]
struct Handshake {
    game: &'static str,
    you: usize,
    players: usize,
    rows: usize,
    cols: usize,
    max_turns: u32,
    attack_radius2: u32,
    gather_radius2: u32,
    view_radius2: u32,
    /// Hundredths of a food per colony per turn.
    food_rate: u32,
}

/// One turn's observation for seat `you`.
#[derive(Serialize)]
pub(crate) struct Frame {
    /// The turn about to be played, from 1.
    pub turn: u32,
    pub max_turns: u32,
    pub you: usize,
    pub players: usize,
    pub rows: usize,
    pub cols: usize,
    pub attack_radius2: u32,
    pub gather_radius2: u32,
    pub view_radius2: u32,
    /// `?` never seen, `%` water, `.` land in view, `,` land seen before.
    pub map: Vec<String>,
    /// `[row, col, owner]` of every ant in view.
    pub ants: Vec<[usize; 3]>,
    /// The reader's ants in mine order: letter `i` of the reply moves `mine[i]`.
    pub mine: Vec<[usize; 2]>,
    /// Food in view.
    pub food: Vec<[usize; 2]>,
    /// Standing hills in view, and every standing hill of the reader.
    pub hills: Vec<[usize; 3]>,
    /// Food in the reader's hive.
    pub hive: u32,
    /// Every seat's score, in relative order.
    pub scores: Vec<i64>,
}

impl Ants {
    /// Seat `seat`'s owner number for `owner`.
    fn relative(&self, seat: usize, owner: usize) -> usize {
        let seats = self.params.players;
        (owner + seats - seat % seats) % seats
    }

    /// The observation `seat` is sent before the next turn.
    pub(crate) fn frame(&self, seat: usize) -> Frame {
        let t = self.torus;
        let view = self.visible(seat);
        let seen = self.seen(seat);
        let in_view = |sq: usize| view.get(sq).copied().unwrap_or(false);
        let map = (0..t.rows)
            .map(|r| {
                (0..t.cols)
                    .map(|c| {
                        let sq = t.square(r, c);
                        match (seen.get(sq).copied().unwrap_or(false), self.is_water(sq)) {
                            (false, _) => '?',
                            (true, true) => '%',
                            (true, false) if in_view(sq) => '.',
                            (true, false) => ',',
                        }
                    })
                    .collect()
            })
            .collect();
        let rc = |sq: usize| t.row_col(sq);
        let ants = self
            .ants
            .iter()
            .filter(|a| in_view(a.square))
            .map(|a| {
                let (r, c) = rc(a.square);
                [r, c, self.relative(seat, a.owner)]
            })
            .collect();
        let mine = self
            .mine(seat)
            .map(|sq| {
                let (r, c) = rc(sq);
                [r, c]
            })
            .collect();
        let food = self
            .food
            .iter()
            .filter(|&&f| in_view(f))
            .map(|&f| {
                let (r, c) = rc(f);
                [r, c]
            })
            .collect();
        let mut hills: Vec<(usize, usize)> = self
            .hills
            .iter()
            .filter(|h| h.razed.is_none() && (h.owner == seat || in_view(h.square)))
            .map(|h| (h.square, h.owner))
            .collect();
        hills.sort_unstable();
        let seats = self.params.players;
        Frame {
            turn: self.turn.saturating_add(1),
            max_turns: self.params.max_turns,
            you: seat,
            players: seats,
            rows: t.rows,
            cols: t.cols,
            attack_radius2: self.params.attack_radius2,
            gather_radius2: self.params.gather_radius2,
            view_radius2: self.params.view_radius2,
            map,
            ants,
            mine,
            food,
            hills: hills
                .into_iter()
                .map(|(sq, owner)| {
                    let (r, c) = rc(sq);
                    [r, c, self.relative(seat, owner)]
                })
                .collect(),
            hive: self.hives.get(seat).copied().unwrap_or(0),
            scores: (0..seats)
                .map(|k| self.scores[(seat + k) % seats])
                .collect(),
        }
    }
}

/// Appends `value` as one JSON line; nothing when it cannot be written.
fn write_line<T: Serialize>(value: &T, out: &mut Vec<u8>) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_ok() {
        out.push(b'\n');
    } else {
        out.truncate(start);
    }
}

/// Appends the handshake line of `seat`.
pub fn write_handshake(game: &Ants, seat: usize, out: &mut Vec<u8>) {
    let p = &game.params;
    let handshake = Handshake {
        game: super::ENTRY.name,
        you: seat,
        players: p.players,
        rows: game.torus.rows,
        cols: game.torus.cols,
        max_turns: p.max_turns,
        attack_radius2: p.attack_radius2,
        gather_radius2: p.gather_radius2,
        view_radius2: p.view_radius2,
        food_rate: p.food_rate,
    };
    write_line(&handshake, out);
}

/// Appends the frame of `seat`.
pub fn write_frame(game: &Ants, seat: usize, out: &mut Vec<u8>) {
    write_line(&game.frame(seat), out);
}

/// Reads one reply line: exactly `{"orders": "..."}` with one of
/// `N E S W -` for each of the seat's ants now. Anything else is malformed.
pub fn parse_reply(game: &Ants, seat: usize, line: &[u8]) -> Result<Orders, Malformed> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| Malformed::new(format!("not JSON: {e}")))?;
    let Value::Object(reply) = value else {
        return Err(Malformed::new("the reply is not a JSON object"));
    };
    if reply.len() != 1 {
        return Err(Malformed::new("the reply must hold exactly the key orders"));
    }
    let Some(Value::String(text)) = reply.get("orders") else {
        return Err(Malformed::new("orders is missing or not a string"));
    };
    let orders = Orders::from_letters(text)
        .ok_or_else(|| Malformed::new("orders may hold only N, E, S, W and -"))?;
    let ants = game.ant_count(seat);
    if orders.0.len() != ants {
        return Err(Malformed::new(format!(
            "{} orders for {ants} ants",
            orders.0.len()
        )));
    }
    Ok(orders)
}

/// A hill as the dump prints it.
#[derive(Serialize)]
struct HillLine {
    row: usize,
    col: usize,
    owner: usize,
    razed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    razed_turn: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<usize>,
}

/// The state line of `arena replay dump`, in absolute seats.
#[derive(Serialize)]
struct StateLine<'a> {
    turn: u32,
    rows: usize,
    cols: usize,
    players: usize,
    /// `%` water, `.` land.
    water: Vec<String>,
    ants: Vec<[usize; 3]>,
    food: Vec<[usize; 2]>,
    hills: Vec<HillLine>,
    scores: &'a [i64],
    hives: &'a [u32],
    forfeited: &'a [bool],
    /// The turn just played.
    deaths: &'a [Death],
    razings: &'a [Razing],
}

/// The dump's state line.
pub fn state_value(game: &Ants) -> Value {
    let t = game.torus;
    let rc = |sq: usize| t.row_col(sq);
    let line = StateLine {
        turn: game.turn,
        rows: t.rows,
        cols: t.cols,
        players: game.params.players,
        water: game
            .water
            .0
            .chunks(t.cols.max(1))
            .map(|row| row.iter().map(|&w| if w { '%' } else { '.' }).collect())
            .collect(),
        ants: game
            .ants
            .iter()
            .map(|a| {
                let (r, c) = rc(a.square);
                [r, c, a.owner]
            })
            .collect(),
        food: game
            .food
            .iter()
            .map(|&f| {
                let (r, c) = rc(f);
                [r, c]
            })
            .collect(),
        hills: game
            .hills
            .iter()
            .map(|h| {
                let (row, col) = rc(h.square);
                HillLine {
                    row,
                    col,
                    owner: h.owner,
                    razed: h.razed.is_some(),
                    razed_turn: h.razed.map(|r| r.turn),
                    by: h.razed.map(|r| r.by),
                }
            })
            .collect(),
        scores: &game.scores,
        hives: &game.hives,
        forfeited: &game.forfeited,
        deaths: &game.deaths,
        razings: &game.razings,
    };
    serde_json::to_value(line).unwrap_or(Value::Null)
}
