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
use std::time::{Duration, Instant};

use self::wire::HostAnswer;
use arena_engine::registry::ModelLimits;
use arena_engine::{FaultKind, Forfeit};

use super::process::ProcessSeat;
use super::{Answer, Budget, Offer, SeatRuntime};
use crate::fd::Interest;
use crate::referee::RunnerError;

/// How long past a turn's deadline the host may take to say it was late.
const HOST_MARGIN: Duration = Duration::from_secs(2);

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
pub struct ModelSeat {
    host: ProcessSeat,
    /// Evaluation times the host reported, in nanoseconds.
    evaluations: Vec<u64>,
    /// The host has answered at least one turn (so it accepted the graph).
    answered: bool,
    /// Turns whose head's best entry was illegal (the best legal one played).
    overridden: u64,
    message: Vec<u8>,
    seat: usize,
}

impl ModelSeat {
    pub fn new(host: ProcessSeat, seat: usize) -> ModelSeat {
        ModelSeat {
            host,
            evaluations: Vec::new(),
            answered: false,
            overridden: 0,
            message: Vec::new(),
            seat,
        }
    }

    /// The line cap the host's process seat needs for replies of `line_cap`.
    pub fn host_line_cap(line_cap: usize) -> usize {
        line_cap.saturating_add(wire::ANSWER_OVERHEAD)
    }

    fn settle(&mut self, answer: HostAnswer) -> Answer {
        let first = !self.answered;
        self.answered = true;
        match answer {
            HostAnswer::Reply {
                eval_us,
                overridden,
                line,
            } => {
                self.evaluations.push(eval_us.saturating_mul(1_000));
                self.overridden += u64::from(overridden);
                Answer::Reply(line)
            }
            HostAnswer::Strike { reason } => {
                tracing::info!(seat = self.seat, %reason, "model seat struck");
                Answer::Fault(FaultKind::Strike)
            }
            // The check refused the graph: the submission cannot play.
            HostAnswer::Refused { reason } if first => {
                tracing::info!(seat = self.seat, %reason, "model graph refused");
                Answer::Gone(Forfeit::BuildFailed)
            }
            HostAnswer::Refused { reason } | HostAnswer::Error { message: reason } => {
                tracing::error!(seat = self.seat, %reason, "the model host failed");
                Answer::Gone(Forfeit::Crash)
            }
        }
    }
}

impl SeatRuntime for ModelSeat {
    fn offer(&mut self, offer: Offer<'_>) -> Result<(), RunnerError> {
        let Budget::Wall(deadline) = offer.budget;
        self.message.clear();
        // The whole message, the handshake included on the first turn: the
        // game's reader in the host decides what it needs of it.
        wire::write_turn(deadline, offer.frame, &mut self.message);
        let message = std::mem::take(&mut self.message);
        let sent = self.host.offer(Offer {
            seat: offer.seat,
            frame: &message,
            budget: Budget::Wall(deadline + HOST_MARGIN),
            game: offer.game,
        });
        self.message = message;
        sent
    }

    fn poll(&mut self) -> Result<Option<Answer>, RunnerError> {
        Ok(match self.host.poll()? {
            None => None,
            Some(Answer::Reply(line)) => Some(match HostAnswer::parse(&line) {
                Some(answer) => self.settle(answer),
                None => {
                    tracing::error!(
                        seat = self.seat,
                        "the model host wrote something unreadable"
                    );
                    Answer::Gone(Forfeit::Crash)
                }
            }),
            // Silent past the deadline and the margin: the host hung.
            Some(Answer::Fault(FaultKind::Timeout)) => Some(Answer::Gone(Forfeit::WallBackstop)),
            Some(Answer::Fault(_)) => Some(Answer::Gone(Forfeit::Crash)),
            Some(Answer::Gone(reason)) => Some(Answer::Gone(reason)),
        })
    }

    fn deadline(&self) -> Option<Instant> {
        self.host.deadline()
    }

    fn wait_on(&self, interests: &mut Vec<Interest>) {
        self.host.wait_on(interests);
    }

    fn take_stray_lines(&mut self) -> u32 {
        self.host.take_stray_lines()
    }

    fn close_input(&mut self) {
        self.host.close_input();
    }

    fn stop(&mut self, grace_until: Instant) {
        self.host.stop(grace_until);
    }

    fn log(&mut self) -> Vec<u8> {
        self.host.log()
    }

    fn latencies(&self) -> &[u64] {
        self.host.latencies()
    }

    fn evaluations(&self) -> &[u64] {
        &self.evaluations
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![("illegal_best_entries", self.overridden)]
    }
}

/// The host's wire, seen from the worker.
mod wire {
    use std::time::Duration;

    /// Room for the host's words around a reply line.
    pub const ANSWER_OVERHEAD: usize = 64;

    /// One turn: `turn DEADLINE_MS LEN`, then the frame.
    pub fn write_turn(deadline: Duration, frame: &[u8], out: &mut Vec<u8>) {
        let ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
        out.extend_from_slice(format!("turn {ms} {}\n", frame.len()).as_bytes());
        out.extend_from_slice(frame);
    }

    /// One answer line of the host.
    #[derive(Debug, PartialEq, Eq)]
    pub enum HostAnswer {
        Reply {
            eval_us: u64,
            overridden: bool,
            line: Vec<u8>,
        },
        Strike {
            reason: String,
        },
        Refused {
            reason: String,
        },
        Error {
            message: String,
        },
    }

    impl HostAnswer {
        pub fn parse(line: &[u8]) -> Option<HostAnswer> {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let (word, rest) = match line.iter().position(|&b| b == b' ') {
                Some(cut) => (&line[..cut], &line[cut + 1..]),
                None => (line, &line[line.len()..]),
            };
            match word {
                b"ok" => {
                    let cut = rest.iter().position(|&b| b == b' ')?;
                    let eval_us = std::str::from_utf8(&rest[..cut]).ok()?.parse().ok()?;
                    let overridden = match rest.get(cut + 1..cut + 3)? {
                        b"0 " => false,
                        b"1 " => true,
                        _ => return None,
                    };
                    Some(HostAnswer::Reply {
                        eval_us,
                        overridden,
                        line: rest[cut + 3..].to_vec(),
                    })
                }
                b"strike" => Some(HostAnswer::Strike { reason: text(rest) }),
                b"refused" => Some(HostAnswer::Refused { reason: text(rest) }),
                b"error" => Some(HostAnswer::Error {
                    message: text(rest),
                }),
                _ => None,
            }
        }
    }
}
