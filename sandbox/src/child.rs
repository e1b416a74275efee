//! The confined process's side: everything between `clone` and `execve`.
//!
//! This runs in a copy of a possibly multi-threaded parent, so it may not
//! allocate, lock, log or unwind: every string, pointer and program it needs
//! was prepared by the parent. Each step is one system call (or a short
//! loop of them) with its own [`Stage`], reported to the parent through the
//! error pipe as `(stage, errno)` if it fails. The order is forced:
//!
//! 1. join the cgroup first, so every page the process touches is accounted;
//! 2. join the network namespace made ahead (or bring up loopback in the one
//!    the clone made) while CAP_NET_ADMIN remains;
//! 3. hide the cgroup path (a new cgroup namespace rooted at the leaf);
//! 4. mount the private parts of the root, name the host, set rlimits and
//!    drop the bounding set (CAP_SYS_ADMIN stays effective until step 6);
//! 5. learn the command: it is known at the clone, or, for a process
//!    started ahead (see [`crate::ready`]), it arrives as an order; none of
//!    the steps above depends on it;
//! 6. bind the program's directory and pivot into the root while still
//!    privileged, then groups, gid, uid (which clears the effective and
//!    permitted sets);
//! 7. no_new_privs (required for an unprivileged seccomp filter);
//! 8. seccomp last, since it denies `mount` and friends used above;
//! 9. clone the bot, which execs: this process stays behind as the sandbox's
//!    init at pid 1 (see [`crate::init`]), with every confinement above.

use std::ffi::{CStr, c_char};
use std::os::fd::RawFd;

use crate::init::{self, InitSetup};
use crate::ready;
use crate::rootfs::Step;

/// Declares [`Stage`] and its list together, so a new stage cannot be left out of
/// [`Stage::from_code`].
macro_rules! stages {
    ($first:ident $(, $rest:ident)* $(,)?) => {
        /// Where the child failed. The numbers travel through the error pipe.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum Stage {
            $first = 1,
            $($rest,)*
        }

        impl Stage {
            /// Every stage, in order.
            const ALL: &'static [Stage] = &[Stage::$first $(, Stage::$rest)*];
        }
    };
}

stages![
    JoinCgroup,
    ParentDeathSignal,
    Stdio,
    CgroupNamespace,
    PrivateMounts,
    RootfsStep,
    PivotRoot,
    DetachOldRoot,
    ReadOnlyRoot,
    JoinNetwork,
    Loopback,
    Hostname,
    Rlimit,
    DropBoundingSet,
    ClearAmbient,
    SetGroups,
    SetGid,
    SetUid,
    ClearCapabilities,
    NoNewPrivs,
    Chdir,
    CloseFds,
    Seccomp,
    NotDumpable,
    BlockSignals,
    ForkBot,
    RestoreSignals,
    Exec,
    AnnounceReady,
    AwaitOrder,
    ReadOrder,
    BindProgramDir,
];

impl Stage {
    pub fn from_code(code: u32) -> Option<Stage> {
        Self::ALL.iter().copied().find(|s| *s as u32 == code)
    }
}

/// What a process started ahead shows as its name while it waits.
const READY_NAME: &[u8] = b"arena-ready\0";

/// Everything the child needs, prepared by the parent.
pub struct ChildSetup<'a> {
    /// The child's ends of its stdin, stdout and stderr pipes.
    pub stdio: [RawFd; 3],
    /// Write end of the error pipe (close-on-exec: EOF means exec succeeded).
    pub error_fd: RawFd,
    /// The init's report pipe and the runner's argument area (see [`InitSetup`]).
    pub init: InitSetup,
    /// Read end of a pipe whose write end only the parent holds: it reads
    /// EOF once the parent is gone.
    pub parent_alive_fd: RawFd,
    /// The child's copy of that write end, closed first thing.
    pub parent_alive_writer: RawFd,
    /// A ready network namespace to join (see [`crate::netns`]), or `None`
    /// when the clone made a fresh one whose `lo` is still down.
    pub netns_fd: Option<RawFd>,
    /// `cgroup.procs` of every hierarchy of the leaf, open for writing.
    pub procs_fds: &'a [RawFd],
    /// Every step of the root but the program's directory.
    pub rootfs: &'a [Step],
    /// Host path, in the child's mount namespace, that the program's
    /// directory is bound on.
    pub app_target: &'a CStr,
    /// Host path of the new root.
    pub new_root: &'a CStr,
    pub hostname: &'a [u8],
    pub rlimits: &'a [(u32, u64)],
    pub cap_last_cap: u32,
    pub cwd: &'a CStr,
    pub filters: &'a [libc::sock_fprog],
    pub launch: Launch<'a>,
}

/// Where the command comes from.
pub enum Launch<'a> {
    /// It is known at the clone.
    Now(Program<'a>),
    /// It arrives later, as an order on a socket (see [`crate::ready`]).
    Ordered(Inbox),
}

/// The part of a spawn that depends on the command.
#[derive(Clone, Copy)]
pub struct Program<'a> {
    /// Host directory shown at the mount point.
    pub app_dir: &'a CStr,
    pub app_writable: bool,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub program: &'a CStr,
    /// NULL-terminated pointer arrays into strings the parent owns.
    pub argv: &'a [*const c_char],
    pub envp: &'a [*const c_char],
}

/// Where a process started ahead receives its order: the socket, and room
/// the parent allocated before the clone (so this process's copy of it is
/// its own).
pub struct Inbox {
    pub socket: RawFd,
    pub buffer: *mut u8,
    pub buffer_len: usize,
    pub pointers: *mut *const c_char,
    pub pointers_len: usize,
}

/// Runs the sequence and execs; on failure reports and exits 127. Never returns.
pub fn run(setup: &ChildSetup<'_>) -> ! {
    let failure = confine_and_exec(setup);
    let failure = match failure {
        Err(failure) => failure,
        Ok(never) => match never {},
    };
    report_and_exit(setup.error_fd, failure)
}

/// Tells the parent which stage failed, through the error pipe, and exits 127.
pub(crate) fn report_and_exit(error_fd: RawFd, (stage, errno): Failure) -> ! {
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    report[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: writes a stack buffer to a descriptor we own; nothing else to do
    // if the parent is gone.
    unsafe {
        libc::write(error_fd, report.as_ptr().cast(), report.len());
        libc::_exit(127);
    }
}

enum Never {}

/// A failed stage and its errno.
pub(crate) type Failure = (Stage, i32);

pub(crate) fn errno() -> i32 {
    // SAFETY: reads this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Turns a libc return value into a stage failure.
pub(crate) fn check(rc: libc::c_long, stage: Stage) -> Result<(), Failure> {
    if rc < 0 {
        Err((stage, errno()))
    } else {
        Ok(())
    }
}

fn confine_and_exec(s: &ChildSetup<'_>) -> Result<Never, Failure> {
    // SAFETY (whole function): plain system calls on descriptors, pointers and
    // NUL-terminated strings that the parent prepared and keeps alive (this
    // process has its own copy of the parent's memory), in a process that has
    // just been cloned and runs no other thread.
    unsafe {
        if let Launch::Ordered(_) = &s.launch {
            // Named for what it is while it waits, not as a copy of the
            // runner, from before anyone can see it in the leaf.
            init::show_as(s.init.runner_args, READY_NAME);
            libc::prctl(libc::PR_SET_NAME, READY_NAME.as_ptr(), 0, 0, 0);
        }
        for &fd in s.procs_fds {
            check(
                libc::write(fd, b"0".as_ptr().cast(), 1) as _,
                Stage::JoinCgroup,
            )?;
        }
        libc::close(s.parent_alive_writer);
        // The runner dying must not leave the bot running unconfined in time.
        check(
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) as _,
            Stage::ParentDeathSignal,
        )?;
        for (target, &fd) in s.stdio.iter().enumerate() {
            check(libc::dup2(fd, target as RawFd) as _, Stage::Stdio)?;
        }
        match s.netns_fd {
            Some(fd) => check(libc::setns(fd, libc::CLONE_NEWNET) as _, Stage::JoinNetwork)?,
            None => crate::netns::loopback_up()
                .map_err(|e| (Stage::Loopback, e.raw_os_error().unwrap_or(libc::EIO)))?,
        }
        if let Launch::Ordered(inbox) = &s.launch {
            // It may wait long: it must not keep the runner's sockets and
            // pipes open meanwhile.
            close_all_but([
                0,
                1,
                2,
                s.error_fd,
                s.init.report_fd,
                s.parent_alive_fd,
                inbox.socket,
            ])?;
        }
        check(
            libc::unshare(libc::CLONE_NEWCGROUP) as _,
            Stage::CgroupNamespace,
        )?;

        // No mount event may propagate back to the host.
        check(
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) as _,
            Stage::PrivateMounts,
        )?;
        for step in s.rootfs {
            run_step(step)?;
        }
        check(
            libc::sethostname(s.hostname.as_ptr().cast(), s.hostname.len()) as _,
            Stage::Hostname,
        )?;

        for &(resource, value) in s.rlimits {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            check(libc::setrlimit(resource as _, &limit) as _, Stage::Rlimit)?;
        }

        for cap in 0..=s.cap_last_cap {
            check(
                libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) as _,
                Stage::DropBoundingSet,
            )?;
        }
        check(
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
                0,
                0,
                0,
            ) as _,
            Stage::ClearAmbient,
        )?;

        let program = match &s.launch {
            Launch::Now(program) => *program,
            Launch::Ordered(inbox) => await_order(inbox)?,
        };

        bind_program_dir(program.app_dir, s.app_target, !program.app_writable)?;
        // pivot_root(".", ".") stacks the old root on the new one, so the
        // (read-only, shared) new root needs no directory to park it in;
        // detaching the top of "." then leaves only the new root.
        check(libc::chdir(s.new_root.as_ptr()) as _, Stage::PivotRoot)?;
        check(
            libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()),
            Stage::PivotRoot,
        )?;
        check(
            libc::umount2(c".".as_ptr(), libc::MNT_DETACH) as _,
            Stage::DetachOldRoot,
        )?;
        check(libc::chdir(c"/".as_ptr()) as _, Stage::DetachOldRoot)?;
        check(
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
                std::ptr::null(),
            ) as _,
            Stage::ReadOnlyRoot,
        )?;

        // Raw system calls, not the C library's wrappers: those first
        // synchronise the credential change with every thread the library
        // believes exists, and a clone of a multi-threaded runner has only
        // this one, so they can wait forever.
        check(
            libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()),
            Stage::SetGroups,
        )?;
        check(
            libc::syscall(libc::SYS_setresgid, program.gid, program.gid, program.gid),
            Stage::SetGid,
        )?;
        check(
            libc::syscall(libc::SYS_setresuid, program.uid, program.uid, program.uid),
            Stage::SetUid,
        )?;
        // setresuid cleared effective and permitted; inheritable goes too.
        clear_capabilities()?;
        // A credential change resets the parent-death signal: arm it again,
        // then make sure the parent did not die before it was armed (the
        // pipe's write end lives only in the parent, so EOF means it is gone).
        check(
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) as _,
            Stage::ParentDeathSignal,
        )?;
        let mut alive = libc::pollfd {
            fd: s.parent_alive_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut alive, 1, 0) != 0 {
            libc::_exit(127);
        }
        check(
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) as _,
            Stage::NoNewPrivs,
        )?;
        check(libc::chdir(s.cwd.as_ptr()) as _, Stage::Chdir)?;
        // Nothing the parent had open may reach the program.
        check(
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ),
            Stage::CloseFds,
        )?;
        for filter in s.filters {
            check(
                libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    filter as *const libc::sock_fprog,
                    0,
                    0,
                ) as _,
                Stage::Seccomp,
            )?;
        }
        // The bot execs from a child; this process stays as the init.
        Err(init::start_bot(
            &s.init,
            &init::BotExec {
                program: program.program,
                argv: program.argv,
                envp: program.envp,
                error_fd: s.error_fd,
            },
        ))
    }
}

/// Closes every descriptor but `keep` (without allocating: the list is
/// sorted in place).
fn close_all_but<const N: usize>(mut keep: [RawFd; N]) -> Result<(), Failure> {
    keep.sort_unstable();
    let mut from: u32 = 0;
    for fd in keep {
        let fd = fd as u32;
        if fd > from {
            // SAFETY: closes descriptors of this process only.
            let rc = unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32) };
            check(rc, Stage::CloseFds)?;
        }
        from = from.max(fd + 1);
    }
    // SAFETY: as above.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) };
    check(rc, Stage::CloseFds)
}

/// Tells the parent everything ahead is done, then waits for the order and
/// reads it. The parent closing the socket instead means it has no use for
/// this process any more: it exits quietly.
///
/// # Safety
/// `inbox` describes room this process owns (see [`Inbox`]).
unsafe fn await_order(inbox: &Inbox) -> Result<Program<'static>, Failure> {
    // SAFETY: system calls on buffers the parent allocated before the clone.
    unsafe {
        let ready = [ready::READY_BYTE];
        check(
            libc::send(inbox.socket, ready.as_ptr().cast(), 1, libc::MSG_NOSIGNAL) as _,
            Stage::AnnounceReady,
        )?;
        let received = loop {
            let n = libc::recv(inbox.socket, inbox.buffer.cast(), inbox.buffer_len, 0);
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            check(n as _, Stage::AwaitOrder)?;
            break n as usize;
        };
        if received == 0 {
            libc::_exit(0);
        }
        if received >= inbox.buffer_len {
            return Err((Stage::ReadOrder, libc::E2BIG));
        }
        libc::close(inbox.socket);
        let bytes = std::slice::from_raw_parts(inbox.buffer.cast_const(), received);
        let pointers = std::slice::from_raw_parts_mut(inbox.pointers, inbox.pointers_len);
        ready::decode(bytes, pointers).ok_or((Stage::ReadOrder, libc::EINVAL))
    }
}

/// Binds the program's directory on its mount point, recursively, and
/// (for a match) makes it and everything below it read-only and nosuid.
fn bind_program_dir(source: &CStr, target: &CStr, read_only: bool) -> Result<(), Failure> {
    // SAFETY: system calls on NUL-terminated strings the caller keeps alive.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    check(rc as _, Stage::BindProgramDir)?;
    if read_only {
        read_only_tree(target).map_err(|(_, errno)| (Stage::BindProgramDir, errno))?;
    }
    Ok(())
}

/// Makes the mount at `target` and every mount below it read-only and
/// nosuid (a bind ignores MS_RDONLY on its first call, and a remount would
/// only reach the top mount).
fn read_only_tree(target: &CStr) -> Result<(), Failure> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads a valid path and attribute struct.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            target.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc, Stage::RootfsStep)
}

/// Builds the root every spawn shares ([`crate::rootfs::plan_template`]) in
/// a mount namespace of the calling thread's own, whose mounts are seen by
/// nobody else; each child clones a copy of it. Host mounts still reach it
/// (a slave of the host's), none of its own go back.
///
/// # Safety
/// Moves the calling thread (only) into a new mount namespace: call it on
/// the sandbox's spawner thread, which exists for this.
pub(crate) unsafe fn prepare_template(steps: &[Step]) -> Result<(), Failure> {
    // SAFETY: system calls on NUL-terminated strings the caller keeps alive.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNS) as _, Stage::PrivateMounts)?;
        check(
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ) as _,
            Stage::PrivateMounts,
        )?;
        for step in steps {
            run_step(step)?;
        }
        Ok(())
    }
}

/// # Safety
/// Called only from [`confine_and_exec`] and [`prepare_template`]; the
/// step's strings are valid.
unsafe fn run_step(step: &Step) -> Result<(), Failure> {
    let opt = |s: &Option<std::ffi::CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: see the caller.
    unsafe {
        match step {
            Step::Mkdir { path, mode } => {
                if libc::mkdir(path.as_ptr(), *mode) < 0 && errno() != libc::EEXIST {
                    return Err((Stage::RootfsStep, errno()));
                }
                // mkdir applies the umask; the mode must hold as planned.
                check(libc::chmod(path.as_ptr(), *mode) as _, Stage::RootfsStep)
            }
            Step::Touch { path } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                );
                check(fd as _, Stage::RootfsStep)?;
                libc::close(fd);
                Ok(())
            }
            Step::Symlink { target, path } => check(
                libc::symlink(target.as_ptr(), path.as_ptr()) as _,
                Stage::RootfsStep,
            ),
            Step::ReadOnlyTree { target } => read_only_tree(target),
            Step::Mount {
                source,
                target,
                fstype,
                flags,
                data,
            } => check(
                libc::mount(
                    opt(source),
                    target.as_ptr(),
                    opt(fstype),
                    *flags,
                    opt(data).cast(),
                ) as _,
                Stage::RootfsStep,
            ),
        }
    }
}

/// `struct mount_attr` (linux/mount.h), for mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;

/// Empties every capability set (capset with version 3 and all-zero data).
fn clear_capabilities() -> Result<(), Failure> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a valid header and two data structs.
    check(
        unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) },
        Stage::ClearCapabilities,
    )
}
