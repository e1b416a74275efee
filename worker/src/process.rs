//! The plain-process launcher: bots run as ordinary child processes of the
//! runner, each in its own process group. No confinement — for development
//! and for hosts without the sandbox.

use std::os::fd::{AsRawFd, OwnedFd};
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

/// A command for a bot script: executed directly when it is executable (so its
/// shebang is honoured), through `/bin/sh` otherwise (zip archives often drop
/// the mode bits).
fn script_command(dir: &Path, script: &str) -> Result<Command, LaunchError> {
    let path = dir.join(script);
    let meta = std::fs::metadata(&path).map_err(|e| LaunchError::io("stat", &path, e))?;
    let mut command = if meta.permissions().mode() & 0o111 != 0 {
        Command::new(&path)
    } else {
        let mut sh = Command::new("/bin/sh");
        sh.arg(script);
        sh
    };
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
    Ok(command)
}

impl Launcher for ProcessLauncher {
    fn launch(&self, bot: &BotSpec, _seat: usize) -> Result<LaunchedBot, LaunchError> {
        bot.validate()?;
        let mut command = script_command(&bot.dir, RUN_SCRIPT)?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let path = bot.dir.join(RUN_SCRIPT);
        let mut child = command
            .spawn()
            .map_err(|source| LaunchError::Spawn { path, source })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three streams were requested as pipes");
        };
        let mut handle = ProcessHandle::new(child);
        let pipes = (
            OwnedFd::from(stdin),
            OwnedFd::from(stdout),
            OwnedFd::from(stderr),
        );
        for fd in [&pipes.0, &pipes.1, &pipes.2] {
            if let Err(e) = fd::set_nonblocking(fd.as_raw_fd()) {
                let _killed = handle.kill();
                return Err(LaunchError::io("make a pipe non-blocking", &bot.dir, e));
            }
        }
        Ok(LaunchedBot {
            stdin: pipes.0,
            stdout: pipes.1,
            stderr: pipes.2,
            handle: Box::new(handle),
        })
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        bot.validate()?;
        let started = Instant::now();
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
        let mut command = script_command(&bot.dir, BUILD_SCRIPT)?;
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let path = bot.dir.join(BUILD_SCRIPT);
        let mut child = command
            .spawn()
            .map_err(|source| LaunchError::Spawn { path, source })?;
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
            Some(exit) => describe_build_failure(exit),
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

fn describe_build_failure(exit: BotExit) -> Option<String> {
    match (exit.code, exit.signal) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("build.sh exited with status {code}")),
        (None, Some(signal)) => Some(format!("build.sh was killed by signal {signal}")),
        (None, None) => Some("build.sh ended abnormally".to_owned()),
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
                eprintln!("arena: cannot kill bot process group {}: {e}", self.pgid);
            }
            if let Err(e) = self.wait() {
                eprintln!("arena: cannot reap bot process {}: {e}", self.pgid);
            }
        }
    }
}
