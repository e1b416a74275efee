//! cgroup v1 backend: one directory per controller mount (`<root>/<controller>/<parent>/<leaf>`).
//!
//! Layout: this file finds the mounts, prepares the parent group and creates leaves with their
//! limits; `leaf` reads a leaf and kills it (freeze, SIGKILL, thaw). Limits go through
//! cgroups-rs setters on a [`RootedV1`] handle; directories, the parent's cpuset and reads are
//! done directly (see [`super::control`] for why reads are not cgroups-rs's).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cgroups_rs::fs::Controller;
use cgroups_rs::fs::cpu::CpuController;
use cgroups_rs::fs::cpuset::CpuSetController;
use cgroups_rs::fs::memory::MemController;
use cgroups_rs::fs::pid::PidController;

use super::control::{self, FakeKernel, RMDIR_TIMEOUT};
use super::error::CgroupError;
use super::hierarchy::{RootedV1, V1Controller};
use super::limits::{
    CgroupLimits, CpuQuota, MemswOrder, apply_pids, has_file, memsw_order, unenforceable,
};

mod leaf;

pub(crate) use leaf::V1Leaf;

/// Memory hard limit.
const MEMORY_LIMIT: &str = "memory.limit_in_bytes";
/// Memory plus swap limit; present only with swap accounting on.
const MEMSW_LIMIT: &str = "memory.memsw.limit_in_bytes";
/// CPUs of a cpuset; empty in a new group, and attaching to an empty cpuset fails (ENOSPC).
const CPUSET_CPUS: &str = "cpuset.cpus";
/// Memory nodes of a cpuset; same emptiness rule as `cpuset.cpus`.
const CPUSET_MEMS: &str = "cpuset.mems";
/// The CFS bandwidth period, in microseconds.
const CPU_CFS_PERIOD: &str = "cpu.cfs_period_us";
/// CPU time allowed per period, in microseconds (`-1`: no cap).
const CPU_CFS_QUOTA: &str = "cpu.cfs_quota_us";

/// Creates v1 leaves under one parent group in every controller hierarchy.
#[derive(Debug)]
pub(crate) struct V1Manager {
    /// The directory holding the per-controller mounts, e.g. `/sys/fs/cgroup`.
    root: PathBuf,
    /// cgroups-rs view of the controller mounts found under the root.
    hier: RootedV1,
    /// Each controller found, with its mount directory.
    mounts: Vec<(V1Controller, PathBuf)>,
    /// Distinct hierarchy directories, in join order: co-mounted controllers
    /// (`cpu,cpuacct`) share one, and a leaf must be created and joined once per hierarchy.
    hierarchies: Vec<PathBuf>,
    /// The parent group, relative to each hierarchy (e.g. `arena`).
    parent: PathBuf,
    /// Whether limits needing an absent controller are skipped instead of refused.
    allow_missing: bool,
    /// Test stand-in for the kernel's mkdir/rmdir behaviour.
    fake: FakeKernel,
}

impl V1Manager {
    /// Finds the controller mounts under `root` and prepares `parent` in each of them.
    pub(crate) fn new(
        root: &Path,
        parent: &Path,
        allow_missing: bool,
        fake: FakeKernel,
    ) -> Result<Self, CgroupError> {
        let mut mounts = vec![];
        let mut hierarchies = vec![];
        let mut seen = BTreeSet::new();
        for controller in V1Controller::ALL {
            let dir = root.join(controller.dir_name());
            if !dir.is_dir() {
                continue;
            }
            // Co-mounted controllers appear as symlinks to one directory.
            let canonical = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if seen.insert(canonical) {
                hierarchies.push(dir.clone());
            }
            mounts.push((controller, dir));
        }
        if mounts.is_empty() {
            return Err(CgroupError::ControllerMissing {
                controller: "memory",
                limit: "any cgroup v1 hierarchy",
                path: root.join(V1Controller::Memory.dir_name()),
            });
        }
        let manager = Self {
            root: root.to_path_buf(),
            hier: RootedV1::new(root, mounts.clone()),
            mounts,
            hierarchies,
            parent: parent.to_path_buf(),
            allow_missing,
            fake,
        };
        manager.prepare_parent()?;
        Ok(manager)
    }

    /// Creates the parent group in every hierarchy and fills its cpuset from above: a v1
    /// cpuset starts with empty `cpuset.cpus`/`cpuset.mems`, and no task can be attached
    /// below it until both are set, top down.
    fn prepare_parent(&self) -> Result<(), CgroupError> {
        for hierarchy in &self.hierarchies {
            let mut dir = hierarchy.clone();
            for component in self.parent.components() {
                dir.push(component);
                control::ensure_dir(&dir, &self.fake).map_err(|source| {
                    CgroupError::CreateParent {
                        path: dir.clone(),
                        source,
                    }
                })?;
            }
        }
        let Some(cpuset) = self.mount(V1Controller::Cpuset) else {
            return Ok(());
        };
        let mut above = cpuset.to_path_buf();
        for component in self.parent.components() {
            let dir = above.join(component);
            for file in [CPUSET_CPUS, CPUSET_MEMS] {
                copy_if_empty(&above, &dir, file)?;
            }
            above = dir;
        }
        Ok(())
    }

    /// The mount directory of `controller`, if the host has it.
    fn mount(&self, controller: V1Controller) -> Option<&Path> {
        self.mounts
            .iter()
            .find(|(c, _)| *c == controller)
            .map(|(_, dir)| dir.as_path())
    }

    /// The parent group's directory in every hierarchy.
    pub(crate) fn parent_dirs(&self) -> Vec<PathBuf> {
        self.hierarchies
            .iter()
            .map(|h| h.join(&self.parent))
            .collect()
    }

    /// A handle on leaf `name`, whether or not its directories exist.
    pub(crate) fn open_existing(&self, name: &str) -> V1Leaf {
        let relative = self.parent.join(name);
        V1Leaf {
            cgroup: self.hier.load(&relative),
            dirs: self.hierarchies.iter().map(|h| h.join(&relative)).collect(),
            fake: self.fake,
        }
    }

    /// Creates leaf `name` in every hierarchy and applies `limits`. On failure the
    /// directories created so far are removed again.
    pub(crate) fn create(&self, name: &str, limits: &CgroupLimits) -> Result<V1Leaf, CgroupError> {
        let leaf = self.open_existing(name);
        let mut created = vec![];
        let mut made = self.create_dirs(&leaf, &mut created);
        if made.as_ref().is_err_and(parent_vanished) {
            // Another one-shot runner sharing the parent's name removed it
            // when it emptied (`remove_parent_if_empty`): make it again,
            // and the leaf from the start (what this call made of it in
            // other hierarchies goes first).
            let deadline = Instant::now() + RMDIR_TIMEOUT;
            for dir in created.drain(..).rev() {
                control::remove_dir(&dir, &self.fake, deadline).map_err(|source| {
                    CgroupError::CreateLeaf {
                        path: dir.clone(),
                        source,
                    }
                })?;
            }
            self.prepare_parent()?;
            made = self.create_dirs(&leaf, &mut created);
        }
        let result = made.and_then(|()| self.apply(&leaf, limits));
        if let Err(e) = result {
            let deadline = Instant::now() + RMDIR_TIMEOUT;
            for dir in created.iter().rev() {
                if let Err(rm) = control::remove_dir(dir, &self.fake, deadline) {
                    tracing::warn!(
                        path = %dir.display(),
                        error = %rm,
                        "cannot clean up a half-created cgroup"
                    );
                }
            }
            return Err(e);
        }
        Ok(leaf)
    }

    /// mkdir in each hierarchy, recording what this call created so a failure removes only
    /// those (an existing leaf may belong to someone else).
    fn create_dirs(&self, leaf: &V1Leaf, created: &mut Vec<PathBuf>) -> Result<(), CgroupError> {
        for dir in &leaf.dirs {
            control::make_leaf_dir(dir, &self.fake)?;
            created.push(dir.clone());
        }
        Ok(())
    }

    /// Writes memory, memory+swap, pids, cpuset and cpu quota limits into a fresh leaf.
    fn apply(&self, leaf: &V1Leaf, limits: &CgroupLimits) -> Result<(), CgroupError> {
        let cg = &leaf.cgroup;
        match cg.controller_of::<MemController>() {
            Some(mem) => self.apply_memory(mem, limits.memory_bytes, limits.memory_i64())?,
            None => self.missing("memory", "memory limit", V1Controller::Memory)?,
        }
        match cg.controller_of::<PidController>() {
            Some(pids) => apply_pids(pids, limits, self.allow_missing)?,
            None => self.missing("pids", "pids limit", V1Controller::Pids)?,
        }
        match cg.controller_of::<CpuSetController>() {
            Some(cpuset) => self.apply_cpuset(cpuset, limits)?,
            // Without pinning there is nothing the cpuset controller would add.
            None if limits.cpus.is_empty() => {}
            None => self.missing("cpuset", "cpu pinning", V1Controller::Cpuset)?,
        }
        // Without a quota the cpu leaf still matters (one weight for all the bot's threads),
        // but a host without the controller loses no limit, so only a quota requires it.
        if let Some(quota) = &limits.cpu_quota {
            match cg.controller_of::<CpuController>() {
                Some(cpu) => self.apply_cpu_quota(cpu, quota)?,
                None => self.missing("cpu", "cpu quota", V1Controller::Cpu)?,
            }
        }
        Ok(())
    }

    /// Writes the period, then the quota: the kernel checks the pair after each write, and a
    /// fresh leaf's quota is `-1` (no cap), which fits any period.
    fn apply_cpu_quota(&self, cpu: &CpuController, quota: &CpuQuota) -> Result<(), CgroupError> {
        let dir = cpu.path();
        for (file, value) in [
            (CPU_CFS_PERIOD, quota.period_us),
            (CPU_CFS_QUOTA, quota.quota_us),
        ] {
            if !has_file(self.allow_missing, dir, file, "cpu", "cpu quota")? {
                return Ok(());
            }
            let path = dir.join(file);
            control::write(&path, &value.to_string()).map_err(|source| {
                CgroupError::SetCpuQuota {
                    path,
                    value: value.to_string(),
                    source,
                }
            })?;
        }
        Ok(())
    }

    /// Sets `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes` to the same value (no
    /// swap on top), in the order that keeps memsw ≥ memory after each write.
    fn apply_memory(&self, mem: &MemController, bytes: u64, value: i64) -> Result<(), CgroupError> {
        let dir = mem.path();
        if !has_file(
            self.allow_missing,
            dir,
            MEMORY_LIMIT,
            "memory",
            "memory limit",
        )? {
            return Ok(());
        }
        let has_memsw = has_file(
            self.allow_missing,
            dir,
            MEMSW_LIMIT,
            "memory",
            "swap limit (memory.memsw.*; swap accounting off?)",
        )?;
        let current_path = dir.join(MEMORY_LIMIT);
        let current = control::read(&current_path).and_then(|text| {
            control::single_u64(&text)
                .ok_or_else(|| control::invalid_data(MEMORY_LIMIT, &current_path))
        });
        let current = current.map_err(|source| CgroupError::ReadLimit {
            path: current_path.clone(),
            source,
        })?;
        let set_memory = || {
            mem.set_limit(value)
                .map_err(|source| CgroupError::SetMemoryLimit {
                    path: dir.to_path_buf(),
                    bytes,
                    source,
                })
        };
        let set_memsw = || {
            if !has_memsw {
                return Ok(());
            }
            mem.set_memswap_limit(value)
                .map_err(|source| CgroupError::SetSwapLimit {
                    path: dir.to_path_buf(),
                    value: bytes,
                    source,
                })
        };
        match memsw_order(current, bytes) {
            MemswOrder::MemoryFirst => {
                set_memory()?;
                set_memsw()
            }
            MemswOrder::MemswFirst => {
                set_memsw()?;
                set_memory()
            }
        }
    }

    /// Sets the leaf's CPUs (the requested ones, or the parent's when none are requested)
    /// and copies the parent's memory nodes: both must be non-empty before a task can join.
    fn apply_cpuset(
        &self,
        cpuset: &CpuSetController,
        limits: &CgroupLimits,
    ) -> Result<(), CgroupError> {
        let dir = cpuset.path();
        if !has_file(
            self.allow_missing,
            dir,
            CPUSET_CPUS,
            "cpuset",
            "cpu pinning",
        )? || !has_file(
            self.allow_missing,
            dir,
            CPUSET_MEMS,
            "cpuset",
            "cpuset memory nodes",
        )? {
            return Ok(());
        }
        let parent = dir.parent().unwrap_or(dir);
        let cpus = if limits.cpus.is_empty() {
            read_trimmed(parent, CPUSET_CPUS)?
        } else {
            limits.cpu_list()
        };
        cpuset
            .set_cpus(&cpus)
            .map_err(|source| CgroupError::SetCpus {
                path: dir.to_path_buf(),
                cpus: cpus.clone(),
                source,
            })?;
        let mems = read_trimmed(parent, CPUSET_MEMS)?;
        cpuset
            .set_mems(&mems)
            .map_err(|source| CgroupError::SetMems {
                path: dir.to_path_buf(),
                mems: mems.clone(),
                source,
            })
    }

    /// Applies the missing-controller policy for a controller that is not mounted at all.
    fn missing(
        &self,
        controller: &'static str,
        limit: &'static str,
        which: V1Controller,
    ) -> Result<(), CgroupError> {
        let path = self.root.join(which.dir_name());
        unenforceable(self.allow_missing, controller, limit, &path)
    }

    /// Names of the leaves under the parent group in any hierarchy (a crash mid-create can
    /// leave a leaf in only some of them).
    pub(crate) fn leaf_names(&self) -> Result<BTreeSet<String>, CgroupError> {
        let mut names = BTreeSet::new();
        for dir in self.parent_dirs() {
            let found = control::child_dirs(&dir)
                .map_err(|source| CgroupError::ListLeaves { path: dir, source })?;
            names.extend(found);
        }
        Ok(names)
    }
}

/// Copies `file` from `above` into `dir` if `dir`'s copy is empty.
fn copy_if_empty(above: &Path, dir: &Path, file: &'static str) -> Result<(), CgroupError> {
    let copy_err = |source| CgroupError::CopyCpuset {
        path: dir.to_path_buf(),
        file,
        source,
    };
    let current = control::read(&dir.join(file)).map_err(copy_err)?;
    if !current.trim().is_empty() {
        return Ok(());
    }
    let value = control::read(&above.join(file)).map_err(copy_err)?;
    control::write(&dir.join(file), value.trim()).map_err(copy_err)
}

/// Reads a cpuset list from the parent, trimmed.
fn read_trimmed(dir: &Path, file: &'static str) -> Result<String, CgroupError> {
    control::read(&dir.join(file))
        .map(|s| s.trim().to_owned())
        .map_err(|source| CgroupError::CopyCpuset {
            path: dir.to_path_buf(),
            file,
            source,
        })
}

/// A leaf could not be made because its parent directory is gone.
pub(crate) fn parent_vanished(error: &CgroupError) -> bool {
    matches!(error, CgroupError::CreateLeaf { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}
