//! A bot process as a seat: frames to its stdin, reply lines from its
//! stdout, stderr into a capped log, over non-blocking pipes.
//!
//! Line `k` of a bot's stdout answers frame `k`. A line that completes after
//! its frame's deadline is discarded when it arrives, so a bot that is late
//! once answers the next frame normally instead of staying a turn behind.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use arena_engine::{FaultKind, Forfeit};

use super::{Answer, Budget, Offer, SeatRuntime};
use crate::capped_log::CappedLog;
use crate::fd::{self, Interest, ReadOutcome};
use crate::launcher::{BotExit, BotHandle, BotSpec, LaunchError, LaunchedBot};
use crate::lines::{Line, LineSplitter};
use crate::runner::RunnerError;

/// A reply the seat is waiting to give.
struct Pending {
    /// Which frame it answers (counted from 0).
    frame: u64,
    sent_at: Instant,
    deadline: Instant,
}

/// A running bot as its seat holds it.
struct Process {
    /// `None` once closed: the EOF that ends the game for the bot.
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
    handle: Box<dyn BotHandle>,
}

/// A seat played by a launched process.
pub struct ProcessSeat {
    seat: usize,
    bot: String,
    process: Process,
    /// Frame bytes not yet taken by the bot's stdin pipe.
    outbox: Vec<u8>,
    outbox_sent: usize,
    lines: LineSplitter,
    stderr: CappedLog,
    /// Frames sent so far; frame `k` is answered by line `k`.
    frames_sent: u64,
    /// Lines accounted to frames so far (answers and late ones).
    lines_seen: u64,
    pending: Option<Pending>,
    /// How the pending frame was settled, waiting to be polled.
    settled: Option<Answer>,
    stray_lines: u32,
    stdout_closed: bool,
    stdin_closed: bool,
    /// Out of the game (its exit was reported); never offered again.
    gone: bool,
    exit_grace: Duration,
    latencies: Vec<u64>,
    /// Scratch buffer for pipe reads.
    read_buf: Vec<u8>,
}

/// Sizes a process seat works with.
#[derive(Clone, Copy, Debug)]
pub struct ProcessLimits {
    /// The longest reply line accepted, in bytes.
    pub line_cap: usize,
    /// Stderr kept, in bytes (the newest).
    pub stderr_cap: usize,
    /// How long a bot whose stdout closed gets to be seen dead.
    pub exit_grace: Duration,
}

impl ProcessSeat {
    /// Takes over a launched bot. Its pipes are made non-blocking here, where
    /// that is relied on, rather than by every launcher.
    pub fn new(
        launched: LaunchedBot,
        bot: &BotSpec,
        seat: usize,
        limits: ProcessLimits,
    ) -> Result<Self, LaunchError> {
        for pipe in [&launched.stdin, &launched.stdout, &launched.stderr] {
            fd::set_nonblocking(pipe.as_raw_fd())
                .map_err(|e| LaunchError::io("make a pipe non-blocking", &bot.dir, e))?;
        }
        Ok(Self {
            seat,
            bot: bot.name.clone(),
            process: Process {
                stdin: Some(launched.stdin),
                stdout: launched.stdout,
                stderr: launched.stderr,
                handle: launched.handle,
            },
            outbox: Vec::with_capacity(16 * 1024),
            outbox_sent: 0,
            lines: LineSplitter::new(limits.line_cap),
            stderr: CappedLog::new(limits.stderr_cap),
            frames_sent: 0,
            lines_seen: 0,
            pending: None,
            settled: None,
            stray_lines: 0,
            stdout_closed: false,
            stdin_closed: false,
            gone: false,
            exit_grace: limits.exit_grace,
            latencies: Vec::new(),
            read_buf: vec![0; 64 * 1024],
        })
    }

    fn pipe_error(&self, source: std::io::Error) -> RunnerError {
        RunnerError::Pipe {
            seat: self.seat,
            source,
        }
    }

    /// Settles the pending frame.
    fn settle(&mut self, answer: Answer) {
        self.pending = None;
        self.settled = Some(answer);
    }

    /// Handles one complete line from the bot, read at `now`.
    fn take_line(&mut self, line: Line<'_>, now: Instant) {
        let index = self.lines_seen;
        match &self.pending {
            // Read after its deadline: late, whatever the runner was doing.
            Some(pending) if pending.frame == index && now > pending.deadline => {
                self.lines_seen += 1;
                self.settle(Answer::Fault(FaultKind::Timeout));
            }
            Some(pending) if pending.frame == index => {
                self.lines_seen += 1;
                let latency = now.saturating_duration_since(pending.sent_at);
                self.latencies
                    .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
                match line {
                    Line::Complete(bytes) => self.settle(Answer::Reply(bytes.to_vec())),
                    Line::TooLong => self.settle(Answer::Fault(FaultKind::Malformed)),
                }
            }
            // The answer to a frame whose deadline passed: dropped, but it
            // still uses up its frame's slot.
            _ if index < self.frames_sent => self.lines_seen += 1,
            // Nothing was asked: a protocol violation, and it answers nothing.
            _ => self.stray_lines += 1,
        }
    }

    /// Reads whatever the bot has written to stdout and stderr, without blocking.
    fn pump_output(&mut self) -> Result<(), RunnerError> {
        let stdout = self.process.stdout.as_raw_fd();
        let stderr = self.process.stderr.as_raw_fd();
        // Bounded per call: a bot flooding a pipe cannot keep the referee here.
        for _ in 0..16 {
            if self.stdout_closed {
                break;
            }
            match fd::read_some(stdout, &mut self.read_buf).map_err(|e| self.pipe_error(e))? {
                ReadOutcome::Data(n) => {
                    // Lines count as read when the read returned them.
                    let now = Instant::now();
                    let mut lines = std::mem::replace(&mut self.lines, LineSplitter::new(0));
                    let buf = std::mem::take(&mut self.read_buf);
                    lines.feed(&buf[..n], |line| self.take_line(line, now));
                    self.read_buf = buf;
                    self.lines = lines;
                }
                ReadOutcome::Empty => break,
                ReadOutcome::Closed => self.stdout_closed = true,
            }
        }
        for _ in 0..16 {
            match fd::read_some(stderr, &mut self.read_buf).map_err(|e| self.pipe_error(e))? {
                ReadOutcome::Data(n) => self.stderr.write(&self.read_buf[..n]),
                ReadOutcome::Empty | ReadOutcome::Closed => break,
            }
        }
        Ok(())
    }

    /// Writes as much of the outbox as the pipe takes now.
    fn flush_outbox(&mut self) -> Result<(), RunnerError> {
        let Some(stdin) = self.process.stdin.as_ref() else {
            return Ok(());
        };
        let stdin: RawFd = stdin.as_raw_fd();
        while !self.stdin_closed && self.outbox_sent < self.outbox.len() {
            match fd::write_some(stdin, &self.outbox[self.outbox_sent..])
                .map_err(|e| self.pipe_error(e))?
            {
                Some(0) => break,
                Some(n) => self.outbox_sent += n,
                // The bot closed its stdin; its fate shows on stdout.
                None => self.stdin_closed = true,
            }
        }
        Ok(())
    }

    /// The process's exit, if it has ended.
    fn peek_exit(&mut self) -> Result<Option<BotExit>, RunnerError> {
        self.process
            .handle
            .try_wait()
            .map_err(|source| RunnerError::Pipe {
                seat: self.seat,
                source,
            })
    }

    /// Why a seat whose stdout closed is out: its exit, once the kernel has it.
    /// An exit that cannot be read (e.g. the sandbox cannot tell a memory
    /// kill from a crash) is the runner's failure, never a verdict.
    fn exit_forfeit(&mut self) -> Result<Forfeit, RunnerError> {
        let deadline = Instant::now() + self.exit_grace;
        let mut pause = Duration::from_micros(20);
        loop {
            match self.peek_exit()? {
                Some(exit) => return Ok(forfeit_for(exit)),
                None if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                }
                // Alive with its stdout closed: it cannot play on.
                None => return Ok(Forfeit::Exit),
            }
        }
    }
}

impl SeatRuntime for ProcessSeat {
    fn offer(&mut self, offer: Offer<'_>) -> Result<(), RunnerError> {
        // Lines written before this frame was sent answer nothing: take
        // them now so they are not mistaken for its reply.
        self.pump_output()?;
        if self.outbox_sent == self.outbox.len() {
            self.outbox.clear();
            self.outbox_sent = 0;
        }
        self.outbox.extend_from_slice(offer.frame);
        let Budget::Wall(limit) = offer.budget;
        // The clock starts before the write: a bot sharing this core can
        // be woken, run and answer inside the write call itself.
        let sent_at = Instant::now();
        self.flush_outbox()?;
        self.pending = Some(Pending {
            frame: self.frames_sent,
            sent_at,
            deadline: sent_at + limit,
        });
        self.frames_sent += 1;
        self.settled = None;
        Ok(())
    }

    fn poll(&mut self) -> Result<Option<Answer>, RunnerError> {
        if self.gone {
            return Ok(None);
        }
        if self.pending.is_some() {
            self.flush_outbox()?;
        }
        self.pump_output()?;
        if let Some(answer) = self.settled.take() {
            return Ok(Some(answer));
        }
        // Read after the pipe was drained: a reply that lands between the
        // read and this check waits for the next pass.
        let now = Instant::now();
        if self.stdout_closed && self.pending.is_some() {
            self.gone = true;
            self.pending = None;
            return Ok(Some(Answer::Gone(self.exit_forfeit()?)));
        }
        match &self.pending {
            Some(pending) if now >= pending.deadline => {
                self.pending = None;
                // A silent bot may simply be dead with its stdout held open
                // by a child; its exit settles that.
                if let Some(exit) = self.peek_exit()? {
                    self.gone = true;
                    return Ok(Some(Answer::Gone(forfeit_for(exit))));
                }
                Ok(Some(Answer::Fault(FaultKind::Timeout)))
            }
            _ => Ok(None),
        }
    }

    fn deadline(&self) -> Option<Instant> {
        let pending = self.pending.as_ref()?;
        if self.settled.is_some() {
            return Some(Instant::now());
        }
        Some(pending.deadline)
    }

    fn wait_on(&self, interests: &mut Vec<Interest>) {
        if self.pending.is_none() {
            return;
        }
        interests.push(Interest {
            fd: self.process.stdout.as_raw_fd(),
            readable: true,
            writable: false,
        });
        interests.push(Interest {
            fd: self.process.stderr.as_raw_fd(),
            readable: true,
            writable: false,
        });
        if let Some(stdin) = &self.process.stdin
            && self.outbox_sent < self.outbox.len()
            && !self.stdin_closed
        {
            interests.push(Interest {
                fd: stdin.as_raw_fd(),
                readable: false,
                writable: true,
            });
        }
    }

    fn take_stray_lines(&mut self) -> u32 {
        std::mem::take(&mut self.stray_lines)
    }

    fn close_input(&mut self) {
        // Closing our end is the EOF that tells the bot the game is over.
        self.process.stdin = None;
        self.pending = None;
    }

    fn stop(&mut self, grace_until: Instant) {
        self.close_input();
        while Instant::now() < grace_until {
            // Keep draining so a bot blocked on a full stderr pipe can exit.
            if self.pump_output().is_err() {
                break;
            }
            match self.peek_exit() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        if let Err(e) = self.process.handle.kill() {
            tracing::warn!(seat = self.seat, bot = %self.bot, error = %e, "cannot kill a seat");
        }
        if let Err(e) = self.process.handle.wait() {
            tracing::warn!(seat = self.seat, bot = %self.bot, error = %e, "cannot reap a seat");
        }
    }

    fn log(&mut self) -> Vec<u8> {
        self.stderr.contents()
    }

    fn latencies(&self) -> &[u64] {
        &self.latencies
    }
}

fn forfeit_for(exit: BotExit) -> Forfeit {
    if exit.oom_killed {
        Forfeit::Memory
    } else if exit.signal.is_some() {
        Forfeit::Crash
    } else {
        Forfeit::Exit
    }
}
