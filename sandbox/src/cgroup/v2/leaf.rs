//! One v2 leaf: its directory, readings, and `cgroup.kill` with the wait for `populated 0`.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cgroups_rs::fs::Cgroup;
use cgroups_rs::fs::error::ErrorKind;

use crate::cgroup::backend::{LeafOps, kill_loop};
use crate::cgroup::control::{self, CGROUP_PROCS, FakeKernel};
use crate::cgroup::error::CgroupError;

/// `populated 0|1`: whether the group or a descendant holds a live task.
const CGROUP_EVENTS: &str = "cgroup.events";
/// The `cgroup.events` key that turns 0 once the last task has exited.
const POPULATED_KEY: &str = "populated";
/// Memory event counters, among them `oom_kill`.
const MEMORY_EVENTS: &str = "memory.events";
/// The `memory.events` key counting processes killed by any OOM killer.
const OOM_KILL_KEY: &str = "oom_kill";
/// Peak memory usage in bytes (kernel ≥ 5.19).
const MEMORY_PEAK: &str = "memory.peak";
/// CPU statistics; `usage_usec` is there in every group, with or without the cpu controller.
const CPU_STAT: &str = "cpu.stat";
/// The `cpu.stat` key with the consumed CPU time in microseconds.
const USAGE_USEC_KEY: &str = "usage_usec";

/// One v2 leaf directory.
#[derive(Debug)]
pub(crate) struct V2Leaf {
    /// cgroups-rs handle entered into the leaf.
    pub(super) cgroup: Cgroup,
    /// The leaf directory.
    pub(super) dir: PathBuf,
    /// Whether the memory controller is enabled here (`memory.events`, `memory.peak`).
    pub(super) has_memory: bool,
    /// Test stand-in for the kernel's rmdir behaviour.
    pub(super) fake: FakeKernel,
}

impl V2Leaf {
    /// Whether `cgroup.events` says a live task remains; a removed leaf is not populated.
    fn populated(&self) -> Result<bool, CgroupError> {
        let path = self.dir.join(CGROUP_EVENTS);
        control::read_u64_if_present(&path, |t| control::flat_keyed(t, POPULATED_KEY))
            .map(|flag| flag.is_some_and(|flag| flag != 0))
            .map_err(|source| CgroupError::ReadEvents { path, source })
    }

    /// One `cgroup.kill` write, or one SIGKILL per listed pid where the kernel lacks it.
    fn kill_once(&self) -> Result<(), CgroupError> {
        match self.cgroup.kill() {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.kind(), ErrorKind::InvalidOperation) => {
                let path = self.dir.join(CGROUP_PROCS);
                for pid in self.pids()? {
                    control::sigkill(pid).map_err(|source| CgroupError::Signal {
                        pid,
                        path: path.clone(),
                        source,
                    })?;
                }
                Ok(())
            }
            Err(source) => Err(CgroupError::WriteCgroupKill {
                path: self.dir.clone(),
                source,
            }),
        }
    }
}

impl LeafOps for V2Leaf {
    /// The leaf directory.
    fn paths(&self) -> Vec<PathBuf> {
        vec![self.dir.clone()]
    }

    /// The leaf's one `cgroup.procs`, opened for joining.
    fn open_procs_files(&self) -> Result<Vec<OwnedFd>, CgroupError> {
        let path = self.dir.join(CGROUP_PROCS);
        control::open_for_join(&path)
            .map(|fd| vec![fd])
            .map_err(|source| CgroupError::OpenProcs { path, source })
    }

    /// Pids in the leaf; none if the directory is gone.
    fn pids(&self) -> Result<Vec<i32>, CgroupError> {
        let path = self.dir.join(CGROUP_PROCS);
        control::read_procs(&path).map_err(|source| CgroupError::ReadProcs { path, source })
    }

    /// `oom_kill` from `memory.events`.
    fn oom_kills(&self) -> Result<u64, CgroupError> {
        let path = self.dir.join(MEMORY_EVENTS);
        if !self.has_memory {
            return Err(CgroupError::ControllerMissing {
                controller: "memory",
                limit: "oom kill count",
                path,
            });
        }
        control::read_u64(&path, |t| control::flat_keyed(t, OOM_KILL_KEY))
            .map_err(|source| CgroupError::ReadOomKills { path, source })
    }

    /// `memory.peak`, or `None` without the memory controller or on kernels before 5.19.
    fn peak_memory(&self) -> Result<Option<u64>, CgroupError> {
        if !self.has_memory {
            return Ok(None);
        }
        let path = self.dir.join(MEMORY_PEAK);
        control::read_u64_if_present(&path, control::single_u64)
            .map_err(|source| CgroupError::ReadPeakMemory { path, source })
    }

    /// `usage_usec` from `cpu.stat`.
    fn cpu_time(&self) -> Result<Duration, CgroupError> {
        let path = self.dir.join(CPU_STAT);
        control::read_u64(&path, |t| control::flat_keyed(t, USAGE_USEC_KEY))
            .map(Duration::from_micros)
            .map_err(|source| CgroupError::ReadCpuTime { path, source })
    }

    /// Writes `cgroup.kill` (the kernel kills every task and refuses forks into the group
    /// while doing it) and waits for `populated 0`, repeating the write until `deadline`.
    /// Kernels before 5.14 lack `cgroup.kill`; then every listed pid gets SIGKILL instead.
    fn kill_until(&self, deadline: Instant) -> Result<(), CgroupError> {
        kill_loop(
            &self.dir,
            deadline,
            || Ok(!self.populated()?),
            || self.pids(),
            || self.kill_once(),
        )
    }

    /// Removes the leaf directory with bounded EBUSY retries.
    fn remove_dirs(&self, deadline: Instant) -> Result<(), CgroupError> {
        control::remove_dir(&self.dir, &self.fake, deadline).map_err(|source| {
            CgroupError::RemoveLeaf {
                path: self.dir.clone(),
                source,
            }
        })
    }
}
