//! The referee: one match, turn by turn, over seat runtimes.
//!
//! Each turn every due seat gets its frame through its [`SeatRuntime`]; the
//! referee then waits until every one of them has settled (a reply, a fault
//! or an exit), each against its own budget, and steps the game with the
//! replies (or the fallback action for faults). It never blocks on a seat:
//! waiting is a short spin (the runner owns a core, and spinning is what gets
//! the round trip to a few microseconds) followed by `poll` up to the
//! earliest deadline.

use std::time::{Duration, Instant};

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use arena_engine::registry::{FuelLimits, Limits, ModelLimits};
use arena_engine::{FaultCounts, FaultKind, Forfeit, Match, Outcome};

use crate::fd;
use crate::launcher::{BotSpec, LaunchError, Launcher};
use crate::report::{FuelUse, LatencyMs, MatchReport, PlayerReport};
use crate::seat::baseline::BaselineSeat;
use crate::seat::model::{ModelSeat, ModelSupport};
use crate::seat::process::{ProcessLimits, ProcessSeat};
use crate::seat::wasm::{WasmSeat, WasmSupport};
use crate::seat::{Answer, Budget, Offer, SeatRuntime};

/// The runner's limits for one match.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// Deadline for the reply to the first frame (bots may warm up).
    pub first_move: Duration,
    /// Deadline for every later reply.
    pub per_move: Duration,
    /// Faults that forfeit the seat.
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
    /// The fuel budget of WebAssembly seats; `None` when the game runs none.
    pub fuel: Option<FuelLimits>,
    /// How this runner plays WebAssembly seats; `None` when it cannot.
    pub wasm: Option<Arc<WasmSupport>>,
    /// What model graphs may be; `None` when the game runs none.
    pub model: Option<ModelLimits>,
    /// How this runner plays model-graph seats; `None` when it cannot.
    pub models: Option<Arc<ModelSupport>>,
    /// Where the runner publishes the turns played so far, for whoever
    /// reports a running match's progress (the worker's heartbeats).
    pub progress: Option<Arc<AtomicU32>>,
}

impl RunnerConfig {
    /// The runner under a game's (or a tournament's) limits.
    pub fn for_limits(limits: &Limits) -> Self {
        Self {
            first_move: Duration::from_millis(limits.first_move_ms),
            per_move: Duration::from_millis(limits.move_ms),
            fault_limit: limits.fault_limit,
            line_cap: usize::try_from(limits.reply_cap).unwrap_or(usize::MAX),
            stderr_cap: 1 << 20,
            spin: Duration::from_micros(200),
            exit_grace: Duration::from_millis(500),
            build_limit: Duration::from_secs(600),
            fuel: limits.fuel,
            wasm: None,
            model: limits.model,
            models: None,
            progress: None,
        }
    }

    /// These limits, playing WebAssembly seats with `wasm`.
    pub fn with_wasm(mut self, wasm: Option<Arc<WasmSupport>>) -> Self {
        self.wasm = wasm;
        self
    }

    /// These limits, playing model-graph seats with `models`.
    pub fn with_models(mut self, models: Option<Arc<ModelSupport>>) -> Self {
        self.models = models;
        self
    }

    /// The same, publishing the turns played into `progress`.
    pub fn with_progress(mut self, progress: Arc<AtomicU32>) -> Self {
        self.progress = Some(progress);
        self
    }
}

impl Default for RunnerConfig {
    /// The default game's limits.
    fn default() -> Self {
        Self::for_limits(&arena_engine::generals::ENTRY.limits)
    }
}

/// Who plays a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatSpec {
    /// A submitted bot, launched as a process.
    Bot(BotSpec),
    /// The game's in-engine baseline of this name.
    Baseline(String),
}

pub use arena_engine::registry::BASELINE_PREFIX;

impl SeatSpec {
    /// `baseline:NAME`, or else a bot directory.
    pub fn parse(arg: &str) -> Self {
        match arg.strip_prefix(BASELINE_PREFIX) {
            Some(name) => SeatSpec::Baseline(name.to_owned()),
            None => SeatSpec::Bot(BotSpec::from_dir(arg)),
        }
    }

    /// Shown in results and logs.
    pub fn name(&self) -> String {
        match self {
            SeatSpec::Bot(bot) => bot.name.clone(),
            SeatSpec::Baseline(name) => format!("{BASELINE_PREFIX}{name}"),
        }
    }
}

impl From<BotSpec> for SeatSpec {
    fn from(bot: BotSpec) -> Self {
        SeatSpec::Bot(bot)
    }
}

/// Everything a match leaves behind.
pub struct MatchOutput {
    pub report: MatchReport,
    /// The replay document (JSON), re-simulated by `arena replay verify`.
    pub replay: Vec<u8>,
    /// Each seat's stderr, capped, then its build log when it had one.
    pub logs: Vec<Vec<u8>>,
    /// Each seat's in-time reply latencies, in nanoseconds (sorted).
    pub move_latencies_ns: Vec<Vec<u64>>,
    /// Each fuel-metered seat's fuel per turn (sorted; empty for others).
    pub fuel_per_turn: Vec<Vec<u64>>,
    /// Each model-graph seat's evaluation times, in nanoseconds (sorted;
    /// empty for others).
    pub evaluations_ns: Vec<Vec<u64>>,
    /// Each bot seat's build: whether it succeeded, came from the cache, and took how long.
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
    #[error("{bots} seats given for a game of {seats} seats")]
    SeatCount { bots: usize, seats: usize },
    #[error("seat {seat}: the game has no baseline {name:?}")]
    UnknownBaseline { seat: usize, name: String },
    #[error("launching seat {seat}")]
    Launch { seat: usize, source: LaunchError },
    #[error("building seat {seat}")]
    Build { seat: usize, source: LaunchError },
    #[error("pipe I/O with seat {seat}")]
    Pipe { seat: usize, source: std::io::Error },
    #[error("waiting for bots")]
    Poll(#[source] std::io::Error),
    #[error("engine error on turn {turn}: {reason}")]
    Engine { turn: u32, reason: String },
    #[error("recording the replay")]
    Replay(#[source] arena_engine::replay::ReplayError),
    #[error("seat {seat}: this runner cannot run WebAssembly bots")]
    NoWasm { seat: usize },
    #[error("seat {seat}: this runner cannot run model-graph bots")]
    NoModels { seat: usize },
    #[error("seat {seat}: loading its compiled WebAssembly module")]
    Wasm {
        seat: usize,
        source: arena_wasm::CompileError,
    },
    #[error("seat {seat}: compiling its WebAssembly module")]
    WasmCompile {
        seat: usize,
        source: crate::seat::wasm::PrepareError,
    },
}

/// Plays one match of `game` between `seats` (seat order) and reports it.
pub fn play_match(
    game: Box<dyn Match>,
    seed: u64,
    seats: &[SeatSpec],
    launcher: &dyn Launcher,
    config: &RunnerConfig,
) -> Result<MatchOutput, RunnerError> {
    if seats.len() != game.seats() {
        return Err(RunnerError::SeatCount {
            bots: seats.len(),
            seats: game.seats(),
        });
    }
    let mut referee = Referee {
        game,
        config,
        seats: seats.iter().map(SeatRecord::new).collect(),
        frame: Vec::with_capacity(16 * 1024),
    };
    let (runnable, builds, build_logs, modules) = build_all(&mut referee, seats, launcher, config)?;
    let mut spawn_times = Vec::with_capacity(seats.len());
    let failed_builds = referee.seats.iter().any(|s| s.forfeit.is_some());
    let outcome = if failed_builds {
        referee.game.apply_forfeits()
    } else {
        // Launching and the game loop; one span for the whole game, none per move.
        let span = tracing::info_span!("play", turns = tracing::field::Empty);
        let _play = span.enter();
        let mut unstartable = false;
        for (seat, spec) in runnable.iter().enumerate() {
            let runtime: Box<dyn SeatRuntime> = match spec {
                SeatSpec::Baseline(name) => Box::new(BaselineSeat::new(name.clone())),
                SeatSpec::Bot(bot) => {
                    let spawn_started = Instant::now();
                    let limits = ProcessLimits {
                        line_cap: config.line_cap,
                        stderr_cap: config.stderr_cap,
                        exit_grace: config.exit_grace,
                    };
                    let started = match &modules[seat] {
                        SeatRuntimeKind::Process => launcher
                            .launch(bot, seat)
                            .and_then(|l| ProcessSeat::new(l, bot, seat, limits))
                            .map(|p| Box::new(p) as Box<dyn SeatRuntime>),
                        SeatRuntimeKind::Wasm(module) => {
                            match start_wasm(launcher, config, bot, seat, seed, module, limits) {
                                Ok(started) => started,
                                Err(e) => {
                                    referee.stop_all();
                                    return Err(e);
                                }
                            }
                        }
                        SeatRuntimeKind::Model => {
                            let game = referee.game.name();
                            match start_model(launcher, config, game, bot, seat, limits) {
                                Ok(started) => started,
                                Err(e) => {
                                    referee.stop_all();
                                    return Err(e);
                                }
                            }
                        }
                    };
                    match started {
                        Ok(runtime) => {
                            spawn_times.push(spawn_started.elapsed());
                            runtime
                        }
                        Err(LaunchError::BotCannotStart { .. }) => {
                            referee.forfeit(seat, Forfeit::Exit);
                            unstartable = true;
                            continue;
                        }
                        Err(source) => {
                            referee.stop_all();
                            return Err(RunnerError::Launch { seat, source });
                        }
                    }
                }
            };
            referee.seats[seat].runtime = Some(runtime);
        }
        if unstartable {
            referee.stop_all();
            referee.game.apply_forfeits()
        } else {
            let played = referee.play();
            // Seats are stopped whether the game ended or the runner failed.
            referee.stop_all();
            span.record("turns", referee.game.turn());
            Some(played?)
        }
    };
    let outcome = outcome.unwrap_or_else(|| unreachable_outcome(referee.game.seats()));
    referee.finish(seed, outcome, build_logs, builds, spawn_times)
}

/// A WebAssembly seat's compiled module, from the module cache.
struct WasmModule {
    artifact: std::path::PathBuf,
}

/// How a built bot seat is played.
enum SeatRuntimeKind {
    /// Its `run.sh` (or a baseline, which needs no launch).
    Process,
    /// Its `bot.wasm`, compiled, in the wasm host.
    Wasm(WasmModule),
    /// Its `model.onnx`, in the model host.
    Model,
}

type Built = (
    Vec<SeatSpec>,
    Vec<BuildSummary>,
    Vec<Vec<u8>>,
    Vec<SeatRuntimeKind>,
);

/// Starts the model host for a model-graph seat. The outer `Err` is the
/// runner's failure; the inner one is the launch's, as for a process.
fn start_model(
    launcher: &dyn Launcher,
    config: &RunnerConfig,
    game: &str,
    bot: &BotSpec,
    seat: usize,
    limits: ProcessLimits,
) -> Result<Result<Box<dyn SeatRuntime>, LaunchError>, RunnerError> {
    let (Some(models), Some(model_limits)) = (config.models.as_ref(), config.model) else {
        return Err(RunnerError::NoModels { seat });
    };
    let args = models.host_args(game, &model_limits);
    let host_limits = ProcessLimits {
        line_cap: ModelSeat::host_line_cap(config.line_cap),
        ..limits
    };
    Ok(launcher
        .launch_program(bot, seat, models.host_program(), &args)
        .and_then(|l| ProcessSeat::new(l, bot, seat, host_limits))
        .map(|host| Box::new(ModelSeat::start(host, seat)) as Box<dyn SeatRuntime>))
}

/// Starts the wasm host for a WebAssembly seat. The outer `Err` is the
/// runner's failure; the inner one is the launch's, as for a process.
fn start_wasm(
    launcher: &dyn Launcher,
    config: &RunnerConfig,
    bot: &BotSpec,
    seat: usize,
    seed: u64,
    module: &WasmModule,
    limits: ProcessLimits,
) -> Result<Result<Box<dyn SeatRuntime>, LaunchError>, RunnerError> {
    let (Some(wasm), Some(fuel)) = (config.wasm.as_ref(), config.fuel) else {
        return Err(RunnerError::NoWasm { seat });
    };
    let artifact = wasm
        .artifact(&module.artifact)
        .map_err(|source| RunnerError::Wasm { seat, source })?;
    // Each seat's guest draws its own seeded bytes.
    let guest_seed = seed ^ (seat as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let args = wasm.host_args(guest_seed, config.line_cap);
    let host_limits = ProcessLimits {
        line_cap: WasmSeat::host_line_cap(config.line_cap),
        ..limits
    };
    Ok(launcher
        .launch_program(bot, seat, wasm.host_program(), &args)
        .and_then(|l| ProcessSeat::new(l, bot, seat, host_limits))
        .map(|host| Box::new(WasmSeat::start(host, artifact, fuel, seat)) as Box<dyn SeatRuntime>))
}

/// Runs every bot's build; a failed build forfeits its seat.
fn build_all(
    referee: &mut Referee<'_>,
    seats: &[SeatSpec],
    launcher: &dyn Launcher,
    config: &RunnerConfig,
) -> Result<Built, RunnerError> {
    let mut runnable = Vec::with_capacity(seats.len());
    let mut builds = Vec::with_capacity(seats.len());
    let mut logs = Vec::with_capacity(seats.len());
    let mut modules = Vec::with_capacity(seats.len());
    for (seat, spec) in seats.iter().enumerate() {
        let SeatSpec::Bot(bot) = spec else {
            runnable.push(spec.clone());
            logs.push(Vec::new());
            modules.push(SeatRuntimeKind::Process);
            continue;
        };
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
        let mut build = build;
        let dir = build.artifact.clone().unwrap_or_else(|| bot.dir.clone());
        let module = if build.succeeded {
            let built = BotSpec {
                name: bot.name.clone(),
                dir: dir.clone(),
            };
            match seat_runtime(launcher, &built, config, seat)? {
                Ok(module) => module,
                Err(reason) => {
                    build.succeeded = false;
                    build.failure = Some(reason);
                    SeatRuntimeKind::Process
                }
            }
        } else {
            SeatRuntimeKind::Process
        };
        modules.push(module);
        if !build.succeeded {
            referee.forfeit(seat, Forfeit::BuildFailed);
        }
        builds.push(BuildSummary {
            succeeded: build.succeeded,
            cached: build.cached,
            duration: build.duration,
        });
        let mut log = build.log;
        if let Some(reason) = build.failure {
            log.extend_from_slice(format!("\n[arena: build failed: {reason}]\n").as_bytes());
        }
        logs.push(log);
        runnable.push(SeatSpec::Bot(BotSpec {
            name: bot.name.clone(),
            dir: build.artifact.unwrap_or_else(|| bot.dir.clone()),
        }));
    }
    Ok((runnable, builds, logs, modules))
}

/// How a built bot seat plays: a model graph when its directory is one and
/// the game runs them, else as [`wasm_module`] says. The inner `Err` is the
/// submission's fault.
fn seat_runtime(
    launcher: &dyn Launcher,
    bot: &BotSpec,
    config: &RunnerConfig,
    seat: usize,
) -> Result<Result<SeatRuntimeKind, String>, RunnerError> {
    let dir = bot.dir.as_path();
    if crate::launcher::has_model(dir) {
        if config.model.is_none() {
            // A process bot may carry a model of its own; only a bot that is
            // nothing but a model is refused.
            if crate::launcher::run_script_problem_ignoring_models(dir).is_none() {
                return Ok(Ok(SeatRuntimeKind::Process));
            }
            return Ok(Err(format!(
                "{}: this game runs no model-graph bots (it needs a run.sh)",
                crate::launcher::MODEL_GRAPH
            )));
        }
        if config.models.is_none() {
            return Err(RunnerError::NoModels { seat });
        }
        return Ok(Ok(SeatRuntimeKind::Model));
    }
    Ok(wasm_module(launcher, bot, config, seat)?
        .map(|m| m.map_or(SeatRuntimeKind::Process, SeatRuntimeKind::Wasm)))
}

/// The seat's WebAssembly module, when its built directory is a wasm bot
/// for this game: `Ok(None)` for a process bot, the inner `Err` when the
/// module cannot be a bot (the submission's fault).
fn wasm_module(
    launcher: &dyn Launcher,
    bot: &BotSpec,
    config: &RunnerConfig,
    seat: usize,
) -> Result<Result<Option<WasmModule>, String>, RunnerError> {
    let dir = bot.dir.as_path();
    if !crate::launcher::has_wasm_module(dir) {
        return Ok(Ok(None));
    }
    if config.fuel.is_none() {
        // A process bot may carry a module of its own; only a bot that is
        // nothing but a module is refused.
        if crate::launcher::run_script_problem_ignoring_wasm(dir).is_none() {
            return Ok(Ok(None));
        }
        return Ok(Err(
            "bot.wasm: this game runs no WebAssembly bots (it needs a run.sh)".to_owned(),
        ));
    }
    let Some(wasm) = config.wasm.as_ref() else {
        return Err(RunnerError::NoWasm { seat });
    };
    // Compiling is part of the build, under the build's wall limit.
    match wasm.prepare(launcher, bot, seat, config.line_cap, config.build_limit) {
        Ok(Ok(artifact)) => Ok(Ok(Some(WasmModule { artifact }))),
        Ok(Err(reason)) => Ok(Err(reason)),
        Err(source) => Err(RunnerError::WasmCompile { seat, source }),
    }
}

/// A game that declines to end on a forfeit is treated as a shared place,
/// so the runner never loops on a game bug.
fn unreachable_outcome(seats: usize) -> Outcome {
    Outcome::ranked(vec![0; seats], "forfeit")
}

/// The referee's bookkeeping for one seat.
struct SeatRecord {
    name: String,
    runtime: Option<Box<dyn SeatRuntime>>,
    /// Frames sent so far (the first carries the handshake).
    frames_sent: u64,
    /// Offered a frame this turn and not yet settled.
    waiting: bool,
    /// This turn's answer, once settled.
    answer: Option<Answer>,
    forfeit: Option<Forfeit>,
    /// Steps applied when `forfeit` happened.
    forfeit_turn: u32,
    faults: FaultCounts,
    moves: u32,
}

impl SeatRecord {
    fn new(spec: &SeatSpec) -> Self {
        Self {
            name: spec.name(),
            runtime: None,
            frames_sent: 0,
            waiting: false,
            answer: None,
            forfeit: None,
            forfeit_turn: 0,
            faults: FaultCounts::default(),
            moves: 0,
        }
    }
}

struct Referee<'c> {
    game: Box<dyn Match>,
    config: &'c RunnerConfig,
    seats: Vec<SeatRecord>,
    /// Scratch buffer the game renders frames into.
    frame: Vec<u8>,
}

impl Referee<'_> {
    /// Records a seat's first forfeit with the game; later ones change nothing.
    fn forfeit(&mut self, seat: usize, reason: Forfeit) {
        let record = &mut self.seats[seat];
        if record.forfeit.is_none() {
            record.forfeit = Some(reason);
            record.forfeit_turn = self.game.turn();
            record.waiting = false;
            self.game.forfeit(seat, reason);
        }
    }

    /// Plays turns until the game ends.
    fn play(&mut self) -> Result<Outcome, RunnerError> {
        loop {
            if let Some(outcome) = self.game.apply_forfeits() {
                return Ok(outcome);
            }
            self.send_frames()?;
            self.collect_answers()?;
            self.settle_turn();
            let outcome = self.game.step();
            if let Some(progress) = &self.config.progress {
                progress.store(self.game.turn(), Ordering::Relaxed);
            }
            if let Some(reason) = self.game.invariant_violation() {
                return Err(RunnerError::Engine {
                    turn: self.game.turn(),
                    reason,
                });
            }
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Renders and offers this turn's frame to every due seat.
    fn send_frames(&mut self) -> Result<(), RunnerError> {
        for s in 0..self.seats.len() {
            if self.seats[s].forfeit.is_some() || !self.game.is_due(s) {
                continue;
            }
            self.frame.clear();
            let record = &mut self.seats[s];
            if record.frames_sent == 0 {
                self.game.write_handshake(s, &mut self.frame);
            }
            let fuel = record.runtime.as_ref().and_then(|r| r.fuel());
            self.game.write_frame_fuel(s, fuel, &mut self.frame);
            let limit = if record.frames_sent == 0 {
                self.config.first_move
            } else {
                self.config.per_move
            };
            let Some(runtime) = record.runtime.as_mut() else {
                continue;
            };
            runtime.offer(Offer {
                seat: s,
                frame: &self.frame,
                budget: Budget::Wall(limit),
                game: self.game.as_ref(),
            })?;
            record.frames_sent += 1;
            record.waiting = true;
            record.answer = None;
        }
        Ok(())
    }

    /// Waits until every offered seat has settled.
    fn collect_answers(&mut self) -> Result<(), RunnerError> {
        let mut spin_until = Instant::now() + self.config.spin;
        let mut interests = Vec::with_capacity(self.seats.len() * 3);
        loop {
            let mut earliest: Option<Instant> = None;
            for record in &mut self.seats {
                let Some(runtime) = record.runtime.as_mut() else {
                    continue;
                };
                if !record.waiting {
                    continue;
                }
                if let Some(answer) = runtime.poll()? {
                    record.waiting = false;
                    record.answer = Some(answer);
                    continue;
                }
                if let Some(due) = runtime.deadline() {
                    earliest = Some(earliest.map_or(due, |e| e.min(due)));
                }
            }
            let Some(earliest) = earliest else {
                return Ok(());
            };
            if Instant::now() < spin_until {
                std::hint::spin_loop();
                continue;
            }
            interests.clear();
            for record in &self.seats {
                if let (true, Some(runtime)) = (record.waiting, record.runtime.as_ref()) {
                    runtime.wait_on(&mut interests);
                }
            }
            let timeout = earliest.saturating_duration_since(Instant::now());
            fd::wait_any(&interests, timeout).map_err(RunnerError::Poll)?;
            // After a wake-up the reply is usually a few microseconds behind.
            spin_until = Instant::now() + self.config.spin.min(Duration::from_micros(20));
        }
    }

    /// Turns this turn's answers into held actions, faults and forfeits.
    fn settle_turn(&mut self) {
        for s in 0..self.seats.len() {
            let stray = self.seats[s]
                .runtime
                .as_mut()
                .map_or(0, |r| r.take_stray_lines());
            self.seats[s].faults.malformed += stray;
            match self.seats[s].answer.take() {
                Some(Answer::Reply(line)) => match self.game.offer(s, &line) {
                    Ok(refused) => {
                        self.seats[s].moves += 1;
                        // The game holds its no-action turn; only the count is ours.
                        if let Some(kind) = refused {
                            self.seats[s].faults.add(kind);
                        }
                    }
                    Err(_) => self.fault(s, FaultKind::Malformed),
                },
                Some(Answer::Fault(kind)) => self.fault(s, kind),
                Some(Answer::Gone(reason)) => self.forfeit(s, reason),
                None => {}
            }
            if self.seats[s].forfeit.is_none()
                && self.seats[s].faults.total() >= self.config.fault_limit
            {
                self.forfeit(s, Forfeit::Faults);
            }
        }
    }

    fn fault(&mut self, seat: usize, kind: FaultKind) {
        self.seats[seat].faults.add(kind);
        self.game.offer_fallback(seat, Some(kind));
    }

    /// Ends every seat: EOF for all first, then a shared grace period, then force.
    fn stop_all(&mut self) {
        for record in &mut self.seats {
            if let Some(runtime) = record.runtime.as_mut() {
                runtime.close_input();
            }
        }
        let grace_until = Instant::now() + self.config.exit_grace;
        for record in &mut self.seats {
            if let Some(runtime) = record.runtime.as_mut() {
                runtime.stop(grace_until);
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
    ) -> Result<MatchOutput, RunnerError> {
        let turns = self.game.turn();
        let mut players = Vec::with_capacity(self.seats.len());
        let mut logs = Vec::with_capacity(self.seats.len());
        let mut move_latencies_ns = Vec::with_capacity(self.seats.len());
        let mut fuel_per_turn = Vec::with_capacity(self.seats.len());
        let mut evaluations_ns = Vec::with_capacity(self.seats.len());
        for ((seat, mut record), build_log) in self.seats.into_iter().enumerate().zip(build_logs) {
            let (mut log, mut latencies, mut fuel, mut evaluations) = match record.runtime.as_mut()
            {
                Some(runtime) => (
                    runtime.log(),
                    runtime.latencies().to_vec(),
                    runtime.fuel_per_turn().to_vec(),
                    runtime.evaluations().to_vec(),
                ),
                None => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            };
            let runtime_stats = record
                .runtime
                .as_ref()
                .map(|r| r.stats())
                .unwrap_or_default();
            if !build_log.is_empty() {
                log.extend_from_slice(b"\n[arena: build log]\n");
                log.extend_from_slice(&build_log);
            }
            logs.push(log);
            players.push(PlayerReport {
                seat,
                bot: record.name,
                rank: outcome.ranks.get(seat).copied().unwrap_or(0),
                score: outcome.scores.get(seat).copied().unwrap_or(0.0),
                team: outcome.teams.get(seat).copied(),
                forfeit: record.forfeit,
                forfeit_turn: record.forfeit.map(|_| record.forfeit_turn),
                faults: record.faults,
                moves: record.moves,
                latency_ms: LatencyMs::from_nanos(&mut latencies),
                stats: self
                    .game
                    .seat_stats(seat)
                    .into_iter()
                    .chain(runtime_stats)
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
                fuel: FuelUse::from_turns(&mut fuel),
                evaluation_ms: (!evaluations.is_empty())
                    .then(|| LatencyMs::from_nanos(&mut evaluations)),
            });
            move_latencies_ns.push(latencies);
            fuel_per_turn.push(fuel);
            evaluations_ns.push(evaluations);
        }
        let report = MatchReport {
            game: self.game.name().to_owned(),
            seed,
            winner: outcome.winner(),
            placements: outcome.ranks.clone(),
            scores: outcome.scores.clone(),
            reason: outcome.reason.clone(),
            turns,
            players,
        };
        // A result without its replay cannot be proved: the match is replayed.
        let replay = self.game.replay_json(seed).map_err(RunnerError::Replay)?;
        Ok(MatchOutput {
            report,
            replay,
            logs,
            move_latencies_ns,
            fuel_per_turn,
            evaluations_ns,
            builds,
            spawn_times,
        })
    }
}
