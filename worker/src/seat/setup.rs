//! Building and starting every kind of seat for one match: each bot's
//! build (in the launcher's sandbox and cache), how the built seat plays
//! (its `run.sh`, its WebAssembly module compiled confined, its model
//! graph, or an in-engine baseline), and starting its runtime. The referee
//! then plays the turns over what this starts.

use super::SeatRuntime;
use super::baseline::BaselineSeat;
use super::bot_process::{ProcessLimits, ProcessSeat};
use super::host::host_line_cap;
use super::model::ModelSeat;
use super::wasm::WasmSeat;
use crate::launcher::{BotSpec, LaunchError, Launcher};
use crate::runner::{BuildSummary, RunnerConfig, RunnerError, SeatSpec};

/// A WebAssembly seat's compiled module, from the module cache.
pub(crate) struct WasmModule {
    artifact: std::path::PathBuf,
}

/// How a built bot seat is played.
pub(crate) enum SeatRuntimeKind {
    /// Its `run.sh` (or a baseline, which needs no launch).
    Process,
    /// Its `bot.wasm`, compiled, in the wasm host.
    Wasm(WasmModule),
    /// Its `model.onnx`, in the model host.
    Model,
}

/// Every seat built: what runs in each, how it went, and how it plays.
pub(crate) struct Built {
    /// The seats as they run: a bot's built directory in place of its own.
    pub runnable: Vec<SeatSpec>,
    pub builds: Vec<BuildSummary>,
    /// Each seat's build log (empty for a baseline).
    pub logs: Vec<Vec<u8>>,
    pub kinds: Vec<SeatRuntimeKind>,
    /// Seats whose build failed.
    pub failed: Vec<usize>,
}

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
        line_cap: host_line_cap(config.line_cap),
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
        line_cap: host_line_cap(config.line_cap),
        ..limits
    };
    Ok(launcher
        .launch_program(bot, seat, wasm.host_program(), &args)
        .and_then(|l| ProcessSeat::new(l, bot, seat, host_limits))
        .map(|host| Box::new(WasmSeat::start(host, artifact, fuel, seat)) as Box<dyn SeatRuntime>))
}

/// Runs every bot's build and decides how each built seat plays; a seat
/// whose build failed is in [`Built::failed`] (it forfeits).
pub(crate) fn build_all(
    seats: &[SeatSpec],
    launcher: &dyn Launcher,
    config: &RunnerConfig,
) -> Result<Built, RunnerError> {
    let mut failed = Vec::new();
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
            failed.push(seat);
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
    Ok(Built {
        runnable,
        builds,
        logs,
        kinds: modules,
        failed,
    })
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

/// Starts the seat `spec` plays as `kind`. The outer `Err` is the runner's
/// failure; the inner one is the launch's (a bot that cannot start is its
/// own fault, [`LaunchError::BotCannotStart`]).
pub(crate) fn start(
    spec: &SeatSpec,
    kind: &SeatRuntimeKind,
    launcher: &dyn Launcher,
    config: &RunnerConfig,
    game: &str,
    seat: usize,
    seed: u64,
) -> Result<Result<Box<dyn SeatRuntime>, LaunchError>, RunnerError> {
    let bot = match spec {
        SeatSpec::Baseline(name) => return Ok(Ok(Box::new(BaselineSeat::new(name.clone())))),
        SeatSpec::Bot(bot) => bot,
    };
    let limits = ProcessLimits {
        line_cap: config.line_cap,
        stderr_cap: config.stderr_cap,
        exit_grace: config.exit_grace,
    };
    match kind {
        SeatRuntimeKind::Process => Ok(launcher
            .launch(bot, seat)
            .and_then(|l| ProcessSeat::new(l, bot, seat, limits))
            .map(|p| Box::new(p) as Box<dyn SeatRuntime>)),
        SeatRuntimeKind::Wasm(module) => {
            start_wasm(launcher, config, bot, seat, seed, module, limits)
        }
        SeatRuntimeKind::Model => start_model(launcher, config, game, bot, seat, limits),
    }
}
