//! A running confined process ([`SandboxedChild`]) and how it ended
//! ([`Verdict`]).
//!
//! The process the runner holds is the sandbox's init, pid 1 of its
//! namespace (see [`crate::init`]). Its end is not the bot's: the verdict is
//! what the init's report says about the bot, or the init's own end when it
//! died without reporting (killed at teardown, chosen by the OOM killer, or
//! by its parent-death signal). Whether the kernel's OOM killer acted is read
//! from the cgroup, and a counter that cannot be read is an error, never "no
//! OOM": a memory kill must not be reported as a crash.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::cgroup::{CgroupError, LeafCgroup};
use crate::error::SandboxError;
pub use crate::error::WaitError;
use crate::init::{REPORT_LEN, Report};

/// How a confined process ended, and what it used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Exit status, when it exited on its own.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// The kernel's OOM killer acted in its cgroup.
    pub oom_killed: bool,
    /// Peak memory of its cgroup, where the kernel tracks it.
    pub peak_memory_bytes: Option<u64>,
    /// CPU time of its whole cgroup.
    pub cpu_time: Duration,
    /// From spawn to the exit being seen.
    pub wall_time: Duration,
}

/// How a process ended: its exit code or the signal that killed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Exited(i32),
    Signaled(i32),
}

/// Why the init's report gives no end (kept as plain data so every later
/// call reports the same error).
#[derive(Clone, Copy, Debug)]
enum ReportFault {
    /// The init said it failed, with this errno.
    InitFailed(i32),
    /// Bytes the init never writes.
    Malformed,
    /// The pipe could not be read (errno).
    Unreadable(i32),
}

/// How the sandbox ended, once seen.
#[derive(Clone, Copy, Debug)]
struct Exit {
    end: Result<End, ReportFault>,
    seen: Instant,
}

/// A running confined process. Dropping it kills everything in its cgroup,
/// reaps it and removes the cgroup.
pub struct SandboxedChild {
    /// The init, in the parent's pid namespace; pid 1 of its own.
    pid: libc::pid_t,
    pub stdin: Option<OwnedFd>,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    cgroup: Option<LeafCgroup>,
    /// Read end (non-blocking) of the pipe the init reports the bot's end on.
    report: OwnedFd,
    started: Instant,
    /// How it ended, once seen.
    exit: Option<Exit>,
    /// The verdict, once read (the cgroup is final once the init is gone:
    /// the namespace's processes die before it does).
    verdict: Option<Verdict>,
    reaped: bool,
    /// Write end of the pipe the child checks its parent's life by.
    _parent_alive: OwnedFd,
}

/// The parts of a [`SandboxedChild`] the spawner hands over.
pub(crate) struct Parts {
    pub pid: libc::pid_t,
    pub stdio: [OwnedFd; 3],
    pub cgroup: LeafCgroup,
    pub report: OwnedFd,
    pub started: Instant,
    pub parent_alive: OwnedFd,
}

impl SandboxedChild {
    pub(crate) fn new(parts: Parts) -> SandboxedChild {
        let [stdin, stdout, stderr] = parts.stdio;
        SandboxedChild {
            pid: parts.pid,
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr: Some(stderr),
            cgroup: Some(parts.cgroup),
            report: parts.report,
            started: parts.started,
            exit: None,
            verdict: None,
            reaped: false,
            _parent_alive: parts.parent_alive,
        }
    }

    /// The sandbox's init in the runner's pid namespace (the bot is its child).
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The verdict if the process has ended; never blocks and does not reap
    /// (so the pid stays reserved until [`Self::wait`]).
    pub fn try_wait(&mut self) -> Result<Option<Verdict>, WaitError> {
        let exit = match self.exit {
            Some(exit) => exit,
            None => {
                // SAFETY: zeroed siginfo is valid for waitid to fill.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                // SAFETY: `info` is writable; WNOWAIT leaves the child unreaped.
                let rc = unsafe {
                    libc::waitid(
                        libc::P_PID,
                        self.pid as libc::id_t,
                        &mut info,
                        libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                    )
                };
                if rc != 0 {
                    return Err(WaitError::Wait {
                        pid: self.pid,
                        source: std::io::Error::last_os_error(),
                    });
                }
                // SAFETY: filled by waitid (or zero).
                let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
                if pid == 0 {
                    return Ok(None);
                }
                let init = if info.si_code == libc::CLD_EXITED {
                    End::Exited(status)
                } else {
                    End::Signaled(status)
                };
                let exit = self.exit_after(init);
                self.exit = Some(exit);
                exit
            }
        };
        self.verdict(exit).map(Some)
    }

    /// Sends `signal` to the sandbox's init, which passes SIGTERM, SIGINT,
    /// SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 on to the program
    /// ([`crate::init::FORWARDED`]). SIGKILL ends the whole sandbox, as
    /// [`Self::kill`] does; any other signal is ignored by the init.
    pub fn signal(&self, signal: libc::c_int) -> std::io::Result<()> {
        if self.reaped {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        // SAFETY: our unreaped child; its pid cannot have been reused.
        if unsafe { libc::kill(self.pid, signal) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Kills every process of the sandbox (its whole cgroup and pid namespace).
    pub fn kill(&mut self) -> Result<(), CgroupError> {
        if !self.reaped {
            // SAFETY: our unreaped child; its pid cannot have been reused.
            // Killing pid 1 of a namespace kills everything in it.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        match &self.cgroup {
            Some(cgroup) => cgroup.kill_all(),
            None => Ok(()),
        }
    }

    /// Blocks until the process has ended, reaps it, and returns the verdict.
    pub fn wait(&mut self) -> Result<Verdict, WaitError> {
        let exit = self.reap()?;
        self.verdict(exit)
    }

    /// Blocks until the init has ended, reaps it, and says how it ended.
    fn reap(&mut self) -> Result<Exit, WaitError> {
        if self.reaped
            && let Some(exit) = self.exit
        {
            return Ok(exit);
        }
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc >= 0 {
                break;
            }
            let source = std::io::Error::last_os_error();
            if source.kind() != std::io::ErrorKind::Interrupted {
                return Err(WaitError::Wait {
                    pid: self.pid,
                    source,
                });
            }
        }
        self.reaped = true;
        let exit = match self.exit {
            Some(exit) => exit,
            None => {
                let init = if libc::WIFEXITED(status) {
                    End::Exited(libc::WEXITSTATUS(status))
                } else {
                    End::Signaled(libc::WTERMSIG(status))
                };
                self.exit_after(init)
            }
        };
        self.exit = Some(exit);
        Ok(exit)
    }

    /// The sandbox's end once the init (which ended as `init`) is gone: the
    /// bot's end from the init's report, or `init` when there is none.
    fn exit_after(&self, init: End) -> Exit {
        let mut bytes = [0u8; REPORT_LEN];
        let end = loop {
            // SAFETY: reads into a stack buffer from our own descriptor.
            let n = unsafe {
                libc::read(
                    self.report.as_raw_fd(),
                    bytes.as_mut_ptr().cast(),
                    bytes.len(),
                )
            };
            if n == REPORT_LEN as isize {
                break match Report::decode(bytes) {
                    Some(Report::Exited(code)) => Ok(End::Exited(code)),
                    Some(Report::Signaled(signal)) => Ok(End::Signaled(signal)),
                    Some(Report::InitFailed(errno)) => Err(ReportFault::InitFailed(errno)),
                    None => Err(ReportFault::Malformed),
                };
            }
            if n > 0 {
                break Err(ReportFault::Malformed);
            }
            // The init is gone, so nothing more can arrive: EOF, or (while
            // some other process briefly holds a copy of the write end) an
            // empty non-blocking pipe, both mean it died without a report.
            if n == 0 {
                break Ok(init);
            }
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => break Ok(init),
                errno => break Err(ReportFault::Unreadable(errno.unwrap_or(0))),
            }
        };
        Exit {
            end,
            seen: Instant::now(),
        }
    }

    /// The verdict of an ended process (read once, then kept).
    fn verdict(&mut self, exit: Exit) -> Result<Verdict, WaitError> {
        if let Some(verdict) = self.verdict {
            return Ok(verdict);
        }
        let pid = self.pid;
        let end = exit.end.map_err(|fault| match fault {
            ReportFault::InitFailed(errno) => WaitError::Init {
                pid,
                source: std::io::Error::from_raw_os_error(errno),
            },
            ReportFault::Malformed => WaitError::MalformedReport { pid },
            ReportFault::Unreadable(errno) => WaitError::Report {
                pid,
                source: std::io::Error::from_raw_os_error(errno),
            },
        })?;
        let cgroup = self
            .cgroup
            .as_ref()
            .ok_or(WaitError::CgroupRemoved { pid })?;
        let verdict = Verdict {
            code: match end {
                End::Exited(code) => Some(code),
                End::Signaled(_) => None,
            },
            signal: match end {
                End::Exited(_) => None,
                End::Signaled(signal) => Some(signal),
            },
            oom_killed: cgroup.oom_kills().map_err(WaitError::OomCounter)? > 0,
            peak_memory_bytes: cgroup.peak_memory().ok().flatten(),
            cpu_time: cgroup.cpu_time().ok().unwrap_or_default(),
            wall_time: exit.seen.duration_since(self.started),
        };
        self.verdict = Some(verdict);
        Ok(verdict)
    }

    /// Kills, reaps and removes the cgroup; the verdict of the process. The
    /// cgroup is removed even when the verdict cannot be read.
    pub fn finish(&mut self) -> Result<Verdict, SandboxError> {
        self.kill()?;
        let exit = self.reap()?;
        let verdict = self.verdict(exit);
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove()?;
        }
        Ok(verdict?)
    }

    pub(crate) fn kill_and_reap(&mut self) {
        if let Err(e) = self.finish() {
            tracing::warn!(pid = self.pid, error = %e, "cannot tear down a confined child");
        }
    }
}

impl Drop for SandboxedChild {
    fn drop(&mut self) {
        if !self.reaped || self.cgroup.is_some() {
            self.kill_and_reap();
        }
    }
}
