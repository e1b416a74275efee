//! A cgroup parent named for one sandboxed worker of this test process. A
//! draining worker removes it itself; the guard removes whatever a killed
//! one left behind (leaves first, then the parent, in every hierarchy).
//! What the guard cannot remove, because the test process itself was
//! killed, the next run sweeps (see [`sweep_stale`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

#[path = "../../../../worker/tests/support/stale_cgroups.rs"]
pub mod stale_cgroups;

/// The names of this harness's cgroup parents, as
/// [`stale_cgroups::owner`] patterns: `arena-e2e-<pid>-<worker or test>`,
/// and `arena-e2e-starter-<pid>`. [`CgroupParent::new`] takes no other.
pub const PARENT_PATTERNS: &[&str] = &["arena-e2e-{pid}-*", "arena-e2e-starter-{pid}"];

/// Removes the cgroup parents that killed runs of these tests left behind
/// (named for a pid that no longer runs); once per test process, before its
/// first parent is made.
pub fn sweep_stale() {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        let swept = stale_cgroups::sweep(PARENT_PATTERNS);
        if !swept.removed.is_empty() {
            eprintln!(
                "e2e: removed cgroups of dead test runs: {:?}",
                swept.removed
            );
        }
    });
}

pub struct CgroupParent {
    name: String,
}

impl CgroupParent {
    /// `name` must be unique to this test process: it fits one of
    /// [`PARENT_PATTERNS`] with our pid. The first parent of a test process
    /// sweeps what dead ones left behind.
    pub fn new(name: String) -> CgroupParent {
        let ours = PARENT_PATTERNS
            .iter()
            .any(|p| stale_cgroups::owner(&name, p) == Some(std::process::id()));
        assert!(
            ours,
            "cgroup parent {name:?} does not fit {PARENT_PATTERNS:?} with this process's pid"
        );
        sweep_stale();
        CgroupParent { name }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parent's directory in each mounted hierarchy where it exists
    /// (see [`dirs_named`]).
    pub fn dirs(&self) -> Vec<PathBuf> {
        dirs_named(&self.name)
    }

    pub fn exists(&self) -> bool {
        !self.dirs().is_empty()
    }

    /// Every process in the parent's leaves, in any hierarchy.
    pub fn pids(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .leaves()
            .iter()
            .flat_map(|leaf| leaf_pids(leaf))
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Leaves (by name) with a running bot in some hierarchy: one per
    /// running sandbox. A leaf whose only process is a confined process
    /// started ahead (`arena-ready`, waiting for the worker's next bot) runs
    /// no bot yet.
    pub fn busy_leaves(&self) -> usize {
        let busy: BTreeSet<std::ffi::OsString> = self
            .leaves()
            .into_iter()
            .filter(|leaf| leaf_pids(leaf).into_iter().any(|pid| !waits_for_a_bot(pid)))
            .filter_map(|leaf| leaf.file_name().map(|n| n.to_owned()))
            .collect();
        busy.len()
    }

    /// The leaves (in every hierarchy) that the sandbox of the runner
    /// process `pid` made: their names start `r<pid>-` (the sandbox names
    /// a leaf `r<pid>-<start time>-<suffix>` after the process that made it).
    pub fn leaves_of(&self, pid: i32) -> Vec<PathBuf> {
        let prefix = format!("r{pid}-");
        self.leaves()
            .into_iter()
            .filter(|leaf| {
                leaf.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .collect()
    }

    /// Leaf directories under the parent, in every hierarchy.
    fn leaves(&self) -> Vec<PathBuf> {
        self.dirs()
            .iter()
            .flat_map(|parent| std::fs::read_dir(parent).into_iter().flatten().flatten())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect()
    }
}

/// Whether `pid` is a sandbox's process started ahead, still waiting (a
/// process that is gone counts as waiting: it runs nothing).
fn waits_for_a_bot(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|name| name.trim_end() == "arena-ready")
        .unwrap_or(true)
}

/// Processes listed in one leaf directory.
fn leaf_pids(leaf: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(leaf.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The directories of cgroup `name` in each mounted hierarchy where it
/// exists (v1 controllers, the unified hierarchy of a hybrid host, or the
/// root of a v2-only host): empty once it is gone everywhere.
pub fn dirs_named(name: &str) -> Vec<PathBuf> {
    stale_cgroups::hierarchies(Path::new(stale_cgroups::CGROUP_ROOT))
        .into_iter()
        .map(|h| h.join(name))
        .filter(|dir| dir.is_dir())
        .collect()
}

impl Drop for CgroupParent {
    fn drop(&mut self) {
        for parent in self.dirs() {
            let leaves: Vec<PathBuf> = std::fs::read_dir(&parent)
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok())
                        .map(|e| e.path())
                        .filter(|p| p.is_dir())
                        .collect()
                })
                .unwrap_or_default();
            for leaf in leaves {
                empty_leaf(&leaf);
                if let Err(e) = std::fs::remove_dir(&leaf) {
                    eprintln!("e2e: cannot remove cgroup {}: {e}", leaf.display());
                }
            }
            if let Err(e) = std::fs::remove_dir(&parent) {
                eprintln!("e2e: cannot remove cgroup {}: {e}", parent.display());
            }
        }
    }
}

/// Waits for a leaf's processes to die with their runner; kills what is
/// left after a grace period (bots of our own worker: the parent's name is
/// unique to this test process).
fn empty_leaf(leaf: &std::path::Path) {
    let procs = || leaf_pids(leaf);
    let mut deadline = Instant::now() + Duration::from_secs(5);
    let mut killed = false;
    loop {
        let pids = procs();
        if pids.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            if killed {
                return;
            }
            deadline = Instant::now() + Duration::from_secs(5);
            for pid in pids {
                // SAFETY: kill(2) on a process in a cgroup only our worker used.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
