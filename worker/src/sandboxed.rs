//! The sandboxed launcher: every bot and every build runs confined (see the
//! `arena-sandbox` crate), on cores from the allocator, as a uid of its own.
//!
//! Builds are content-addressed: the submission tree is hashed, copied into
//! the cache under `<tree sha256>-<environment id>`, built there by its
//! `build.sh` (writable, offline, under a wall limit), then made read-only.
//! Matches run from that copy, mounted read-only. A worker therefore builds
//! each submission once per environment; a failed build is cached too (it is
//! deterministic), a timed-out one is not.

use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arena_sandbox::cpus::{CoreAllocator, CoreLease};
use arena_sandbox::ids::{UidLease, UidPool};
use arena_sandbox::spawn::APP_MOUNT;
use arena_sandbox::{Sandbox, SandboxCommand, SandboxedChild, Verdict};

use crate::capped_log::CappedLog;
use crate::fd;
use crate::launcher::{
    BUILD_SCRIPT, BotExit, BotHandle, BotSpec, BuildReport, LaunchError, LaunchedBot, Launcher,
    RUN_SCRIPT,
};
use crate::submission::{self, TreeError};

/// Files kept beside each cached build.
const STATUS_FILE: &str = "status";
const LOG_FILE: &str = "build.log";
const TREE_DIR: &str = "tree";

/// Runs bots and builds confined.
pub struct SandboxLauncher {
    sandbox: Sandbox,
    cores: CoreAllocator,
    uids: UidPool,
    cache_dir: PathBuf,
    build_log_cap: usize,
    /// Makes scratch directory names unique within this process.
    scratch_seq: AtomicU64,
}

impl SandboxLauncher {
    pub fn new(sandbox: Sandbox, cores: CoreAllocator, cache_dir: PathBuf) -> Self {
        Self {
            sandbox,
            cores,
            uids: UidPool::default(),
            cache_dir,
            build_log_cap: 256 * 1024,
            scratch_seq: AtomicU64::new(0),
        }
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
        command
            .env("PATH", self.sandbox.config().env.search_path())
            .env("HOME", "/tmp")
            .env("TMPDIR", "/tmp")
            .env("LANG", "C.UTF-8")
            .cpus(cores.cores().to_vec())
    }

    fn cached(&self, key: &str) -> Option<BuildReport> {
        let dir = self.cache_dir.join(key);
        let status = fs::read_to_string(dir.join(STATUS_FILE)).ok()?;
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

    /// Runs build.sh in `tree` (writable), confined, under `wall_limit`.
    /// `Ok(None)` means it ran over its limit.
    fn run_build(
        &self,
        tree: &Path,
        wall_limit: Duration,
        log: &mut CappedLog,
    ) -> Result<Option<Result<(), String>>, LaunchError> {
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
        let finished =
            fd::drain_until_exit(&outputs, log, deadline, || Ok(child.try_wait()?.is_some()))
                .map_err(|e| LaunchError::io("collect build output", tree, e))?;
        let verdict = child.finish().map_err(|e| sandbox_error(tree, e))?;
        Ok(
            finished.then(|| match BotExit::from(verdict).build_failure() {
                Some(reason) => Err(reason),
                None => Ok(()),
            }),
        )
    }
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

impl Launcher for SandboxLauncher {
    fn launch(&self, bot: &BotSpec, seat: usize) -> Result<LaunchedBot, LaunchError> {
        bot.validate()?;
        let uid = self.uids.lease().map_err(|e| sandbox_error(&bot.dir, e))?;
        let cores = self.cores.lease_or_share();
        let command = self
            .command(&bot.dir, RUN_SCRIPT, uid.uid(), &cores)
            .label(format!("seat{seat}"));
        let mut child = match self.sandbox.spawn(&command) {
            Ok(child) => child,
            // The bot's own script cannot be executed (bad interpreter line,
            // not a program): its fault, not the host's.
            Err(arena_sandbox::SandboxError::Child {
                stage: arena_sandbox::child::Stage::Exec,
                source,
            }) => {
                return Err(LaunchError::BotCannotStart {
                    path: bot.dir.join(RUN_SCRIPT),
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
            }),
        })
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        bot.validate()?;
        let started = Instant::now();
        let hash = match submission::tree_hash(&bot.dir) {
            Ok(hash) => hash,
            Err(TreeError::Io { what, path, source }) => {
                return Err(LaunchError::io(what, &path, source));
            }
            // A tree the rules refuse is the submission's problem.
            Err(refused) => return Ok(BuildReport::failed(refused.to_string(), started)),
        };
        let key = format!("{hash}-{}", self.env_id());
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
        let result = (|| {
            fs::create_dir(&scratch).map_err(|e| LaunchError::io("create", &scratch, e))?;
            let tree = scratch.join(TREE_DIR);
            submission::copy_tree(&bot.dir, &tree).map_err(|e| sandbox_error(&tree, e))?;
            let mut log = CappedLog::new(self.build_log_cap);
            let outcome = if tree.join(BUILD_SCRIPT).is_file() {
                self.run_build(&tree, wall_limit, &mut log)?
            } else {
                Some(Ok(()))
            };
            seal(&tree).map_err(|e| sandbox_error(&tree, e))?;
            Ok::<_, LaunchError>((outcome, log.contents()))
        })();
        let (outcome, log) = match result {
            Ok(done) => done,
            Err(e) => {
                remove_scratch(&scratch);
                return Err(e);
            }
        };
        let Some(outcome) = outcome else {
            remove_scratch(&scratch);
            let mut report = BuildReport::failed(
                format!("build.sh ran over its wall limit of {wall_limit:.0?}"),
                started,
            );
            report.log = log;
            return Ok(report);
        };
        let status = match &outcome {
            Ok(()) => "ok".to_owned(),
            Err(reason) => format!("failed: {reason}"),
        };
        let write = |name: &str, bytes: &[u8]| {
            fs::write(scratch.join(name), bytes)
                .map_err(|e| LaunchError::io("write", &scratch.join(name), e))
        };
        write(LOG_FILE, &log)?;
        write(STATUS_FILE, status.as_bytes())?;
        let final_dir = self.cache_dir.join(&key);
        if fs::rename(&scratch, &final_dir).is_err() {
            // Another build of the same tree finished first; its result stands.
            remove_scratch(&scratch);
        }
        let mut report = self.cached(&key).ok_or_else(|| {
            LaunchError::io(
                "read back the cached build",
                &final_dir,
                std::io::Error::other("missing status"),
            )
        })?;
        report.duration = started.elapsed();
        report.cached = false;
        Ok(report)
    }
}

fn remove_scratch(dir: &Path) {
    // Sealed trees are read-only; open them up again before removing.
    let _ = submission::for_each_plain_entry(dir, |path, meta| {
        let mode = if meta.is_dir() { 0o755 } else { 0o644 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    });
    if let Err(e) = fs::remove_dir_all(dir) {
        eprintln!("arena: cannot remove build scratch {}: {e}", dir.display());
    }
}

/// A confined bot with the core and uid it holds until it is gone.
struct SandboxedHandle {
    child: SandboxedChild,
    _cores: CoreLease,
    _uid: UidLease,
}

impl BotHandle for SandboxedHandle {
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>> {
        Ok(self.child.try_wait()?.map(BotExit::from))
    }

    fn kill(&mut self) -> std::io::Result<()> {
        self.child.kill().map_err(std::io::Error::other)
    }

    fn wait(&mut self) -> std::io::Result<BotExit> {
        self.child.wait().map(BotExit::from)
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
