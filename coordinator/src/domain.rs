//! The coordinator's domain types: plain data shared by the schedulers, the
//! store, the standings and the services. Wire types (protobuf) convert into
//! these at the boundary.

use std::collections::BTreeMap;

use arena_engine::Forfeit;
use serde::{Deserialize, Serialize};

/// An entrant of a tournament: a submission, named by its content hash.
pub type EntrantId = String;

/// A tournament's format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Format {
    /// Every group of `seats` entrants meets `games_per_pairing` times per
    /// cycle, seats rotated on one map seed.
    RoundRobin { cycles: u32, games_per_pairing: u32 },
    /// `rounds` rounds, each paired once the previous one is complete.
    Swiss { rounds: u32 },
}

/// One scheduled game: who sits where, on which map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// Entrants in seat order; a baseline seat is [`baseline_id`] of its name.
    pub seats: Vec<EntrantId>,
    /// Map seed; games of one pairing share it with seats rotated.
    pub seed: u64,
}

/// A round of the schedule: pairings, plus entrants that sit this round out
/// (a bye scores as a win in Swiss).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    pub pairings: Vec<Pairing>,
    pub byes: Vec<EntrantId>,
}

/// One seat's side of a finished match, as the game and the runner left it.
///
/// The words come from the engine unchanged: `score` is the game's own points
/// for the placement ([`arena_engine::placement_points`] for every registered
/// game), `forfeit` an [`arena_engine::Forfeit`]. A seat played by a baseline
/// has the entrant id [`baseline_id`] of its name and `baseline` set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeatResult {
    /// The entrant in this seat, as paired (a submission hash, or
    /// `baseline:NAME` for a baseline seat).
    pub entrant: EntrantId,
    /// 0 is first place; equal ranks share a placement (a draw).
    pub rank: u32,
    /// The game's points for this placement (higher is better).
    #[serde(default)]
    pub score: f64,
    /// The team this seat played for; 0 when every seat plays alone.
    #[serde(default)]
    pub team: u32,
    /// Why the seat left the match without the game deciding it, if it did.
    pub forfeit: Option<Forfeit>,
    /// The in-engine baseline that played this seat, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Counters the game keeps per seat (e.g. `invalid_moves`), and the
    /// runner's counts that have no field here, under reserved names:
    /// [`ILLEGAL_STAT`], [`FUEL_EXHAUSTED_STAT`], [`FUEL_P50_STAT`],
    /// [`FUEL_MAX_STAT`], [`STRIKE_STAT`], [`LATENCY_P50_STAT`] and
    /// [`LATENCY_P99_STAT`] (absent when zero; read them with
    /// [`SeatResult::illegal`], [`SeatResult::fuel_exhausted`],
    /// [`SeatResult::strikes`] and [`SeatResult::latency_ms`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, u64>,
    /// Replies that missed their deadline.
    pub timeouts: u32,
    /// Replies that were not an action.
    pub malformed: u32,
    /// Replies the game applied.
    pub moves: u32,
}

/// Replies the game's rules refused as a whole (no-action turns that never
/// spend the fault budget), kept among a seat's stats; workers wrote this
/// stat themselves before the result had a field for it.
pub const ILLEGAL_STAT: &str = "illegal_replies";
/// A WebAssembly seat's turns that ran out of fuel (no-action, never a
/// forfeit), kept among its stats.
pub const FUEL_EXHAUSTED_STAT: &str = "fuel_exhausted";
/// A WebAssembly seat's fuel per turn, median, kept among its stats.
pub const FUEL_P50_STAT: &str = "fuel_p50";
/// A WebAssembly seat's fuel per turn, most, kept among its stats.
pub const FUEL_MAX_STAT: &str = "fuel_max";
/// A model-graph seat's failed turns (evaluation errors, bad output, late
/// answers; they spend the fault budget), kept among its stats.
pub const STRIKE_STAT: &str = "strike";
/// A seat's in-time reply latency, median and 99th percentile, in whole
/// microseconds, kept among its stats.
pub const LATENCY_P50_STAT: &str = "latency_p50_us";
pub const LATENCY_P99_STAT: &str = "latency_p99_us";

impl SeatResult {
    /// Illegal replies ([`ILLEGAL_STAT`]).
    pub fn illegal(&self) -> u64 {
        self.stats.get(ILLEGAL_STAT).copied().unwrap_or(0)
    }

    /// Turns that ran out of fuel ([`FUEL_EXHAUSTED_STAT`]).
    pub fn fuel_exhausted(&self) -> u64 {
        self.stats.get(FUEL_EXHAUSTED_STAT).copied().unwrap_or(0)
    }

    /// A model-graph seat's failed turns ([`STRIKE_STAT`]).
    pub fn strikes(&self) -> u64 {
        self.stats.get(STRIKE_STAT).copied().unwrap_or(0)
    }

    /// Reply latency in milliseconds, median and 99th percentile
    /// ([`LATENCY_P50_STAT`], [`LATENCY_P99_STAT`]); `None` when the seat
    /// replied to nothing in time (or is a baseline).
    pub fn latency_ms(&self) -> Option<(f64, f64)> {
        let p50 = *self.stats.get(LATENCY_P50_STAT)?;
        let p99 = self.stats.get(LATENCY_P99_STAT).copied().unwrap_or(p50);
        Some((p50 as f64 / 1000.0, p99 as f64 / 1000.0))
    }
}

/// A finished match as the standings see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    pub match_id: String,
    /// The round it was scheduled in (0-based).
    pub round: u32,
    /// Seats in seat order.
    pub seats: Vec<SeatResult>,
    /// Why the game ended (`general_captured`, `turn_cap_draw`, `forfeit`, ...).
    pub reason: String,
    pub turns: u32,
    /// The worker whose result was accepted; empty when not known (a
    /// record made before workers were recorded, or outside a lease).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub worker: String,
}

/// How a baseline seat is written among entrant ids: `baseline:NAME`, where
/// NAME is one of the game's [`baselines`](arena_engine::GameEntry::baselines).
///
/// A [`Pairing`] lists a baseline seat under this id so that a pairing stays
/// a plain list of ids; no submission hash (lowercase hex) can start with it.
/// Baseline seats fill groups the field cannot fill, are leased with an empty
/// submission and the baseline's name, and score for no one (see
/// [`standings`](crate::standings)).
pub use arena_engine::registry::BASELINE_PREFIX;

/// The entrant id of the baseline `name` (`baseline:NAME`).
pub fn baseline_id(name: &str) -> EntrantId {
    format!("{BASELINE_PREFIX}{name}")
}

/// The baseline an entrant id stands for (`baseline:sprawl` → `sprawl`), or
/// `None` for a submission.
pub fn baseline_name(id: &str) -> Option<&str> {
    id.strip_prefix(BASELINE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_ids_round_trip() {
        assert_eq!(baseline_id("sprawl"), "baseline:sprawl");
        assert_eq!(baseline_name(&baseline_id("crown")), Some("crown"));
        assert_eq!(baseline_name(&crate::submission_id(b"bot")), None);
    }
}
