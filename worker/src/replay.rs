//! Replays: enough to re-simulate a match and prove its result.
//!
//! A replay holds the seed, the initial state (which carries the ruleset's
//! parameters), every applied action with the fault that replaced it where
//! there was one, each forfeit with the time it happened, and the result plus
//! a digest of the final state. [`Replay::verify`] replays it through the
//! engine and names the first difference.

use std::path::Path;

use arena_engine::{Game, Outcome};
use serde::{Deserialize, Serialize};

use crate::report::{FaultKind, Forfeit};

/// Identifies the file format; bumped on any incompatible change.
pub const REPLAY_FORMAT: &str = "arena-replay/2";

/// One step as applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "A: Serialize + serde::de::DeserializeOwned")]
pub struct ReplayTurn<A> {
    /// The action applied for each seat (a pass where a fault replaced the reply).
    pub actions: Vec<A>,
    /// The fault that replaced a seat's reply, if any.
    pub faults: Vec<Option<FaultKind>>,
}

/// A seat leaving the match without the game deciding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatForfeit {
    pub reason: Forfeit,
    /// Game time at which it happened: before the step of that time was applied.
    pub turn: u32,
}

/// The recorded end of the match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub winner: Option<usize>,
    pub ranks: Vec<u32>,
    pub reason: String,
    pub turns: u32,
}

impl ReplayResult {
    fn new<G: Game>(outcome: &Outcome, final_state: &G) -> Self {
        Self {
            winner: outcome.winner(),
            ranks: outcome.ranks.clone(),
            reason: outcome.reason.clone(),
            turns: final_state.turn(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "G: Game")]
pub struct Replay<G: Game> {
    pub format: String,
    pub game: String,
    pub seed: u64,
    pub initial: G,
    pub turns: Vec<ReplayTurn<G::Action>>,
    /// Per seat.
    pub forfeits: Vec<Option<SeatForfeit>>,
    pub result: ReplayResult,
    /// FNV-1a 64 of the final state's JSON, in hex.
    pub final_state_digest: String,
}

/// How a replay disagrees with its re-simulation.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("unsupported replay format {0:?} (expected {REPLAY_FORMAT:?})")]
    Format(String),
    #[error("replay is for game {found:?}, its state is {expected:?}")]
    GameName { found: String, expected: String },
    #[error("turn {turn}: {got} actions for {seats} seats")]
    ActionCount {
        turn: usize,
        got: usize,
        seats: usize,
    },
    #[error("turn {turn}: the game was already over, yet more turns are recorded")]
    EndedEarly { turn: usize },
    #[error("the recorded turns never end the game")]
    NeverEnded,
    #[error("result differs: recorded {recorded}, re-simulated {simulated}")]
    Result { recorded: String, simulated: String },
    #[error("final state differs: recorded digest {recorded}, re-simulated {simulated}")]
    FinalState { recorded: String, simulated: String },
}

/// Reading or parsing a replay file failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a valid replay")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
}

impl<G: Game> Replay<G> {
    pub(crate) fn new(
        initial: G,
        seed: u64,
        turns: Vec<ReplayTurn<G::Action>>,
        forfeits: Vec<Option<SeatForfeit>>,
        outcome: &Outcome,
        final_state: &G,
    ) -> Self {
        Self {
            format: REPLAY_FORMAT.to_owned(),
            game: initial.name().to_owned(),
            seed,
            initial,
            turns,
            forfeits,
            result: ReplayResult::new(outcome, final_state),
            final_state_digest: digest(final_state),
        }
    }

    /// Re-simulates from the initial state and checks result and final state.
    pub fn verify(&self) -> Result<(), VerifyError> {
        if self.format != REPLAY_FORMAT {
            return Err(VerifyError::Format(self.format.clone()));
        }
        if self.game != self.initial.name() {
            return Err(VerifyError::GameName {
                found: self.game.clone(),
                expected: self.initial.name().to_owned(),
            });
        }
        let seats = self.initial.seats();
        let mut game = self.initial.clone();
        let mut outcome = None;
        for (turn, record) in self.turns.iter().enumerate() {
            self.apply_forfeits(&mut game, turn);
            if game.outcome().is_some() {
                return Err(VerifyError::EndedEarly { turn });
            }
            if record.actions.len() != seats {
                return Err(VerifyError::ActionCount {
                    turn,
                    got: record.actions.len(),
                    seats,
                });
            }
            outcome = game.step(&record.actions);
        }
        if let Some(o) = self.apply_forfeits(&mut game, self.turns.len()) {
            outcome = Some(o);
        }
        let outcome = outcome.ok_or(VerifyError::NeverEnded)?;
        let simulated = ReplayResult::new(&outcome, &game);
        if simulated != self.result {
            return Err(VerifyError::Result {
                recorded: format!("{:?}", self.result),
                simulated: format!("{simulated:?}"),
            });
        }
        let simulated = digest(&game);
        if simulated != self.final_state_digest {
            return Err(VerifyError::FinalState {
                recorded: self.final_state_digest.clone(),
                simulated,
            });
        }
        Ok(())
    }

    /// Applies the forfeits recorded at `turn`; the outcome if that ends the game.
    fn apply_forfeits(&self, game: &mut G, turn: usize) -> Option<Outcome> {
        let at = |f: &Option<SeatForfeit>| f.is_some_and(|f| f.turn as usize <= turn);
        if !self
            .forfeits
            .iter()
            .any(|f| f.is_some_and(|f| f.turn as usize == turn))
        {
            return None;
        }
        let seats: Vec<usize> = (0..self.forfeits.len())
            .filter(|&s| at(&self.forfeits[s]))
            .collect();
        game.forfeit(&seats)
    }

    pub fn save(&self, path: &Path) -> Result<(), ReplayFileError> {
        let show = || path.display().to_string();
        let json = serde_json::to_vec(self).map_err(|source| ReplayFileError::Parse {
            path: show(),
            source,
        })?;
        std::fs::write(path, json).map_err(|source| ReplayFileError::Write {
            path: show(),
            source,
        })
    }

    pub fn load(path: &Path) -> Result<Self, ReplayFileError> {
        let show = || path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| ReplayFileError::Read {
            path: show(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|source| ReplayFileError::Parse {
            path: show(),
            source,
        })
    }
}

/// A stable fingerprint of a state: FNV-1a 64 over its JSON.
fn digest<G: Game>(state: &G) -> String {
    let json = serde_json::to_vec(state).unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in json {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}
