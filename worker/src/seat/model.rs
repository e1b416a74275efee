//! A model-graph bot as a seat.
//!
//! The graph runs in the model host (`arena model-host`, see the
//! `arena-model` crate), a platform program started in the seat's sandbox
//! exactly where a bot's `run.sh` would run, so the cgroup (and its memory
//! cap), the namespaces and seccomp hold for the evaluator too. The host
//! checks and loads the graph before it reads its first turn; it answers
//! every turn with one line, within the turn's deadline (it watches the
//! clock itself and answers a strike when the evaluation runs late).
//!
//! Every failed turn is a strike: the game's fallback plays (Ants colonies
//! hold, a generals seat passes), and strikes spend the fault budget, so the
//! fault limit is the strike limit. A host that refuses the graph forfeits
//! the seat as a failed build; a host that misses even its margin past the
//! deadline has hung and forfeits as a wall-clock breach.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arena_engine::registry::ModelLimits;
use arena_engine::{FaultKind, Forfeit};
use arena_host_wire::model::{self as wire, HostMessage, TurnRequest};

use super::Answer;
use super::bot_process::ProcessSeat;
use super::host::{HostProtocol, HostSeat};

/// What a worker needs to run model-graph seats.
#[derive(Clone, Debug)]
pub struct ModelSupport {
    /// The `arena` executable: `arena model-host` is the host. It must be
    /// visible inside the sandbox at this same path.
    host_program: PathBuf,
    runtime_id: String,
}

impl ModelSupport {
    /// Model seats played by `host_program`'s model host, which evaluates
    /// with the runtime `runtime_id` names.
    pub fn new(host_program: PathBuf, runtime_id: impl Into<String>) -> ModelSupport {
        ModelSupport {
            host_program,
            runtime_id: runtime_id.into(),
        }
    }

    /// Names the evaluator (the ONNX runtime and its version), as workers
    /// announce it.
    pub fn runtime_id(&self) -> &str {
        &self.runtime_id
    }

    pub fn host_program(&self) -> &Path {
        &self.host_program
    }

    /// The host's arguments for one seat of `game`.
    pub fn host_args(&self, game: &str, limits: &ModelLimits) -> Vec<OsString> {
        [
            "model-host".to_owned(),
            "--game".to_owned(),
            game.to_owned(),
            "--max-bytes".to_owned(),
            limits.max_bytes.to_string(),
            "--max-macs".to_owned(),
            limits.max_macs.to_string(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect()
    }
}

/// A seat played by a model graph in the model host.
pub type ModelSeat = HostSeat<ModelTurns>;

/// The model host's side of a seat: what its answers reported.
pub struct ModelTurns {
    /// Evaluation times the host reported, in nanoseconds.
    evaluations: Vec<u64>,
    /// The host has answered at least one turn (so it accepted the graph).
    answered: bool,
    /// Turns whose head's best entry was illegal (the best legal one played).
    overridden: u64,
}

impl ModelSeat {
    /// A seat over a started host.
    pub fn start(host: ProcessSeat, seat: usize) -> ModelSeat {
        let turns = ModelTurns {
            evaluations: Vec::new(),
            answered: false,
            overridden: 0,
        };
        HostSeat::new(host, turns, seat)
    }
}

impl HostProtocol for ModelTurns {
    const HOST: &'static str = "model";

    fn write_turn(&mut self, frame: &[u8], budget: Duration, out: &mut Vec<u8>) -> Duration {
        // The whole message, the handshake included on the first turn: the
        // game's reader in the host decides what it needs of it.
        let deadline_ms = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX);
        wire::write_turn(
            &TurnRequest {
                deadline_ms,
                frame: frame.to_vec(),
            },
            out,
        );
        budget
    }

    fn settle(&mut self, line: &[u8], seat: usize) -> Option<Answer> {
        let answer = HostMessage::parse(line)?;
        let first = !self.answered;
        self.answered = true;
        Some(match answer {
            HostMessage::Ok {
                eval_us,
                overridden,
                reply,
            } => {
                self.evaluations.push(eval_us.saturating_mul(1_000));
                self.overridden += u64::from(overridden);
                Answer::Reply(reply)
            }
            HostMessage::Strike { kind, reason } => {
                tracing::debug!(seat, %kind, %reason, "model seat struck");
                Answer::Fault(FaultKind::Strike)
            }
            // The check refused the graph: the submission cannot play.
            HostMessage::Refused(reason) if first => {
                tracing::info!(seat, %reason, "model graph refused");
                Answer::Gone(Forfeit::BuildFailed)
            }
            // Refusing later is not in the protocol: the host lost its way.
            HostMessage::Refused(reason) => {
                tracing::error!(seat, %reason, "the model host failed");
                Answer::Gone(Forfeit::Crash)
            }
        })
    }

    fn evaluations(&self) -> &[u64] {
        &self.evaluations
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![("illegal_best_entries", self.overridden)]
    }
}
