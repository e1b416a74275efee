//! What a match produced, as plain data: the result document `arena play
//! --json` prints and the worker reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use arena_engine::{FaultCounts, FaultKind, Forfeit};

/// Reply latency over a match, in milliseconds: from frame written to reply
/// line complete, for replies that made their deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl LatencyMs {
    /// Nearest-rank percentiles over samples in nanoseconds.
    pub fn from_nanos(samples: &mut [u64]) -> Self {
        if samples.is_empty() {
            return Self::default();
        }
        samples.sort_unstable();
        let rank = |q: f64| {
            let index = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
            samples[index] as f64 / 1e6
        };
        Self {
            p50: rank(0.50),
            p99: rank(0.99),
            max: rank(1.0),
        }
    }
}

/// One seat's side of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerReport {
    pub seat: usize,
    pub bot: String,
    /// 0 is first place; equal ranks share a placement.
    pub rank: u32,
    /// The game's points for the placement.
    pub score: f64,
    /// The team the seat played for, in team games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<u32>,
    pub forfeit: Option<Forfeit>,
    /// Steps applied when the forfeit happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forfeit_turn: Option<u32>,
    pub faults: FaultCounts,
    /// Replies accepted as actions (legal or not).
    pub moves: u32,
    pub latency_ms: LatencyMs,
    /// The game's own per-seat counters (e.g. `invalid_moves`).
    #[serde(default)]
    pub stats: BTreeMap<String, u64>,
    /// Fuel per turn, for a WebAssembly seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<FuelUse>,
    /// How long the platform took to evaluate a model-graph seat per turn
    /// (adapters and graph, as the model host measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation_ms: Option<LatencyMs>,
}

/// What a WebAssembly seat spent, per turn it played (dry turns count
/// their whole budget).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuelUse {
    pub p50: u64,
    pub max: u64,
    /// Turns measured.
    pub turns: u32,
}

impl FuelUse {
    /// The figures of `per_turn` (sorted in place); `None` when empty.
    pub fn from_turns(per_turn: &mut [u64]) -> Option<FuelUse> {
        if per_turn.is_empty() {
            return None;
        }
        per_turn.sort_unstable();
        Some(FuelUse {
            p50: per_turn[(per_turn.len() - 1) / 2],
            max: per_turn[per_turn.len() - 1],
            turns: u32::try_from(per_turn.len()).unwrap_or(u32::MAX),
        })
    }
}

/// The whole match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    pub game: String,
    pub seed: u64,
    /// The single first place, for display; `None` when first place is shared.
    pub winner: Option<usize>,
    /// `placements[seat]`: the seat's rank (0 best, ties equal).
    pub placements: Vec<u32>,
    /// `scores[seat]`: the game's points.
    pub scores: Vec<f64>,
    pub reason: String,
    /// Steps played.
    pub turns: u32,
    pub players: Vec<PlayerReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut samples: Vec<u64> = (1..=100).map(|ms| ms * 1_000_000).collect();
        let latency = LatencyMs::from_nanos(&mut samples);
        assert_eq!(latency.p50, 50.0);
        assert_eq!(latency.p99, 99.0);
        assert_eq!(latency.max, 100.0);
        assert_eq!(LatencyMs::from_nanos(&mut []), LatencyMs::default());
    }

    #[test]
    fn json_names_match_the_result_document() {
        let json = serde_json::to_value(Forfeit::BuildFailed).unwrap();
        assert_eq!(json, "build_failed");
        let faults = serde_json::to_value(FaultCounts::default()).unwrap();
        assert_eq!(
            faults,
            serde_json::json!({
                "timeout": 0, "malformed": 0, "illegal": 0, "fuel_exhausted": 0, "strike": 0
            })
        );
    }
}
