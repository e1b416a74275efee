//! The generals games: the Generals Competition ruleset (1v1, castle
//! builds) and classic generals.io (1v1, 2v2, free-for-all of 2–8 seats).
//!
//! Every observation goes through the engine's shared encoder
//! (`arena_engine::generals::observe`): the compact planes are the frame the
//! referee sends each seat, the reference tensor and the masks are
//! functions of them. The built-in opponent reads the same planes.
//!
//! Layout: `family` checks a request and describes the arrays
//! ([`GeneralsFamily`]); `board` wraps the three engines as one board;
//! `slice` steps a run of environments (built-in players, restarts);
//! `columns` writes observations and step results into the arrays;
//! `episode` records episodes for replays; `action` reads the caller's
//! actions.

mod action;
mod board;
mod columns;
mod episode;
mod family;
mod slice;

pub use family::GeneralsFamily;

use arena_engine::generals;
use arena_engine::generals::observe::adapters::TOTALS_FIELDS;
use arena_engine::generals_classic;
use arena_engine::registry::GameEntry;

/// Fields of a five-integer action: `[pass, row, col, dir, split]`.
pub const ACTION_FIELDS: usize = 5;

/// Numbers in a seat's totals line.
const TOTALS: usize = TOTALS_FIELDS.len();

/// The most seats any generals format has.
const MAX_SEATS: usize = generals_classic::multi::MAX_SEATS;

/// Whether this module plays the registry entry.
pub fn plays(entry: &GameEntry) -> bool {
    entry.name == generals::ENTRY.name || entry.name == generals_classic::ENTRY.name
}
