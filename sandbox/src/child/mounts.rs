//! Building a root from its plan ([`crate::rootfs::Step`]s): the shared
//! template the spawner thread prepares once ([`prepare_template`]), the
//! per-spawn steps the confined child runs ([`build_root`]), and making a
//! mount tree read-only ([`read_only_tree`]). Like the rest of the child, it
//! only makes system calls on strings the parent prepared.

use std::ffi::CStr;

use crate::rootfs::Step;
use crate::stage::{Failure, Stage, check, errno};

/// Builds the root every spawn shares ([`crate::rootfs::plan_template`]) in
/// a mount namespace of the calling thread's own, whose mounts are seen by
/// nobody else; each child clones a copy of it. Host mounts still reach it
/// (a slave of the host's), none of its own go back.
///
/// # Safety
/// Moves the calling thread (only) into a new mount namespace: call it on
/// the sandbox's spawner thread, which exists for this.
pub(crate) unsafe fn prepare_template(steps: &[Step]) -> Result<(), Failure> {
    // SAFETY: unshare with a flag only; the caller's contract says this
    // thread may leave its mount namespace.
    let rc = unsafe { libc::unshare(libc::CLONE_NEWNS) };
    check(rc as _, Stage::PrivateMounts)?;
    // SAFETY: mount reads a static NUL-terminated path; the null pointers
    // are allowed for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        )
    };
    check(rc as _, Stage::PrivateMounts)?;
    build_root(steps)
}

/// Runs every step of the root but the program's directory.
pub(super) fn build_root(steps: &[Step]) -> Result<(), Failure> {
    for step in steps {
        run_step(step)?;
    }
    Ok(())
}

/// One step of a root plan (from [`super::confine_and_exec`] and
/// [`prepare_template`]); every string is a `CString` of the step's.
fn run_step(step: &Step) -> Result<(), Failure> {
    let opt = |s: &Option<std::ffi::CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    match step {
        Step::Mkdir { path, mode } => {
            // SAFETY: mkdir reads the step's NUL-terminated path.
            if unsafe { libc::mkdir(path.as_ptr(), *mode) } < 0 && errno() != libc::EEXIST {
                return Err((Stage::RootfsStep, errno()));
            }
            // mkdir applies the umask; the mode must hold as planned.
            // SAFETY: chmod reads the step's NUL-terminated path.
            let rc = unsafe { libc::chmod(path.as_ptr(), *mode) };
            check(rc as _, Stage::RootfsStep)
        }
        Step::Touch { path } => {
            // SAFETY: open reads the step's NUL-terminated path.
            let fd = unsafe {
                libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                )
            };
            check(fd as _, Stage::RootfsStep)?;
            // SAFETY: closes the descriptor just opened, which nothing else
            // uses.
            unsafe { libc::close(fd) };
            Ok(())
        }
        Step::Symlink { target, path } => {
            // SAFETY: symlink reads the step's NUL-terminated strings.
            let rc = unsafe { libc::symlink(target.as_ptr(), path.as_ptr()) };
            check(rc as _, Stage::RootfsStep)
        }
        Step::ReadOnlyTree { target } => read_only_tree(target),
        Step::Mount {
            source,
            target,
            fstype,
            flags,
            data,
        } => {
            // SAFETY: mount reads the step's NUL-terminated strings, or
            // null for those it has none of.
            let rc = unsafe {
                libc::mount(
                    opt(source),
                    target.as_ptr(),
                    opt(fstype),
                    *flags,
                    opt(data).cast(),
                )
            };
            check(rc as _, Stage::RootfsStep)
        }
    }
}

/// Makes the mount at `target` and every mount below it read-only and
/// nosuid (a bind ignores MS_RDONLY on its first call, and a remount would
/// only reach the top mount).
pub(super) fn read_only_tree(target: &CStr) -> Result<(), Failure> {
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
