//! The host process: `arena model-host`, run inside the seat's sandbox
//! with the bot's built directory as its working directory.
//!
//! The host checks and loads the model before it reads anything, then
//! answers every turn with exactly one line, in order, until stdin closes.
//! A model the check refuses answers its first turn with `refused` and the
//! host stops: the worker turns that into a failed build before the game
//! has taken a step.
//!
//! Evaluation runs on a thread of its own (tract itself stays on that one
//! thread) so that the host can keep the deadline whatever the graph does:
//! at the deadline it answers a `late` strike and lets the evaluation run
//! out in the background; a turn that arrives while it still runs waits for
//! it within its own deadline. The worker's own timer is only a backstop
//! for a host that hangs. Notes and strikes go to stderr, which the worker
//! keeps as the bot's log.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use arena_engine::registry::ModelLimits;
use arena_engine::registry::model::ModelInterface;

use crate::policy::{Answer, Policy, Strike};
use crate::wire::{HostMessage, read_turn};

/// Serves the model in `dir` over `input`/`output`, notes into `log`.
pub fn serve(
    dir: &Path,
    interface: &'static ModelInterface,
    limits: &ModelLimits,
    input: &mut impl BufRead,
    output: &mut impl Write,
    log: &mut impl Write,
) -> std::io::Result<()> {
    let say = |message: HostMessage, output: &mut dyn Write| -> std::io::Result<()> {
        output.write_all(&message.encode())?;
        output.flush()
    };
    let policy = match Policy::load(dir, interface, limits) {
        Ok(policy) => policy,
        Err(refusal) => {
            // A log write that fails must not hide the refusal itself.
            let _ = writeln!(log, "[arena: model refused: {refusal}]");
            if read_turn(input)?.is_some() {
                say(HostMessage::Refused(refusal.to_string()), output)?;
            }
            return Ok(());
        }
    };
    let report = serde_json::to_string(policy.report()).unwrap_or_default();
    let _ = writeln!(log, "[arena: model ready: {report}]");
    let evaluator = Evaluator::start(policy)?;
    while let Some(turn) = read_turn(input)? {
        let deadline = Duration::from_millis(turn.deadline_ms);
        let result = evaluator.answer(turn.frame, deadline)?;
        let message = match result {
            Ok(answer) => HostMessage::Ok {
                eval_us: answer.eval_us,
                overridden: answer.best_was_illegal,
                reply: answer.reply,
            },
            Err(strike) => {
                let _ = writeln!(log, "[arena: strike: {strike}]");
                let text = strike.to_string();
                let reason = text
                    .split_once(": ")
                    .map_or(text.as_str(), |(_, r)| r)
                    .to_owned();
                HostMessage::Strike {
                    kind: strike.kind().to_owned(),
                    reason,
                }
            }
        };
        say(message, output)?;
    }
    Ok(())
}

/// What the evaluation thread is asked to do with a frame.
enum Job {
    /// Answer it within the deadline.
    Answer(Vec<u8>, Duration),
    /// Only read it: its turn was struck before it could be evaluated, but
    /// the game's reader must still see every frame.
    Observe(Vec<u8>),
}

/// The evaluation thread and the one evaluation it may still be running.
struct Evaluator {
    frames: mpsc::Sender<Job>,
    answers: mpsc::Receiver<Result<Answer, Strike>>,
    /// An evaluation whose turn was already answered late.
    busy: std::cell::Cell<bool>,
}

impl Evaluator {
    fn start(mut policy: Policy) -> std::io::Result<Evaluator> {
        let (frames, jobs) = mpsc::channel::<Job>();
        let (results, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name("evaluate".to_owned())
            .spawn(move || {
                for job in jobs {
                    match job {
                        Job::Answer(frame, deadline) => {
                            if results.send(policy.answer(&frame, deadline)).is_err() {
                                return;
                            }
                        }
                        // The turn is struck already; a frame that cannot
                        // be read was that turn's problem too.
                        Job::Observe(frame) => {
                            let _ = policy.observe(&frame);
                        }
                    }
                }
            })?;
        Ok(Evaluator {
            frames,
            answers,
            busy: std::cell::Cell::new(false),
        })
    }

    /// This turn's answer, or a `late` strike at its deadline. `Err` only
    /// when the evaluation thread is gone (a bug: tract's panics are caught
    /// per turn).
    fn answer(
        &self,
        frame: Vec<u8>,
        deadline: Duration,
    ) -> std::io::Result<Result<Answer, Strike>> {
        let due = Instant::now() + deadline;
        let late = || Strike::Late {
            took_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
            deadline_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
        };
        let gone = || std::io::Error::other("the evaluation thread is gone");
        if self.busy.get() {
            // The late turn's answer is owed nothing: it was struck already.
            match self
                .answers
                .recv_timeout(due.saturating_duration_since(Instant::now()))
            {
                Ok(_) => self.busy.set(false),
                Err(RecvTimeoutError::Timeout) => {
                    self.frames.send(Job::Observe(frame)).map_err(|_| gone())?;
                    return Ok(Err(late()));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
        self.frames
            .send(Job::Answer(frame, deadline))
            .map_err(|_| gone())?;
        self.busy.set(true);
        match self
            .answers
            .recv_timeout(due.saturating_duration_since(Instant::now()))
        {
            Ok(result) => {
                self.busy.set(false);
                Ok(result)
            }
            Err(RecvTimeoutError::Timeout) => Ok(Err(late())),
            Err(RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }
}
