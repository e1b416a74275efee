//! cgroups-rs hierarchies with an injectable root.
//!
//! cgroups-rs finds v1 mounts through `/proc/self/mountinfo` and hard-codes `/sys/fs/cgroup`
//! for v2, so neither its `V1` nor its `V2` can point at `/sys/fs/cgroup/unified` or at a
//! temporary directory. Its `Hierarchy` trait and controller constructors are public, so these
//! two types build the same controllers from a root we choose; a [`Cgroup`] loaded through them
//! then drives the limit setters, the freezer and `cgroup.kill` as usual.

use std::path::{Path, PathBuf};

use cgroups_rs::fs::cpu::CpuController;
use cgroups_rs::fs::cpuacct::CpuAcctController;
use cgroups_rs::fs::cpuset::CpuSetController;
use cgroups_rs::fs::freezer::FreezerController;
use cgroups_rs::fs::memory::MemController;
use cgroups_rs::fs::pid::PidController;
use cgroups_rs::fs::{Cgroup, Hierarchy, Subsystem};

/// A v1 controller this crate uses, by the directory it is mounted at under the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum V1Controller {
    /// Memory limit, memory+swap limit, OOM counter, peak usage.
    Memory,
    /// Task limit.
    Pids,
    /// CPU pinning (and the mems every v1 cpuset must have).
    Cpuset,
    /// CPU scheduling: a leaf of its own makes all of a bot's threads one entity with one
    /// weight (`cpu.shares`), and holds the bandwidth cap (`cpu.cfs_quota_us`).
    Cpu,
    /// CPU time consumed.
    Cpuacct,
    /// Freezing, so a kill loop can't race a fork.
    Freezer,
}

impl V1Controller {
    /// Every controller a v1 leaf joins, in the order its directories are created and
    /// joined. Memory comes before the rest so the child is charged from its first page.
    pub(crate) const ALL: [Self; 6] = [
        Self::Memory,
        Self::Pids,
        Self::Cpuset,
        Self::Cpu,
        Self::Cpuacct,
        Self::Freezer,
    ];

    /// The controller's directory name under the root (systemd's layout).
    pub(crate) fn dir_name(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Pids => "pids",
            Self::Cpuset => "cpuset",
            Self::Cpu => "cpu",
            Self::Cpuacct => "cpuacct",
            Self::Freezer => "freezer",
        }
    }
}

/// A v2 controller this crate enables for its leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum V2Controller {
    /// `memory.max`, `memory.swap.max`, `memory.events`, `memory.peak`.
    Memory,
    /// `pids.max`.
    Pids,
    /// `cpuset.cpus`.
    Cpuset,
    /// CPU weight and bandwidth (`cpu.weight`, `cpu.max`); needed only for a quota
    /// (`cpu.stat` usage is there without it).
    Cpu,
}

impl V2Controller {
    /// Every controller the manager tries to enable, in `cgroup.subtree_control` order.
    pub(crate) const ALL: [Self; 4] = [Self::Memory, Self::Pids, Self::Cpuset, Self::Cpu];

    /// The name in `cgroup.controllers` / `cgroup.subtree_control`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Pids => "pids",
            Self::Cpuset => "cpuset",
            Self::Cpu => "cpu",
        }
    }

    /// Looks a controller up by its kernel name.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// v1 hierarchies found under a chosen root, one mount directory per controller.
#[derive(Debug, Clone)]
pub(crate) struct RootedV1 {
    /// The directory holding the per-controller mounts, e.g. `/sys/fs/cgroup`.
    root: PathBuf,
    /// Each controller present, with its mount directory.
    mounts: Vec<(V1Controller, PathBuf)>,
}

impl RootedV1 {
    /// A hierarchy over the given controller mounts.
    pub(crate) fn new(root: &Path, mounts: Vec<(V1Controller, PathBuf)>) -> Self {
        Self {
            root: root.to_path_buf(),
            mounts,
        }
    }

    /// Loads a cgroups-rs handle for `relative` (e.g. `arena/r1-2-3`) in every mount.
    pub(crate) fn load(&self, relative: &Path) -> Cgroup {
        Cgroup::load(Box::new(self.clone()), relative)
    }
}

impl Hierarchy for RootedV1 {
    fn subsystems(&self) -> Vec<Subsystem> {
        self.mounts
            .iter()
            .map(|(controller, dir)| {
                // `base` is the mount root, so a handle at the mount itself is "the root".
                let (point, base) = (dir.clone(), dir.clone());
                match controller {
                    V1Controller::Memory => Subsystem::Mem(MemController::new(point, base, false)),
                    V1Controller::Pids => Subsystem::Pid(PidController::new(point, base, false)),
                    V1Controller::Cpuset => {
                        Subsystem::CpuSet(CpuSetController::new(point, base, false))
                    }
                    V1Controller::Cpu => Subsystem::Cpu(CpuController::new(point, base, false)),
                    V1Controller::Cpuacct => {
                        Subsystem::CpuAcct(CpuAcctController::new(point, base))
                    }
                    V1Controller::Freezer => {
                        Subsystem::Freezer(FreezerController::new(point, base, false))
                    }
                }
            })
            .collect()
    }

    fn root(&self) -> PathBuf {
        self.root.clone()
    }

    fn root_control_group(&self) -> Cgroup {
        self.load(Path::new(""))
    }

    fn parent_control_group(&self, path: &str) -> Cgroup {
        self.load(Path::new(path).parent().unwrap_or(Path::new("")))
    }

    fn v2(&self) -> bool {
        false
    }
}

/// A cgroup2 hierarchy at a chosen root, offering only the controllers the manager enabled.
#[derive(Debug, Clone)]
pub(crate) struct RootedV2 {
    /// The cgroup2 mount, e.g. `/sys/fs/cgroup` or `/sys/fs/cgroup/unified`.
    root: PathBuf,
    /// The controllers leaves get (enabled in the parent's `cgroup.subtree_control`).
    controllers: Vec<V2Controller>,
}

impl RootedV2 {
    /// A hierarchy at `root` with `controllers` available to leaves.
    pub(crate) fn new(root: &Path, controllers: Vec<V2Controller>) -> Self {
        Self {
            root: root.to_path_buf(),
            controllers,
        }
    }

    /// Loads a cgroups-rs handle for `relative` under the root.
    pub(crate) fn load(&self, relative: &Path) -> Cgroup {
        Cgroup::load(Box::new(self.clone()), relative)
    }
}

impl Hierarchy for RootedV2 {
    fn subsystems(&self) -> Vec<Subsystem> {
        let root = self.root.clone();
        self.controllers
            .iter()
            .map(|controller| {
                let (point, base) = (root.clone(), PathBuf::new());
                match controller {
                    V2Controller::Memory => Subsystem::Mem(MemController::new(point, base, true)),
                    V2Controller::Pids => Subsystem::Pid(PidController::new(point, base, true)),
                    V2Controller::Cpuset => {
                        Subsystem::CpuSet(CpuSetController::new(point, base, true))
                    }
                    V2Controller::Cpu => Subsystem::Cpu(CpuController::new(point, base, true)),
                }
            })
            .collect()
    }

    fn root(&self) -> PathBuf {
        self.root.clone()
    }

    fn root_control_group(&self) -> Cgroup {
        self.load(Path::new(""))
    }

    fn parent_control_group(&self, path: &str) -> Cgroup {
        self.load(Path::new(path).parent().unwrap_or(Path::new("")))
    }

    fn v2(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cgroups_rs::fs::Controller;

    #[test]
    fn v1_controllers_enter_their_own_mounts() {
        let hier = RootedV1::new(
            Path::new("/r"),
            vec![
                (V1Controller::Memory, PathBuf::from("/r/memory")),
                (V1Controller::Freezer, PathBuf::from("/r/freezer")),
            ],
        );
        let cg = hier.load(Path::new("arena/leaf"));
        let mem: &MemController = cg.controller_of().unwrap();
        assert_eq!(mem.path(), Path::new("/r/memory/arena/leaf"));
        let fz: &FreezerController = cg.controller_of().unwrap();
        assert_eq!(fz.path(), Path::new("/r/freezer/arena/leaf"));
        assert!(cg.controller_of::<PidController>().is_none());
        assert!(!cg.v2());
    }

    #[test]
    fn v2_controllers_share_the_leaf() {
        let hier = RootedV2::new(
            Path::new("/r/unified"),
            vec![V2Controller::Memory, V2Controller::Pids],
        );
        let cg = hier.load(Path::new("arena/leaf"));
        let pid: &PidController = cg.controller_of().unwrap();
        assert_eq!(pid.path(), Path::new("/r/unified/arena/leaf"));
        assert!(pid.v2());
        assert!(cg.controller_of::<CpuSetController>().is_none());
        assert!(cg.v2());
    }

    #[test]
    fn v2_names_round_trip() {
        for c in V2Controller::ALL {
            assert_eq!(V2Controller::from_name(c.name()), Some(c));
        }
        assert_eq!(V2Controller::from_name("hugetlb"), None);
    }
}
