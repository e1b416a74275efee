//! Turns the sandbox flags into a launcher: confined by default, plain
//! processes with `--no-sandbox`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::seat::model::ModelSupport;
use arena_worker::seat::wasm::WasmSupport;
use arena_worker::{Launcher, ProcessLauncher, SandboxLauncher};

use crate::cli::SandboxArgs;

/// The launcher a one-shot command uses.
pub enum CommandLauncher {
    Plain(Arc<ProcessLauncher>),
    Sandboxed(Arc<SandboxLauncher>),
}

impl CommandLauncher {
    pub fn as_launcher(&self) -> &dyn Launcher {
        match self {
            CommandLauncher::Plain(launcher) => launcher.as_ref(),
            CommandLauncher::Sandboxed(launcher) => launcher.as_ref(),
        }
    }

    /// The same launcher, for workers on other threads.
    pub fn shared(&self) -> Arc<dyn Launcher + Send + Sync> {
        match self {
            CommandLauncher::Plain(launcher) => Arc::clone(launcher) as _,
            CommandLauncher::Sandboxed(launcher) => Arc::clone(launcher) as _,
        }
    }

    /// A one-shot command leaves no empty cgroup parent behind.
    pub fn finish(self) {
        if let CommandLauncher::Sandboxed(launcher) = self
            && let Err(e) = launcher.sandbox().remove_parent_if_empty()
        {
            crate::messages::say!("arena: {e:#}");
        }
    }
}

/// The launcher for a match of `seats` bots (or a build, with one seat),
/// for a one-shot command.
pub fn launcher(args: &SandboxArgs, seats: usize) -> anyhow::Result<CommandLauncher> {
    make_launcher(args, seats, false)
}

/// The launcher of a long-lived worker: it keeps a cgroup leaf made ahead
/// for its next bot (see `SandboxConfig::spare_leaf`).
pub fn worker_launcher(args: &SandboxArgs, seats: usize) -> anyhow::Result<CommandLauncher> {
    make_launcher(args, seats, true)
}

fn make_launcher(
    args: &SandboxArgs,
    seats: usize,
    long_lived: bool,
) -> anyhow::Result<CommandLauncher> {
    if args.no_sandbox {
        crate::messages::say!("arena: --no-sandbox: bots run unconfined, as plain processes");
        return Ok(CommandLauncher::Plain(Arc::new(ProcessLauncher::default())));
    }
    let env = match &args.store_paths {
        Some(file) => RuntimeEnv::from_store_paths_file(file)?,
        None => RuntimeEnv::host_default().with_extra_paths(&host_toolchains())?,
    }
    .with_extra_paths(&args.env_paths)?;
    let config = SandboxConfig {
        limits: Limits {
            memory_bytes: args.memory_mb.saturating_mul(1 << 20),
            ..Limits::default()
        },
        env,
        cgroup_parent: args.cgroup_parent.clone(),
        // The wasm host is this very program, run in the seat's sandbox.
        platform_paths: vec![this_program()?],
        spare_leaf: long_lived,
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::new(config).context(
        "cannot set up the sandbox (it needs root and cgroups); \
         --no-sandbox runs bots unconfined for development",
    )?;
    let cores = match &args.cores {
        Some(cores) => cores.0.clone(),
        None => CoreAllocator::available()?,
    };
    let cores = CoreAllocator::new(&cores, seats)?;
    cores.pin_runner_thread()?;
    let launcher = SandboxLauncher::new(sandbox, cores, cache_dir(args))
        .with_build_output_cap(args.build_output_mb.saturating_mul(1 << 20))
        .with_cache_cap(args.cache_mb.saturating_mul(1 << 20));
    Ok(CommandLauncher::Sandboxed(Arc::new(launcher)))
}

/// This program, which serves `arena wasm-host` in WebAssembly seats.
pub fn this_program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot tell where this program is")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

/// Where a bot's `run.sh` finds this program: bound at a place of its own
/// inside the sandbox (its host path is not visible there), or the host
/// path when bots run unconfined.
pub fn this_program_for_bots(args: &SandboxArgs) -> anyhow::Result<PathBuf> {
    let host = this_program()?;
    Ok(if args.no_sandbox {
        host
    } else {
        arena_sandbox::spawn::platform_path_inside(&host)
    })
}

/// How WebAssembly seats are played: compiled modules beside the build
/// cache, the host this program.
pub fn wasm_support(args: &SandboxArgs) -> anyhow::Result<Arc<WasmSupport>> {
    let support = WasmSupport::new(cache_dir(args).join(".wasm"), this_program()?)
        .map_err(|e| anyhow::anyhow!("cannot set up the WebAssembly engine: {e}"))?;
    Ok(Arc::new(support))
}

/// How model-graph seats are played: the host is this program.
pub fn model_support() -> anyhow::Result<Arc<ModelSupport>> {
    Ok(Arc::new(ModelSupport::new(
        this_program()?,
        arena_model::runtime_id(),
    )))
}

/// The model runtime this build's workers play model-graph seats with (the
/// ONNX host and its version), as they register it and as `arena
/// tournament create` and `arena run` record it for a tournament with
/// model-graph entrants.
pub fn model_runtime_id() -> String {
    arena_model::runtime_id().to_owned()
}

/// Where builds are cached.
pub fn cache_dir(args: &SandboxArgs) -> PathBuf {
    if let Some(dir) = &args.cache_dir {
        return dir.clone();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("arena/builds")
}

/// On the host environment, the active Rust toolchain is bound too (when
/// there is one), so submissions with a Cargo `build.sh` build as they would
/// in the official environment.
fn host_toolchains() -> Vec<PathBuf> {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|text| PathBuf::from(text.trim()));
    sysroot
        .filter(|p| p.is_absolute() && p.join("bin/cargo").is_file())
        .into_iter()
        .collect()
}

/// Matches a worker plays at once: one per `seats + 1` cores when bots get
/// dedicated cores, one in shared-core mode.
pub fn match_slots(launcher: &CommandLauncher, seats: usize) -> usize {
    match launcher {
        CommandLauncher::Sandboxed(l)
            if l.cores().mode() == arena_sandbox::cpus::CoreMode::Dedicated =>
        {
            let cores = CoreAllocator::available().map(|c| c.len()).unwrap_or(1);
            (cores / (seats + 1)).max(1)
        }
        _ => 1,
    }
}

/// Bot cores a worker plans its matches by: every bot core in dedicated
/// mode, `None` in shared-core mode.
pub fn bot_cores(launcher: &CommandLauncher) -> Option<usize> {
    match launcher {
        CommandLauncher::Sandboxed(l)
            if l.cores().mode() == arena_sandbox::cpus::CoreMode::Dedicated =>
        {
            Some(l.cores().bot_core_count())
        }
        _ => None,
    }
}

/// The environment id a worker reports (empty when unconfined).
pub fn environment_id(launcher: &CommandLauncher) -> String {
    match launcher {
        CommandLauncher::Sandboxed(l) => l.env_id(),
        CommandLauncher::Plain(_) => String::new(),
    }
}
