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
//!
//! The root's own steps, and the template root the spawner thread builds
//! once for every spawn (`prepare_template`), are in `child/mounts.rs`.
//! [`Stage`] and the failure helpers live in the crate's `stage` module,
//! shared with [`crate::init`], and the command a spawn runs ([`Program`])
//! in [`crate::ready`], which decodes it: this module depends on both `init`
//! and `ready`, and neither depends on it.

use std::ffi::{CStr, c_char};
use std::os::fd::RawFd;

use crate::init::{self, InitSetup};
use crate::ready;
use crate::rootfs::Step;
use crate::stage::{Failure, check, errno, report_and_exit};
use mounts::{build_root, read_only_tree};

mod mounts;

// Re-exported where they were declared before they moved out (to
// `crate::stage` and `crate::ready`), so `arena_sandbox::child::Stage` and
// `arena_sandbox::child::Program` keep working.
pub use crate::ready::Program;
pub use crate::stage::Stage;
pub(crate) use mounts::prepare_template;

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

enum Never {}

/// The sequence of the module documentation, one step per call. Each step
/// is a few system calls on descriptors, pointers and NUL-terminated strings
/// that the parent prepared and keeps alive (this process has its own copy
/// of the parent's memory), in a process that has just been cloned and runs
/// no other thread; each reports its own [`Stage`].
fn confine_and_exec(s: &ChildSetup<'_>) -> Result<Never, Failure> {
    if let Launch::Ordered(_) = &s.launch {
        // Named for what it is while it waits, not as a copy of the
        // runner, from before anyone can see it in the leaf.
        show_as_ready(s.init.runner_args);
    }
    join_cgroup(s.procs_fds)?;
    close_fd(s.parent_alive_writer);
    // The runner dying must not leave the bot running unconfined in time.
    set_parent_death_signal()?;
    redirect_stdio(&s.stdio)?;
    match s.netns_fd {
        Some(fd) => join_network(fd)?,
        None => bring_up_loopback()?,
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
    hide_cgroup_path()?;
    // No mount event may propagate back to the host.
    make_mounts_private()?;
    build_root(s.rootfs)?;
    set_hostname(s.hostname)?;
    set_rlimits(s.rlimits)?;
    drop_bounding_set(s.cap_last_cap)?;
    clear_ambient()?;

    let program = match &s.launch {
        Launch::Now(program) => *program,
        // SAFETY: the inbox describes room the parent allocated before the
        // clone, whose copy this process owns (see [`Inbox`]).
        Launch::Ordered(inbox) => unsafe { await_order(inbox) }?,
    };

    bind_program_dir(program.app_dir, s.app_target, !program.app_writable)?;
    pivot_root(s.new_root)?;
    detach_old_root()?;
    remount_root_read_only()?;
    clear_groups()?;
    set_gid(program.gid)?;
    set_uid(program.uid)?;
    // setresuid cleared effective and permitted; inheritable goes too.
    clear_capabilities()?;
    // A credential change resets the parent-death signal: arm it again,
    // then make sure the parent did not die before it was armed.
    set_parent_death_signal()?;
    exit_if_parent_gone(s.parent_alive_fd);
    set_no_new_privs()?;
    change_dir(s.cwd)?;
    // Nothing the parent had open may reach the program.
    close_inherited_fds()?;
    install_seccomp(s.filters)?;
    // The bot execs from a child; this process stays as the init.
    let exec = init::BotExec {
        program: program.program,
        argv: program.argv,
        envp: program.envp,
        error_fd: s.error_fd,
    };
    // SAFETY: called from the confined child after the whole confinement
    // sequence, with no other thread in the process; `exec` points into
    // strings the parent keeps alive.
    Err(unsafe { init::start_bot(&s.init, &exec) })
}

/// Shows this process as [`READY_NAME`] (command line and name) while it
/// waits for its order.
fn show_as_ready(runner_args: (usize, usize)) {
    // SAFETY: `runner_args` is the argument area of the runner, read from
    // /proc/self/stat by the parent; this process owns its copy of it.
    unsafe { init::show_as(runner_args, READY_NAME) };
    // SAFETY: PR_SET_NAME reads a NUL-terminated static string.
    unsafe { libc::prctl(libc::PR_SET_NAME, READY_NAME.as_ptr(), 0, 0, 0) };
}

/// Joins the leaf in every hierarchy, by writing to its `cgroup.procs`.
fn join_cgroup(procs_fds: &[RawFd]) -> Result<(), Failure> {
    for &fd in procs_fds {
        // SAFETY: writes one byte of a static string to a descriptor the
        // parent opened for this.
        let rc = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        check(rc as _, Stage::JoinCgroup)?;
    }
    Ok(())
}

/// Closes one descriptor of this process, ignoring errors.
fn close_fd(fd: RawFd) {
    // SAFETY: closes a descriptor of this process, which nothing else uses.
    unsafe { libc::close(fd) };
}

/// Arms SIGKILL as the parent-death signal.
fn set_parent_death_signal() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(rc as _, Stage::ParentDeathSignal)
}

/// Makes the child's pipe ends its stdin, stdout and stderr.
fn redirect_stdio(stdio: &[RawFd; 3]) -> Result<(), Failure> {
    for (target, &fd) in stdio.iter().enumerate() {
        // SAFETY: duplicates a descriptor of this process onto 0, 1 or 2.
        let rc = unsafe { libc::dup2(fd, target as RawFd) };
        check(rc as _, Stage::Stdio)?;
    }
    Ok(())
}

/// Joins the network namespace made ahead (see [`crate::netns`]).
fn join_network(netns_fd: RawFd) -> Result<(), Failure> {
    // SAFETY: setns on a namespace descriptor the parent opened.
    let rc = unsafe { libc::setns(netns_fd, libc::CLONE_NEWNET) };
    check(rc as _, Stage::JoinNetwork)
}

/// Brings up `lo` in the network namespace the clone made.
fn bring_up_loopback() -> Result<(), Failure> {
    crate::netns::loopback_up()
        .map_err(|e| (Stage::Loopback, e.raw_os_error().unwrap_or(libc::EIO)))
}

/// Hides the cgroup path: a new cgroup namespace rooted at the leaf.
fn hide_cgroup_path() -> Result<(), Failure> {
    // SAFETY: unshare with a flag only.
    let rc = unsafe { libc::unshare(libc::CLONE_NEWCGROUP) };
    check(rc as _, Stage::CgroupNamespace)
}

/// Makes every mount of this mount namespace private.
fn make_mounts_private() -> Result<(), Failure> {
    // SAFETY: mount reads a static NUL-terminated path; the null pointers
    // are allowed for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    check(rc as _, Stage::PrivateMounts)
}

/// Names the host.
fn set_hostname(hostname: &[u8]) -> Result<(), Failure> {
    // SAFETY: sethostname reads `hostname.len()` bytes of a valid slice.
    let rc = unsafe { libc::sethostname(hostname.as_ptr().cast(), hostname.len()) };
    check(rc as _, Stage::Hostname)
}

/// Sets each `(resource, value)` as both the soft and the hard limit.
fn set_rlimits(rlimits: &[(u32, u64)]) -> Result<(), Failure> {
    for &(resource, value) in rlimits {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: setrlimit reads a valid rlimit on the stack.
        let rc = unsafe { libc::setrlimit(resource as _, &limit) };
        check(rc as _, Stage::Rlimit)?;
    }
    Ok(())
}

/// Drops every capability up to `cap_last_cap` from the bounding set.
fn drop_bounding_set(cap_last_cap: u32) -> Result<(), Failure> {
    for cap in 0..=cap_last_cap {
        // SAFETY: prctl with integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        check(rc as _, Stage::DropBoundingSet)?;
    }
    Ok(())
}

/// Empties the ambient capability set.
fn clear_ambient() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    check(rc as _, Stage::ClearAmbient)
}

/// Moves into the new root. pivot_root(".", ".") stacks the old root on
/// the new one, so the (read-only, shared) new root needs no directory to
/// park it in; [`detach_old_root`] then leaves only the new root.
fn pivot_root(new_root: &CStr) -> Result<(), Failure> {
    // SAFETY: chdir reads a NUL-terminated string the caller keeps alive.
    let rc = unsafe { libc::chdir(new_root.as_ptr()) };
    check(rc as _, Stage::PivotRoot)?;
    // SAFETY: pivot_root reads two static NUL-terminated paths.
    let rc = unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) };
    check(rc, Stage::PivotRoot)
}

/// Detaches the old root stacked on top of "." by [`pivot_root`].
fn detach_old_root() -> Result<(), Failure> {
    // SAFETY: umount2 reads a static NUL-terminated path.
    let rc = unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) };
    check(rc as _, Stage::DetachOldRoot)?;
    // SAFETY: chdir reads a static NUL-terminated path.
    let rc = unsafe { libc::chdir(c"/".as_ptr()) };
    check(rc as _, Stage::DetachOldRoot)
}

/// Remounts the new root read-only, nosuid and nodev.
fn remount_root_read_only() -> Result<(), Failure> {
    // SAFETY: mount reads a static NUL-terminated path; the null pointers
    // are allowed for a remount.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            std::ptr::null(),
        )
    };
    check(rc as _, Stage::ReadOnlyRoot)
}

// The credential steps make raw system calls, not the C library's wrappers:
// those first synchronise the credential change with every thread the
// library believes exists, and a clone of a multi-threaded runner has only
// this one, so they can wait forever.

/// Drops every supplementary group.
fn clear_groups() -> Result<(), Failure> {
    // SAFETY: setgroups with an empty list reads nothing.
    let rc = unsafe { libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) };
    check(rc, Stage::SetGroups)
}

/// Sets the real, effective and saved gid.
fn set_gid(gid: libc::gid_t) -> Result<(), Failure> {
    // SAFETY: setresgid with integer arguments only.
    let rc = unsafe { libc::syscall(libc::SYS_setresgid, gid, gid, gid) };
    check(rc, Stage::SetGid)
}

/// Sets the real, effective and saved uid (which clears the effective and
/// permitted capability sets).
fn set_uid(uid: libc::uid_t) -> Result<(), Failure> {
    // SAFETY: setresuid with integer arguments only.
    let rc = unsafe { libc::syscall(libc::SYS_setresuid, uid, uid, uid) };
    check(rc, Stage::SetUid)
}

/// Exits quietly if the parent is gone: the pipe's write end lives only in
/// the parent, so a readable (EOF) read end means it died.
fn exit_if_parent_gone(parent_alive_fd: RawFd) {
    let mut alive = libc::pollfd {
        fd: parent_alive_fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one valid pollfd on the stack, without waiting.
    if unsafe { libc::poll(&mut alive, 1, 0) } != 0 {
        // SAFETY: ends this process without running anything of the parent's.
        unsafe { libc::_exit(127) };
    }
}

/// Sets no_new_privs (required for an unprivileged seccomp filter).
fn set_no_new_privs() -> Result<(), Failure> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check(rc as _, Stage::NoNewPrivs)
}

/// Changes to the program's working directory.
fn change_dir(cwd: &CStr) -> Result<(), Failure> {
    // SAFETY: chdir reads a NUL-terminated string the caller keeps alive.
    let rc = unsafe { libc::chdir(cwd.as_ptr()) };
    check(rc as _, Stage::Chdir)
}

/// Marks every descriptor from 3 up close-on-exec.
fn close_inherited_fds() -> Result<(), Failure> {
    // SAFETY: close_range with integer arguments, on this process's
    // descriptors only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    check(rc, Stage::CloseFds)
}

/// Installs the seccomp filters, in order (last, since they deny `mount`
/// and friends used above).
fn install_seccomp(filters: &[libc::sock_fprog]) -> Result<(), Failure> {
    for filter in filters {
        // SAFETY: the filter program points at instructions the parent
        // compiled and keeps alive; the kernel copies it.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                filter as *const libc::sock_fprog,
                0,
                0,
            )
        };
        check(rc as _, Stage::Seccomp)?;
    }
    Ok(())
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
    let ready = [ready::READY_BYTE];
    // SAFETY: sends one byte of a stack buffer on the inbox socket.
    let rc = unsafe { libc::send(inbox.socket, ready.as_ptr().cast(), 1, libc::MSG_NOSIGNAL) };
    check(rc as _, Stage::AnnounceReady)?;
    let received = loop {
        // SAFETY: receives into the inbox buffer, `buffer_len` bytes of room
        // this process owns (the function's contract).
        let n = unsafe { libc::recv(inbox.socket, inbox.buffer.cast(), inbox.buffer_len, 0) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        check(n as _, Stage::AwaitOrder)?;
        break n as usize;
    };
    if received == 0 {
        // SAFETY: ends this process without running anything of the parent's.
        unsafe { libc::_exit(0) };
    }
    if received >= inbox.buffer_len {
        return Err((Stage::ReadOrder, libc::E2BIG));
    }
    close_fd(inbox.socket);
    // SAFETY: the first `received` bytes of the buffer were just written,
    // and nothing else refers to it (the function's contract).
    let bytes = unsafe { std::slice::from_raw_parts(inbox.buffer.cast_const(), received) };
    // SAFETY: `pointers_len` pointers of room this process owns, distinct
    // from the buffer (the function's contract).
    let pointers = unsafe { std::slice::from_raw_parts_mut(inbox.pointers, inbox.pointers_len) };
    ready::decode(bytes, pointers).ok_or((Stage::ReadOrder, libc::EINVAL))
}

/// Binds the program's directory on its mount point, recursively, and
/// (for a match) makes it and everything below it read-only and nosuid.
fn bind_program_dir(source: &CStr, target: &CStr, read_only: bool) -> Result<(), Failure> {
    // SAFETY: mount reads NUL-terminated strings the caller keeps alive.
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
