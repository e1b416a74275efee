//! A cgroup parent named for one sandboxed worker of this test process. A
//! draining worker removes it itself; the guard removes whatever a killed
//! one left behind (leaves first, then the parent, in every hierarchy).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

pub struct CgroupParent {
    name: String,
}

impl CgroupParent {
    /// `name` must be unique to this test process (it embeds our pid).
    pub fn new(name: String) -> CgroupParent {
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
    let mut hierarchies = BTreeSet::new();
    hierarchies.insert(PathBuf::from(CGROUP_ROOT));
    if let Ok(entries) = std::fs::read_dir(CGROUP_ROOT) {
        for entry in entries.filter_map(|e| e.ok()) {
            // Co-mounted controllers show up as symlinks to one directory.
            if let Ok(dir) = entry.path().canonicalize()
                && dir.is_dir()
            {
                hierarchies.insert(dir);
            }
        }
    }
    hierarchies
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
