//! The seam between the public façade and the three layouts: leaf operations sit behind one
//! trait ([`LeafOps`]) and both managers and leaves are dispatched through enums
//! ([`AnyBackend`], [`AnyLeaf`]), as youki's `AnyCgroupManager` does.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::control::Backoff;
use super::error::CgroupError;
use super::hybrid::{HybridLeaf, HybridManager};
use super::limits::CgroupLimits;
use super::v1::{V1Leaf, V1Manager};
use super::v2::{V2Leaf, V2Manager};

/// What every layout's leaf can do. Meaning differences (v1 memsw vs v2 swap, freezer vs
/// `cgroup.kill`) stay inside the implementations.
pub(crate) trait LeafOps {
    /// One `O_WRONLY|O_CLOEXEC` fd per `cgroup.procs` the child must join.
    fn open_procs_files(&self) -> Result<Vec<OwnedFd>, CgroupError>;
    /// OOM kills counted by the kernel in this leaf.
    fn oom_kills(&self) -> Result<u64, CgroupError>;
    /// Peak memory in bytes, if tracked.
    fn peak_memory(&self) -> Result<Option<u64>, CgroupError>;
    /// CPU time consumed by the leaf's tasks.
    fn cpu_time(&self) -> Result<Duration, CgroupError>;
    /// Pids currently in the leaf, sorted.
    fn pids(&self) -> Result<Vec<i32>, CgroupError>;
    /// Kills every task and waits until the leaf is empty or `deadline` passes.
    fn kill_until(&self, deadline: Instant) -> Result<(), CgroupError>;
    /// Removes the leaf's directories (the leaf must be empty), retrying EBUSY until
    /// `deadline`.
    fn remove_dirs(&self, deadline: Instant) -> Result<(), CgroupError>;
    /// The leaf's directories.
    fn paths(&self) -> Vec<PathBuf>;
}

/// The kill loop of every layout: until `is_empty` holds, run one kill `round` and back off.
/// A failed round is retried until `deadline`; only if the leaf never empties is its error
/// reported, as the cause of [`CgroupError::KillTimeout`] (with `remaining()` at that point).
pub(crate) fn kill_loop(
    path: &Path,
    deadline: Instant,
    mut is_empty: impl FnMut() -> Result<bool, CgroupError>,
    remaining: impl FnOnce() -> Result<Vec<i32>, CgroupError>,
    mut round: impl FnMut() -> Result<(), CgroupError>,
) -> Result<(), CgroupError> {
    let started = Instant::now();
    let mut backoff = Backoff::new();
    let mut last_error = None;
    loop {
        if is_empty()? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(CgroupError::KillTimeout {
                path: path.to_path_buf(),
                remaining: remaining()?,
                waited_ms: started.elapsed().as_millis().try_into().unwrap_or(u64::MAX),
                cause: last_error.map(Box::new),
            });
        }
        if let Err(e) = round() {
            last_error = Some(e);
        }
        backoff.sleep();
    }
}

/// A leaf of any layout.
#[derive(Debug)]
pub(crate) enum AnyLeaf {
    /// Directories in each v1 hierarchy.
    V1(V1Leaf),
    /// One directory in the cgroup2 mount.
    V2(V2Leaf),
    /// v1 directories plus one in the unified mount.
    Hybrid(HybridLeaf),
}

impl AnyLeaf {
    /// The leaf behind the trait.
    pub(crate) fn ops(&self) -> &dyn LeafOps {
        match self {
            Self::V1(leaf) => leaf,
            Self::V2(leaf) => leaf,
            Self::Hybrid(leaf) => leaf,
        }
    }
}

/// A manager of any layout.
#[derive(Debug)]
pub(crate) enum AnyBackend {
    /// Pure v1.
    V1(V1Manager),
    /// Pure v2 (or a delegated v2 subtree).
    V2(V2Manager),
    /// v1 controllers plus the unified mount.
    Hybrid(HybridManager),
}

impl AnyBackend {
    /// Creates leaf `name` with `limits` applied.
    pub(crate) fn create(&self, name: &str, limits: &CgroupLimits) -> Result<AnyLeaf, CgroupError> {
        match self {
            Self::V1(m) => m.create(name, limits).map(AnyLeaf::V1),
            Self::V2(m) => m.create(name, Some(limits)).map(AnyLeaf::V2),
            Self::Hybrid(m) => m.create(name, limits).map(AnyLeaf::Hybrid),
        }
    }

    /// A handle on an existing leaf (for stale cleanup).
    pub(crate) fn open_existing(&self, name: &str) -> AnyLeaf {
        match self {
            Self::V1(m) => AnyLeaf::V1(m.open_existing(name)),
            Self::V2(m) => AnyLeaf::V2(m.open_existing(name)),
            Self::Hybrid(m) => AnyLeaf::Hybrid(m.open_existing(name)),
        }
    }

    /// Names of the leaves under the parent group, in any hierarchy.
    pub(crate) fn leaf_names(&self) -> Result<BTreeSet<String>, CgroupError> {
        match self {
            Self::V1(m) => m.leaf_names(),
            Self::V2(m) => m.leaf_names(),
            Self::Hybrid(m) => m.leaf_names(),
        }
    }

    /// The parent group's directory in every hierarchy.
    pub(crate) fn parent_dirs(&self) -> Vec<PathBuf> {
        match self {
            Self::V1(m) => m.parent_dirs(),
            Self::V2(m) => vec![m.parent_dir()],
            Self::Hybrid(m) => m.parent_dirs(),
        }
    }
}
