//! A fake cgroupfs in a temporary directory (tests only), after youki's `set_fixture` and
//! firecracker's `MockCgroupFs`.
//!
//! Each hierarchy root carries a marker file naming its kind (`memory`, `pids`, ...,
//! `cgroup2`). [`populate`] plays the kernel's part of `mkdir`: it finds the marker above the
//! new directory and creates the control files that kind of group has, with the kernel's
//! initial values; for cgroup2 it offers the controllers the parent enabled. [`depopulate`]
//! plays the kernel's part of `rmdir` by deleting those files. Writes are not interpreted:
//! a test reads back what the code wrote.

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::control::FakeKernel;

/// Names the kind of hierarchy rooted at the directory holding it.
const MARKER: &str = ".fake-hierarchy";
/// The marker's content for a cgroup2 mount.
const CGROUP2: &str = "cgroup2";
/// What a new v1 memory group reports as "no limit" (i64::MAX rounded down to a page).
pub(crate) const V1_UNLIMITED: &str = "9223372036854771712";
/// The v1 controllers a full legacy fixture mounts.
pub(crate) const V1_CONTROLLERS: [&str; 6] =
    ["memory", "pids", "cpuset", "cpu", "cpuacct", "freezer"];

/// The kernel stand-in for a healthy host.
pub(crate) const KERNEL: FakeKernel = FakeKernel {
    populate: Some(populate),
    depopulate: Some(depopulate),
};

/// A kernel booted with `swapaccount=0`: v1 memory groups lack the `memory.memsw.*` files
/// and v2 ones lack `memory.swap.*`.
pub(crate) const KERNEL_NO_SWAP_ACCOUNTING: FakeKernel = FakeKernel {
    populate: Some(populate_no_swap_accounting),
    depopulate: Some(depopulate),
};

/// A temporary cgroup tree; removed on drop.
pub(crate) struct FakeTree {
    /// The temporary directory standing in for `/sys/fs/cgroup`.
    dir: TempDir,
}

impl FakeTree {
    /// v1 mounts for [`V1_CONTROLLERS`] under a tmpfs-like root; the root cpuset has CPUs
    /// `0-1` and memory node `0`.
    pub(crate) fn legacy() -> Self {
        let tree = Self::empty();
        for controller in V1_CONTROLLERS {
            tree.add_v1(controller);
        }
        tree
    }

    /// [`FakeTree::legacy`] plus a cgroup2 mount at `unified` offering `controllers`.
    pub(crate) fn hybrid(controllers: &str) -> Self {
        let tree = Self::legacy();
        let unified = tree.root().join("unified");
        fs::create_dir(&unified).unwrap();
        tree.mount_v2(&unified, controllers);
        tree
    }

    /// A cgroup2 mount at the root offering `controllers` (e.g. `"cpuset cpu memory pids"`).
    pub(crate) fn unified(controllers: &str) -> Self {
        let tree = Self::empty();
        tree.mount_v2(tree.root(), controllers);
        tree
    }

    /// An empty root.
    fn empty() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Adds a v1 mount for `controller` with its root group's files.
    pub(crate) fn add_v1(&self, controller: &str) {
        let dir = self.root().join(controller);
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(MARKER), controller).unwrap();
        populate(&dir);
        if controller == "cpuset" {
            fs::write(dir.join("cpuset.cpus"), "0-1\n").unwrap();
            fs::write(dir.join("cpuset.mems"), "0\n").unwrap();
        }
    }

    /// Marks `dir` as a cgroup2 root offering `controllers`.
    fn mount_v2(&self, dir: &Path, controllers: &str) {
        fs::write(dir.join(MARKER), CGROUP2).unwrap();
        fs::write(dir.join("cgroup.controllers"), format!("{controllers}\n")).unwrap();
        fs::write(dir.join("cgroup.subtree_control"), "\n").unwrap();
        fs::write(dir.join("cgroup.procs"), "").unwrap();
        fs::write(dir.join("cpu.stat"), "usage_usec 0\n").unwrap();
    }

    /// The stand-in for `/sys/fs/cgroup`.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `root/<parts...>`.
    pub(crate) fn path(&self, parts: &[&str]) -> PathBuf {
        parts
            .iter()
            .fold(self.root().to_path_buf(), |p, part| p.join(part))
    }

    /// Reads a file below the root, trimmed.
    pub(crate) fn read(&self, parts: &[&str]) -> String {
        fs::read_to_string(self.path(parts))
            .unwrap()
            .trim()
            .to_owned()
    }

    /// Overwrites a file below the root (simulating the kernel updating a counter).
    pub(crate) fn write(&self, parts: &[&str], content: &str) {
        fs::write(self.path(parts), content).unwrap();
    }
}

/// The hierarchy kind of the nearest marked ancestor of `dir` (inclusive).
fn kind_of(dir: &Path) -> String {
    dir.ancestors()
        .find_map(|d| fs::read_to_string(d.join(MARKER)).ok())
        .expect("directory outside a fake hierarchy")
}

/// Creates `name` with `content` in `dir`.
fn file(dir: &Path, name: &str, content: &str) {
    fs::write(dir.join(name), content).unwrap();
}

/// The kernel's part of `mkdir` on a healthy host.
pub(crate) fn populate(dir: &Path) {
    populate_inner(dir, true);
}

/// The kernel's part of `mkdir` with swap accounting off.
fn populate_no_swap_accounting(dir: &Path) {
    populate_inner(dir, false);
}

/// Creates the control files of a new group of `dir`'s kind.
fn populate_inner(dir: &Path, swap_accounting: bool) {
    let kind = kind_of(dir);
    if kind == CGROUP2 {
        populate_v2(dir, swap_accounting);
        return;
    }
    file(dir, "cgroup.procs", "");
    file(dir, "tasks", "");
    file(dir, "notify_on_release", "0\n");
    // A co-mounted hierarchy (`cpu,cpuacct`) has the files of each of its controllers.
    for controller in kind.split(',') {
        populate_v1_controller(dir, controller, swap_accounting);
    }
}

/// The control files one v1 controller adds to a new group.
fn populate_v1_controller(dir: &Path, controller: &str, swap_accounting: bool) {
    match controller {
        "memory" => {
            file(dir, "memory.limit_in_bytes", &format!("{V1_UNLIMITED}\n"));
            if swap_accounting {
                file(
                    dir,
                    "memory.memsw.limit_in_bytes",
                    &format!("{V1_UNLIMITED}\n"),
                );
            }
            file(dir, "memory.max_usage_in_bytes", "0\n");
            file(
                dir,
                "memory.oom_control",
                "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
            );
        }
        "pids" => file(dir, "pids.max", "max\n"),
        "cpuset" => {
            file(dir, "cpuset.cpus", "\n");
            file(dir, "cpuset.mems", "\n");
        }
        "cpu" => {
            file(dir, "cpu.shares", "1024\n");
            file(dir, "cpu.cfs_period_us", "100000\n");
            file(dir, "cpu.cfs_quota_us", "-1\n");
        }
        "cpuacct" => file(dir, "cpuacct.usage", "0\n"),
        "freezer" => file(dir, "freezer.state", "THAWED\n"),
        other => panic!("unknown fake v1 controller {other}"),
    }
}

/// A new cgroup2 group: core files plus those of the controllers its parent enabled.
fn populate_v2(dir: &Path, swap_accounting: bool) {
    let parent_enabled = dir
        .parent()
        .and_then(|p| fs::read_to_string(p.join("cgroup.subtree_control")).ok())
        .unwrap_or_default();
    // The code writes "+memory +pids"; the kernel would show "memory pids".
    let offered: Vec<String> = parent_enabled
        .split_whitespace()
        .map(|c| c.trim_start_matches('+').to_owned())
        .collect();
    file(
        dir,
        "cgroup.controllers",
        &format!("{}\n", offered.join(" ")),
    );
    file(dir, "cgroup.subtree_control", "\n");
    file(dir, "cgroup.procs", "");
    file(dir, "cgroup.events", "populated 0\nfrozen 0\n");
    file(dir, "cgroup.kill", "");
    file(dir, "cgroup.freeze", "0\n");
    file(dir, "cgroup.type", "domain\n");
    file(
        dir,
        "cpu.stat",
        "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
    );
    for controller in &offered {
        match controller.as_str() {
            "memory" => {
                file(dir, "memory.max", "max\n");
                if swap_accounting {
                    file(dir, "memory.swap.max", "max\n");
                }
                file(
                    dir,
                    "memory.events",
                    "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
                );
                file(dir, "memory.peak", "0\n");
            }
            "pids" => file(dir, "pids.max", "max\n"),
            "cpuset" => {
                file(dir, "cpuset.cpus", "\n");
                file(dir, "cpuset.mems", "\n");
            }
            "cpu" => {
                file(dir, "cpu.weight", "100\n");
                file(dir, "cpu.max", "max 100000\n");
            }
            _ => {}
        }
    }
}

/// The kernel's part of `rmdir`: the control files go with the directory.
pub(crate) fn depopulate(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}
