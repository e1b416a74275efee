//! A WebAssembly bot as a seat.
//!
//! The module runs in the wasm host (`arena wasm-host`, see the
//! `arena-wasm` crate), a process started in the seat's sandbox exactly
//! where the bot's `run.sh` would run, so the seat's cgroup, namespaces and
//! seccomp filters hold for the host as well. This seat speaks the host's
//! wire over a [`ProcessSeat`]'s pipes: the compiled module once, then one
//! turn message per frame, and one line back per turn.
//!
//! The seat keeps the fuel bank: before each turn the bank and this turn's
//! allowance make the budget (capped; the first turn adds the start-up
//! allowance), which the frame reports; a reply leaves the rest in the bank,
//! a dry turn empties it. The host enforces the turn's wall backstop; this
//! seat gives the host a margin beyond it and treats a host that misses
//! even that as a breach too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arena_engine::registry::FuelLimits;
use arena_engine::{FaultKind, Forfeit, Fuel};
use arena_host_wire::wasm::{self as wire, HostMessage, TurnRequest};
use arena_wasm::compile::{CompileError, check_size, module_hash};
use arena_wasm::{HostLimits, ModuleCache};

use super::Answer;
use super::bot_process::ProcessSeat;
use super::host::{HostProtocol, HostSeat};
use super::wasm_compile::{self, Compiled};
use crate::launcher::{BotSpec, LaunchError, Launcher, WASM_MODULE};

/// Why a module could not be prepared, on the host's side.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("the module cache")]
    Cache(#[source] CompileError),
    #[error("starting the confined compiler")]
    Launch(#[source] LaunchError),
    #[error("talking to the confined compiler")]
    Talk(#[source] std::io::Error),
}

/// What a worker needs to run WebAssembly seats.
pub struct WasmSupport {
    cache: ModuleCache,
    /// The `arena` executable: `arena wasm-host` is the host. It must be
    /// visible inside the sandbox at this same path.
    host_program: PathBuf,
    limits: HostLimits,
}

impl std::fmt::Debug for WasmSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmSupport")
            .field("fingerprint", &self.cache.fingerprint())
            .field("host_program", &self.host_program)
            .field("limits", &self.limits)
            .finish()
    }
}

impl WasmSupport {
    /// Compiled modules under `cache_dir`; `host_program` serves
    /// `wasm-host`.
    pub fn new(cache_dir: PathBuf, host_program: PathBuf) -> Result<WasmSupport, String> {
        let engine = arena_wasm::engine().map_err(|e| format!("{e:#}"))?;
        Ok(WasmSupport {
            cache: ModuleCache::new(cache_dir, engine),
            host_program,
            limits: HostLimits::default(),
        })
    }

    /// Names the wasmtime and its configuration (see
    /// [`arena_wasm::fingerprint`]).
    pub fn fingerprint(&self) -> &str {
        self.cache.fingerprint()
    }

    pub fn host_program(&self) -> &Path {
        &self.host_program
    }

    /// Checks and compiles `bot`'s `bot.wasm` (once: later calls find it in
    /// the cache), in `arena wasm-compile` started by `launcher` for `seat`
    /// under `wall_limit` (see [`super::wasm_compile`]). The
    /// inner `Err` is the submission's fault, with the reason.
    pub fn prepare(
        &self,
        launcher: &dyn Launcher,
        bot: &BotSpec,
        seat: usize,
        line_cap: usize,
        wall_limit: Duration,
    ) -> Result<Result<PathBuf, String>, PrepareError> {
        let path = bot.dir.join(WASM_MODULE);
        let wasm = std::fs::read(&path).map_err(|source| {
            PrepareError::Cache(CompileError::Cache {
                what: "reading",
                path: path.clone(),
                source,
            })
        })?;
        // Not even sent to the compiler.
        if let Err(refused) = check_size(&wasm) {
            return Ok(Err(refused.to_string()));
        }
        let hash = module_hash(&wasm);
        if let Some(found) = self.cache.find(&hash) {
            return Ok(Ok(found));
        }
        let limits = self.limits_for(line_cap);
        let args: Vec<OsString> = [
            "wasm-compile".to_owned(),
            "--memory-bytes".to_owned(),
            limits.memory_bytes.to_string(),
            "--table-elements".to_owned(),
            limits.table_elements.to_string(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        let compiler = launcher
            .launch_program(bot, seat, &self.host_program, &args)
            .map_err(PrepareError::Launch)?;
        match wasm_compile::run(compiler, &wasm, wall_limit) {
            Ok(Compiled::Code(code)) => self
                .cache
                .store(&hash, &code)
                .map(Ok)
                .map_err(PrepareError::Cache),
            Ok(Compiled::Refused(reason)) => Ok(Err(reason)),
            Err(e) => Err(PrepareError::Talk(e)),
        }
    }

    fn limits_for(&self, line_cap: usize) -> HostLimits {
        HostLimits {
            line_cap,
            ..self.limits
        }
    }

    /// The host's arguments for one seat.
    pub fn host_args(&self, seed: u64, line_cap: usize) -> Vec<OsString> {
        let limits = self.limits_for(line_cap);
        [
            "wasm-host".to_owned(),
            "--seed".to_owned(),
            seed.to_string(),
            "--memory-bytes".to_owned(),
            limits.memory_bytes.to_string(),
            "--table-elements".to_owned(),
            limits.table_elements.to_string(),
            "--line-cap".to_owned(),
            limits.line_cap.to_string(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect()
    }

    /// The compiled module at `artifact`, which [`WasmSupport::prepare`]
    /// returned (nothing else is ever loaded).
    pub fn artifact(&self, artifact: &Path) -> Result<Vec<u8>, CompileError> {
        self.cache.read_artifact(artifact)
    }
}

/// A turn the host is playing.
struct Turn {
    available: u64,
    first: bool,
}

/// A seat played by a WebAssembly module in the wasm host.
pub type WasmSeat = HostSeat<WasmTurns>;

/// The wasm host's side of a seat: the module to send first, and the fuel
/// bank carried from turn to turn.
pub struct WasmTurns {
    fuel: FuelLimits,
    /// The compiled module, until the first turn sends it.
    artifact: Option<Vec<u8>>,
    bank: u64,
    turns: u64,
    playing: Option<Turn>,
    fuel_per_turn: Vec<u64>,
    stray: u32,
}

impl WasmSeat {
    /// A seat over a started host; `artifact` is the compiled module.
    pub fn start(host: ProcessSeat, artifact: Vec<u8>, fuel: FuelLimits, seat: usize) -> WasmSeat {
        let turns = WasmTurns {
            fuel,
            artifact: Some(artifact),
            bank: 0,
            turns: 0,
            playing: None,
            fuel_per_turn: Vec::new(),
            stray: 0,
        };
        HostSeat::new(host, turns, seat)
    }
}

impl WasmTurns {
    fn settle_message(&mut self, message: HostMessage, seat: usize) -> Answer {
        let turn = self.playing.take();
        let (available, first) = turn.map_or((0, false), |t| (t.available, t.first));
        let spent = |fuel: u64, turns: &mut WasmTurns| {
            turns.fuel_per_turn.push(fuel);
            turns.bank = turns.fuel.bank_after(turns.bank, first, fuel);
        };
        match message {
            HostMessage::Reply { fuel, stray, line } => {
                spent(fuel, self);
                self.stray += stray;
                Answer::Reply(line)
            }
            HostMessage::Overlong { fuel, stray } => {
                spent(fuel, self);
                self.stray += stray;
                Answer::Fault(FaultKind::Malformed)
            }
            // Waiting for the next frame without answering this one: no
            // answer is coming, as a process bot's missed deadline.
            HostMessage::NoReply { fuel, stray } => {
                spent(fuel, self);
                self.stray += stray;
                Answer::Fault(FaultKind::Timeout)
            }
            HostMessage::Exhausted { fuel } => {
                self.fuel_per_turn.push(fuel.max(available));
                self.bank = 0;
                Answer::Fault(FaultKind::FuelExhausted)
            }
            HostMessage::WallBackstop => Answer::Gone(Forfeit::WallBackstop),
            HostMessage::Trap => Answer::Gone(Forfeit::Trap),
            HostMessage::Exit { .. } => Answer::Gone(Forfeit::Exit),
            // Refused to load what this worker compiled, or lost its way:
            // ours to fix, but the seat cannot go on.
            HostMessage::Error { message } => {
                tracing::error!(seat, %message, "the wasm host failed");
                Answer::Gone(Forfeit::Crash)
            }
        }
    }
}

impl HostProtocol for WasmTurns {
    const HOST: &'static str = "wasm";

    fn write_turn(&mut self, frame: &[u8], budget: Duration, out: &mut Vec<u8>) -> Duration {
        let first = self.turns == 0;
        let available = self.fuel.available(self.bank, first);
        // The first turn's wall is the start-up budget; later ones the
        // game's backstop.
        let wall = if first {
            budget
        } else {
            Duration::from_millis(self.fuel.wall_ms)
        };
        if let Some(artifact) = self.artifact.take() {
            wire::write_module(&artifact, out);
        }
        wire::write_turn(
            &TurnRequest {
                budget: available,
                refill: self.fuel.refill(),
                wall_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
                frame: frame.to_vec(),
            },
            out,
        );
        self.turns += 1;
        self.playing = Some(Turn { available, first });
        wall
    }

    fn settle(&mut self, line: &[u8], seat: usize) -> Option<Answer> {
        let message = HostMessage::parse(line)?;
        Some(self.settle_message(message, seat))
    }

    fn abandon_turn(&mut self) {
        self.playing = None;
    }

    fn take_stray_lines(&mut self) -> u32 {
        std::mem::take(&mut self.stray)
    }

    fn fuel(&self) -> Option<Fuel> {
        let available = self.fuel.available(self.bank, self.turns == 0);
        Some(Fuel {
            allowance: available.saturating_sub(self.bank),
            bank: self.bank,
        })
    }

    fn fuel_per_turn(&self) -> &[u64] {
        &self.fuel_per_turn
    }
}
