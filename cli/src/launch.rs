//! Turns the sandbox flags into a launcher: confined by default, plain
//! processes with `--no-sandbox`.

use std::path::PathBuf;

use anyhow::Context;
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::{Launcher, ProcessLauncher, SandboxLauncher};

use crate::cli::SandboxArgs;

/// The launcher a one-shot command uses.
pub enum CommandLauncher {
    Plain(ProcessLauncher),
    Sandboxed(Box<SandboxLauncher>),
}

impl CommandLauncher {
    pub fn as_launcher(&self) -> &dyn Launcher {
        match self {
            CommandLauncher::Plain(launcher) => launcher,
            CommandLauncher::Sandboxed(launcher) => launcher.as_ref(),
        }
    }

    /// A one-shot command leaves no empty cgroup parent behind.
    pub fn finish(self) {
        if let CommandLauncher::Sandboxed(launcher) = self
            && let Err(e) = launcher.sandbox().remove_parent_if_empty()
        {
            eprintln!("arena: {e:#}");
        }
    }
}

/// The launcher for a match of `seats` bots (or a build, with one seat).
pub fn launcher(args: &SandboxArgs, seats: usize) -> anyhow::Result<CommandLauncher> {
    if args.no_sandbox {
        eprintln!("arena: --no-sandbox: bots run unconfined, as plain processes");
        return Ok(CommandLauncher::Plain(ProcessLauncher::default()));
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
    Ok(CommandLauncher::Sandboxed(Box::new(SandboxLauncher::new(
        sandbox,
        cores,
        cache_dir(args),
    ))))
}

fn cache_dir(args: &SandboxArgs) -> PathBuf {
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
