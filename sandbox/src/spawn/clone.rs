//! The clone and its plumbing: what the child is given (descriptors,
//! strings and filter programs prepared in the runner), the pipes between
//! the runner and the child, the clone into new namespaces, and reading the
//! child's setup report.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::{Duration, Instant};

use super::{APP_MOUNT, Policy};
use crate::cgroup::LeafCgroup;
use crate::child::{self, ChildSetup, Launch};
use crate::error::SandboxError;
use crate::init::InitSetup;
use crate::ready::ChildEnds;
use crate::rootfs;
use crate::stage::Stage;

/// How long a child may take from clone to exec.
pub(super) const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

impl Policy {
    /// Clones a child into new namespaces that joins `leaf`, builds its
    /// root with `steps` and runs the confinement sequence of
    /// [`child::run`] for `launch`; returns its pid and the runner's ends
    /// of its pipes.
    pub(super) fn clone_confined(
        &self,
        leaf: &LeafCgroup,
        steps: &[rootfs::Step],
        launch: Launch<'_>,
    ) -> Result<(libc::pid_t, ChildEnds), SandboxError> {
        let given = self.prepare_for_child(leaf)?;
        let pipes = open_pipes()?;
        // Joined by the child; the clone makes a fresh one when none is ready.
        let ready_netns = self.netns.take();

        let setup = ChildSetup {
            stdio: [
                pipes.child.stdio[0].as_raw_fd(),
                pipes.child.stdio[1].as_raw_fd(),
                pipes.child.stdio[2].as_raw_fd(),
            ],
            error_fd: pipes.child.error.as_raw_fd(),
            init: InitSetup {
                report_fd: pipes.child.report.as_raw_fd(),
                runner_args: self.runner_args,
            },
            parent_alive_fd: pipes.child.parent_alive.as_raw_fd(),
            parent_alive_writer: pipes.runner.parent_alive.as_raw_fd(),
            netns_fd: ready_netns.as_ref().map(|n| n.as_raw_fd()),
            procs_fds: &given.procs_raw,
            rootfs: steps,
            app_target: &given.app_target,
            new_root: &given.new_root,
            hostname: b"arena",
            rlimits: &given.rlimits,
            cap_last_cap: self.cap_last_cap,
            cwd: &given.cwd,
            filters: &given.filters,
            launch,
        };
        let pid = clone_into_namespaces(&setup, ready_netns.is_none())?;
        // The child has its own copies; the runner keeps only its ends.
        drop((pipes.child, given, ready_netns));
        Ok((pid, pipes.runner))
    }

    /// What the child reads, made before the clone: the leaf's
    /// `cgroup.procs` files, the paths it needs, the filter programs and
    /// the rlimits.
    fn prepare_for_child(&self, leaf: &LeafCgroup) -> Result<ChildGiven, SandboxError> {
        let limits = &self.config.limits;
        let procs = leaf.open_procs_files()?;
        let new_root = rootfs::cstring(&self.config.root_dir)?;
        let app_target = rootfs::cstring(&rootfs::inside(
            &self.config.root_dir,
            Path::new(APP_MOUNT),
        )?)?;
        let cwd = rootfs::cstring(Path::new(APP_MOUNT))?;
        let filters: Vec<libc::sock_fprog> = self
            .filters
            .programs
            .iter()
            .map(|p| libc::sock_fprog {
                len: p.len() as libc::c_ushort,
                // seccompiler's sock_filter is #[repr(C)] with libc's layout.
                filter: p.as_ptr() as *mut libc::sock_filter,
            })
            .collect();
        let rlimits = [
            (libc::RLIMIT_CORE, 0),
            (libc::RLIMIT_NOFILE, limits.open_files),
            (libc::RLIMIT_FSIZE, limits.file_bytes),
        ];
        let procs_raw: Vec<RawFd> = procs.iter().map(|fd| fd.as_raw_fd()).collect();
        Ok(ChildGiven {
            _procs: procs,
            procs_raw,
            new_root,
            app_target,
            cwd,
            filters,
            rlimits,
        })
    }
}

/// What [`Policy::prepare_for_child`] makes; [`ChildSetup`] points into it.
struct ChildGiven {
    /// `cgroup.procs` of every hierarchy of the leaf, open for writing
    /// (kept open until the clone is made; the child writes to its copies).
    _procs: Vec<OwnedFd>,
    procs_raw: Vec<RawFd>,
    new_root: CString,
    app_target: CString,
    cwd: CString,
    filters: Vec<libc::sock_fprog>,
    rlimits: [(u32, u64); 3],
}

/// Every pipe between the runner and one child: the child's ends (the
/// runner drops its copies once the clone is made) and the runner's.
struct Pipes {
    child: ChildSide,
    runner: ChildEnds,
}

/// The child's ends of its pipes (see [`ChildEnds`] for the runner's).
struct ChildSide {
    /// Its stdin, stdout and stderr.
    stdio: [OwnedFd; 3],
    /// Write end of the setup error pipe.
    error: OwnedFd,
    /// Write end of the init's report pipe.
    report: OwnedFd,
    /// Read end of the pipe the child checks its parent's life by.
    parent_alive: OwnedFd,
}

/// The pipes of one child, close-on-exec; the runner's end of the report
/// pipe is non-blocking.
fn open_pipes() -> Result<Pipes, SandboxError> {
    let (stdin_child, stdin_parent) = pipe().map_err(SandboxError::Pipe)?;
    let (stdout_parent, stdout_child) = pipe().map_err(SandboxError::Pipe)?;
    let (stderr_parent, stderr_child) = pipe().map_err(SandboxError::Pipe)?;
    let (error_read, error_write) = pipe().map_err(SandboxError::Pipe)?;
    let (alive_read, alive_write) = pipe().map_err(SandboxError::Pipe)?;
    let (report_read, report_write) = pipe().map_err(SandboxError::Pipe)?;
    set_nonblocking(&report_read).map_err(SandboxError::Pipe)?;
    Ok(Pipes {
        child: ChildSide {
            stdio: [stdin_child, stdout_child, stderr_child],
            error: error_write,
            report: report_write,
            parent_alive: alive_read,
        },
        runner: ChildEnds {
            stdio: [stdin_parent, stdout_parent, stderr_parent],
            error: error_read,
            report: report_read,
            parent_alive: alive_write,
        },
    })
}

/// Clones a child into new pid, mount, IPC and UTS namespaces (and a fresh
/// network namespace when `fresh_netns`), which runs [`child::run`] with
/// `setup` and never returns; the child's pid.
fn clone_into_namespaces(
    setup: &ChildSetup<'_>,
    fresh_netns: bool,
) -> Result<libc::pid_t, SandboxError> {
    let fresh_netns = if fresh_netns { libc::CLONE_NEWNET } else { 0 };
    let flags = libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | fresh_netns
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::SIGCHLD;
    // SAFETY: clone without CLONE_VM behaves like fork: the child gets a
    // copy of this address space and runs `child::run`, which only makes
    // system calls on the data `setup` points to, and never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(SandboxError::Clone(std::io::Error::last_os_error()));
    }
    if pid == 0 {
        child::run(setup);
    }
    Ok(pid as libc::pid_t)
}

/// The error for a failed setup stage as the child reported it.
pub(super) fn stage_error(code: u32, errno: i32) -> SandboxError {
    match Stage::from_code(code) {
        Some(stage) => SandboxError::Child {
            stage,
            source: std::io::Error::from_raw_os_error(errno),
        },
        None => SandboxError::UnknownStage(code),
    }
}

/// A close-on-exec pair of connected packet sockets: (ours, the child's).
pub(super) fn seqpacket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits for the child's setup report: `None` when exec succeeded (the pipe
/// closed on exec), or `(stage, errno)`.
pub(super) fn read_report(pipe: &OwnedFd) -> Result<Option<(u32, i32)>, SandboxError> {
    read_report_within(pipe, SETUP_TIMEOUT)
}

/// [`read_report`], waiting at most `timeout` (zero: only what is there).
pub(super) fn read_report_within(
    pipe: &OwnedFd,
    timeout: Duration,
) -> Result<Option<(u32, i32)>, SandboxError> {
    let deadline = Instant::now() + timeout;
    let mut report = [0u8; 8];
    let mut got = 0;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let mut poll = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe {
            libc::poll(
                &mut poll,
                1,
                remaining.as_millis().min(i32::MAX as u128) as i32,
            )
        };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(SandboxError::Pipe(err));
        }
        if ready == 0 {
            // Nothing there by the deadline (at once for a zero timeout).
            if Instant::now() >= deadline {
                return Err(SandboxError::SetupTimeout(SETUP_TIMEOUT));
            }
            continue;
        }
        // SAFETY: reads into the unfilled tail of `report`.
        let n = unsafe {
            libc::read(
                pipe.as_raw_fd(),
                report[got..].as_mut_ptr().cast(),
                report.len() - got,
            )
        };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(SandboxError::Pipe(err));
        }
        if n == 0 {
            return Ok(if got == 0 { None } else { Some((0, 0)) });
        }
        got += n as usize;
        if got == report.len() {
            let code = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
            let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
            return Ok(Some((code, errno)));
        }
    }
}

/// Makes `fd` non-blocking (the spawner reads the init's report only once
/// the init is gone, and must not wait for a report that never came).
fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
