//! The host process: `arena wasm-host`, run inside the seat's sandbox.
//!
//! It reads the compiled module and then turns from its stdin (see
//! [`crate::wire`]), plays them on a [`Session`] and answers one line per
//! turn. The guest's stderr is the host's own, so it lands in the bot's
//! log, and a trap's message is written there too. The host ends after
//! the guest does, or when its stdin closes (the game is over).

use std::io::{BufRead, Write};
use std::time::Duration;

use wasmtime::{Engine, Module};

use crate::config::HostLimits;
use crate::session::{Session, TurnEnd};
use crate::wire::{HostMessage, TurnRequest, WorkerMessage, read_worker_message};

/// Serves one guest over `input`/`output`, its log into `log`.
pub fn serve(
    engine: &Engine,
    limits: &HostLimits,
    seed: u64,
    input: &mut impl BufRead,
    output: &mut impl Write,
    log: Box<dyn Write + Send>,
) -> std::io::Result<()> {
    match load(engine, limits, seed, input, log)? {
        Loaded::Ready(session, log_for_traps) => play(*session, log_for_traps, input, output),
        Loaded::Refused(message) => say(HostMessage::Error { message }, output),
        Loaded::Closed => Ok(()),
    }
}

/// Writes one message to the worker.
fn say(message: HostMessage, output: &mut impl Write) -> std::io::Result<()> {
    output.write_all(&message.encode())?;
    output.flush()
}

/// What the first message, the module, leaves the host with.
enum Loaded {
    /// A session ready for its turns, and the log the host writes its notes to.
    Ready(Box<Session>, LogHandle),
    /// No session: the error to answer.
    Refused(String),
    /// The input closed before the module came.
    Closed,
}

/// Reads the compiled module and starts a session on it.
fn load(
    engine: &Engine,
    limits: &HostLimits,
    seed: u64,
    input: &mut impl BufRead,
    log: Box<dyn Write + Send>,
) -> std::io::Result<Loaded> {
    let artifact = match read_worker_message(input)? {
        Some(WorkerMessage::Module(artifact)) => artifact,
        Some(WorkerMessage::Turn(_)) => {
            return Ok(Loaded::Refused("a turn came before the module".to_owned()));
        }
        None => return Ok(Loaded::Closed),
    };
    // Safety: the worker sends only what its own module cache compiled
    // with this very configuration (see `ModuleCache::read_artifact`).
    let module = match unsafe { Module::deserialize(engine, &artifact) } {
        Ok(module) => module,
        Err(e) => {
            return Ok(Loaded::Refused(format!(
                "the compiled module cannot be loaded: {e:#}"
            )));
        }
    };
    drop(artifact);
    let mut log_for_traps = LogHandle::default();
    Ok(
        match Session::new(engine, module, limits, seed, log_for_traps.share(log)) {
            Ok(session) => Loaded::Ready(Box::new(session), log_for_traps),
            Err(e) => Loaded::Refused(e.to_string()),
        },
    )
}

/// The turn loop: reads each turn and answers it, until the guest ends,
/// a turn ends it or the input closes.
fn play(
    mut session: Session,
    mut log_for_traps: LogHandle,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<()> {
    loop {
        let turn = match read_worker_message(input)? {
            Some(WorkerMessage::Turn(turn)) => turn,
            Some(WorkerMessage::Module(_)) => {
                return say(
                    HostMessage::Error {
                        message: "a second module".to_owned(),
                    },
                    output,
                );
            }
            None => {
                session.close_input();
                return Ok(());
            }
        };
        let message = answer(&mut session, &turn, &mut log_for_traps);
        let last = !matches!(
            message,
            HostMessage::Reply { .. }
                | HostMessage::Overlong { .. }
                | HostMessage::NoReply { .. }
                | HostMessage::Exhausted { .. }
        );
        say(message, output)?;
        if last {
            return Ok(());
        }
    }
}

/// Plays one turn; the answer to it (a trap or the backstop noted in the
/// log as well).
fn answer(session: &mut Session, turn: &TurnRequest, log_for_traps: &mut LogHandle) -> HostMessage {
    let end = session.turn(
        &turn.frame,
        turn.budget,
        turn.refill,
        Duration::from_millis(turn.wall_ms),
    );
    match end {
        Ok(TurnEnd::Reply { line, fuel, stray }) => HostMessage::Reply { fuel, stray, line },
        Ok(TurnEnd::Overlong { fuel, stray }) => HostMessage::Overlong { fuel, stray },
        Ok(TurnEnd::NoReply { fuel, stray }) => HostMessage::NoReply { fuel, stray },
        Ok(TurnEnd::Exhausted { fuel }) => HostMessage::Exhausted { fuel },
        Ok(TurnEnd::WallBackstop) => {
            log_for_traps.line("[arena: the turn's wall-clock backstop ran out]");
            HostMessage::WallBackstop
        }
        Ok(TurnEnd::Trap { message }) => {
            log_for_traps.line(&format!("[arena: wasm trap: {message}]"));
            HostMessage::Trap
        }
        Ok(TurnEnd::Exit { code }) => HostMessage::Exit { code },
        Err(e) => HostMessage::Error {
            message: e.to_string(),
        },
    }
}

/// The log, shared by the guest's stderr and the host's own notes.
#[derive(Default, Clone)]
struct LogHandle(std::sync::Arc<std::sync::Mutex<Option<Box<dyn Write + Send>>>>);

impl LogHandle {
    fn share(&mut self, log: Box<dyn Write + Send>) -> Box<dyn Write + Send> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(log);
        Box::new(self.clone())
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self, "{text}");
        let _ = self.flush();
    }
}

impl Write for LogHandle {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(log) => log.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(log) => log.flush(),
            None => Ok(()),
        }
    }
}
