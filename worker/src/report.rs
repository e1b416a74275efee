//! What a match produced, as plain data: the result document `arena play
//! --json` prints and the coordinator stores.

use serde::{Deserialize, Serialize};

/// Why a bot lost without the game deciding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forfeit {
    /// Killed by a signal (abort, segfault, ...).
    Crash,
    /// Exited, or closed its stdout, before the game ended.
    Exit,
    /// Killed for going over its memory limit.
    Memory,
    /// Reached the fault budget.
    Faults,
    /// Its build.sh failed or ran over its limit.
    BuildFailed,
}

/// A reply the runner had to replace with a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// No complete line before the deadline.
    Timeout,
    /// A line that is not an action, an over-long line, or a line nobody asked for.
    Malformed,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    pub timeout: u32,
    pub malformed: u32,
}

impl FaultCounts {
    pub fn total(&self) -> u32 {
        self.timeout + self.malformed
    }

    pub fn add(&mut self, kind: FaultKind) {
        match kind {
            FaultKind::Timeout => self.timeout += 1,
            FaultKind::Malformed => self.malformed += 1,
        }
    }
}

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
    pub forfeit: Option<Forfeit>,
    pub faults: FaultCounts,
    /// Replies accepted in time as actions (legal or not).
    pub moves: u32,
    pub latency_ms: LatencyMs,
}

/// The whole match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    pub game: String,
    pub seed: u64,
    /// The single winning seat; `None` for a draw.
    pub winner: Option<usize>,
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
        assert_eq!(faults, serde_json::json!({"timeout": 0, "malformed": 0}));
    }
}
