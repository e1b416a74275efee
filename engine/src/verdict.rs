//! What the runner may decide about a seat without the game: the words for
//! faults and forfeits, defined once and carried unchanged to the wire, the
//! store and the standings.

use serde::{Deserialize, Serialize};

/// Why a seat left a match without the game deciding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    /// A WebAssembly seat trapped (unreachable, out-of-bounds access, stack
    /// exhaustion, ...).
    Trap,
    /// A WebAssembly seat ran past its turn's wall-clock backstop.
    WallBackstop,
}

impl Forfeit {
    pub const ALL: [Forfeit; 7] = [
        Forfeit::Crash,
        Forfeit::Exit,
        Forfeit::Memory,
        Forfeit::Faults,
        Forfeit::BuildFailed,
        Forfeit::Trap,
        Forfeit::WallBackstop,
    ];

    /// The snake_case word used in JSON, on the wire and in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Forfeit::Crash => "crash",
            Forfeit::Exit => "exit",
            Forfeit::Memory => "memory",
            Forfeit::Faults => "faults",
            Forfeit::BuildFailed => "build_failed",
            Forfeit::Trap => "trap",
            Forfeit::WallBackstop => "wall_backstop",
        }
    }

    /// The inverse of [`Forfeit::as_str`].
    pub fn from_word(word: &str) -> Option<Forfeit> {
        Self::ALL.into_iter().find(|f| f.as_str() == word)
    }
}

/// A reply the runner had to replace with the seat's fallback action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// No complete line before the deadline.
    Timeout,
    /// A line that is not an action, an over-long line, or a line nobody asked for.
    Malformed,
    /// A reply the game's rules refuse as a whole and replace with a no-action
    /// turn (see [`crate::Game::reply_fault`]). It is recorded and counted, but
    /// it never spends the fault budget: the seat is still answering in time.
    Illegal,
    /// A WebAssembly seat spent its turn's fuel before answering: a no-action
    /// turn. It never spends the fault budget either: the guest is only
    /// suspended, and its computation goes on with the next turn's fuel.
    FuelExhausted,
    /// A model-graph seat's turn failed: an adapter error, an evaluation
    /// error, an output of the wrong shape, a NaN or a late answer. Strikes
    /// spend the fault budget, so the game's fault limit is its strike limit.
    Strike,
}

impl FaultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::Malformed => "malformed",
            FaultKind::Illegal => "illegal",
            FaultKind::FuelExhausted => "fuel_exhausted",
            FaultKind::Strike => "strike",
        }
    }
}

/// A seat's faults so far, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    pub timeout: u32,
    pub malformed: u32,
    /// Replies the rules refused as a whole; absent in reports written
    /// before games had such replies.
    #[serde(default)]
    pub illegal: u32,
    /// Turns a WebAssembly seat ran dry; absent before fuel existed.
    #[serde(default)]
    pub fuel_exhausted: u32,
    /// Failed turns of a model-graph seat; absent before models existed.
    #[serde(default)]
    pub strike: u32,
}

impl FaultCounts {
    /// The faults that spend the fault budget: timeouts, malformed lines and
    /// strikes.
    /// Illegal replies and dry turns are left out on purpose (see
    /// [`FaultKind::Illegal`] and [`FaultKind::FuelExhausted`]).
    pub fn total(&self) -> u32 {
        self.timeout + self.malformed + self.strike
    }

    pub fn add(&mut self, kind: FaultKind) {
        match kind {
            FaultKind::Timeout => self.timeout += 1,
            FaultKind::Malformed => self.malformed += 1,
            FaultKind::Illegal => self.illegal += 1,
            FaultKind::FuelExhausted => self.fuel_exhausted += 1,
            FaultKind::Strike => self.strike += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_serde_and_round_trip() {
        for f in Forfeit::ALL {
            let json = serde_json::to_value(f).unwrap();
            assert_eq!(json, f.as_str());
            assert_eq!(Forfeit::from_word(f.as_str()), Some(f));
        }
        assert_eq!(Forfeit::from_word("bored"), None);
        assert_eq!(
            serde_json::to_value(FaultKind::Timeout).unwrap(),
            FaultKind::Timeout.as_str()
        );
        assert_eq!(
            serde_json::to_value(FaultKind::Illegal).unwrap(),
            FaultKind::Illegal.as_str()
        );
    }

    #[test]
    fn illegal_replies_never_spend_the_budget() {
        let mut counts = FaultCounts::default();
        counts.add(FaultKind::Illegal);
        counts.add(FaultKind::Illegal);
        counts.add(FaultKind::Timeout);
        assert_eq!((counts.illegal, counts.total()), (2, 1));
        let old: FaultCounts = serde_json::from_str(r#"{"timeout":1,"malformed":2}"#).unwrap();
        assert_eq!(old.illegal, 0);
    }
}
