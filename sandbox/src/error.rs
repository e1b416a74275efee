//! The crate's errors: [`SandboxError`] for setting up a sandbox and
//! spawning into it, [`WaitError`] for telling how a confined process ended.
//!
//! Both live here, apart from the `spawn` and `handle` modules, so that
//! `spawn` depends on `handle` and never the other way round: a running
//! child's handle reports either kind, and a [`SandboxError`] wraps a
//! [`WaitError`]. Both are re-exported where they used to be
//! (`spawn::SandboxError`, `handle::WaitError`, and the crate root).

use std::path::PathBuf;
use std::time::Duration;

use crate::cgroup::CgroupError;
use crate::rootfs::RootfsError;
use crate::seccomp::SeccompError;
use crate::stage::Stage;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    // Setting up the sandbox itself.
    #[error("setting up cgroups")]
    Cgroup(#[from] CgroupError),
    #[error("compiling seccomp filters")]
    Seccomp(#[from] SeccompError),
    #[error("creating the root mount point {path}")]
    RootDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("reading {path}")]
    KernelInfo {
        path: &'static str,
        source: std::io::Error,
    },
    // One spawn.
    #[error("planning the root filesystem")]
    Rootfs(#[from] RootfsError),
    #[error("{what} contains a NUL byte")]
    Nul { what: &'static str },
    #[error("the command does not read back from its own encoding")]
    UnreadableOrder,
    #[error("the command needs at least one core")]
    NoCores,
    #[error("creating a pipe")]
    Pipe(#[source] std::io::Error),
    #[error("cloning into new namespaces")]
    Clone(#[source] std::io::Error),
    #[error("confining the child failed at {stage:?}")]
    Child {
        stage: Stage,
        source: std::io::Error,
    },
    #[error("the child reported an unknown stage {0}")]
    UnknownStage(u32),
    #[error("the child did not finish its setup within {0:?}")]
    SetupTimeout(Duration),
    #[error("starting the spawner thread")]
    SpawnerThread(#[source] std::io::Error),
    #[error("the spawner thread is gone")]
    SpawnerGone,
    // The end of a process.
    #[error("telling how the confined process ended")]
    Wait(#[from] WaitError),
}

/// Why the end of a confined process cannot be told.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error("waiting for the sandbox's init (pid {pid})")]
    Wait { pid: i32, source: std::io::Error },
    #[error("reading the report of the sandbox's init (pid {pid})")]
    Report { pid: i32, source: std::io::Error },
    #[error("the sandbox's init (pid {pid}) wrote a malformed report")]
    MalformedReport { pid: i32 },
    #[error("the sandbox's init (pid {pid}) failed")]
    Init { pid: i32, source: std::io::Error },
    #[error("reading the OOM-kill counter: a memory kill cannot be told from a crash")]
    OomCounter(#[source] CgroupError),
    #[error("the cgroup of pid {pid} was removed before its OOM-kill counter was read")]
    CgroupRemoved { pid: i32 },
}

/// For callers whose interface speaks `std::io::Error` (the worker's bot
/// handles); the chain of causes is kept.
impl From<WaitError> for std::io::Error {
    fn from(e: WaitError) -> Self {
        std::io::Error::other(e)
    }
}
