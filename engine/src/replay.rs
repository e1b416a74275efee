//! Replays: enough to re-simulate a match and prove its result.
//!
//! A replay holds the seed, the initial state (which carries the ruleset's
//! parameters), every applied action (`None` for a seat that was not due)
//! with the fault that replaced a reply where there was one, each forfeit
//! with the step it took effect before, and the result plus a digest of the
//! final state. [`Replay::verify`] replays it through the engine and names the
//! first difference. [`AnyReplay`] is the same for a game known only by the
//! name in the file (see [`open_any`]). Reading and writing files is the
//! caller's business: this module works on bytes.

use serde::{Deserialize, Serialize};

use crate::game::{Game, Outcome};
use crate::registry;
use crate::verdict::{FaultKind, Forfeit};

/// Identifies the file format; bumped on any incompatible change.
pub const REPLAY_FORMAT: &str = "arena-replay/3";

/// One step as applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "A: Serialize + serde::de::DeserializeOwned")]
pub struct ReplayTurn<A> {
    /// The action applied for each seat; `None` where the seat was not due.
    pub actions: Vec<Option<A>>,
    /// The fault that replaced a seat's reply, if any.
    pub faults: Vec<Option<FaultKind>>,
}

/// A seat leaving the match without the game deciding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatForfeit {
    pub reason: Forfeit,
    /// Steps applied when it took effect (before the next one).
    pub turn: u32,
}

/// The recorded end of the match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// A display convenience; `ranks` and `scores` are the result.
    pub winner: Option<usize>,
    pub ranks: Vec<u32>,
    pub scores: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<u32>,
    pub reason: String,
    pub turns: u32,
}

impl ReplayResult {
    fn new(outcome: &Outcome, turns: u32) -> Self {
        Self {
            winner: outcome.winner(),
            ranks: outcome.ranks.clone(),
            scores: outcome.scores.clone(),
            teams: outcome.teams.clone(),
            reason: outcome.reason.clone(),
            turns,
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
    /// `None` when the match did not finish.
    pub result: Option<ReplayResult>,
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
    #[error("{forfeits} forfeit entries for {seats} seats")]
    ForfeitCount { forfeits: usize, seats: usize },
    #[error("turn {turn}: {got} actions for {seats} seats")]
    ActionCount {
        turn: usize,
        got: usize,
        seats: usize,
    },
    #[error("turn {turn}: seat {seat} {problem}")]
    Due {
        turn: usize,
        seat: usize,
        problem: &'static str,
    },
    #[error("turn {turn}: the game was already over, yet more turns are recorded")]
    EndedEarly { turn: usize },
    #[error("the recorded match did not finish")]
    Unfinished,
    #[error("the recorded turns never end the game")]
    NeverEnded,
    #[error("result differs: recorded {recorded}, re-simulated {simulated}")]
    Result { recorded: String, simulated: String },
    #[error("final state differs: recorded digest {recorded}, re-simulated {simulated}")]
    FinalState { recorded: String, simulated: String },
}

/// Bytes that are not a replay Arena can read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("not a valid replay")]
    Parse(#[source] serde_json::Error),
    #[error("unsupported replay format {0:?} (expected {REPLAY_FORMAT:?})")]
    Format(String),
    #[error("the replay cannot be written")]
    Serialize(#[source] serde_json::Error),
    #[error("the replay names no game")]
    NoGame,
    #[error(transparent)]
    Game(#[from] registry::SetupError),
}

impl<G: Game> Replay<G> {
    /// The record of a match from `initial` to `final_state`.
    pub fn new(
        initial: G,
        seed: u64,
        turns: Vec<ReplayTurn<G::Action>>,
        forfeits: Vec<Option<SeatForfeit>>,
        final_state: &G,
    ) -> Self {
        let steps = u32::try_from(turns.len()).unwrap_or(u32::MAX);
        Self {
            format: REPLAY_FORMAT.to_owned(),
            game: initial.name().to_owned(),
            seed,
            initial,
            turns,
            forfeits,
            result: final_state
                .outcome()
                .map(|outcome| ReplayResult::new(outcome, steps)),
            final_state_digest: digest(final_state),
        }
    }

    /// Re-simulates from the initial state and checks result and final state.
    pub fn verify(&self) -> Result<(), VerifyError> {
        self.simulate(|_, _| {})
    }

    /// Re-simulates, calling `visit(turn, state)` after every step, then
    /// checks result and final state.
    fn simulate(&self, mut visit: impl FnMut(usize, &G)) -> Result<(), VerifyError> {
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
        if self.forfeits.len() != seats {
            return Err(VerifyError::ForfeitCount {
                forfeits: self.forfeits.len(),
                seats,
            });
        }
        let recorded = self.result.as_ref().ok_or(VerifyError::Unfinished)?;
        let mut game = self.initial.clone();
        let mut outcome = None;
        for (turn, record) in self.turns.iter().enumerate() {
            // Forfeits that end the game leave nothing to step.
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
            for (seat, action) in record.actions.iter().enumerate() {
                let due =
                    self.forfeits[seat].is_none_or(|f| f.turn as usize > turn) && game.is_due(seat);
                match (due, action.is_some()) {
                    (true, false) => {
                        return Err(VerifyError::Due {
                            turn,
                            seat,
                            problem: "was due but has no action",
                        });
                    }
                    (false, true) => {
                        return Err(VerifyError::Due {
                            turn,
                            seat,
                            problem: "was not due but has an action",
                        });
                    }
                    _ => {}
                }
            }
            outcome = game.step(&record.actions);
            visit(turn, &game);
        }
        if let Some(o) = self.apply_forfeits(&mut game, self.turns.len()) {
            outcome = Some(o);
        }
        let outcome = outcome.ok_or(VerifyError::NeverEnded)?;
        let steps = u32::try_from(self.turns.len()).unwrap_or(u32::MAX);
        let simulated = ReplayResult::new(&outcome, steps);
        if &simulated != recorded {
            return Err(VerifyError::Result {
                recorded: format!("{recorded:?}"),
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
        if !self
            .forfeits
            .iter()
            .any(|f| f.is_some_and(|f| f.turn as usize == turn))
        {
            return None;
        }
        let seats: Vec<usize> = (0..self.forfeits.len())
            .filter(|&s| self.forfeits[s].is_some_and(|f| f.turn as usize <= turn))
            .collect();
        game.forfeit(&seats)
    }
}

/// A replay of a game known by name only.
pub trait AnyReplay {
    fn game(&self) -> &str;
    fn seed(&self) -> u64;
    /// `None` when the recorded match did not finish.
    fn result(&self) -> Option<&ReplayResult>;
    fn verify(&self) -> Result<(), VerifyError>;
    /// JSON lines: the initial state, then per turn its actions, faults,
    /// forfeits and state, then the result. The re-simulation is checked
    /// as in [`AnyReplay::verify`].
    fn dump(&self) -> Result<Vec<serde_json::Value>, VerifyError>;
}

impl<G: Game> AnyReplay for Replay<G> {
    fn game(&self) -> &str {
        &self.game
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn result(&self) -> Option<&ReplayResult> {
        self.result.as_ref()
    }

    fn verify(&self) -> Result<(), VerifyError> {
        Replay::verify(self)
    }

    fn dump(&self) -> Result<Vec<serde_json::Value>, VerifyError> {
        let mut lines = vec![serde_json::json!({
            "game": self.game,
            "seed": self.seed,
            "initial": self.initial.dump_state(),
        })];
        self.simulate(|turn, state| {
            let forfeits: Vec<_> = self
                .forfeits
                .iter()
                .enumerate()
                .filter_map(|(seat, f)| {
                    f.filter(|f| f.turn as usize == turn)
                        .map(|f| serde_json::json!({"seat": seat, "reason": f.reason}))
                })
                .collect();
            let record = &self.turns[turn];
            lines.push(serde_json::json!({
                "turn": turn + 1,
                "actions": record
                    .actions
                    .iter()
                    .map(|a| G::dump_action(a.as_ref()))
                    .collect::<Vec<_>>(),
                "faults": record.faults,
                "forfeits": forfeits,
                "state": state.dump_state(),
            }));
        })?;
        lines.push(serde_json::json!({ "result": self.result }));
        Ok(lines)
    }
}

/// Parses a replay of game `G` (a registry entry's `open_replay`).
pub fn open<G: Game>(bytes: &[u8]) -> Result<Box<dyn AnyReplay>, ReplayError> {
    let replay: Replay<G> = serde_json::from_slice(bytes).map_err(ReplayError::Parse)?;
    Ok(Box::new(replay))
}

/// Reads the game name from a replay and opens it through that game's entry.
pub fn open_any(bytes: &[u8]) -> Result<Box<dyn AnyReplay>, ReplayError> {
    #[derive(Deserialize)]
    struct Header {
        format: Option<String>,
        game: Option<String>,
    }
    let header: Header = serde_json::from_slice(bytes).map_err(ReplayError::Parse)?;
    // A file of another format is unreadable input, not a replay that differs.
    match header.format {
        Some(format) if format == REPLAY_FORMAT => {}
        other => return Err(ReplayError::Format(other.unwrap_or_default())),
    }
    let name = header.game.ok_or(ReplayError::NoGame)?;
    let entry = registry::find(&name)?;
    (entry.open_replay)(bytes)
}

/// A stable fingerprint of a state: FNV-1a 64 over its JSON.
pub fn digest<G: Game>(state: &G) -> String {
    let json = serde_json::to_vec(state).unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in json {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}
