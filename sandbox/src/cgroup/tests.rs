//! Manager and leaf behaviour against the fake tree in [`super::fake`].

use std::path::Path;
use std::time::{Duration, Instant};

use super::control::FakeKernel;
use super::fake::{self, FakeTree, V1_CONTROLLERS, V1_UNLIMITED};
use super::*;

/// A pid above any possible `pid_max` (2^22): listing it in a fake `cgroup.procs` can never
/// make the kill loop signal a real process.
const NO_SUCH_PID: &str = "2000000000";

fn limits() -> CgroupLimits {
    CgroupLimits {
        memory_bytes: 64 << 20,
        pids: 16,
        cpus: vec![0],
        cpu_quota: None,
    }
}

/// [`limits`] capped at half a core, as for one of two bots sharing a CPU.
fn half_a_core() -> CgroupLimits {
    CgroupLimits {
        cpu_quota: Some(CpuQuota::share_of_one_core(2)),
        ..limits()
    }
}

fn manager(
    setup: CgroupSetup,
    tree: &FakeTree,
    options: CgroupOptions,
    fake: FakeKernel,
) -> CgroupManager {
    CgroupManager::build(setup, tree.root(), "arena", options, fake).unwrap()
}

fn strict(setup: CgroupSetup, tree: &FakeTree) -> CgroupManager {
    manager(setup, tree, CgroupOptions::default(), fake::KERNEL)
}

fn lenient() -> CgroupOptions {
    CgroupOptions {
        allow_missing_controllers: true,
    }
}

/// Asserts that `err` reports `controller` as missing.
#[track_caller]
fn assert_missing(err: &CgroupError, controller: &str) {
    assert!(
        matches!(err, CgroupError::ControllerMissing { controller: c, .. } if *c == controller),
        "{err}"
    );
}

// ---- v1 ----

#[test]
fn v1_parent_gets_cpuset_from_root() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    assert_eq!(tree.read(&["cpuset", "arena", "cpuset.cpus"]), "0-1");
    assert_eq!(tree.read(&["cpuset", "arena", "cpuset.mems"]), "0");
    for c in V1_CONTROLLERS {
        assert!(tree.path(&[c, "arena"]).is_dir(), "{c}");
    }
    assert_eq!(m.parent_paths().len(), V1_CONTROLLERS.len());
}

#[test]
fn v1_nested_parent_is_filled_top_down() {
    let tree = FakeTree::legacy();
    CgroupManager::build(
        CgroupSetup::Legacy,
        tree.root(),
        "arena/bots",
        CgroupOptions::default(),
        fake::KERNEL,
    )
    .unwrap();
    assert_eq!(
        tree.read(&["cpuset", "arena", "bots", "cpuset.cpus"]),
        "0-1"
    );
    assert_eq!(tree.read(&["cpuset", "arena", "bots", "cpuset.mems"]), "0");
}

#[test]
fn v1_leaf_gets_limits_in_every_controller() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("r1-2-a", &limits()).unwrap();
    assert_eq!(
        tree.read(&["memory", "arena", "r1-2-a", "memory.limit_in_bytes"]),
        "67108864"
    );
    assert_eq!(
        tree.read(&["memory", "arena", "r1-2-a", "memory.memsw.limit_in_bytes"]),
        "67108864"
    );
    assert_eq!(tree.read(&["pids", "arena", "r1-2-a", "pids.max"]), "16");
    assert_eq!(
        tree.read(&["cpuset", "arena", "r1-2-a", "cpuset.cpus"]),
        "0"
    );
    assert_eq!(
        tree.read(&["cpuset", "arena", "r1-2-a", "cpuset.mems"]),
        "0"
    );
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len());
    assert_eq!(leaf.open_procs_files().unwrap().len(), V1_CONTROLLERS.len());
    assert_eq!(leaf.name(), "r1-2-a");
}

#[test]
fn v1_empty_cpu_list_inherits_parent_cpus() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let l = CgroupLimits {
        cpus: vec![],
        ..limits()
    };
    let _leaf = m.create("x", &l).unwrap();
    assert_eq!(tree.read(&["cpuset", "arena", "x", "cpuset.cpus"]), "0-1");
}

#[test]
fn v1_without_swap_accounting_refuses_then_allows() {
    let tree = FakeTree::legacy();
    let m = manager(
        CgroupSetup::Legacy,
        &tree,
        CgroupOptions::default(),
        fake::KERNEL_NO_SWAP_ACCOUNTING,
    );
    let err = m.create("x", &limits()).unwrap_err();
    assert_missing(&err, "memory");
    // The half-created leaf is gone from every hierarchy.
    for c in V1_CONTROLLERS {
        assert!(!tree.path(&[c, "arena", "x"]).exists(), "{c}");
    }

    let m = manager(
        CgroupSetup::Legacy,
        &tree,
        lenient(),
        fake::KERNEL_NO_SWAP_ACCOUNTING,
    );
    let _leaf = m.create("x", &limits()).unwrap();
    assert_eq!(
        tree.read(&["memory", "arena", "x", "memory.limit_in_bytes"]),
        "67108864"
    );
    // Not created by a write through O_CREAT either.
    assert!(
        !tree
            .path(&["memory", "arena", "x", "memory.memsw.limit_in_bytes"])
            .exists()
    );
}

#[test]
fn v1_missing_controller_is_reported_unless_allowed() {
    let tree = FakeTree::legacy();
    std::fs::remove_dir_all(tree.path(&["pids"])).unwrap();
    let m = strict(CgroupSetup::Legacy, &tree);
    let err = m.create("x", &limits()).unwrap_err();
    assert_missing(&err, "pids");
    let m = manager(CgroupSetup::Legacy, &tree, lenient(), fake::KERNEL);
    let leaf = m.create("x", &limits()).unwrap();
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len() - 1);
}

#[test]
fn v1_co_mounted_controllers_share_one_leaf_dir() {
    let tree = FakeTree::legacy();
    // Like systemd's cpu,cpuacct: both names are symlinks to one shared mount.
    for c in ["cpu", "cpuacct"] {
        std::fs::remove_dir_all(tree.path(&[c])).unwrap();
    }
    tree.add_v1("cpu,cpuacct");
    for c in ["cpu", "cpuacct"] {
        std::os::unix::fs::symlink("cpu,cpuacct", tree.path(&[c])).unwrap();
    }
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("x", &half_a_core()).unwrap();
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len() - 1);
    assert_eq!(
        leaf.open_procs_files().unwrap().len(),
        V1_CONTROLLERS.len() - 1
    );
    assert_eq!(
        tree.read(&["cpu,cpuacct", "arena", "x", "cpu.cfs_quota_us"]),
        "50000"
    );
    tree.write(
        &["cpu,cpuacct", "arena", "x", "cpuacct.usage"],
        "1500000000\n",
    );
    assert_eq!(leaf.cpu_time().unwrap(), Duration::from_millis(1500));
}

#[test]
fn v1_quota_sets_period_and_quota_in_the_cpu_leaf() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let capped = m.create("capped", &half_a_core()).unwrap();
    assert_eq!(
        tree.read(&["cpu", "arena", "capped", "cpu.cfs_period_us"]),
        "100000"
    );
    assert_eq!(
        tree.read(&["cpu", "arena", "capped", "cpu.cfs_quota_us"]),
        "50000"
    );
    assert!(
        capped
            .paths()
            .contains(&tree.path(&["cpu", "arena", "capped"]))
    );
    // Without a quota the leaf still has a cpu group of its own (one weight for all its
    // threads), uncapped.
    let _free = m.create("free", &limits()).unwrap();
    assert_eq!(
        tree.read(&["cpu", "arena", "free", "cpu.cfs_quota_us"]),
        "-1"
    );
    assert_eq!(tree.read(&["cpu", "arena", "free", "cpu.shares"]), "1024");
}

#[test]
fn v1_quota_without_the_cpu_controller_is_refused() {
    let tree = FakeTree::legacy();
    std::fs::remove_dir_all(tree.path(&["cpu"])).unwrap();
    let m = strict(CgroupSetup::Legacy, &tree);
    let err = m.create("x", &half_a_core()).unwrap_err();
    assert_missing(&err, "cpu");
    assert!(!tree.path(&["cpuset", "arena", "x"]).exists(), "cleaned up");
    // A leaf that needs no quota loses nothing without the controller.
    let leaf = m.create("y", &limits()).unwrap();
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len() - 1);
}

#[test]
fn v1_readings_parse_the_kernel_files() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    assert_eq!(leaf.oom_kills().unwrap(), 0);
    tree.write(
        &["memory", "arena", "x", "memory.oom_control"],
        "oom_kill_disable 0\nunder_oom 1\noom_kill 3\n",
    );
    assert_eq!(leaf.oom_kills().unwrap(), 3);
    tree.write(
        &["memory", "arena", "x", "memory.max_usage_in_bytes"],
        "12345\n",
    );
    assert_eq!(leaf.peak_memory().unwrap(), Some(12345));
    tree.write(&["cpuacct", "arena", "x", "cpuacct.usage"], "2500000001\n");
    assert_eq!(leaf.cpu_time().unwrap(), Duration::new(2, 500_000_001));
    tree.write(&["memory", "arena", "x", "cgroup.procs"], "");
    assert_eq!(leaf.pids().unwrap(), Vec::<i32>::new());

    tree.write(
        &["memory", "arena", "x", "memory.oom_control"],
        "oom_kill_disable 0\n",
    );
    assert!(matches!(
        leaf.oom_kills(),
        Err(CgroupError::ReadOomKills { .. })
    ));
    tree.write(&["cpuacct", "arena", "x", "cpuacct.usage"], "lots\n");
    assert!(matches!(
        leaf.cpu_time(),
        Err(CgroupError::ReadCpuTime { .. })
    ));
    std::fs::remove_file(tree.path(&["memory", "arena", "x", "memory.max_usage_in_bytes"]))
        .unwrap();
    assert_eq!(leaf.peak_memory().unwrap(), None);
}

#[test]
fn v1_pids_are_the_union_over_hierarchies() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    tree.write(&["memory", "arena", "x", "cgroup.procs"], "7\n3\n");
    tree.write(&["freezer", "arena", "x", "cgroup.procs"], "3\n9\n");
    assert_eq!(leaf.pids().unwrap(), vec![3, 7, 9]);
    // Empty them again so drop's kill loop has nothing to signal.
    tree.write(&["memory", "arena", "x", "cgroup.procs"], "");
    tree.write(&["freezer", "arena", "x", "cgroup.procs"], "");
}

#[test]
fn v1_kill_times_out_on_a_leaf_that_never_empties_and_thaws() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    tree.write(&["pids", "arena", "x", "cgroup.procs"], NO_SUCH_PID);
    let err = leaf
        .leaf
        .ops()
        .kill_until(Instant::now() + Duration::from_millis(50))
        .unwrap_err();
    assert!(
        matches!(&err, CgroupError::KillTimeout { remaining, .. } if remaining == &[2_000_000_000]),
        "{err}"
    );
    // The loop froze and always thawed again.
    assert_eq!(
        tree.read(&["freezer", "arena", "x", "freezer.state"]),
        "THAWED"
    );
    tree.write(&["pids", "arena", "x", "cgroup.procs"], "");
}

#[test]
fn v1_remove_deletes_every_leaf_dir_and_keeps_the_parent() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    let paths = leaf.paths();
    leaf.remove().unwrap();
    for p in paths {
        assert!(!p.exists(), "{}", p.display());
    }
    for p in m.parent_paths() {
        assert!(p.is_dir(), "{}", p.display());
    }
}

#[test]
fn drop_removes_the_leaf() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let paths = m.create("x", &limits()).unwrap().paths();
    for p in paths {
        assert!(!p.exists(), "{}", p.display());
    }
}

#[test]
fn existing_leaf_is_an_error_and_left_alone() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let first = m.create("x", &limits()).unwrap();
    let err = m.create("x", &limits()).unwrap_err();
    assert!(matches!(err, CgroupError::LeafExists { .. }), "{err}");
    for p in first.paths() {
        assert!(p.is_dir(), "{}", p.display());
    }
}

#[test]
fn a_parent_removed_from_one_hierarchy_only_is_made_again_for_the_next_leaf() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    // The last hierarchy's parent is gone: the leaf is already made in
    // the others when its mkdir fails there.
    let last = m.parent_paths().pop().unwrap();
    super::control::remove_dir(&last, &fake::KERNEL, Instant::now()).unwrap();
    let leaf = m.create("after", &limits()).unwrap();
    for p in leaf.paths() {
        assert!(p.is_dir(), "{}", p.display());
    }
}

#[test]
fn a_parent_another_runner_removed_is_made_again_for_the_next_leaf() {
    for (setup, tree) in [
        (CgroupSetup::Legacy, FakeTree::legacy()),
        (CgroupSetup::Unified, FakeTree::unified(ALL_V2)),
    ] {
        let m = strict(setup, &tree);
        // What a one-shot runner sharing the parent's name does as it ends
        // (the fake kernel's rmdir, which also takes the control files).
        for p in m.parent_paths() {
            super::control::remove_dir(&p, &fake::KERNEL, Instant::now()).unwrap();
            assert!(!p.exists(), "{setup:?}: {}", p.display());
        }
        let leaf = m.create("after", &limits()).unwrap();
        for p in leaf.paths() {
            assert!(p.is_dir(), "{setup:?}: {}", p.display());
        }
    }
}

// ---- v2 ----

const ALL_V2: &str = "cpuset cpu io memory hugetlb pids rdma misc";

#[test]
fn v2_enables_controllers_from_root_down_and_limits_the_leaf() {
    let tree = FakeTree::unified(ALL_V2);
    let m = strict(CgroupSetup::Unified, &tree);
    assert_eq!(
        tree.read(&["cgroup.subtree_control"]),
        "+memory +pids +cpuset +cpu"
    );
    assert_eq!(
        tree.read(&["arena", "cgroup.subtree_control"]),
        "+memory +pids +cpuset +cpu"
    );
    let leaf = m.create("r1-2-a", &limits()).unwrap();
    assert_eq!(tree.read(&["arena", "r1-2-a", "memory.max"]), "67108864");
    assert_eq!(tree.read(&["arena", "r1-2-a", "memory.swap.max"]), "0");
    assert_eq!(tree.read(&["arena", "r1-2-a", "pids.max"]), "16");
    assert_eq!(tree.read(&["arena", "r1-2-a", "cpuset.cpus"]), "0");
    assert_eq!(leaf.paths(), vec![tree.path(&["arena", "r1-2-a"])]);
    assert_eq!(leaf.open_procs_files().unwrap().len(), 1);
}

#[test]
fn v2_quota_is_one_cpu_max_write() {
    let tree = FakeTree::unified(ALL_V2);
    let m = strict(CgroupSetup::Unified, &tree);
    let _capped = m.create("capped", &half_a_core()).unwrap();
    assert_eq!(tree.read(&["arena", "capped", "cpu.max"]), "50000 100000");
    let whole = CgroupLimits {
        cpu_quota: Some(CpuQuota::share_of_one_core(1)),
        ..limits()
    };
    let _whole = m.create("whole", &whole).unwrap();
    assert_eq!(tree.read(&["arena", "whole", "cpu.max"]), "100000 100000");
    let _free = m.create("free", &limits()).unwrap();
    assert_eq!(tree.read(&["arena", "free", "cpu.max"]), "max 100000");
}

#[test]
fn v2_quota_without_the_cpu_controller_is_refused() {
    let tree = FakeTree::unified("cpuset memory pids");
    let m = strict(CgroupSetup::Unified, &tree);
    let err = m.create("x", &half_a_core()).unwrap_err();
    assert_missing(&err, "cpu");
    assert!(!tree.path(&["arena", "x"]).exists(), "cleaned up");
    let _leaf = m.create("y", &limits()).unwrap();
    assert_eq!(tree.read(&["arena", "y", "cpuset.cpus"]), "0");
}

#[test]
fn v2_delegated_subtree_is_not_rewritten() {
    let tree = FakeTree::unified("cpuset cpu memory pids");
    // Already enabled, the way a delegating service manager leaves it.
    tree.write(&["cgroup.subtree_control"], "cpuset cpu memory pids\n");
    let m = strict(CgroupSetup::Unified, &tree);
    assert_eq!(
        tree.read(&["cgroup.subtree_control"]),
        "cpuset cpu memory pids"
    );
    let _leaf = m.create("x", &limits()).unwrap();
    assert_eq!(tree.read(&["arena", "x", "memory.max"]), "67108864");
}

#[test]
fn v2_without_cpus_needs_no_cpuset() {
    let tree = FakeTree::unified("memory pids");
    let m = strict(CgroupSetup::Unified, &tree);
    let l = CgroupLimits {
        cpus: vec![],
        ..limits()
    };
    let _leaf = m.create("x", &l).unwrap();
    assert!(!tree.path(&["arena", "x", "cpuset.cpus"]).exists());
    let err = m.create("y", &limits()).unwrap_err();
    assert_missing(&err, "cpuset");
    assert!(!tree.path(&["arena", "y"]).exists());
}

#[test]
fn v2_without_controllers_refuses_unless_allowed() {
    let tree = FakeTree::unified("io hugetlb");
    let m = strict(CgroupSetup::Unified, &tree);
    assert_eq!(tree.read(&["cgroup.subtree_control"]), "");
    let err = m.create("x", &limits()).unwrap_err();
    assert_missing(&err, "memory");
    assert!(!tree.path(&["arena", "x"]).exists());

    let m = manager(CgroupSetup::Unified, &tree, lenient(), fake::KERNEL);
    let leaf = m.create("x", &limits()).unwrap();
    assert!(!tree.path(&["arena", "x", "memory.max"]).exists());
    assert_missing(&leaf.oom_kills().unwrap_err(), "memory");
    assert_eq!(leaf.peak_memory().unwrap(), None);
    assert_eq!(leaf.cpu_time().unwrap(), Duration::ZERO);
}

#[test]
fn v2_without_swap_accounting_refuses() {
    let tree = FakeTree::unified(ALL_V2);
    let m = manager(
        CgroupSetup::Unified,
        &tree,
        CgroupOptions::default(),
        fake::KERNEL_NO_SWAP_ACCOUNTING,
    );
    let err = m.create("x", &limits()).unwrap_err();
    assert_missing(&err, "memory");
}

#[test]
fn v2_enable_refusal_is_reported_when_a_limit_needs_it() {
    let tree = FakeTree::unified(ALL_V2);
    // A subtree_control that refuses every write (EIO) and lists nothing known.
    std::fs::remove_file(tree.path(&["cgroup.subtree_control"])).unwrap();
    std::os::unix::fs::symlink("/proc/version", tree.path(&["cgroup.subtree_control"])).unwrap();
    // The manager still comes up: a refusal only matters once a limit needs the controller.
    let m = strict(CgroupSetup::Unified, &tree);
    let err = m.create("x", &limits()).unwrap_err();
    assert!(
        matches!(&err, CgroupError::EnableControllers { request, .. } if request == "+memory"),
        "{err}"
    );
    assert!(!tree.path(&["arena", "x"]).exists());
    let m = manager(CgroupSetup::Unified, &tree, lenient(), fake::KERNEL);
    let _leaf = m.create("x", &limits()).unwrap();
}

#[test]
fn v2_readings_parse_the_kernel_files() {
    let tree = FakeTree::unified(ALL_V2);
    let m = strict(CgroupSetup::Unified, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    tree.write(
        &["arena", "x", "memory.events"],
        "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n",
    );
    assert_eq!(leaf.oom_kills().unwrap(), 2);
    tree.write(&["arena", "x", "memory.peak"], "4096\n");
    assert_eq!(leaf.peak_memory().unwrap(), Some(4096));
    tree.write(
        &["arena", "x", "cpu.stat"],
        "usage_usec 2500001\nuser_usec 2000000\nsystem_usec 500001\n",
    );
    assert_eq!(leaf.cpu_time().unwrap(), Duration::from_micros(2_500_001));
    std::fs::remove_file(tree.path(&["arena", "x", "memory.peak"])).unwrap();
    assert_eq!(leaf.peak_memory().unwrap(), None);
}

#[test]
fn v2_kill_writes_cgroup_kill_until_unpopulated() {
    let tree = FakeTree::unified(ALL_V2);
    let m = strict(CgroupSetup::Unified, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    // populated 0: nothing to do, nothing written.
    leaf.kill_all().unwrap();
    assert_eq!(tree.read(&["arena", "x", "cgroup.kill"]), "");
    tree.write(&["arena", "x", "cgroup.events"], "populated 1\nfrozen 0\n");
    let err = leaf
        .leaf
        .ops()
        .kill_until(Instant::now() + Duration::from_millis(50))
        .unwrap_err();
    assert!(matches!(err, CgroupError::KillTimeout { .. }), "{err}");
    assert_eq!(tree.read(&["arena", "x", "cgroup.kill"]), "1");
    tree.write(&["arena", "x", "cgroup.events"], "populated 0\nfrozen 0\n");
    leaf.remove().unwrap();
    assert!(!tree.path(&["arena", "x"]).exists());
}

// ---- hybrid ----

#[test]
fn hybrid_leaf_spans_v1_and_unified() {
    let tree = FakeTree::hybrid("hugetlb");
    let m = strict(CgroupSetup::Hybrid, &tree);
    // Nothing enabled in the unified mount: its controllers belong to v1 there.
    assert_eq!(tree.read(&["unified", "cgroup.subtree_control"]), "");
    let leaf = m.create("x", &limits()).unwrap();
    let paths = leaf.paths();
    assert_eq!(paths.len(), V1_CONTROLLERS.len() + 1);
    assert_eq!(
        paths.last().unwrap(),
        &tree.path(&["unified", "arena", "x"])
    );
    assert_eq!(
        leaf.open_procs_files().unwrap().len(),
        V1_CONTROLLERS.len() + 1
    );
    assert_eq!(
        tree.read(&["memory", "arena", "x", "memory.memsw.limit_in_bytes"]),
        "67108864"
    );
    tree.write(&["unified", "arena", "x", "cgroup.procs"], "5\n");
    tree.write(&["memory", "arena", "x", "cgroup.procs"], "4\n");
    assert_eq!(leaf.pids().unwrap(), vec![4, 5]);
    tree.write(&["unified", "arena", "x", "cgroup.procs"], "");
    tree.write(&["memory", "arena", "x", "cgroup.procs"], "");
    leaf.remove().unwrap();
    for p in paths {
        assert!(!p.exists(), "{}", p.display());
    }
}

#[test]
fn hybrid_quota_goes_to_the_v1_cpu_controller() {
    let tree = FakeTree::hybrid("hugetlb");
    let m = strict(CgroupSetup::Hybrid, &tree);
    let _leaf = m.create("x", &half_a_core()).unwrap();
    assert_eq!(
        tree.read(&["cpu", "arena", "x", "cpu.cfs_quota_us"]),
        "50000"
    );
    assert!(!tree.path(&["unified", "arena", "x", "cpu.max"]).exists());
}

#[test]
fn hybrid_kill_prefers_cgroup_kill() {
    let tree = FakeTree::hybrid("");
    let m = strict(CgroupSetup::Hybrid, &tree);
    let leaf = m.create("x", &limits()).unwrap();
    let unified = tree.path(&["unified", "arena", "x"]);
    tree.write(&["unified", "arena", "x", "cgroup.events"], "populated 1\n");
    // The fake kernel never empties the leaf: the loop writes `cgroup.kill`,
    // waits for `populated 0` until its deadline, and says which leaf
    // resisted: the unified one (the v1 dirs list no pid, so the v1 loop
    // only confirms they are empty).
    let err = leaf
        .leaf
        .ops()
        .kill_until(Instant::now() + Duration::from_millis(20))
        .unwrap_err();
    assert!(
        matches!(&err, CgroupError::KillTimeout { path, remaining, .. }
            if *path == unified && remaining.is_empty()),
        "{err}"
    );
    assert_eq!(tree.read(&["unified", "arena", "x", "cgroup.kill"]), "1");
    // Once the kernel reports the leaf empty, the same call succeeds.
    tree.write(&["unified", "arena", "x", "cgroup.events"], "populated 0\n");
    leaf.leaf
        .ops()
        .kill_until(Instant::now() + Duration::from_millis(20))
        .expect("an unpopulated leaf is killed at once");
    leaf.remove().unwrap();
    assert!(!unified.exists());
}

// ---- stale leaves ----

/// Creates a leaf and leaks the handle, like a runner that died without cleaning up.
fn leave_behind(m: &CgroupManager, name: &str) {
    std::mem::forget(m.create(name, &limits()).unwrap());
}

fn exists_everywhere(m: &CgroupManager, name: &str) -> bool {
    m.parent_paths().iter().all(|p| p.join(name).is_dir())
}

fn gone_everywhere(m: &CgroupManager, name: &str) -> bool {
    m.parent_paths().iter().all(|p| !p.join(name).exists())
}

#[test]
fn remove_stale_takes_dead_and_reused_owners_only() {
    for (setup, tree) in [
        (CgroupSetup::Legacy, FakeTree::legacy()),
        (CgroupSetup::Hybrid, FakeTree::hybrid("")),
        (CgroupSetup::Unified, FakeTree::unified(ALL_V2)),
    ] {
        let m = strict(setup, &tree);
        let me = std::process::id();
        let mine = CgroupManager::try_owned_name("keep").unwrap();
        let dead = "r999999999-1-x";
        let reused = format!("r{me}-1-y");
        let foreign = "not-ours";
        for name in [mine.as_str(), dead, reused.as_str(), foreign] {
            leave_behind(&m, name);
        }
        assert_eq!(m.remove_stale().unwrap(), 2, "{setup:?}");
        assert!(gone_everywhere(&m, dead), "{setup:?}");
        assert!(gone_everywhere(&m, &reused), "{setup:?}");
        assert!(exists_everywhere(&m, &mine), "{setup:?}");
        assert!(exists_everywhere(&m, foreign), "{setup:?}");
        assert_eq!(m.remove_stale().unwrap(), 0, "{setup:?}");
    }
}

#[test]
fn remove_stale_finds_leaves_left_in_one_hierarchy_only() {
    let tree = FakeTree::hybrid("");
    let m = strict(CgroupSetup::Hybrid, &tree);
    let half = tree.path(&["unified", "arena", "r999999999-1-half"]);
    std::fs::create_dir(&half).unwrap();
    fake::populate(&half);
    assert_eq!(m.remove_stale().unwrap(), 1);
    assert!(!half.exists());
}

// ---- input validation ----

#[test]
fn names_must_be_plain() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    for bad in ["", ".", "..", "a/b", "a\nb", &"x".repeat(256)] {
        let err = m.create(bad, &limits()).unwrap_err();
        assert!(
            matches!(err, CgroupError::InvalidName { .. }),
            "{bad:?}: {err}"
        );
    }
    for bad in ["", "/abs", "a/../b", "./a", "a/\nb"] {
        let err = CgroupManager::build(
            CgroupSetup::Legacy,
            tree.root(),
            bad,
            CgroupOptions::default(),
            fake::KERNEL,
        )
        .unwrap_err();
        assert!(
            matches!(err, CgroupError::InvalidName { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn zero_limits_are_rejected_before_touching_the_tree() {
    let tree = FakeTree::legacy();
    let m = strict(CgroupSetup::Legacy, &tree);
    let l = CgroupLimits {
        memory_bytes: 0,
        ..limits()
    };
    assert!(matches!(
        m.create("x", &l),
        Err(CgroupError::InvalidLimits { .. })
    ));
    assert!(!tree.path(&["memory", "arena", "x"]).exists());
}

#[test]
fn out_of_range_quota_is_rejected_before_touching_the_tree() {
    let tree = FakeTree::unified(ALL_V2);
    let m = strict(CgroupSetup::Unified, &tree);
    let l = CgroupLimits {
        cpu_quota: Some(CpuQuota {
            quota_us: 10,
            period_us: 100_000,
        }),
        ..limits()
    };
    assert!(matches!(
        m.create("x", &l),
        Err(CgroupError::InvalidLimits { .. })
    ));
    assert!(!tree.path(&["arena", "x"]).exists());
}

#[test]
fn legacy_without_any_mount_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = CgroupManager::build(
        CgroupSetup::Legacy,
        dir.path(),
        "arena",
        CgroupOptions::default(),
        fake::KERNEL,
    )
    .unwrap_err();
    assert!(
        matches!(err, CgroupError::ControllerMissing { .. }),
        "{err}"
    );
    assert!(!Path::new(&dir.path().join("memory")).exists());
}

#[test]
fn leaf_is_send() {
    fn is_send<T: Send>() {}
    is_send::<LeafCgroup>();
    is_send::<CgroupManager>();
}

#[test]
fn unlimited_constant_matches_the_kernel() {
    // Keeps the fixture honest: the v1 "unlimited" value is i64::MAX rounded down to 4 KiB.
    assert_eq!(V1_UNLIMITED.parse::<i64>().unwrap(), i64::MAX & !4095);
}
