//! Where a confined process failed, and how it says so: the [`Stage`]s of
//! the sequence between `clone` and `execve` (see [`crate::child`] and
//! [`crate::init`]), and the few async-signal-safe helpers both sides use to
//! turn a system call's result into a [`Failure`] and report it to the
//! parent through the error pipe as `(stage, errno)`.
//!
//! It depends on nothing else in the crate, so `child`, `init` and the
//! spawner's side can all use it without depending on each other.

use std::os::fd::RawFd;

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

/// Tells the parent which stage failed, through the error pipe, and exits 127.
pub(crate) fn report_and_exit(error_fd: RawFd, (stage, errno): Failure) -> ! {
    let mut report = [0u8; 8];
    report[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
    report[4..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: writes a stack buffer to a descriptor we own; nothing else to do
    // if the parent is gone.
    unsafe { libc::write(error_fd, report.as_ptr().cast(), report.len()) };
    // SAFETY: ends this process without running anything of the parent's.
    unsafe { libc::_exit(127) }
}

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
