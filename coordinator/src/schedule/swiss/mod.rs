//! Swiss pairing: standings from the history, then a maximum-weight matching
//! (two seats) or score-ordered groups (more seats). The weight design is
//! described in the module docs of `schedule`.
//!
//! # Layout
//!
//! This module reads the history into the field every pairer works from
//! (each entrant's points, byes and seats, and who met whom):
//! [`swiss_standings`] and the points of a game, [`seat_points`].
//!
//! * `rounds`: the entry points that pair a round ([`swiss_round`] and its
//!   variants), and turning a two-seat matching into the round's boards,
//!   the bye included.
//! * `graph`: the two-seat pairing graph ([`PairingGraph`]): its tiers of
//!   cost ([`PairCost`]), the multipliers that flatten them into weights,
//!   and the ghost vertex whose partner gets the bye.
//! * `groups`: rounds of more than two seats: score-ordered groups,
//!   repeat-avoiding swaps, byes, and each group's seat order.

mod graph;
mod groups;
mod rounds;

use std::collections::{HashMap, HashSet};

use super::{ScheduleError, validate_field};
use crate::domain::{EntrantId, MatchRecord};

pub(super) use self::graph::Traits;
pub use self::graph::{PairCost, PairingGraph};
pub use self::rounds::{
    swiss_graph, swiss_round, swiss_round_complete_graph, swiss_round_in_bands,
    swiss_round_with_baseline,
};

/// Points are kept as integers in units of `1 / SCORE_UNIT` point. This is
/// `2 · lcm(1..=16)`, so every score of a game with up to 17 seats —
/// `(2·(N-1-better) - (tied-1)) / (2·(N-1))` — is exact.
pub const SCORE_UNIT: i64 = 1_441_440;

/// Each seat's points for one finished game, in [`SCORE_UNIT`]s: with N
/// seats, finishing `p` places from the top is worth `(N-1-p)/(N-1)`, and
/// seats with equal rank share the average of the places they cover. Games
/// with fewer than two seats are worth nothing.
pub fn seat_points(record: &MatchRecord) -> Vec<i64> {
    let n = record.seats.len();
    if n < 2 {
        return vec![0; n];
    }
    let denom = 2 * (n as i64 - 1);
    record
        .seats
        .iter()
        .map(|s| {
            let better = record.seats.iter().filter(|o| o.rank < s.rank).count() as i64;
            let tied = record.seats.iter().filter(|o| o.rank == s.rank).count() as i64;
            let numer = 2 * (n as i64 - 1 - better) - (tied - 1);
            // Exact whenever 2·(N-1) divides SCORE_UNIT (N ≤ 17).
            SCORE_UNIT * numer / denom
        })
        .collect()
}

/// One entrant's Swiss state before a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissStanding {
    pub entrant: EntrantId,
    /// Points so far (games plus byes), in [`SCORE_UNIT`]s.
    pub points: i64,
    /// Byes received so far (inferred, see [`swiss_standings`]).
    pub byes: u32,
    /// Games played in each seat, counting only games with the scheduled
    /// number of seats.
    pub seat_counts: Vec<u32>,
    /// The seat of the latest such game (by round, then match id).
    pub last_seat: Option<usize>,
}

impl SwissStanding {
    /// Points as a number (for display and tests).
    pub fn score(&self) -> f64 {
        self.points as f64 / SCORE_UNIT as f64
    }
}

/// Everything the pairers need to know about the past.
struct Field {
    standings: Vec<SwissStanding>,
    /// Games shared by each pair of entrants (indices into `standings`,
    /// smaller first).
    met: HashMap<(usize, usize), u32>,
    /// Sorted member lists of every game with the scheduled number of seats.
    groups: HashSet<Vec<usize>>,
}

impl Field {
    fn met(&self, a: usize, b: usize) -> u32 {
        self.met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0)
    }
}

/// Standings of `entrants` before round `round`, from the records of rounds
/// `0..round` in `history` (later records are ignored, as are seats of
/// entrants outside the field).
///
/// Byes are inferred: in every earlier round that has at least one record,
/// an entrant that appears in none of that round's records had the bye, worth
/// one point. (So the field should be the same in every round: a late entrant
/// would be credited byes for the rounds before it joined.)
pub fn swiss_standings(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    seats: usize,
) -> Result<Vec<SwissStanding>, ScheduleError> {
    validate_field(entrants, seats)?;
    Ok(build_field(round, entrants, history, seats).standings)
}

fn build_field(round: u32, entrants: &[EntrantId], history: &[MatchRecord], seats: usize) -> Field {
    let index: HashMap<&str, usize> = entrants
        .iter()
        .enumerate()
        .map(|(i, e)| (e.as_str(), i))
        .collect();
    let mut standings: Vec<SwissStanding> = entrants
        .iter()
        .map(|e| SwissStanding {
            entrant: e.clone(),
            points: 0,
            byes: 0,
            seat_counts: vec![0; seats],
            last_seat: None,
        })
        .collect();
    let mut met = HashMap::new();
    let mut groups = HashSet::new();
    // Latest (round, match id) seen per entrant, for `last_seat`.
    let mut latest: Vec<Option<(u32, &str)>> = vec![None; entrants.len()];
    // Entrants seen per earlier round (only rounds with records get a set).
    let mut played: HashMap<u32, Vec<bool>> = HashMap::new();
    for record in history.iter().filter(|r| r.round < round) {
        let seen = played
            .entry(record.round)
            .or_insert_with(|| vec![false; entrants.len()]);
        let points = seat_points(record);
        let members: Vec<Option<usize>> = record
            .seats
            .iter()
            .map(|s| index.get(s.entrant.as_str()).copied())
            .collect();
        for (seat, (&member, &pts)) in members.iter().zip(&points).enumerate() {
            let Some(i) = member else { continue };
            seen[i] = true;
            standings[i].points += pts;
            if record.seats.len() == seats {
                standings[i].seat_counts[seat] += 1;
                let key = (record.round, record.match_id.as_str());
                if latest[i].is_none_or(|l| key > l) {
                    latest[i] = Some(key);
                    standings[i].last_seat = Some(seat);
                }
            }
        }
        let known: Vec<usize> = members.iter().flatten().copied().collect();
        for (x, &a) in known.iter().enumerate() {
            for &b in &known[x + 1..] {
                if a != b {
                    *met.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                }
            }
        }
        if record.seats.len() == seats && known.len() == seats {
            let mut key = known;
            key.sort_unstable();
            key.dedup();
            if key.len() == seats {
                groups.insert(key);
            }
        }
    }
    for seen in played.values() {
        for (s, &was_seen) in standings.iter_mut().zip(seen) {
            if !was_seen {
                s.points += SCORE_UNIT;
                s.byes += 1;
            }
        }
    }
    Field {
        standings,
        met,
        groups,
    }
}

/// Indices of the field sorted by points (highest first), ties by position
/// in `entrants` (the seeding order).
fn score_order(field: &Field) -> Vec<usize> {
    let mut order: Vec<usize> = (0..field.standings.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(field.standings[i].points), i));
    order
}
