//! cgroup v2 backend: one directory per leaf under a single mount (`<root>/<parent>/<leaf>`).
//!
//! Used for pure v2 hosts (root `/sys/fs/cgroup` or a delegated subtree's mount) and, with no
//! controllers, for the unified half of a hybrid host. Layout: this file prepares the parent
//! group (`cgroup.subtree_control` from the root down) and creates leaves with their limits;
//! `leaf` reads a leaf and kills it (`cgroup.kill`, `cgroup.events`). Directory creation and
//! `cgroup.subtree_control` are done here because cgroups-rs's v2 `create()` reads the
//! controller list from the hard-coded `/sys/fs/cgroup` and ignores failed enables; limits go
//! through its setters and `cgroup.kill` through its `Cgroup::kill`, on a [`RootedV2`] handle.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cgroups_rs::fs::Controller;
use cgroups_rs::fs::cpuset::CpuSetController;
use cgroups_rs::fs::memory::MemController;
use cgroups_rs::fs::pid::PidController;

use super::backend::LeafOps;
use super::control::{self, FakeKernel, RMDIR_TIMEOUT};
use super::error::CgroupError;
use super::hierarchy::{RootedV2, V2Controller};
use super::limits::{CgroupLimits, apply_pids, has_file, unenforceable};

mod leaf;

pub(crate) use leaf::V2Leaf;

/// Controllers a group may offer to its children.
const CGROUP_CONTROLLERS: &str = "cgroup.controllers";
/// Controllers a group offers to its children.
const CGROUP_SUBTREE_CONTROL: &str = "cgroup.subtree_control";
/// Memory hard limit.
const MEMORY_MAX: &str = "memory.max";
/// Swap limit: swap alone, unlike v1's memory+swap.
const MEMORY_SWAP_MAX: &str = "memory.swap.max";
/// CPUs of a cpuset; empty means "inherit the parent's".
const CPUSET_CPUS: &str = "cpuset.cpus";
/// CPU bandwidth cap: `"$MAX $PERIOD"` in microseconds (`max`: no cap).
const CPU_MAX: &str = "cpu.max";

/// Creates v2 leaves under one parent group.
#[derive(Debug)]
pub(crate) struct V2Manager {
    /// cgroups-rs view of the mount, offering the controllers enabled for leaves.
    hier: RootedV2,
    /// The parent group's directory.
    parent_dir: PathBuf,
    /// The parent group relative to the mount, for loading handles.
    parent: PathBuf,
    /// Controllers enabled in the parent's `cgroup.subtree_control`, i.e. what leaves get.
    enabled: Vec<V2Controller>,
    /// Controllers that were offered but could not be enabled on the way down, kept so that
    /// `create()` can report the original cause if a limit needs one of them.
    enable_failures: Vec<EnableFailure>,
    /// Whether limits needing an absent controller are skipped instead of refused.
    allow_missing: bool,
    /// Test stand-in for the kernel's mkdir/rmdir behaviour.
    fake: FakeKernel,
}

impl V2Manager {
    /// Creates `parent` under `root` and enables `wanted` (as far as offered) in the
    /// `cgroup.subtree_control` of the root, every group down to the parent, and the parent.
    pub(crate) fn new(
        root: &Path,
        parent: &Path,
        wanted: &[V2Controller],
        allow_missing: bool,
        fake: FakeKernel,
    ) -> Result<Self, CgroupError> {
        let mut dir = root.to_path_buf();
        let mut failures = vec![];
        let mut enabled = enable_controllers(&dir, wanted, &mut failures)?;
        for component in parent.components() {
            dir.push(component);
            control::ensure_dir(&dir, &fake).map_err(|source| CgroupError::CreateParent {
                path: dir.clone(),
                source,
            })?;
            enabled = enable_controllers(&dir, &enabled, &mut failures)?;
        }
        for failure in failures
            .iter()
            .filter(|f| f.controller == V2Controller::Cpu)
        {
            // cpu is needed only for a quota (shared-core mode; cpu.stat usage exists without
            // it), so say it once here; a leaf that needs a quota fails with this cause.
            tracing::warn!("{}", failure.error());
        }
        Ok(Self {
            hier: RootedV2::new(root, enabled.clone()),
            parent_dir: dir,
            parent: parent.to_path_buf(),
            enabled,
            enable_failures: failures,
            allow_missing,
            fake,
        })
    }

    /// The parent group's directory.
    pub(crate) fn parent_dir(&self) -> PathBuf {
        self.parent_dir.clone()
    }

    /// A handle on leaf `name`, whether or not its directory exists.
    pub(crate) fn open_existing(&self, name: &str) -> V2Leaf {
        V2Leaf {
            cgroup: self.hier.load(&self.parent.join(name)),
            dir: self.parent_dir.join(name),
            has_memory: self.enabled.contains(&V2Controller::Memory),
            fake: self.fake,
        }
    }

    /// Creates leaf `name` and applies `limits` (`None`: the unified half of a hybrid leaf,
    /// which only serves `cgroup.kill` and `cgroup.events`). On failure the directory is
    /// removed again.
    pub(crate) fn create(
        &self,
        name: &str,
        limits: Option<&CgroupLimits>,
    ) -> Result<V2Leaf, CgroupError> {
        let leaf = self.open_existing(name);
        let mut made = control::make_leaf_dir(&leaf.dir, &self.fake);
        if made.as_ref().is_err_and(crate::cgroup::v1::parent_vanished) {
            // Another one-shot runner sharing the parent's name removed it
            // when it emptied (`remove_parent_if_empty`): make it again.
            self.restore_parent()?;
            made = control::make_leaf_dir(&leaf.dir, &self.fake);
        }
        made?;
        if let Some(limits) = limits
            && let Err(e) = self.apply(&leaf, limits)
        {
            if let Err(rm) = leaf.remove_dirs(Instant::now() + RMDIR_TIMEOUT) {
                tracing::warn!(error = %rm, "cannot clean up a half-created cgroup");
            }
            return Err(e);
        }
        Ok(leaf)
    }

    /// Makes the parent group again, with the controllers it had enabled.
    fn restore_parent(&self) -> Result<(), CgroupError> {
        let depth = self.parent.components().count();
        let Some(root) = self.parent_dir.ancestors().nth(depth) else {
            return Ok(());
        };
        let mut dir = root.to_path_buf();
        let mut failures = vec![];
        for component in self.parent.components() {
            dir.push(component);
            control::ensure_dir(&dir, &self.fake).map_err(|source| CgroupError::CreateParent {
                path: dir.clone(),
                source,
            })?;
            enable_controllers(&dir, &self.enabled, &mut failures)?;
        }
        Ok(())
    }

    /// Writes `memory.max`, `memory.swap.max` = 0, `pids.max`, `cpuset.cpus` and `cpu.max`.
    fn apply(&self, leaf: &V2Leaf, limits: &CgroupLimits) -> Result<(), CgroupError> {
        let cg = &leaf.cgroup;
        match cg.controller_of::<MemController>() {
            Some(mem) => {
                let dir = mem.path();
                if has_file(
                    self.allow_missing,
                    dir,
                    MEMORY_MAX,
                    "memory",
                    "memory limit",
                )? {
                    mem.set_limit(limits.memory_i64()).map_err(|source| {
                        CgroupError::SetMemoryLimit {
                            path: dir.to_path_buf(),
                            bytes: limits.memory_bytes,
                            source,
                        }
                    })?;
                }
                // v2 limits swap separately (memory.max covers RAM only): 0 = no swap at all.
                if has_file(
                    self.allow_missing,
                    dir,
                    MEMORY_SWAP_MAX,
                    "memory",
                    "swap limit (memory.swap.max)",
                )? {
                    mem.set_memswap_limit(0)
                        .map_err(|source| CgroupError::SetSwapLimit {
                            path: dir.to_path_buf(),
                            value: 0,
                            source,
                        })?;
                }
            }
            None => self.missing(V2Controller::Memory, "memory limit")?,
        }
        match cg.controller_of::<PidController>() {
            Some(pids) => apply_pids(pids, limits, self.allow_missing)?,
            None => self.missing(V2Controller::Pids, "pids limit")?,
        }
        if !limits.cpus.is_empty() {
            match cg.controller_of::<CpuSetController>() {
                Some(cpuset) => {
                    if has_file(
                        self.allow_missing,
                        cpuset.path(),
                        CPUSET_CPUS,
                        "cpuset",
                        "cpu pinning",
                    )? {
                        let cpus = limits.cpu_list();
                        cpuset
                            .set_cpus(&cpus)
                            .map_err(|source| CgroupError::SetCpus {
                                path: cpuset.path().to_path_buf(),
                                cpus: cpus.clone(),
                                source,
                            })?;
                    }
                }
                None => self.missing(V2Controller::Cpuset, "cpu pinning")?,
            }
        }
        if let Some(quota) = &limits.cpu_quota {
            if self.enabled.contains(&V2Controller::Cpu) {
                if has_file(self.allow_missing, &leaf.dir, CPU_MAX, "cpu", "cpu quota")? {
                    // One write sets both halves, so there is no order to get wrong.
                    let path = leaf.dir.join(CPU_MAX);
                    let value = quota.v2_max();
                    control::write(&path, &value).map_err(|source| CgroupError::SetCpuQuota {
                        path,
                        value,
                        source,
                    })?;
                }
            } else {
                self.missing(V2Controller::Cpu, "cpu quota")?;
            }
        }
        Ok(())
    }

    /// Applies the missing-controller policy for a controller not enabled for leaves.
    /// If enabling it failed on the way down, that failure is the error.
    fn missing(&self, controller: V2Controller, limit: &'static str) -> Result<(), CgroupError> {
        if !self.allow_missing
            && let Some(failure) = self
                .enable_failures
                .iter()
                .find(|f| f.controller == controller)
        {
            return Err(failure.error());
        }
        let path = self.parent_dir.join(CGROUP_SUBTREE_CONTROL);
        unenforceable(self.allow_missing, controller.name(), limit, &path)
    }

    /// Names of the leaves under the parent group.
    pub(crate) fn leaf_names(&self) -> Result<BTreeSet<String>, CgroupError> {
        control::child_dirs(&self.parent_dir)
            .map(|found| found.into_iter().collect())
            .map_err(|source| CgroupError::ListLeaves {
                path: self.parent_dir.clone(),
                source,
            })
    }
}

/// A controller `cgroup.subtree_control` refused to enable.
#[derive(Debug)]
struct EnableFailure {
    /// The refused controller.
    controller: V2Controller,
    /// The `cgroup.subtree_control` written.
    path: PathBuf,
    /// The OS error number (EBUSY: processes in the group; EACCES: not delegated to us).
    errno: Option<i32>,
    /// The error kind, for errors without a number.
    kind: io::ErrorKind,
}

impl EnableFailure {
    /// The error as it happened, rebuilt (io::Error is not Clone) for each report.
    fn error(&self) -> CgroupError {
        CgroupError::EnableControllers {
            path: self.path.clone(),
            request: enable_request(&[self.controller]),
            source: self
                .errno
                .map_or_else(|| io::Error::from(self.kind), io::Error::from_raw_os_error),
        }
    }
}

/// Enables in `dir`'s `cgroup.subtree_control` each of `wanted` that `dir` offers and has
/// not enabled yet; returns the wanted controllers enabled afterwards and records refusals in
/// `failures` (reported by `create()` only if a limit needs the controller, so an unneeded
/// refusal, e.g. cpuset without pinning, does not stop the manager).
///
/// Already-enabled controllers are not written, which is what lets a delegated subtree work
/// without write access to its ancestors. All missing ones go in one write (the kernel applies
/// it all or nothing); if that is refused, each is retried alone so one refusal (e.g. `cpu`
/// while a realtime task exists) does not take the others down with it.
fn enable_controllers(
    dir: &Path,
    wanted: &[V2Controller],
    failures: &mut Vec<EnableFailure>,
) -> Result<Vec<V2Controller>, CgroupError> {
    let available = read_controller_list(&dir.join(CGROUP_CONTROLLERS))?;
    let subtree_control = dir.join(CGROUP_SUBTREE_CONTROL);
    let already = read_controller_list(&subtree_control)?;
    let mut enabled: Vec<V2Controller> = wanted
        .iter()
        .copied()
        .filter(|c| already.contains(c))
        .collect();
    // Controllers not offered here are reported at create() if a limit needs them.
    let to_enable: Vec<V2Controller> = wanted
        .iter()
        .copied()
        .filter(|c| !already.contains(c) && available.contains(c))
        .collect();
    if to_enable.is_empty() {
        return Ok(enabled);
    }
    if control::write(&subtree_control, &enable_request(&to_enable)).is_ok() {
        enabled.extend(to_enable);
        return Ok(enabled);
    }
    for controller in to_enable {
        match control::write(&subtree_control, &enable_request(&[controller])) {
            Ok(()) => enabled.push(controller),
            Err(e) => failures.push(EnableFailure {
                controller,
                path: subtree_control.clone(),
                errno: e.raw_os_error(),
                kind: e.kind(),
            }),
        }
    }
    Ok(enabled)
}

/// `+a +b` for `cgroup.subtree_control`.
fn enable_request(controllers: &[V2Controller]) -> String {
    controllers
        .iter()
        .map(|c| format!("+{}", c.name()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a space-separated controller list, keeping the controllers this crate knows.
fn read_controller_list(path: &Path) -> Result<Vec<V2Controller>, CgroupError> {
    let text = control::read(path).map_err(|source| CgroupError::ReadControllers {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(parse_controller_list(&text))
}

/// The known controllers named in a `cgroup.controllers`-style list.
fn parse_controller_list(text: &str) -> Vec<V2Controller> {
    text.split_whitespace()
        .filter_map(V2Controller::from_name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_lists_keep_known_names() {
        assert_eq!(
            parse_controller_list("cpuset cpu io memory hugetlb pids rdma misc\n"),
            vec![
                V2Controller::Cpuset,
                V2Controller::Cpu,
                V2Controller::Memory,
                V2Controller::Pids
            ]
        );
        assert!(parse_controller_list("hugetlb\n").is_empty());
        assert!(parse_controller_list("").is_empty());
    }
}
