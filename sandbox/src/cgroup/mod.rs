//! One cgroup leaf per confined process, on cgroup v1, v2 and hybrid hosts.
//!
//! Layout: `setup` detects the host's layout (`statfs` → a pure decision). [`CgroupManager`]
//! owns a parent group (e.g. `arena`) and creates [`LeafCgroup`]s under it; it dispatches
//! through `backend` (the `LeafOps` trait and the `AnyBackend`/`AnyLeaf` enums) to `v1`
//! (per-controller mounts; `v1::leaf` has the freezer kill loop), `v2` (one mount,
//! `cgroup.subtree_control`; `v2::leaf` has `cgroup.kill` and `cgroup.events`) and `hybrid`
//! (v1 limits plus a leaf in the unified mount for `cgroup.kill`). `hierarchy` adapts
//! cgroups-rs to an injectable root, `limits` translates [`CgroupLimits`] into control-file
//! values, `control` holds control-file I/O and parsers, and `stale` decides which leaves
//! belong to dead runners. `error` has the one error type, [`CgroupError`].
//!
//! Every kernel root is a parameter (`*_with_root`), so unit tests run against a fake tree in
//! a temporary directory; `sandbox/tests/cgroup_real.rs` runs the same code against the
//! kernel.
//!
//! Missing controllers: a limit the host cannot enforce (controller absent, or a file such as
//! `memory.memsw.limit_in_bytes` missing because swap accounting is off) makes
//! [`CgroupManager::create`] fail with [`CgroupError::ControllerMissing`]. Only a manager built
//! with [`CgroupOptions::allow_missing_controllers`] skips such limits with a warning; that
//! exists for running the v2 code path against a controller-less cgroup2 mount in tests.

mod backend;
mod control;
mod error;
mod hierarchy;
mod hybrid;
mod limits;
mod setup;
mod stale;
mod v1;
mod v2;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use backend::{AnyBackend, AnyLeaf};
use control::FakeKernel;

pub use error::{CgroupError, CgroupsRsError};
pub use limits::{CgroupLimits, CpuQuota, format_cpu_list};
pub use setup::{CgroupSetup, DEFAULT_ROOT, detect, detect_with_root};

/// How long [`LeafCgroup::kill_all`] waits for a leaf to become empty.
pub const KILL_TIMEOUT: Duration = control::KILL_TIMEOUT;

/// Longest name the kernel accepts for one directory.
const NAME_MAX: usize = 255;

/// Settings of a [`CgroupManager`] beyond layout, root and parent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupOptions {
    /// Skip (with a warning on stderr) limits whose controller or control file is absent,
    /// instead of refusing to create the leaf. Meant only for tests on hosts without the
    /// controllers (e.g. v2 code against a hybrid host's controller-less unified mount);
    /// production should leave it off so a bot never runs without its limits.
    pub allow_missing_controllers: bool,
}

/// Creates leaves under a parent group (e.g. `arena`) in every hierarchy it needs.
#[derive(Debug)]
pub struct CgroupManager {
    /// The layout this manager drives.
    setup: CgroupSetup,
    /// The per-layout implementation.
    backend: AnyBackend,
}

impl CgroupManager {
    /// A manager for the real `/sys/fs/cgroup`; creates `parent` where missing.
    pub fn new(setup: CgroupSetup, parent: &str) -> Result<Self, CgroupError> {
        Self::new_with_root(setup, Path::new(DEFAULT_ROOT), parent)
    }

    /// A manager for the cgroup tree at `root` (a fake tree in tests).
    pub fn new_with_root(
        setup: CgroupSetup,
        root: &Path,
        parent: &str,
    ) -> Result<Self, CgroupError> {
        Self::new_with_options(setup, root, parent, CgroupOptions::default())
    }

    /// A manager for the cgroup tree at `root` with non-default [`CgroupOptions`].
    ///
    /// For [`CgroupSetup::Unified`], `root` is the cgroup2 mount itself (`/sys/fs/cgroup`, or
    /// e.g. `/sys/fs/cgroup/unified` to drive a hybrid host's unified mount as pure v2); for
    /// the others it is the directory holding the per-controller mounts.
    pub fn new_with_options(
        setup: CgroupSetup,
        root: &Path,
        parent: &str,
        options: CgroupOptions,
    ) -> Result<Self, CgroupError> {
        Self::build(setup, root, parent, options, FakeKernel::default())
    }

    /// Shared constructor; `fake` stands in for the kernel on test trees.
    fn build(
        setup: CgroupSetup,
        root: &Path,
        parent: &str,
        options: CgroupOptions,
        fake: FakeKernel,
    ) -> Result<Self, CgroupError> {
        let parent = validate_parent(parent)?;
        let allow = options.allow_missing_controllers;
        let backend = match setup {
            CgroupSetup::Legacy => AnyBackend::V1(v1::V1Manager::new(root, &parent, allow, fake)?),
            CgroupSetup::Unified => AnyBackend::V2(v2::V2Manager::new(
                root,
                &parent,
                &hierarchy::V2Controller::ALL,
                allow,
                fake,
            )?),
            CgroupSetup::Hybrid => {
                AnyBackend::Hybrid(hybrid::HybridManager::new(root, &parent, allow, fake)?)
            }
        };
        Ok(Self { setup, backend })
    }

    /// The layout this manager drives.
    pub fn setup(&self) -> CgroupSetup {
        self.setup
    }

    /// The parent group's directory in every hierarchy (for logging and test cleanup).
    pub fn parent_paths(&self) -> Vec<PathBuf> {
        self.backend.parent_dirs()
    }

    /// Removes the parent group from every hierarchy if nothing is left in
    /// it; returns whether it is gone. For one-shot runs and tests: a
    /// long-running runner keeps its parent, which another runner sharing the
    /// same parent name may be about to use.
    pub fn remove_parent_if_empty(&self) -> Result<bool, CgroupError> {
        let mut gone = true;
        for dir in self.parent_paths() {
            // The deepest component only: shared ancestors are not ours to remove.
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::ENOTEMPTY)) => {
                    gone = false;
                }
                Err(source) => return Err(CgroupError::RemoveParent { path: dir, source }),
            }
        }
        Ok(gone)
    }

    /// Creates leaf `name` with `limits` applied. `name` must be unique (e.g. from
    /// [`CgroupManager::owned_name`]); an existing leaf is an error, never shared.
    pub fn create(&self, name: &str, limits: &CgroupLimits) -> Result<LeafCgroup, CgroupError> {
        validate_name(name)?;
        limits.validate()?;
        let leaf = self.backend.create(name, limits)?;
        Ok(LeafCgroup {
            name: name.to_owned(),
            leaf,
            removed: false,
        })
    }

    /// Removes leaves whose owning runner is gone: the name's `r<pid>-<starttime>` prefix
    /// names a process that no longer exists or now has another start time. Anything left in
    /// them is killed first. Leaves of live runners and names in any other shape are never
    /// touched. Returns how many leaves were removed; if some could not be, every other one is
    /// still tried and the first error is returned.
    pub fn remove_stale(&self) -> Result<usize, CgroupError> {
        let mut removed = 0;
        let mut first_error = None;
        for name in self.backend.leaf_names()? {
            let Some(owner) = stale::parse_owner(&name) else {
                continue;
            };
            if !stale::is_stale(owner, stale::probe(owner.pid)) {
                continue;
            }
            let leaf = self.backend.open_existing(&name);
            match kill_and_remove(&leaf) {
                Ok(()) => removed += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(removed), Err)
    }

    /// A leaf name owned by this process: `r<pid>-<starttime>-<suffix>`. If this process's
    /// start time cannot be read, returns `u<pid>-<suffix>`, which no runner ever judges
    /// stale (safe, but never cleaned up automatically); use
    /// [`CgroupManager::try_owned_name`] to get the error instead.
    pub fn owned_name(suffix: &str) -> String {
        stale::owned_name(suffix)
    }

    /// [`CgroupManager::owned_name`] without the fallback.
    pub fn try_owned_name(suffix: &str) -> Result<String, CgroupError> {
        stale::try_owned_name(suffix)
    }
}

/// One confined process's cgroup leaf. Dropping it removes it (best effort, errors to
/// stderr); [`LeafCgroup::remove`] does the same and reports errors.
#[derive(Debug)]
pub struct LeafCgroup {
    /// The leaf's name under the parent group.
    name: String,
    /// The per-layout leaf.
    leaf: AnyLeaf,
    /// Set once removal was attempted, so Drop does not repeat it.
    removed: bool,
}

impl LeafCgroup {
    /// The leaf's name under the parent group.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One `O_WRONLY|O_CLOEXEC` fd per hierarchy's `cgroup.procs` of this leaf (v1: one per
    /// distinct controller hierarchy; hybrid: those plus the unified leaf, last; v2: one).
    /// The child writes `"0"` into each between fork and exec.
    pub fn open_procs_files(&self) -> Result<Vec<std::os::fd::OwnedFd>, CgroupError> {
        self.leaf.ops().open_procs_files()
    }

    /// OOM kills seen by the kernel in this leaf (v1: `memory.oom_control` `oom_kill`; v2:
    /// `memory.events` `oom_kill`). [`CgroupError::ControllerMissing`] without a memory
    /// controller, since then the kernel keeps no count.
    pub fn oom_kills(&self) -> Result<u64, CgroupError> {
        self.leaf.ops().oom_kills()
    }

    /// Peak memory in bytes if the kernel tracks it (v1 `memory.max_usage_in_bytes`; v2
    /// `memory.peak`, kernel ≥ 5.19).
    pub fn peak_memory(&self) -> Result<Option<u64>, CgroupError> {
        self.leaf.ops().peak_memory()
    }

    /// CPU time consumed (v1 `cpuacct.usage`; v2 `cpu.stat` `usage_usec`).
    pub fn cpu_time(&self) -> Result<Duration, CgroupError> {
        self.leaf.ops().cpu_time()
    }

    /// Pids currently in the leaf (union over hierarchies), sorted.
    pub fn pids(&self) -> Result<Vec<i32>, CgroupError> {
        self.leaf.ops().pids()
    }

    /// Kills every process in the leaf and waits up to [`KILL_TIMEOUT`] until it is empty:
    /// v2 and hybrid write `cgroup.kill` and wait for `populated 0` (hybrid then confirms the
    /// v1 dirs are empty); v1 freezes, SIGKILLs every listed pid, thaws, and repeats.
    pub fn kill_all(&self) -> Result<(), CgroupError> {
        self.leaf.ops().kill_until(Instant::now() + KILL_TIMEOUT)
    }

    /// [`LeafCgroup::kill_all`], then removes every directory of the leaf with bounded
    /// retries (EBUSY right after a kill is normal). On error the leaf is not retried on drop;
    /// [`CgroupManager::remove_stale`] collects it once this process is gone.
    pub fn remove(mut self) -> Result<(), CgroupError> {
        self.removed = true;
        kill_and_remove(&self.leaf)
    }

    /// The leaf's directories, for logging and tests.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.leaf.ops().paths()
    }
}

impl Drop for LeafCgroup {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        self.removed = true;
        if let Err(e) = kill_and_remove(&self.leaf) {
            tracing::warn!(
                paths = ?self.leaf.ops().paths(),
                error = %e,
                "cannot remove a cgroup leaf on drop"
            );
        }
    }
}

/// Kill everything, then rmdir every directory.
fn kill_and_remove(leaf: &AnyLeaf) -> Result<(), CgroupError> {
    let ops = leaf.ops();
    ops.kill_until(Instant::now() + KILL_TIMEOUT)?;
    ops.remove_dirs(Instant::now() + control::RMDIR_TIMEOUT)
}

/// A leaf name: one plain directory name.
fn validate_name(name: &str) -> Result<(), CgroupError> {
    let invalid = |reason| {
        Err(CgroupError::InvalidName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return invalid("empty");
    }
    if name == "." || name == ".." {
        return invalid("a relative directory reference");
    }
    if name.contains('/') {
        return invalid("contains '/'");
    }
    // The kernel refuses '\n' so /proc/<pid>/cgroup stays one line per hierarchy.
    if name.contains(['\n', '\0']) {
        return invalid("contains a newline or NUL");
    }
    if name.len() > NAME_MAX {
        return invalid("longer than 255 bytes");
    }
    Ok(())
}

/// A parent group: one or more plain names joined by '/', relative to the root.
fn validate_parent(parent: &str) -> Result<PathBuf, CgroupError> {
    let path = Path::new(parent);
    if parent.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(CgroupError::InvalidName {
            name: parent.to_owned(),
            reason: "parent must be a relative path of plain names",
        });
    }
    for component in parent.split('/').filter(|c| !c.is_empty()) {
        validate_name(component)?;
    }
    Ok(path.to_path_buf())
}
