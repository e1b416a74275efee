//! The referee: one match between launched bots, turn by turn, over pipes.
//!
//! Each turn every live seat gets its frame; the referee then waits for one
//! line per seat, each against its own deadline on the monotonic clock, and
//! steps the game with the replies (or passes for faults). It never blocks on
//! a bot: pipes are non-blocking, waiting is a short spin (the runner owns a
//! core, and spinning is what gets the round trip to a few microseconds)
//! followed by `poll` up to the earliest deadline.
//!
//! Line `k` of a bot's stdout answers frame `k`. A line that completes after
//! its frame's deadline is discarded when it arrives, so a bot that is late
//! once answers the next frame normally instead of staying a turn behind.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use arena_engine::{Game, Outcome};

use crate::capped_log::CappedLog;
use crate::fd::{self, Interest, ReadOutcome};
use crate::launcher::{BotExit, BotHandle, BotSpec, LaunchError, LaunchedBot, Launcher};
use crate::lines::{Line, LineSplitter};
use crate::replay::{Replay, ReplayTurn, SeatForfeit};
use crate::report::{FaultCounts, FaultKind, Forfeit, LatencyMs, MatchReport, PlayerReport};

/// The runner's limits. The defaults are the Generals Competition's.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// Deadline for the reply to the first frame (bots may warm up).
    pub first_move: Duration,
    /// Deadline for every later reply.
    pub per_move: Duration,
    /// Faults that forfeit the match.
    pub fault_limit: u32,
    /// The longest reply line accepted, in bytes, without its newline.
    pub line_cap: usize,
    /// Stderr kept per bot, in bytes (the newest).
    pub stderr_cap: usize,
    /// How long to busy-poll before sleeping in `poll`.
    pub spin: Duration,
    /// How long bots get to exit after EOF at the end, and to be seen dead
    /// after closing their stdout.
    pub exit_grace: Duration,
    /// Wall limit for each build.sh.
    pub build_limit: Duration,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self {
            first_move: Duration::from_secs(10),
            per_move: Duration::from_millis(150),
            fault_limit: 50,
            line_cap: 4096,
            stderr_cap: 1 << 20,
            spin: Duration::from_micros(200),
            exit_grace: Duration::from_millis(500),
            build_limit: Duration::from_secs(600),
        }
    }
}

/// Everything a match leaves behind.
pub struct MatchOutput<G: Game> {
    pub report: MatchReport,
    pub replay: Replay<G>,
    /// Each seat's stderr, capped, then its build log when it had one.
    pub logs: Vec<Vec<u8>>,
    /// Each seat's in-time reply latencies, in nanoseconds (sorted).
    pub move_latencies_ns: Vec<Vec<u64>>,
    /// Each seat's build: whether it succeeded, came from the cache, and took how long.
    pub builds: Vec<BuildSummary>,
    /// How long each launched seat took to start (spawn call to handle).
    pub spawn_times: Vec<Duration>,
}

/// A seat's build, for metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildSummary {
    pub succeeded: bool,
    pub cached: bool,
    pub duration: Duration,
}

/// The runner itself failed; the match must be replayed elsewhere.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("{bots} bots for a game of {seats} seats")]
    SeatCount { bots: usize, seats: usize },
    #[error("launching seat {seat}")]
    Launch { seat: usize, source: LaunchError },
    #[error("building seat {seat}")]
    Build { seat: usize, source: LaunchError },
    #[error("pipe I/O with seat {seat}")]
    Pipe { seat: usize, source: std::io::Error },
    #[error("waiting for bots")]
    Poll(#[source] std::io::Error),
}

/// Plays one match of `game` between `bots` (seat order) and reports it.
pub fn play_match<G: Game>(
    game: G,
    seed: u64,
    bots: &[BotSpec],
    launcher: &dyn Launcher,
    config: &RunnerConfig,
) -> Result<MatchOutput<G>, RunnerError> {
    if bots.len() != game.seats() {
        return Err(RunnerError::SeatCount {
            bots: bots.len(),
            seats: game.seats(),
        });
    }
    let mut referee = Referee {
        initial: game.clone(),
        game,
        config,
        seats: Vec::with_capacity(bots.len()),
        turns: Vec::new(),
        frame: Vec::with_capacity(16 * 1024),
        read_buf: vec![0; 64 * 1024],
    };

    let mut build_logs = Vec::with_capacity(bots.len());
    let mut builds = Vec::with_capacity(bots.len());
    let mut spawn_times = Vec::with_capacity(bots.len());
    let mut runnable = Vec::with_capacity(bots.len());
    for (seat, bot) in bots.iter().enumerate() {
        let span = tracing::info_span!(
            "build",
            seat,
            bot = %bot.name,
            succeeded = tracing::field::Empty,
            cached = tracing::field::Empty,
        );
        let build = span
            .in_scope(|| launcher.build(bot, config.build_limit))
            .map_err(|source| RunnerError::Build { seat, source })?;
        span.record("succeeded", build.succeeded);
        span.record("cached", build.cached);
        drop(span);
        let mut state = SeatState::new(bot, config);
        if !build.succeeded {
            state.forfeit_at(Forfeit::BuildFailed, 0);
        }
        referee.seats.push(state);
        builds.push(BuildSummary {
            succeeded: build.succeeded,
            cached: build.cached,
            duration: build.duration,
        });
        let mut log = build.log;
        if let Some(reason) = build.failure {
            log.extend_from_slice(format!("\n[arena: build failed: {reason}]\n").as_bytes());
        }
        build_logs.push(log);
        runnable.push(BotSpec {
            name: bot.name.clone(),
            dir: build.artifact.unwrap_or_else(|| bot.dir.clone()),
        });
    }
    let failed_builds: Vec<usize> = (0..bots.len())
        .filter(|&s| referee.seats[s].forfeit.is_some())
        .collect();
    let outcome = if failed_builds.is_empty() {
        // Launching and the game loop; one span for the whole game, none per move.
        let span = tracing::info_span!("play", turns = tracing::field::Empty);
        let _play = span.enter();
        let mut unstartable = Vec::new();
        for (seat, bot) in runnable.iter().enumerate() {
            let spawn_started = Instant::now();
            match launcher
                .launch(bot, seat)
                .and_then(|l| Process::new(l, bot))
            {
                Ok(process) => {
                    spawn_times.push(spawn_started.elapsed());
                    referee.seats[seat].process = Some(process);
                }
                Err(LaunchError::BotCannotStart { .. }) => {
                    referee.seats[seat].forfeit_at(Forfeit::Exit, 0);
                    unstartable.push(seat);
                }
                Err(source) => {
                    referee.stop_all();
                    return Err(RunnerError::Launch { seat, source });
                }
            }
        }
        if unstartable.is_empty() {
            let played = referee.play();
            // Bots are stopped whether the game ended or the runner failed.
            referee.stop_all();
            span.record("turns", referee.turns.len());
            played?
        } else {
            referee.stop_all();
            referee
                .game
                .forfeit(&unstartable)
                .unwrap_or_else(|| unreachable_outcome(referee.game.seats()))
        }
    } else {
        referee
            .game
            .forfeit(&failed_builds)
            .unwrap_or_else(|| unreachable_outcome(referee.game.seats()))
    };
    Ok(referee.finish(seed, outcome, build_logs, builds, spawn_times))
}

/// A game that declines to end on a forfeit is treated as a draw, so the
/// runner never loops on a game bug.
fn unreachable_outcome(seats: usize) -> Outcome {
    Outcome {
        ranks: vec![0; seats],
        reason: "forfeit".to_owned(),
    }
}

/// A reply a seat is waiting to give.
struct Pending {
    /// Which frame it answers (counted from 0).
    frame: u64,
    sent_at: Instant,
    deadline: Instant,
}

/// A running bot as the referee holds it.
struct Process {
    /// `None` once closed: the EOF that ends the game for the bot.
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
    handle: Box<dyn BotHandle>,
}

impl Process {
    /// Takes over a launched bot. Its pipes are made non-blocking here, where
    /// that is relied on, rather than by every launcher.
    fn new(launched: LaunchedBot, bot: &BotSpec) -> Result<Self, LaunchError> {
        for pipe in [&launched.stdin, &launched.stdout, &launched.stderr] {
            fd::set_nonblocking(pipe.as_raw_fd())
                .map_err(|e| LaunchError::io("make a pipe non-blocking", &bot.dir, e))?;
        }
        Ok(Self {
            stdin: Some(launched.stdin),
            stdout: launched.stdout,
            stderr: launched.stderr,
            handle: launched.handle,
        })
    }
}

/// One seat: its process, its pipes' state and its counters.
struct SeatState {
    bot: String,
    process: Option<Process>,
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
    /// This turn's decided reply: an action, or the fault that replaces it.
    reply: Option<Result<Vec<u8>, FaultKind>>,
    stdout_closed: bool,
    stdin_closed: bool,
    forfeit: Option<Forfeit>,
    /// Game time at which `forfeit` happened.
    forfeit_turn: u32,
    faults: FaultCounts,
    moves: u32,
    latencies: Vec<u64>,
}

impl SeatState {
    fn new(bot: &BotSpec, config: &RunnerConfig) -> Self {
        Self {
            bot: bot.name.clone(),
            process: None,
            outbox: Vec::with_capacity(16 * 1024),
            outbox_sent: 0,
            lines: LineSplitter::new(config.line_cap),
            stderr: CappedLog::new(config.stderr_cap),
            frames_sent: 0,
            lines_seen: 0,
            pending: None,
            reply: None,
            stdout_closed: false,
            stdin_closed: false,
            forfeit: None,
            forfeit_turn: 0,
            faults: FaultCounts::default(),
            moves: 0,
            latencies: Vec::new(),
        }
    }

    fn live(&self) -> bool {
        self.forfeit.is_none()
    }

    /// Records the seat's first forfeit; later ones change nothing.
    fn forfeit_at(&mut self, reason: Forfeit, turn: u32) {
        if self.forfeit.is_none() {
            self.forfeit = Some(reason);
            self.forfeit_turn = turn;
        }
    }

    /// Settles the pending frame with `reply`.
    fn resolve(&mut self, reply: Result<Vec<u8>, FaultKind>) {
        self.pending = None;
        if let Err(kind) = reply {
            self.faults.add(kind);
        }
        self.reply = Some(reply);
    }

    /// A fault outside any pending frame (a line nobody asked for).
    fn stray_fault(&mut self, kind: FaultKind) {
        self.faults.add(kind);
    }

    /// Handles one complete line from the bot, read at `now`.
    fn take_line(&mut self, line: Line<'_>, now: Instant) {
        let index = self.lines_seen;
        match &self.pending {
            // Read after its deadline: late, whatever the runner was doing.
            Some(pending) if pending.frame == index && now > pending.deadline => {
                self.lines_seen += 1;
                self.resolve(Err(FaultKind::Timeout));
            }
            Some(pending) if pending.frame == index => {
                self.lines_seen += 1;
                let latency = now.saturating_duration_since(pending.sent_at);
                self.latencies
                    .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
                match line {
                    Line::Complete(bytes) => self.resolve(Ok(bytes.to_vec())),
                    Line::TooLong => self.resolve(Err(FaultKind::Malformed)),
                }
            }
            // The answer to a frame whose deadline passed: dropped, but it
            // still uses up its frame's slot.
            _ if index < self.frames_sent => self.lines_seen += 1,
            // Nothing was asked: a protocol violation, and it answers nothing.
            _ => self.stray_fault(FaultKind::Malformed),
        }
    }
}

struct Referee<'c, G: Game> {
    initial: G,
    game: G,
    config: &'c RunnerConfig,
    seats: Vec<SeatState>,
    turns: Vec<ReplayTurn<G::Action>>,
    /// Scratch buffer the game renders frames into.
    frame: Vec<u8>,
    /// Scratch buffer for pipe reads.
    read_buf: Vec<u8>,
}

impl<G: Game> Referee<'_, G> {
    /// Plays turns until the game or a forfeit ends it.
    fn play(&mut self) -> Result<Outcome, RunnerError> {
        loop {
            if let Some(outcome) = self.game.outcome() {
                return Ok(outcome.clone());
            }
            self.send_frames()?;
            self.collect_replies()?;

            let mut actions = Vec::with_capacity(self.seats.len());
            let mut faults = Vec::with_capacity(self.seats.len());
            for seat in &mut self.seats {
                let reply = seat.reply.take();
                let (action, fault) = match reply {
                    Some(Ok(line)) => match self.game.parse_action(&line) {
                        Ok(action) => {
                            seat.moves += 1;
                            (action, None)
                        }
                        Err(_) => {
                            seat.faults.add(FaultKind::Malformed);
                            (self.game.idle_action(), Some(FaultKind::Malformed))
                        }
                    },
                    Some(Err(kind)) => (self.game.idle_action(), Some(kind)),
                    None => (self.game.idle_action(), None),
                };
                if seat.faults.total() >= self.config.fault_limit {
                    seat.forfeit_at(Forfeit::Faults, self.game.turn());
                }
                actions.push(action);
                faults.push(fault);
            }

            let forfeited: Vec<usize> = (0..self.seats.len())
                .filter(|&s| !self.seats[s].live())
                .collect();
            if !forfeited.is_empty()
                && let Some(outcome) = self.game.forfeit(&forfeited)
            {
                return Ok(outcome);
            }
            self.game.step(&actions);
            self.turns.push(ReplayTurn { actions, faults });
        }
    }

    /// Renders and queues this turn's frame for every live seat.
    fn send_frames(&mut self) -> Result<(), RunnerError> {
        for s in 0..self.seats.len() {
            if !self.seats[s].live() {
                continue;
            }
            // Lines written before this frame was sent answer nothing: take
            // them now so they are not mistaken for its reply.
            self.pump_output(s)?;
            let seat = &mut self.seats[s];
            self.frame.clear();
            if seat.frames_sent == 0 {
                self.game.write_handshake(s, &mut self.frame);
            }
            self.game.write_frame(s, &mut self.frame);
            if seat.outbox_sent == seat.outbox.len() {
                seat.outbox.clear();
                seat.outbox_sent = 0;
            }
            seat.outbox.extend_from_slice(&self.frame);
            let limit = if seat.frames_sent == 0 {
                self.config.first_move
            } else {
                self.config.per_move
            };
            // The clock starts before the write: a bot sharing this core can
            // be woken, run and answer inside the write call itself.
            let sent_at = Instant::now();
            flush_outbox(seat).map_err(|source| RunnerError::Pipe { seat: s, source })?;
            seat.pending = Some(Pending {
                frame: seat.frames_sent,
                sent_at,
                deadline: sent_at + limit,
            });
            seat.frames_sent += 1;
            seat.reply = None;
        }
        Ok(())
    }

    /// Waits until every live seat has replied, faulted or forfeited.
    fn collect_replies(&mut self) -> Result<(), RunnerError> {
        let mut spin_until = Instant::now() + self.config.spin;
        loop {
            let mut earliest: Option<Instant> = None;
            for s in 0..self.seats.len() {
                if self.seats[s].pending.is_none() {
                    continue;
                }
                flush_outbox(&mut self.seats[s])
                    .map_err(|source| RunnerError::Pipe { seat: s, source })?;
                self.pump_output(s)?;
                // Read after the pipe was drained: a reply that lands between
                // the read and this check waits for the next pass.
                let now = Instant::now();
                let seat = &mut self.seats[s];
                if seat.stdout_closed && seat.live() {
                    let forfeit = self.exit_forfeit(s);
                    let turn = self.game.turn();
                    let seat = &mut self.seats[s];
                    seat.forfeit_at(forfeit, turn);
                    seat.pending = None;
                    continue;
                }
                let Some(pending) = &seat.pending else {
                    continue;
                };
                if now >= pending.deadline {
                    seat.resolve(Err(FaultKind::Timeout));
                    // A silent bot may simply be dead with its stdout held open
                    // by a child; its exit settles that.
                    if let Some(exit) = self.peek_exit(s)? {
                        let turn = self.game.turn();
                        self.seats[s].forfeit_at(forfeit_for(exit), turn);
                    }
                    continue;
                }
                earliest = Some(earliest.map_or(pending.deadline, |e| e.min(pending.deadline)));
            }
            let Some(earliest) = earliest else {
                return Ok(());
            };
            if Instant::now() < spin_until {
                std::hint::spin_loop();
                continue;
            }
            self.sleep_until_ready(earliest)?;
            // After a wake-up the reply is usually a few microseconds behind.
            spin_until = Instant::now() + self.config.spin.min(Duration::from_micros(20));
        }
    }

    /// Sleeps in poll until a pending seat's pipe is ready or `deadline`.
    fn sleep_until_ready(&self, deadline: Instant) -> Result<(), RunnerError> {
        let mut interests = Vec::with_capacity(self.seats.len() * 2);
        for seat in &self.seats {
            let (Some(_), Some(process)) = (&seat.pending, &seat.process) else {
                continue;
            };
            interests.push(Interest {
                fd: process.stdout.as_raw_fd(),
                readable: true,
                writable: false,
            });
            interests.push(Interest {
                fd: process.stderr.as_raw_fd(),
                readable: true,
                writable: false,
            });
            if let Some(stdin) = &process.stdin
                && seat.outbox_sent < seat.outbox.len()
                && !seat.stdin_closed
            {
                interests.push(Interest {
                    fd: stdin.as_raw_fd(),
                    readable: false,
                    writable: true,
                });
            }
        }
        let timeout = deadline.saturating_duration_since(Instant::now());
        fd::wait_any(&interests, timeout).map_err(RunnerError::Poll)
    }

    /// Reads whatever the bot has written to stdout and stderr, without blocking.
    fn pump_output(&mut self, s: usize) -> Result<(), RunnerError> {
        let seat = &mut self.seats[s];
        let Some((stdout, stderr)) = seat
            .process
            .as_ref()
            .map(|p| (p.stdout.as_raw_fd(), p.stderr.as_raw_fd()))
        else {
            return Ok(());
        };
        let pipe_error = |source| RunnerError::Pipe { seat: s, source };
        // Bounded per call: a bot flooding a pipe cannot keep the referee here.
        for _ in 0..16 {
            if seat.stdout_closed {
                break;
            }
            match fd::read_some(stdout, &mut self.read_buf).map_err(pipe_error)? {
                ReadOutcome::Data(n) => {
                    // Lines count as read when the read returned them.
                    let now = Instant::now();
                    let mut lines = std::mem::replace(&mut seat.lines, LineSplitter::new(0));
                    lines.feed(&self.read_buf[..n], |line| seat.take_line(line, now));
                    seat.lines = lines;
                }
                ReadOutcome::Empty => break,
                ReadOutcome::Closed => seat.stdout_closed = true,
            }
        }
        for _ in 0..16 {
            match fd::read_some(stderr, &mut self.read_buf).map_err(pipe_error)? {
                ReadOutcome::Data(n) => seat.stderr.write(&self.read_buf[..n]),
                ReadOutcome::Empty | ReadOutcome::Closed => break,
            }
        }
        Ok(())
    }

    /// The process's exit, if it has ended.
    fn peek_exit(&mut self, s: usize) -> Result<Option<BotExit>, RunnerError> {
        let Some(process) = &mut self.seats[s].process else {
            return Ok(None);
        };
        process
            .handle
            .try_wait()
            .map_err(|source| RunnerError::Pipe { seat: s, source })
    }

    /// Why a seat whose stdout closed is out: its exit, once the kernel has it.
    fn exit_forfeit(&mut self, s: usize) -> Forfeit {
        let deadline = Instant::now() + self.config.exit_grace;
        let mut pause = Duration::from_micros(20);
        loop {
            match self.peek_exit(s) {
                Ok(Some(exit)) => return forfeit_for(exit),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                }
                // Alive with its stdout closed, or not waitable: it cannot play on.
                _ => return Forfeit::Exit,
            }
        }
    }

    /// Ends every bot: EOF on stdin, a grace period to exit, then SIGKILL.
    fn stop_all(&mut self) {
        for seat in &mut self.seats {
            if let Some(process) = &mut seat.process {
                // Closing our end is the EOF that tells the bot the game is over.
                process.stdin = None;
            }
        }
        let deadline = Instant::now() + self.config.exit_grace;
        for s in 0..self.seats.len() {
            while Instant::now() < deadline {
                // Keep draining so a bot blocked on a full stderr pipe can exit.
                if self.pump_output(s).is_err() {
                    break;
                }
                match self.peek_exit(s) {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
        }
        for (s, seat) in self.seats.iter_mut().enumerate() {
            if let Some(process) = &mut seat.process {
                if let Err(e) = process.handle.kill() {
                    eprintln!("arena: cannot kill seat {s} ({}): {e}", seat.bot);
                }
                if let Err(e) = process.handle.wait() {
                    eprintln!("arena: cannot reap seat {s} ({}): {e}", seat.bot);
                }
            }
        }
    }

    fn finish(
        self,
        seed: u64,
        outcome: Outcome,
        build_logs: Vec<Vec<u8>>,
        builds: Vec<BuildSummary>,
        spawn_times: Vec<Duration>,
    ) -> MatchOutput<G> {
        let turns = self.game.turn();
        let mut players = Vec::with_capacity(self.seats.len());
        let mut logs = Vec::with_capacity(self.seats.len());
        let mut forfeits = Vec::with_capacity(self.seats.len());
        let mut move_latencies_ns = Vec::with_capacity(self.seats.len());
        for ((seat, mut state), build_log) in self.seats.into_iter().enumerate().zip(build_logs) {
            let mut log = state.stderr.contents();
            if !build_log.is_empty() {
                log.extend_from_slice(b"\n[arena: build log]\n");
                log.extend_from_slice(&build_log);
            }
            logs.push(log);
            forfeits.push(state.forfeit.map(|reason| SeatForfeit {
                reason,
                turn: state.forfeit_turn,
            }));
            players.push(PlayerReport {
                seat,
                bot: state.bot,
                forfeit: state.forfeit,
                faults: state.faults,
                moves: state.moves,
                latency_ms: LatencyMs::from_nanos(&mut state.latencies),
            });
            move_latencies_ns.push(state.latencies);
        }
        let report = MatchReport {
            game: self.game.name().to_owned(),
            seed,
            winner: outcome.winner(),
            reason: outcome.reason.clone(),
            turns,
            players,
        };
        let replay = Replay::new(
            self.initial,
            seed,
            self.turns,
            forfeits,
            &outcome,
            &self.game,
        );
        MatchOutput {
            report,
            replay,
            logs,
            move_latencies_ns,
            builds,
            spawn_times,
        }
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

/// Writes as much of the outbox as the pipe takes now.
fn flush_outbox(seat: &mut SeatState) -> std::io::Result<()> {
    let Some(stdin) = seat.process.as_ref().and_then(|p| p.stdin.as_ref()) else {
        return Ok(());
    };
    let stdin: RawFd = stdin.as_raw_fd();
    while !seat.stdin_closed && seat.outbox_sent < seat.outbox.len() {
        match fd::write_some(stdin, &seat.outbox[seat.outbox_sent..])? {
            Some(0) => break,
            Some(n) => seat.outbox_sent += n,
            // The bot closed its stdin; its fate shows on stdout.
            None => seat.stdin_closed = true,
        }
    }
    Ok(())
}
