//! The coordinator's domain types: plain data shared by the schedulers, the
//! store, the standings and the services. Wire types (protobuf) convert into
//! these at the boundary.

use serde::{Deserialize, Serialize};

/// An entrant of a tournament: a submission, named by its content hash.
pub type EntrantId = String;

/// A tournament's format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
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
    /// Entrants in seat order.
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

/// Why a seat left a match without the game deciding it (as the runner reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitReason {
    Crash,
    Exit,
    Memory,
    Faults,
    BuildFailed,
}

/// One seat's side of a finished match.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatResult {
    pub entrant: EntrantId,
    /// 0 is first place; equal ranks share a placement (a draw).
    pub rank: u32,
    pub forfeit: Option<ForfeitReason>,
    pub timeouts: u32,
    pub malformed: u32,
    pub moves: u32,
}

/// A finished match as the standings see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord {
    pub match_id: String,
    /// The round it was scheduled in (0-based).
    pub round: u32,
    /// Seats in seat order.
    pub seats: Vec<SeatResult>,
    /// Why the game ended (`general_captured`, `turn_cap_draw`, `forfeit`, ...).
    pub reason: String,
    pub turns: u32,
}

/// The runner's limits for a tournament's matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchLimits {
    /// Deadline per move, in milliseconds.
    #[serde(default = "default_move_ms")]
    pub move_ms: u64,
    /// Deadline for the first move, in milliseconds.
    #[serde(default = "default_first_move_ms")]
    pub first_move_ms: u64,
    /// Faults that forfeit a match.
    #[serde(default = "default_fault_limit")]
    pub fault_limit: u32,
}

fn default_move_ms() -> u64 {
    150
}

fn default_first_move_ms() -> u64 {
    10_000
}

fn default_fault_limit() -> u32 {
    50
}

impl Default for MatchLimits {
    fn default() -> Self {
        Self {
            move_ms: default_move_ms(),
            first_move_ms: default_first_move_ms(),
            fault_limit: default_fault_limit(),
        }
    }
}
