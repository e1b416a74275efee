//! The sandboxed launcher: every bot and every build runs confined (see the
//! `arena-sandbox` crate), on cores from the allocator, as a uid of its own.
//!
//! Builds are content-addressed: the submission tree is hashed, copied into
//! the cache under `<tree sha256>-<environment id>`, built there by its
//! `build.sh` (writable, offline, under a wall limit), then made read-only.
//! Matches run from that copy, mounted read-only. A worker therefore builds
//! each submission once per environment; a failed build is cached too (it is
//! deterministic), a timed-out one is not.
//!
//! Disk is bounded twice. A build's artifact (the submission plus whatever
//! `build.sh` writes) may hold at most [`DEFAULT_BUILD_OUTPUT_BYTES`] by
//! default, counted by apparent size so a sparse file counts at its full
//! length: a submission over it is refused before it is copied, and a build
//! is measured while it runs and killed as soon as it passes the cap (each
//! file is also held to the sandbox's RLIMIT_FSIZE). Copies keep holes. The
//! whole cache is held to [`DEFAULT_CACHE_BYTES`] by evicting the least
//! recently used entries after each new build (never one a running bot
//! uses).

use std::collections::BTreeMap;
use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use arena_sandbox::cpus::{CoreAllocator, CoreLease};
use arena_sandbox::ids::{UidLease, UidPool};
use arena_sandbox::spawn::APP_MOUNT;
use arena_sandbox::{Sandbox, SandboxCommand, SandboxedChild, Verdict};

use crate::capped_log::CappedLog;
use crate::fd;
use crate::launcher::{
    BUILD_SCRIPT, BotExit, BotHandle, BotSpec, BuildReport, LaunchError, LaunchedBot, Launcher,
    RUN_SCRIPT, run_script_problem,
};
use crate::submission::{self, TreeError};

/// Files kept beside each cached build.
const STATUS_FILE: &str = "status";
const LOG_FILE: &str = "build.log";
const TREE_DIR: &str = "tree";
/// The entry's apparent size in bytes, written when it is cached.
const BYTES_FILE: &str = "bytes";

/// The default cap on one build's artifact: 1 GiB.
pub const DEFAULT_BUILD_OUTPUT_BYTES: u64 = 1 << 30;
/// The default cap on the whole build cache: 10 GiB.
pub const DEFAULT_CACHE_BYTES: u64 = 10 << 30;
/// How often a running build's output is measured.
const MEASURE_EVERY: Duration = Duration::from_millis(250);

/// Runs bots and builds confined.
pub struct SandboxLauncher {
    sandbox: Sandbox,
    cores: CoreAllocator,
    uids: UidPool,
    cache_dir: PathBuf,
    build_log_cap: usize,
    /// Largest artifact a build may leave, by apparent size.
    build_output_cap: u64,
    /// Largest the cache may grow to before least-recently-used entries go.
    cache_cap: u64,
    /// Cache entries a running bot of this process uses, with how many
    /// bots use each: eviction skips them.
    in_use: Arc<Mutex<BTreeMap<String, usize>>>,
    /// Makes scratch directory names unique within this process.
    scratch_seq: AtomicU64,
}

/// A build in its scratch directory: the outcome to cache (`Ok`, success
/// or failure) or the failure not to cache (`Err`), and the build's log.
type ScratchBuild = (Result<Result<(), String>, String>, Vec<u8>);

/// How a confined `build.sh` ended.
enum BuildEnd {
    /// It exited; `Err` says why it failed.
    Exited(Result<(), String>),
    /// It ran over its wall limit and was killed.
    TimedOut,
    /// Its output passed the cap (apparent bytes seen) and it was killed.
    OverCap(u64),
    /// The match was abandoned and the build killed.
    Cancelled,
}

impl SandboxLauncher {
    pub fn new(sandbox: Sandbox, cores: CoreAllocator, cache_dir: PathBuf) -> Self {
        Self {
            sandbox,
            cores,
            uids: UidPool::default(),
            cache_dir,
            build_log_cap: 256 * 1024,
            build_output_cap: DEFAULT_BUILD_OUTPUT_BYTES,
            cache_cap: DEFAULT_CACHE_BYTES,
            in_use: Arc::default(),
            scratch_seq: AtomicU64::new(0),
        }
    }

    /// Caps each build's artifact (apparent size) at `bytes`.
    pub fn with_build_output_cap(mut self, bytes: u64) -> Self {
        self.build_output_cap = bytes;
        self
    }

    /// Caps the whole build cache at `bytes` (least recently used go first).
    pub fn with_cache_cap(mut self, bytes: u64) -> Self {
        self.cache_cap = bytes;
        self
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    pub fn cores(&self) -> &CoreAllocator {
        &self.cores
    }

    /// The environment id builds are cached under.
    pub fn env_id(&self) -> String {
        self.sandbox.config().env.id()
    }

    fn command(&self, dir: &Path, script: &str, uid: u32, cores: &CoreLease) -> SandboxCommand {
        let executable = fs::symlink_metadata(dir.join(script))
            .map(|m| m.file_type().is_file() && m.mode() & 0o111 != 0)
            .unwrap_or(false);
        let inside = Path::new(APP_MOUNT).join(script);
        let command = if executable {
            SandboxCommand::new(inside, dir, uid)
        } else {
            SandboxCommand::new("/bin/sh", dir, uid).arg(inside)
        };
        self.environment(command, cores)
    }

    /// The environment, cores and CPU share every confined process gets.
    fn environment(&self, command: SandboxCommand, cores: &CoreLease) -> SandboxCommand {
        command
            .env("PATH", self.sandbox.config().env.search_path())
            .env("HOME", "/tmp")
            .env("TMPDIR", "/tmp")
            .env("LANG", "C.UTF-8")
            .cpus(cores.cores().to_vec())
            .cpu_quota(cores.quota())
    }

    fn cached(&self, key: &str) -> Option<BuildReport> {
        let dir = self.cache_dir.join(key);
        let status = fs::read_to_string(dir.join(STATUS_FILE)).ok()?;
        // The status file's mtime is the entry's last use, for eviction.
        if let Err(e) = fs::File::options()
            .append(true)
            .open(dir.join(STATUS_FILE))
            .and_then(|f| f.set_modified(SystemTime::now()))
        {
            tracing::warn!(path = %dir.display(), error = %e, "cannot mark a cached build as used");
        }
        let log = fs::read(dir.join(LOG_FILE)).unwrap_or_default();
        let status = status.trim_end();
        Some(if status == "ok" {
            BuildReport {
                succeeded: true,
                failure: None,
                log,
                duration: Duration::ZERO,
                artifact: Some(dir.join(TREE_DIR)),
                cached: true,
            }
        } else {
            BuildReport {
                succeeded: false,
                failure: Some(status.trim_start_matches("failed: ").to_owned()),
                log,
                duration: Duration::ZERO,
                artifact: None,
                cached: true,
            }
        })
    }

    /// Runs build.sh in `tree` (writable), confined, under `wall_limit`,
    /// measuring the tree every [`MEASURE_EVERY`] and killing the build
    /// once it passes the output cap or `cancelled` says so.
    fn run_build(
        &self,
        tree: &Path,
        wall_limit: Duration,
        log: &mut CappedLog,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<BuildEnd, LaunchError> {
        let uid = self.uids.lease().map_err(|e| sandbox_error(tree, e))?;
        let cores = self.cores.lease().map_err(|e| sandbox_error(tree, e))?;
        submission::for_each_plain_entry(tree, |path, _| {
            std::os::unix::fs::lchown(path, Some(uid.uid()), Some(uid.uid()))
        })
        .map_err(|e| sandbox_error(tree, e))?;
        let command = self
            .command(tree, BUILD_SCRIPT, uid.uid(), &cores)
            .writable(true)
            .label("build");
        let mut child = self
            .sandbox
            .spawn(&command)
            .map_err(|e| sandbox_error(tree, e))?;
        child.stdin = None;
        let outputs: Vec<OwnedFd> = [child.stdout.take(), child.stderr.take()]
            .into_iter()
            .flatten()
            .collect();
        let deadline = Instant::now() + wall_limit;
        // Drained in slices, so the tree is measured while the build runs:
        // the disk never holds much more than the cap.
        let end = loop {
            let slice = deadline.min(Instant::now() + MEASURE_EVERY);
            let exited =
                fd::drain_until_exit(&outputs, log, slice, || Ok(child.try_wait()?.is_some()))
                    .map_err(|e| LaunchError::io("collect build output", tree, e))?;
            if exited {
                break None;
            }
            let size = submission::apparent_size(tree, self.build_output_cap)
                .map_err(|e| sandbox_error(tree, e))?;
            if size > self.build_output_cap {
                break Some(BuildEnd::OverCap(size));
            }
            if cancelled() {
                break Some(BuildEnd::Cancelled);
            }
            if Instant::now() >= deadline {
                break Some(BuildEnd::TimedOut);
            }
        };
        let verdict = child.finish().map_err(|e| sandbox_error(tree, e))?;
        Ok(end.unwrap_or_else(|| {
            BuildEnd::Exited(match BotExit::from(verdict).build_failure() {
                Some(reason) => Err(reason),
                None => Ok(()),
            })
        }))
    }

    /// Removes least-recently-used cache entries until the cache fits its
    /// cap, never `keep` (just built) nor an entry a running bot uses.
    fn evict(&self, keep: &str) {
        let Ok(dir) = fs::read_dir(&self.cache_dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, String)> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.'))
            .filter_map(|name| {
                let path = self.cache_dir.join(&name);
                let used = fs::metadata(path.join(STATUS_FILE)).ok()?.modified().ok()?;
                let bytes = fs::read_to_string(path.join(BYTES_FILE))
                    .ok()
                    .and_then(|b| b.trim().parse().ok())
                    .or_else(|| submission::apparent_size(&path, u64::MAX).ok())?;
                Some((used, bytes, name))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, bytes, _)| *bytes).sum();
        if total <= self.cache_cap {
            return;
        }
        entries.sort();
        let in_use = lock(&self.in_use).clone();
        for (_, bytes, name) in entries {
            if total <= self.cache_cap {
                break;
            }
            if name == keep || in_use.contains_key(&name) {
                continue;
            }
            // Renamed first, so no reader ever finds a half-removed entry.
            let doomed = self.cache_dir.join(format!(
                ".evict-{name}-{}-{}",
                std::process::id(),
                self.scratch_seq.fetch_add(1, Ordering::Relaxed)
            ));
            if fs::rename(self.cache_dir.join(&name), &doomed).is_ok() {
                remove_scratch(&doomed);
                total = total.saturating_sub(bytes);
            }
        }
    }

    /// Marks the cache entry holding `dir` (if it is one) as used by a bot
    /// until the returned guard is dropped.
    fn pin(&self, dir: &Path) -> Option<Pin> {
        let key = dir
            .strip_prefix(&self.cache_dir)
            .ok()?
            .components()
            .next()?
            .as_os_str()
            .to_str()?
            .to_owned();
        *lock(&self.in_use).entry(key.clone()).or_default() += 1;
        Some(Pin {
            key,
            in_use: Arc::clone(&self.in_use),
        })
    }
}

/// A cache entry a running bot uses (see [`SandboxLauncher::pin`]).
struct Pin {
    key: String,
    in_use: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        let mut in_use = lock(&self.in_use);
        if let Some(count) = in_use.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                in_use.remove(&self.key);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes a finished build read-only and readable by every match uid: owned
/// by root, directories and executables 0555, other files 0444.
fn seal(tree: &Path) -> Result<(), TreeError> {
    submission::for_each_plain_entry(tree, |path, meta| {
        std::os::unix::fs::lchown(path, Some(0), Some(0))?;
        let mode = if meta.is_dir() || meta.mode() & 0o100 != 0 {
            0o555
        } else {
            0o444
        };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    })
}

fn sandbox_error(
    path: &Path,
    source: impl std::error::Error + Send + Sync + 'static,
) -> LaunchError {
    LaunchError::Sandbox {
        path: path.to_owned(),
        source: Box::new(source),
    }
}

impl SandboxLauncher {
    /// Starts a seat's process confined: `program` is `None` for the bot's
    /// own `run.sh`, or a platform program (with its arguments) that plays
    /// the seat for the bot.
    fn spawn_seat(
        &self,
        bot: &BotSpec,
        seat: usize,
        program: Option<(&Path, &[std::ffi::OsString])>,
    ) -> Result<LaunchedBot, LaunchError> {
        let uid = self.uids.lease().map_err(|e| sandbox_error(&bot.dir, e))?;
        let pin = self.pin(&bot.dir);
        let cores = self.cores.lease_or_share();
        let command = match program {
            None => self.command(&bot.dir, RUN_SCRIPT, uid.uid(), &cores),
            Some((program, args)) => {
                // A platform program is bound at a place of its own inside.
                let platform = &self.sandbox.config().platform_paths;
                let inside = if platform.iter().any(|p| p == program) {
                    arena_sandbox::spawn::platform_path_inside(program)
                } else {
                    program.to_owned()
                };
                args.iter().fold(
                    self.environment(SandboxCommand::new(inside, &bot.dir, uid.uid()), &cores),
                    |command, arg| command.arg(arg),
                )
            }
        }
        .label(format!("seat{seat}"));
        let mut child = match self.sandbox.spawn(&command) {
            Ok(child) => child,
            // The bot's own script cannot be executed (bad interpreter line,
            // not a program): its fault, not the host's.
            Err(arena_sandbox::SandboxError::Child {
                stage: arena_sandbox::child::Stage::Exec,
                source,
            }) if program.is_none() => {
                // Named as in the bot's directory: the message reaches the
                // entrant, the worker's cache path must not.
                return Err(LaunchError::BotCannotStart {
                    path: PathBuf::from(RUN_SCRIPT),
                    source,
                });
            }
            Err(e) => return Err(sandbox_error(&bot.dir, e)),
        };
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LaunchError::io(
                "take pipes",
                &bot.dir,
                std::io::Error::other("pipes missing"),
            ));
        };
        Ok(LaunchedBot {
            stdin,
            stdout,
            stderr,
            handle: Box::new(SandboxedHandle {
                child,
                _cores: cores,
                _uid: uid,
                _pin: pin,
            }),
        })
    }
}

impl Launcher for SandboxLauncher {
    fn launch(&self, bot: &BotSpec, seat: usize) -> Result<LaunchedBot, LaunchError> {
        // What the layout check says reaches the entrant: named within the
        // bot's directory, not where this worker keeps it.
        bot.validate().map_err(|e| e.relative_to(&bot.dir))?;
        self.spawn_seat(bot, seat, None)
    }

    fn launch_program(
        &self,
        bot: &BotSpec,
        seat: usize,
        program: &Path,
        args: &[std::ffi::OsString],
    ) -> Result<LaunchedBot, LaunchError> {
        if !bot.dir.is_dir() {
            return Err(LaunchError::NotADirectory(bot.dir.clone()));
        }
        self.spawn_seat(bot, seat, Some((program, args)))
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        self.build_cancellable(bot, wall_limit, &|| false)
    }

    fn build_cancellable(
        &self,
        bot: &BotSpec,
        wall_limit: Duration,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<BuildReport, LaunchError> {
        let started = Instant::now();
        let key = match self.build_key(bot, started)? {
            Ok(key) => key,
            Err(refused) => return Ok(refused),
        };
        if let Some(report) = self.cached(&key) {
            return Ok(report);
        }
        fs::create_dir_all(&self.cache_dir)
            .map_err(|e| LaunchError::io("create the build cache", &self.cache_dir, e))?;
        let scratch = self.cache_dir.join(format!(
            ".tmp-{key}-{}-{}",
            std::process::id(),
            self.scratch_seq.fetch_add(1, Ordering::Relaxed)
        ));
        let (outcome, log) = match self.build_in(&scratch, bot, wall_limit, cancelled) {
            Ok((Ok(outcome), log)) => (outcome, log),
            Ok((Err(uncached), log)) => {
                remove_scratch(&scratch);
                let mut report = BuildReport::failed(uncached, started);
                report.log = log;
                return Ok(report);
            }
            Err(e) => {
                remove_scratch(&scratch);
                return Err(e);
            }
        };
        self.keep(&scratch, &key, &outcome, &log)?;
        let mut report = self.cached(&key).ok_or_else(|| {
            LaunchError::io(
                "read back the cached build",
                &self.cache_dir.join(&key),
                std::io::Error::other("missing status"),
            )
        })?;
        self.evict(&key);
        report.duration = started.elapsed();
        report.cached = false;
        Ok(report)
    }
}

impl SandboxLauncher {
    /// The build cache's key for `bot`: its tree's hash and this
    /// environment. The inner `Err` is a failed build already: a tree that
    /// cannot be a bot, or is over the output cap, is the submission's
    /// fault (a build_failed result, never a requeue).
    fn build_key(
        &self,
        bot: &BotSpec,
        started: Instant,
    ) -> Result<Result<String, BuildReport>, LaunchError> {
        if !bot.dir.is_dir() {
            return Err(LaunchError::NotADirectory(bot.dir.clone()));
        }
        if let Some(problem) = bot.run_script_problem()
            && !crate::launcher::entry_may_be_built(&bot.dir)
        {
            return Ok(Err(BuildReport::failed(problem, started)));
        }
        let hash = match submission::tree_hash(&bot.dir) {
            Ok(hash) => hash,
            Err(refused) if refused.is_submissions_fault() => {
                return Ok(Err(BuildReport::failed(with_cause(&refused), started)));
            }
            Err(e) => return Err(tree_error(e)),
        };
        let size =
            submission::apparent_size(&bot.dir, self.build_output_cap).map_err(tree_error)?;
        if size > self.build_output_cap {
            return Ok(Err(BuildReport::failed(
                self.over_cap("the submission", size),
                started,
            )));
        }
        Ok(Ok(format!("{hash}-{}", self.env_id())))
    }

    /// Copies `bot` into `scratch` and runs its `build.sh` there. The
    /// outcome's inner `Err` is a failure not to cache (a later try may
    /// pass); the `Ok` outcome is cached, success or failure. The scratch
    /// directory is the caller's to remove on any `Err`.
    fn build_in(
        &self,
        scratch: &Path,
        bot: &BotSpec,
        wall_limit: Duration,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<ScratchBuild, LaunchError> {
        let tree = scratch.join(TREE_DIR);
        fs::create_dir(scratch).map_err(|e| LaunchError::io("create", scratch, e))?;
        if let Err(e) = submission::copy_tree(&bot.dir, &tree) {
            if e.is_submissions_fault() {
                return Ok((Err(with_cause(&e)), Vec::new()));
            }
            return Err(tree_error(e));
        }
        let mut log = CappedLog::new(self.build_log_cap);
        let end = if tree.join(BUILD_SCRIPT).is_file() {
            self.run_build(&tree, wall_limit, &mut log, cancelled)?
        } else {
            BuildEnd::Exited(Ok(()))
        };
        let end = match self.still_a_bot(&tree, end)? {
            BuildEnd::Exited(outcome) => Ok(outcome),
            // Not cached: a later try (another limit, a calmer host) may pass.
            BuildEnd::TimedOut => Err(format!(
                "build.sh ran over its wall limit of {wall_limit:.0?}"
            )),
            BuildEnd::OverCap(bytes) => Err(self.over_cap("the build's output", bytes)),
            BuildEnd::Cancelled => Err("the build was stopped: the match was abandoned".to_owned()),
        };
        if end.is_ok() {
            seal(&tree).map_err(|e| sandbox_error(&tree, e))?;
        }
        Ok((end, log.contents()))
    }

    /// A build that exited well must have left a bot, within the cap.
    fn still_a_bot(&self, tree: &Path, end: BuildEnd) -> Result<BuildEnd, LaunchError> {
        let BuildEnd::Exited(Ok(())) = end else {
            return Ok(end);
        };
        let size = submission::apparent_size(tree, self.build_output_cap)
            .map_err(|e| sandbox_error(tree, e))?;
        Ok(match run_script_problem(tree) {
            _ if size > self.build_output_cap => BuildEnd::OverCap(size),
            Some(problem) => BuildEnd::Exited(Err(format!("after build.sh, {problem}"))),
            None => BuildEnd::Exited(Ok(())),
        })
    }

    /// Writes the build's log, size and status beside its tree and moves
    /// `scratch` into the cache as `key` (unless another build of the same
    /// tree got there first; its result stands).
    fn keep(
        &self,
        scratch: &Path,
        key: &str,
        outcome: &Result<(), String>,
        log: &[u8],
    ) -> Result<(), LaunchError> {
        let tree = scratch.join(TREE_DIR);
        let status = match outcome {
            Ok(()) => "ok".to_owned(),
            Err(reason) => format!("failed: {reason}"),
        };
        let written = submission::apparent_size(&tree, u64::MAX)
            .map_err(|e| sandbox_error(&tree, e))
            .and_then(|bytes| {
                let bytes = bytes.saturating_add(log.len() as u64);
                let write = |name: &str, bytes: &[u8]| {
                    fs::write(scratch.join(name), bytes)
                        .map_err(|e| LaunchError::io("write", &scratch.join(name), e))
                };
                write(LOG_FILE, log)
                    .and_then(|()| write(BYTES_FILE, bytes.to_string().as_bytes()))
                    .and_then(|()| write(STATUS_FILE, status.as_bytes()))
            });
        if let Err(e) = written {
            remove_scratch(scratch);
            return Err(e);
        }
        if fs::rename(scratch, self.cache_dir.join(key)).is_err() {
            remove_scratch(scratch);
        }
        Ok(())
    }
}

impl SandboxLauncher {
    fn over_cap(&self, what: &str, bytes: u64) -> String {
        format!(
            "{what} holds {bytes} bytes or more (apparent size: a sparse file counts at its \
             length), over the build output cap of {} bytes",
            self.build_output_cap
        )
    }
}

/// A refused tree's reason for the participant, with its OS cause (a
/// path too long says so).
fn with_cause(e: &TreeError) -> String {
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// A host-side failure while reading or copying a tree.
fn tree_error(e: TreeError) -> LaunchError {
    match e {
        TreeError::Io { what, path, source } => LaunchError::io(what, &path, source),
        other => LaunchError::Sandbox {
            path: PathBuf::new(),
            source: Box::new(other),
        },
    }
}

fn remove_scratch(dir: &Path) {
    // Sealed trees are read-only; open them up again before removing.
    let _ = submission::for_each_plain_entry(dir, |path, meta| {
        let mode = if meta.is_dir() { 0o755 } else { 0o644 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    });
    if let Err(e) = fs::remove_dir_all(dir) {
        tracing::warn!(path = %dir.display(), error = %e, "cannot remove a build's scratch");
    }
}

/// A confined bot with the core and uid it holds until it is gone.
struct SandboxedHandle {
    child: SandboxedChild,
    _cores: CoreLease,
    _uid: UidLease,
    /// Keeps the bot's build out of eviction while it runs.
    _pin: Option<Pin>,
}

impl BotHandle for SandboxedHandle {
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>> {
        Ok(self.child.try_wait()?.map(BotExit::from))
    }

    fn kill(&mut self) -> std::io::Result<()> {
        self.child.kill().map_err(std::io::Error::other)
    }

    fn wait(&mut self) -> std::io::Result<BotExit> {
        Ok(BotExit::from(self.child.wait()?))
    }
}

impl From<Verdict> for BotExit {
    fn from(v: Verdict) -> Self {
        BotExit {
            code: v.code,
            signal: v.signal,
            oom_killed: v.oom_killed,
        }
    }
}
