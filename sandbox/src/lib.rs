//! Confines one process. Knows nothing of games.
//!
//! Layout: [`spawn`] is the entry point: a [`Sandbox`] holds the long-lived
//! policy and spawns [`SandboxCommand`]s into [`SandboxedChild`]ren, whose end
//! is a [`Verdict`]. Inside it, `spawn/command.rs` holds the types a caller
//! describes, `spawn/spawner.rs` the thread every clone happens on,
//! `spawn/spares.rs` the pool of leaves made ahead and `spawn/clone.rs` the
//! clone with its pipes and setup report. Each spawn creates a [`cgroup`]
//! leaf (v1, v2 or hybrid) with the memory, pids and cpuset limits, plans a
//! fresh root with [`rootfs`] from the runtime environment in [`mod@env`],
//! and clones a child that joins a network namespace made ahead by
//! [`netns`] and runs the linear confinement sequence in [`child`]
//! (namespaces, pivot_root, credentials, rlimits, the [`seccomp`] filters),
//! one named step per stage (`child/mounts.rs` builds the root from the
//! plan), then forks: the bot execs, and the confined process stays as the
//! sandbox's [`init`] at pid 1 (reaps orphans, forwards signals, reports the
//! bot's own end). The stages, and the helpers that turn a failed system
//! call into one and report it, are in the private `stage` module (its
//! [`Stage`](child::Stage) is re-exported from [`child`]), which both
//! `child` and `init` use, so the dependencies go one way: `child` uses
//! `init` and `ready`, `init` uses only `stage`, and `ready` (which also
//! holds the [`Program`](ready::Program) a command decodes to) uses neither.
//! The runner holds a [`SandboxedChild`] ([`handle`]), whose [`Verdict`]
//! comes from that report and the cgroup's OOM counter. [`error`] holds the errors of both sides
//! ([`SandboxError`], [`WaitError`]), so that `spawn` depends on `handle`
//! and not the other way round.
//! A long-lived sandbox keeps a process started ahead in a spare leaf, which
//! waits at the middle of that sequence for its command ([`ready`]).
//! [`cpus`] hands out exclusive cores, with a logged shared-core mode for
//! small machines, and [`ids`] a distinct unprivileged uid per confined
//! process.

pub mod cgroup;
pub mod child;
pub mod cpus;
pub mod env;
pub mod error;
pub mod handle;
pub mod ids;
pub mod init;
pub mod netns;
pub mod ready;
pub mod rootfs;
pub mod seccomp;
pub mod spawn;
mod stage;

pub use env::RuntimeEnv;
pub use spawn::{
    Limits, Sandbox, SandboxCommand, SandboxConfig, SandboxError, SandboxedChild, SpawnCounts,
    Verdict, WaitError,
};
