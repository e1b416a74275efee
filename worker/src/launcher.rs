//! How the runner gets bot processes: a [`Launcher`] turns a bot directory
//! into a running process with three pipes, and runs its `build.sh`.
//!
//! The runner only ever sees this trait, so a plain-process launcher (here)
//! and the sandbox (its own crate) are interchangeable.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A bot as submitted: a directory holding `run.sh` and maybe `build.sh`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotSpec {
    /// Shown in results and logs.
    pub name: String,
    pub dir: PathBuf,
}

impl BotSpec {
    /// A bot named after its directory. The path is made absolute, since
    /// scripts run with the bot's directory as their working directory.
    pub fn from_dir(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        Self { name, dir }
    }

    /// Checks the layout before anything is launched: a `run.sh`, a
    /// `bot.wasm`, or a `build.sh` that may make the module.
    pub fn validate(&self) -> Result<(), LaunchError> {
        let run = self.dir.join(RUN_SCRIPT);
        if !self.dir.is_dir() {
            return Err(LaunchError::NotADirectory(self.dir.clone()));
        }
        if !run.is_file()
            && !has_wasm_module(&self.dir)
            && !has_model(&self.dir)
            && !entry_may_be_built(&self.dir)
        {
            return Err(LaunchError::MissingRunScript(run));
        }
        Ok(())
    }

    /// Why this directory cannot run as a bot, for the participant: its
    /// `run.sh` is missing, or is not a regular file (a link, a directory,
    /// a fifo), or cannot even be inspected (a path too long). `None` when
    /// `run.sh` is a regular file. The entry is looked at with `lstat`: a
    /// link is never followed on the host.
    pub fn run_script_problem(&self) -> Option<String> {
        run_script_problem(&self.dir)
    }

    pub fn build_script(&self) -> Option<PathBuf> {
        let path = self.dir.join(BUILD_SCRIPT);
        path.is_file().then_some(path)
    }
}

/// See [`BotSpec::run_script_problem`]; `dir` is a bot's (or a built
/// artifact's) directory. A directory holding a `bot.wasm` module is a bot
/// too (a WebAssembly seat, in games that run them).
pub fn run_script_problem(dir: &Path) -> Option<String> {
    if has_wasm_module(dir) || has_model(dir) {
        return None;
    }
    run_script_problem_ignoring_wasm(dir)
}

/// [`run_script_problem`] for a directory that is not a model graph: its
/// `run.sh`, or its `bot.wasm`.
pub fn run_script_problem_ignoring_models(dir: &Path) -> Option<String> {
    if has_wasm_module(dir) {
        return None;
    }
    run_script_problem_ignoring_wasm(dir)
}

/// [`run_script_problem`] for the `run.sh` alone.
pub fn run_script_problem_ignoring_wasm(dir: &Path) -> Option<String> {
    match std::fs::symlink_metadata(dir.join(RUN_SCRIPT)) {
        Ok(meta) if meta.file_type().is_file() => None,
        Ok(meta) if meta.file_type().is_symlink() => Some(format!(
            "{RUN_SCRIPT} is a symbolic link; it must be a regular file"
        )),
        Ok(_) => Some(format!("{RUN_SCRIPT} is not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "the submission has no {RUN_SCRIPT} (and no {WASM_MODULE}, nor {MODEL_GRAPH} with {MODEL_MANIFEST})"
        )),
        Err(e) => Some(format!("{RUN_SCRIPT} cannot be used: {e}")),
    }
}

pub const RUN_SCRIPT: &str = "run.sh";
pub const BUILD_SCRIPT: &str = "build.sh";
/// A WebAssembly bot's module (a WASI command), shipped or built.
pub const WASM_MODULE: &str = "bot.wasm";

/// A model-graph bot's graph (ONNX), with its [`MODEL_MANIFEST`].
pub const MODEL_GRAPH: &str = "model.onnx";
/// A model-graph bot's manifest: its adapters and head.
pub const MODEL_MANIFEST: &str = "bot.toml";

/// Whether `dir` is a model-graph bot: a `model.onnx` and a `bot.toml`,
/// both regular files (links are never followed).
pub fn has_model(dir: &Path) -> bool {
    let file = |name: &str| {
        std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.file_type().is_file())
    };
    file(MODEL_GRAPH) && file(MODEL_MANIFEST)
}

/// Whether `dir` holds a `bot.wasm` that is a regular file (a link is
/// never followed).
pub fn has_wasm_module(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(WASM_MODULE)).is_ok_and(|m| m.file_type().is_file())
}

/// Whether a directory that is not yet a bot may become one by its build:
/// it has a `build.sh` and no `run.sh` at all (the build may write
/// `bot.wasm`). A `run.sh` that is there but unusable stays a problem.
pub fn entry_may_be_built(dir: &Path) -> bool {
    dir.join(BUILD_SCRIPT).is_file()
        && matches!(
            std::fs::symlink_metadata(dir.join(RUN_SCRIPT)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound
        )
}

/// How a bot process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BotExit {
    /// Exit status, when it exited on its own.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The kernel's OOM killer ended it (only a confining launcher can tell).
    pub oom_killed: bool,
}

impl BotExit {
    /// Why a `build.sh` that ended this way failed, for the participant;
    /// `None` when it succeeded.
    pub fn build_failure(&self) -> Option<String> {
        match (self.code, self.signal) {
            _ if self.oom_killed => Some("build.sh ran out of memory".to_owned()),
            (Some(0), _) => None,
            (Some(code), _) => Some(format!("build.sh exited with status {code}")),
            (None, Some(signal)) => Some(format!("build.sh was killed by signal {signal}")),
            (None, None) => Some("build.sh ended abnormally".to_owned()),
        }
    }
}

/// A running bot: the handle the runner waits on and kills.
pub trait BotHandle: Send {
    /// The exit, if the process has ended; never blocks.
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>>;
    /// Kills the bot and everything it started.
    fn kill(&mut self) -> std::io::Result<()>;
    /// Blocks until the process has ended and is reaped.
    fn wait(&mut self) -> std::io::Result<BotExit>;
}

/// A launched bot: its pipes (runner ends; the referee makes them
/// non-blocking) and its handle.
pub struct LaunchedBot {
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub handle: Box<dyn BotHandle>,
}

/// The result of running a bot's `build.sh`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildReport {
    /// True when there was no build script or it exited 0 in time.
    pub succeeded: bool,
    /// Why it failed, in a few words, for the participant.
    pub failure: Option<String>,
    /// The combined stdout and stderr of the build, capped.
    pub log: Vec<u8>,
    pub duration: Duration,
    /// Where the built bot lives, when the launcher builds into a copy (the
    /// sandbox's cache); `None` means the bot's own directory.
    pub artifact: Option<PathBuf>,
    /// The result came from the build cache; nothing ran.
    pub cached: bool,
}

impl BuildReport {
    /// A build that failed for `reason` before producing anything.
    pub fn failed(reason: String, started: std::time::Instant) -> Self {
        Self {
            succeeded: false,
            failure: Some(reason),
            log: Vec::new(),
            duration: started.elapsed(),
            artifact: None,
            cached: false,
        }
    }
}

/// Starts bots. One launcher serves every seat of a match.
pub trait Launcher: Sync {
    /// Starts `run.sh` of `bot` for `seat`, with its working directory at the bot's.
    fn launch(&self, bot: &BotSpec, seat: usize) -> Result<LaunchedBot, LaunchError>;

    /// Starts `program` with `args` for `seat`, confined exactly as `bot`
    /// would be and in its directory: a platform program that plays the
    /// seat for the bot (the WebAssembly host). `program` is a host path
    /// the confinement shows at the same place. Launchers that cannot do
    /// this refuse, as this default does.
    fn launch_program(
        &self,
        bot: &BotSpec,
        seat: usize,
        program: &Path,
        args: &[std::ffi::OsString],
    ) -> Result<LaunchedBot, LaunchError> {
        let _ = (seat, args);
        Err(LaunchError::Spawn {
            path: program.to_owned(),
            source: std::io::Error::other(format!(
                "this launcher cannot start a platform program for {}",
                bot.name
            )),
        })
    }

    /// Runs `build.sh`, if there is one, under `wall_limit`. A failing or
    /// overrunning build is a report, not an error, and so is a directory
    /// that is not a runnable bot ([`BotSpec::run_script_problem`]): both
    /// are the submission's fault and forfeit its seat with `build_failed`.
    /// An `Err` is the host's problem (the directory is gone, the sandbox
    /// or the cache failed).
    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError>;

    /// [`Launcher::build`], ended early once `cancelled` answers true (the
    /// match was abandoned): the build is killed and reported failed, and
    /// nothing is cached. Launchers that cannot stop a build run it to the
    /// end, as this default does.
    fn build_cancellable(
        &self,
        bot: &BotSpec,
        wall_limit: Duration,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<BuildReport, LaunchError> {
        let _ = cancelled;
        self.build(bot, wall_limit)
    }
}

/// The launcher itself failed: an infrastructure problem, not the bot's fault.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("bot directory {0} does not exist or is not a directory")]
    NotADirectory(PathBuf),
    #[error("bot has no run script: {0} is missing")]
    MissingRunScript(PathBuf),
    #[error("cannot start {path}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} cannot be started")]
    BotCannotStart {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sandbox failure for {path}")]
    Sandbox {
        path: PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("cannot {what} for {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl LaunchError {
    /// The same error with a path inside `root` shown relative to it.
    pub fn relative_to(self, root: &Path) -> LaunchError {
        let strip = |path: PathBuf| match path.strip_prefix(root) {
            Ok(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
            Ok(rel) => rel.to_path_buf(),
            Err(_) => path,
        };
        match self {
            LaunchError::NotADirectory(path) => LaunchError::NotADirectory(strip(path)),
            LaunchError::MissingRunScript(path) => LaunchError::MissingRunScript(strip(path)),
            LaunchError::BotCannotStart { path, source } => LaunchError::BotCannotStart {
                path: strip(path),
                source,
            },
            other => other,
        }
    }

    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        LaunchError::Io {
            what,
            path: path.to_owned(),
            source,
        }
    }
}

#[cfg(test)]
mod relative_tests {
    use super::*;

    #[test]
    fn layout_errors_name_paths_inside_the_bot() {
        let root = Path::new("/var/cache/arena/ab12");
        let err = LaunchError::MissingRunScript(root.join("run.sh")).relative_to(root);
        assert_eq!(err.to_string(), "bot has no run script: run.sh is missing");
        let err = LaunchError::NotADirectory(root.to_owned()).relative_to(root);
        assert!(!err.to_string().contains("/var/cache"), "{err}");
        // A path elsewhere is left as it is.
        let other = LaunchError::MissingRunScript(PathBuf::from("/elsewhere/run.sh"));
        assert!(other.relative_to(root).to_string().contains("/elsewhere"));
    }
}
