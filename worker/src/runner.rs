//! What the runner is given for one match and how it can fail: its
//! limits ([`RunnerConfig`]), the seats ([`SeatSpec`]), what it returns
//! ([`MatchOutput`]) and its errors ([`RunnerError`]). Shared by the
//! referee, which plays the turn loop, and the seat setup, which builds
//! and starts the seats.

use std::sync::Arc;
use std::time::Duration;

use arena_engine::registry::{FuelLimits, Limits, ModelLimits};

use crate::launcher::{BotSpec, LaunchError};
use crate::progress::Progress;
use crate::report::MatchReport;
use crate::seat::model::ModelSupport;
use crate::seat::wasm::WasmSupport;

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
    /// reports a running match's progress (the worker's heartbeats and
    /// progress reports).
    pub progress: Option<Arc<Progress>>,
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

    /// The same, publishing the turns played and the board into `progress`.
    pub fn with_progress(mut self, progress: Arc<Progress>) -> Self {
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
