//! The plain-process launcher: bots run as ordinary child processes of the
//! runner, each in its own process group. No confinement — for development
//! and for hosts without the sandbox.

use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::capped_log::CappedLog;
use crate::fd;
use crate::launcher::{
    BUILD_SCRIPT, BotExit, BotHandle, BotSpec, BuildReport, LaunchError, LaunchedBot, Launcher,
    RUN_SCRIPT,
};

/// Launches bots as plain child processes.
#[derive(Clone, Debug)]
pub struct ProcessLauncher {
    /// How much build output is kept for the participant.
    pub build_log_cap: usize,
}

impl Default for ProcessLauncher {
    fn default() -> Self {
        Self {
            build_log_cap: 256 * 1024,
        }
    }
}

/// Starts a bot script with its stdout and stderr piped: executed directly
/// when it is executable (so its shebang is honoured), through `/bin/sh`
/// otherwise (zip archives often drop the mode bits).
fn spawn_script(dir: &Path, script: &str, stdin: Stdio) -> Result<Child, LaunchError> {
    let path = dir.join(script);
    let meta = std::fs::metadata(&path).map_err(|e| LaunchError::io("stat", &path, e))?;
    let command = if meta.permissions().mode() & 0o111 != 0 {
        Command::new(&path)
    } else {
        let mut sh = Command::new("/bin/sh");
        sh.arg(script);
        sh
    };
    spawn_in(command, dir, &path, stdin)
}

/// Starts `command` in `dir` as a bot: its own process group, killed with
/// the runner, stdout and stderr piped.
fn spawn_in(
    mut command: Command,
    dir: &Path,
    path: &Path,
    stdin: Stdio,
) -> Result<Child, LaunchError> {
    command.current_dir(dir);
    // Its own process group, so teardown reaches whatever the script starts.
    command.process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours; it
    // makes the kernel kill the bot if the runner dies without cleaning up.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            path: path.to_owned(),
            source,
        })
}

/// A started child's pipes and handle.
fn launched(mut child: Child) -> LaunchedBot {
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three streams were requested as pipes");
    };
    LaunchedBot {
        stdin: stdin.into(),
        stdout: stdout.into(),
        stderr: stderr.into(),
        handle: Box::new(ProcessHandle::new(child)),
    }
}

impl Launcher for ProcessLauncher {
    fn launch(&self, bot: &BotSpec, _seat: usize) -> Result<LaunchedBot, LaunchError> {
        bot.validate()?;
        Ok(launched(spawn_script(
            &bot.dir,
            RUN_SCRIPT,
            Stdio::piped(),
        )?))
    }

    fn launch_program(
        &self,
        bot: &BotSpec,
        _seat: usize,
        program: &Path,
        args: &[std::ffi::OsString],
    ) -> Result<LaunchedBot, LaunchError> {
        if !bot.dir.is_dir() {
            return Err(LaunchError::NotADirectory(bot.dir.clone()));
        }
        let mut command = Command::new(program);
        command.args(args);
        Ok(launched(spawn_in(
            command,
            &bot.dir,
            program,
            Stdio::piped(),
        )?))
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        let started = Instant::now();
        if !bot.dir.is_dir() {
            return Err(LaunchError::NotADirectory(bot.dir.clone()));
        }
        // A directory that cannot run is the submission's fault.
        if let Some(problem) = bot.run_script_problem()
            && !crate::launcher::entry_may_be_built(&bot.dir)
        {
            return Ok(BuildReport::failed(problem, started));
        }
        if bot.build_script().is_none() {
            return Ok(BuildReport {
                succeeded: true,
                failure: None,
                log: Vec::new(),
                duration: Duration::ZERO,
                artifact: None,
                cached: false,
            });
        }
        let mut child = spawn_script(&bot.dir, BUILD_SCRIPT, Stdio::null())?;
        let outputs: Vec<OwnedFd> = [
            child.stdout.take().map(OwnedFd::from),
            child.stderr.take().map(OwnedFd::from),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut handle = ProcessHandle::new(child);
        let mut log = CappedLog::new(self.build_log_cap);
        let deadline = started + wall_limit;
        let finished = fd::drain_until_exit(&outputs, &mut log, deadline, || {
            Ok(handle.try_wait()?.is_some())
        })
        .and_then(|exited| if exited { handle.try_wait() } else { Ok(None) })
        .map_err(|e| LaunchError::io("collect build output", &bot.dir, e))?;
        // Whatever the script left running in its group goes with it.
        handle
            .kill()
            .and_then(|()| handle.wait())
            .map_err(|e| LaunchError::io("end build", &bot.dir, e))?;
        let failure = match finished {
            None => Some(format!(
                "build.sh ran over its wall limit of {:.0?}",
                wall_limit
            )),
            Some(exit) => exit.build_failure().or_else(|| {
                bot.run_script_problem()
                    .map(|p| format!("after build.sh, {p}"))
            }),
        };
        Ok(BuildReport {
            succeeded: failure.is_none(),
            failure,
            log: log.contents(),
            duration: started.elapsed(),
            artifact: None,
            cached: false,
        })
    }
}

/// A plain child process and its process group.
///
/// The leader is only reaped by [`BotHandle::wait`]: until then its pid stays
/// reserved, so signalling its group can never reach a stranger's processes.
pub struct ProcessHandle {
    child: Child,
    /// The group the child leads; killed as a whole.
    pgid: libc::pid_t,
    /// The exit, once seen (maybe not yet reaped).
    exit: Option<BotExit>,
    reaped: bool,
}

impl ProcessHandle {
    fn new(child: Child) -> Self {
        let pgid = child.id() as libc::pid_t;
        Self {
            child,
            pgid,
            exit: None,
            reaped: false,
        }
    }
}

fn to_exit(status: ExitStatus) -> BotExit {
    BotExit {
        code: status.code(),
        signal: status.signal(),
        oom_killed: false,
    }
}

impl BotHandle for ProcessHandle {
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>> {
        if self.exit.is_some() {
            return Ok(self.exit);
        }
        // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // WNOWAIT peeks at the exit and leaves the zombie for `wait` to reap.
        // SAFETY: `info` is a valid, writable siginfo_t.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: waitid filled `info` for a child event (or left it zeroed).
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        if pid == 0 {
            return Ok(None);
        }
        self.exit = Some(match info.si_code {
            libc::CLD_EXITED => BotExit {
                code: Some(status),
                ..BotExit::default()
            },
            _ => BotExit {
                signal: Some(status),
                ..BotExit::default()
            },
        });
        Ok(self.exit)
    }

    fn kill(&mut self) -> std::io::Result<()> {
        if self.reaped {
            return Ok(());
        }
        // SAFETY: signals the group our unreaped child leads; see the type's doc.
        let rc = unsafe { libc::killpg(self.pgid, libc::SIGKILL) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            // ESRCH: the whole group is already gone.
            if err.raw_os_error() != Some(libc::ESRCH) {
                return Err(err);
            }
        }
        Ok(())
    }

    fn wait(&mut self) -> std::io::Result<BotExit> {
        if !self.reaped {
            let exit = to_exit(self.child.wait()?);
            self.reaped = true;
            self.exit.get_or_insert(exit);
        }
        Ok(self.exit.unwrap_or_default())
    }
}

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        // Never leave a bot or its children behind, whatever path got us here.
        if !self.reaped {
            if let Err(e) = self.kill() {
                tracing::warn!(pgid = self.pgid, error = %e, "cannot kill a bot's process group");
            }
            if let Err(e) = self.wait() {
                tracing::warn!(pgid = self.pgid, error = %e, "cannot reap a bot process");
            }
        }
    }
}
