//! Compiling a submitted WebAssembly module, confined.
//!
//! Compilation is work on untrusted input whose cost the module chooses: a
//! module of a million tiny functions takes gigabytes and minutes. So the
//! worker never compiles in its own process. It starts `arena wasm-compile`
//! through the launcher, confined exactly as the seat's host will be (the
//! seat's cgroup with its memory cap and core, its namespaces and filters),
//! sends it the module and reads the compiled code back under the build's
//! wall limit. Whatever goes wrong inside is the module's doing, and a
//! `build_failed` reason for its entrant; only failing to start the
//! compiler, or to talk to it, is the host's.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::fd::{self, Interest, ReadOutcome};
use crate::launcher::{BotExit, LaunchedBot};

/// The largest compiled module accepted back, in bytes. Compiled code runs
/// a few times the size of the module; a 64 MiB module of straight-line
/// code stays well under this.
pub const MAX_COMPILED_BYTES: usize = 1 << 30;
/// How much of the compiler's stderr is kept for the reason.
const LOG_CAP: usize = 16 * 1024;
/// The longest wait between looks at the clock.
const TICK: Duration = Duration::from_millis(200);

/// How a confined compile ended.
#[derive(Debug)]
pub enum Compiled {
    /// The compiled module.
    Code(Vec<u8>),
    /// It cannot be a bot: the reason, for the entrant.
    Refused(String),
}

/// Talks to a started compiler: sends `wasm`, collects its output and
/// stderr until it ends or `wall_limit` passes (then it is killed). The
/// `Err` is this side's I/O failing.
pub fn run(
    mut compiler: LaunchedBot,
    wasm: &[u8],
    wall_limit: Duration,
) -> std::io::Result<Compiled> {
    let deadline = Instant::now() + wall_limit;
    for fd in [&compiler.stdin, &compiler.stdout, &compiler.stderr] {
        fd::set_nonblocking(fd.as_raw_fd())?;
    }
    let mut stdin = Some(compiler.stdin);
    let mut stdout = Some(compiler.stdout);
    let mut stderr = Some(compiler.stderr);
    let (mut sent, mut code, mut log) = (0, Vec::new(), Vec::new());
    let mut buf = vec![0u8; 64 * 1024];
    let stopped = loop {
        if let Some(input) = &stdin {
            match fd::write_some(input.as_raw_fd(), &wasm[sent..])? {
                Some(n) => sent += n,
                // It stopped reading: it will say why, or die.
                None => sent = wasm.len(),
            }
            if sent == wasm.len() {
                stdin = None;
            }
        }
        drain(
            &mut stdout,
            &mut buf,
            &mut code,
            MAX_COMPILED_BYTES + 1,
            true,
        )?;
        if code.len() > MAX_COMPILED_BYTES {
            break Some(format!(
                "compiling bot.wasm gave more than {MAX_COMPILED_BYTES} bytes of code"
            ));
        }
        drain(&mut stderr, &mut buf, &mut log, LOG_CAP, false)?;
        if stdout.is_none() && stderr.is_none() {
            break None;
        }
        let now = Instant::now();
        if now >= deadline {
            break Some(format!(
                "compiling bot.wasm took longer than the build's wall limit of {wall_limit:.0?}"
            ));
        }
        let interests: Vec<Interest> = [(&stdin, false), (&stdout, true), (&stderr, true)]
            .into_iter()
            .filter_map(|(fd, readable): (&Option<OwnedFd>, bool)| {
                fd.as_ref().map(|fd| Interest {
                    fd: fd.as_raw_fd(),
                    readable,
                    writable: !readable,
                })
            })
            .collect();
        fd::wait_any(&interests, (deadline - now).min(TICK))?;
    };
    drop((stdin, stdout, stderr));
    if let Some(reason) = stopped {
        compiler.handle.kill()?;
        compiler.handle.wait()?;
        return Ok(Compiled::Refused(reason));
    }
    let exit = compiler.handle.wait()?;
    Ok(verdict(exit, code, &log))
}

/// Reads what `fd` has now into `into`, keeping at most `cap` bytes (past
/// that, what comes is read and dropped, so the writer never blocks);
/// closes `fd` at its end. Stops early once `into` is full and `stop_when_full`.
fn drain(
    fd: &mut Option<OwnedFd>,
    buf: &mut [u8],
    into: &mut Vec<u8>,
    cap: usize,
    stop_when_full: bool,
) -> std::io::Result<()> {
    while let Some(open) = fd {
        match fd::read_some(open.as_raw_fd(), buf)? {
            ReadOutcome::Data(n) => {
                let room = cap.saturating_sub(into.len()).min(n);
                into.extend_from_slice(&buf[..room]);
                if stop_when_full && into.len() >= cap {
                    break;
                }
            }
            ReadOutcome::Empty => break,
            ReadOutcome::Closed => *fd = None,
        }
    }
    Ok(())
}

fn verdict(exit: BotExit, code: Vec<u8>, log: &[u8]) -> Compiled {
    let refused_exit = i32::from(arena_wasm::compile::REFUSED_EXIT);
    let said = String::from_utf8_lossy(log);
    let said = said.trim();
    match (exit.code, exit.signal) {
        _ if exit.oom_killed => Compiled::Refused(
            "compiling bot.wasm ran out of memory (the seat's memory cap)".to_owned(),
        ),
        (Some(0), _) if !code.is_empty() => Compiled::Code(code),
        (Some(status), _) if status == refused_exit && !said.is_empty() => {
            Compiled::Refused(said.to_owned())
        }
        (Some(status), _) => Compiled::Refused(format!(
            "compiling bot.wasm failed (the compiler exited with status {status}{})",
            last_line(said)
        )),
        (None, Some(signal)) => Compiled::Refused(format!(
            "compiling bot.wasm failed (the compiler was killed by signal {signal}{})",
            last_line(said)
        )),
        (None, None) => Compiled::Refused("compiling bot.wasm ended abnormally".to_owned()),
    }
}

/// `: <the last line>` of what the compiler said, when it said anything.
fn last_line(said: &str) -> String {
    said.lines()
        .last()
        .map(|line| format!(": {}", line.trim()))
        .unwrap_or_default()
}
