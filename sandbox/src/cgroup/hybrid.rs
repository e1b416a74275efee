//! Hybrid hosts: v1 controllers enforce the limits, and a leaf in the cgroup2 mount at
//! `<root>/unified` (which has no useful controllers) adds `cgroup.kill` and `cgroup.events`.
//!
//! cgroups-rs treats such a host as plain v1 and its `kill()` refuses v1; here the child joins
//! both, so one `cgroup.kill` write reaches every task, forks included, and the v1 freezer loop
//! is only the fallback.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::backend::LeafOps;
use super::control::{FakeKernel, RMDIR_TIMEOUT};
use super::error::CgroupError;
use super::limits::CgroupLimits;
use super::setup::UNIFIED_DIR;
use super::v1::{V1Leaf, V1Manager};
use super::v2::{V2Leaf, V2Manager};

/// Creates leaves in the v1 hierarchies and in the unified mount.
#[derive(Debug)]
pub(crate) struct HybridManager {
    /// The v1 half: limits, accounting, freezer.
    v1: V1Manager,
    /// The unified half: membership for `cgroup.kill` and `cgroup.events`, no controllers.
    unified: V2Manager,
}

impl HybridManager {
    /// Prepares `parent` in every v1 hierarchy under `root` and in `root/unified`.
    pub(crate) fn new(
        root: &Path,
        parent: &Path,
        allow_missing: bool,
        fake: FakeKernel,
    ) -> Result<Self, CgroupError> {
        let v1 = V1Manager::new(root, parent, allow_missing, fake)?;
        // No controllers are wanted in the unified mount: on a hybrid host they are bound to
        // the v1 hierarchies, and the leaf there carries no limits.
        let unified = V2Manager::new(&root.join(UNIFIED_DIR), parent, &[], allow_missing, fake)?;
        Ok(Self { v1, unified })
    }

    /// The parent group's directories: each v1 hierarchy's, then the unified one.
    pub(crate) fn parent_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.v1.parent_dirs();
        dirs.push(self.unified.parent_dir());
        dirs
    }

    /// A handle on leaf `name` in both halves.
    pub(crate) fn open_existing(&self, name: &str) -> HybridLeaf {
        HybridLeaf {
            v1: self.v1.open_existing(name),
            unified: self.unified.open_existing(name),
        }
    }

    /// Creates the v1 leaf with `limits`, then the unified leaf; if the second fails the
    /// first is removed again.
    pub(crate) fn create(
        &self,
        name: &str,
        limits: &CgroupLimits,
    ) -> Result<HybridLeaf, CgroupError> {
        let v1 = self.v1.create(name, limits)?;
        match self.unified.create(name, None) {
            Ok(unified) => Ok(HybridLeaf { v1, unified }),
            Err(e) => {
                if let Err(rm) = v1.remove_dirs(Instant::now() + RMDIR_TIMEOUT) {
                    tracing::warn!(error = %rm, "cannot clean up a half-created cgroup");
                }
                Err(e)
            }
        }
    }

    /// Leaf names found in either half.
    pub(crate) fn leaf_names(&self) -> Result<BTreeSet<String>, CgroupError> {
        let mut names = self.v1.leaf_names()?;
        names.extend(self.unified.leaf_names()?);
        Ok(names)
    }
}

/// A leaf in the v1 hierarchies plus the unified mount.
#[derive(Debug)]
pub(crate) struct HybridLeaf {
    /// Limits, accounting and the freezer fallback.
    v1: V1Leaf,
    /// `cgroup.kill` and `cgroup.events`.
    unified: V2Leaf,
}

impl LeafOps for HybridLeaf {
    /// The v1 fds first (memory before anything else), then the unified one.
    fn open_procs_files(&self) -> Result<Vec<OwnedFd>, CgroupError> {
        let mut fds = self.v1.open_procs_files()?;
        fds.extend(self.unified.open_procs_files()?);
        Ok(fds)
    }

    fn oom_kills(&self) -> Result<u64, CgroupError> {
        self.v1.oom_kills()
    }

    fn peak_memory(&self) -> Result<Option<u64>, CgroupError> {
        self.v1.peak_memory()
    }

    fn cpu_time(&self) -> Result<Duration, CgroupError> {
        self.v1.cpu_time()
    }

    fn pids(&self) -> Result<Vec<i32>, CgroupError> {
        let mut all: BTreeSet<i32> = self.v1.pids()?.into_iter().collect();
        all.extend(self.unified.pids()?);
        Ok(all.into_iter().collect())
    }

    /// `cgroup.kill` in the unified leaf first; then the v1 loop, which only has work left if
    /// some task is in the v1 dirs but not the unified one (a child that died between its
    /// joins) and otherwise just confirms every v1 `cgroup.procs` is empty.
    fn kill_until(&self, deadline: Instant) -> Result<(), CgroupError> {
        let unified = self.unified.kill_until(deadline);
        let v1 = self.v1.kill_until(deadline);
        unified.and(v1)
    }

    fn remove_dirs(&self, deadline: Instant) -> Result<(), CgroupError> {
        let v1 = self.v1.remove_dirs(deadline);
        let unified = self.unified.remove_dirs(deadline);
        v1.and(unified)
    }

    fn paths(&self) -> Vec<PathBuf> {
        let mut paths = self.v1.paths();
        paths.extend(self.unified.paths());
        paths
    }
}
