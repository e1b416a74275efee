//! One v1 leaf: its directories, readings, and the freeze-kill-thaw loop.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cgroups_rs::FreezerState;
use cgroups_rs::fs::cpuacct::CpuAcctController;
use cgroups_rs::fs::freezer::FreezerController;
use cgroups_rs::fs::memory::MemController;
use cgroups_rs::fs::{Cgroup, Controller};

use crate::cgroup::backend::{LeafOps, kill_loop};
use crate::cgroup::control::{self, Backoff, CGROUP_PROCS, FakeKernel};
use crate::cgroup::error::CgroupError;

/// OOM killer state; its `oom_kill` line counts kills (kernel ≥ 4.13).
const MEMORY_OOM_CONTROL: &str = "memory.oom_control";
/// Peak memory usage in bytes.
const MEMORY_MAX_USAGE: &str = "memory.max_usage_in_bytes";
/// CPU time consumed, in nanoseconds.
const CPUACCT_USAGE: &str = "cpuacct.usage";
/// The line in `memory.oom_control` counting OOM kills.
const OOM_KILL_KEY: &str = "oom_kill";
/// How long one kill round waits for `freezer.state` to turn `FROZEN` before signalling
/// anyway (a task in uninterruptible sleep can hold a freeze up).
const FREEZE_WAIT: Duration = Duration::from_millis(100);

/// One v1 leaf: a directory per hierarchy.
#[derive(Debug)]
pub(crate) struct V1Leaf {
    /// cgroups-rs handle entered into the leaf in every mounted controller.
    pub(super) cgroup: Cgroup,
    /// The leaf's directory in each distinct hierarchy, in join order.
    pub(super) dirs: Vec<PathBuf>,
    /// Test stand-in for the kernel's rmdir behaviour.
    pub(super) fake: FakeKernel,
}

impl V1Leaf {
    /// The leaf's directory for `C`, if that controller is mounted.
    fn dir_of<'a, C>(&'a self) -> Option<&'a Path>
    where
        &'a C: From<&'a cgroups_rs::fs::Subsystem>,
        C: Controller + cgroups_rs::fs::ControllIdentifier + 'a,
    {
        self.cgroup.controller_of::<C>().map(|c| c.path())
    }

    /// The directory errors name: the first hierarchy's.
    fn first_dir(&self) -> PathBuf {
        self.dirs.first().cloned().unwrap_or_default()
    }

    /// The error for a reading whose controller is not mounted.
    fn no_controller(&self, controller: &'static str, limit: &'static str) -> CgroupError {
        CgroupError::ControllerMissing {
            controller,
            limit,
            path: self.first_dir(),
        }
    }

    /// One freeze, signal, thaw round.
    fn kill_round(&self, deadline: Instant) -> Result<(), CgroupError> {
        let freezer = self.cgroup.controller_of::<FreezerController>();
        let mut result = Ok(());
        if let Some(freezer) = freezer {
            result = freeze(freezer, deadline.min(Instant::now() + FREEZE_WAIT));
        }
        // Signal even if freezing failed: an unfrozen kill may still empty the leaf.
        let signalled = self.signal_all();
        if let Some(freezer) = freezer {
            // Always thaw: a frozen task never acts on its SIGKILL.
            let thawed = freezer.thaw().map_err(|source| CgroupError::Thaw {
                path: freezer.path().to_path_buf(),
                source,
            });
            result = result.and(thawed);
        }
        signalled.and(result)
    }

    /// SIGKILLs every pid currently listed in any hierarchy, reporting the first failure
    /// after trying them all. Frozen tasks cannot exit, so a listed pid cannot be reaped and
    /// reused between the read and the kill (only a task stuck in FREEZING leaves that window).
    fn signal_all(&self) -> Result<(), CgroupError> {
        let mut first_error = None;
        for pid in self.pids()? {
            if let Err(source) = control::sigkill(pid) {
                first_error.get_or_insert(CgroupError::Signal {
                    pid,
                    path: self.first_dir(),
                    source,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl LeafOps for V1Leaf {
    /// The leaf's directories.
    fn paths(&self) -> Vec<PathBuf> {
        self.dirs.clone()
    }

    /// One `cgroup.procs` fd per hierarchy.
    fn open_procs_files(&self) -> Result<Vec<OwnedFd>, CgroupError> {
        self.dirs
            .iter()
            .map(|dir| {
                let path = dir.join(CGROUP_PROCS);
                control::open_for_join(&path)
                    .map_err(|source| CgroupError::OpenProcs { path, source })
            })
            .collect()
    }

    /// The union of `cgroup.procs` over all hierarchies, sorted. A directory that does not
    /// exist (partially created or already removed) contributes nothing.
    fn pids(&self) -> Result<Vec<i32>, CgroupError> {
        let mut all = BTreeSet::new();
        for dir in &self.dirs {
            let path = dir.join(CGROUP_PROCS);
            let pids = control::read_procs(&path)
                .map_err(|source| CgroupError::ReadProcs { path, source })?;
            all.extend(pids);
        }
        Ok(all.into_iter().collect())
    }

    /// The `oom_kill` line of `memory.oom_control`.
    fn oom_kills(&self) -> Result<u64, CgroupError> {
        let dir = self
            .dir_of::<MemController>()
            .ok_or_else(|| self.no_controller("memory", "oom kill count"))?;
        let path = dir.join(MEMORY_OOM_CONTROL);
        control::read_u64(&path, |t| control::flat_keyed(t, OOM_KILL_KEY))
            .map_err(|source| CgroupError::ReadOomKills { path, source })
    }

    /// `memory.max_usage_in_bytes`, or `None` without the memory controller or the file.
    fn peak_memory(&self) -> Result<Option<u64>, CgroupError> {
        let Some(dir) = self.dir_of::<MemController>() else {
            return Ok(None);
        };
        let path = dir.join(MEMORY_MAX_USAGE);
        control::read_u64_if_present(&path, control::single_u64)
            .map_err(|source| CgroupError::ReadPeakMemory { path, source })
    }

    /// `cpuacct.usage` (nanoseconds).
    fn cpu_time(&self) -> Result<Duration, CgroupError> {
        let dir = self
            .dir_of::<CpuAcctController>()
            .ok_or_else(|| self.no_controller("cpuacct", "cpu time"))?;
        let path = dir.join(CPUACCT_USAGE);
        control::read_u64(&path, control::single_u64)
            .map(Duration::from_nanos)
            .map_err(|source| CgroupError::ReadCpuTime { path, source })
    }

    /// Kills everything in the leaf: freeze (so nothing forks between reading the list and
    /// signalling), SIGKILL every listed pid, thaw (frozen tasks only die once thawed), and
    /// repeat until every hierarchy's `cgroup.procs` is empty or `deadline` passes.
    fn kill_until(&self, deadline: Instant) -> Result<(), CgroupError> {
        kill_loop(
            &self.first_dir(),
            deadline,
            || Ok(self.pids()?.is_empty()),
            || self.pids(),
            || self.kill_round(deadline),
        )
    }

    /// Removes every directory of the leaf (retrying EBUSY until `deadline`), trying all of
    /// them and reporting the first failure.
    fn remove_dirs(&self, deadline: Instant) -> Result<(), CgroupError> {
        let mut first_error = None;
        for dir in &self.dirs {
            if let Err(source) = control::remove_dir(dir, &self.fake, deadline) {
                first_error.get_or_insert(CgroupError::RemoveLeaf {
                    path: dir.clone(),
                    source,
                });
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Writes `FROZEN` and waits (until `until`) for the state to settle; `FREEZING` means some
/// task has not reached the refrigerator yet.
fn freeze(freezer: &FreezerController, until: Instant) -> Result<(), CgroupError> {
    let freeze_err = |source| CgroupError::Freeze {
        path: freezer.path().to_path_buf(),
        source,
    };
    freezer.freeze().map_err(freeze_err)?;
    let mut backoff = Backoff::new();
    while !matches!(freezer.state().map_err(freeze_err)?, FreezerState::Frozen)
        && Instant::now() < until
    {
        backoff.sleep();
    }
    Ok(())
}
