//! The cgroup layer against the real kernel on this machine: root, cgroup v1 controllers under
//! /sys/fs/cgroup plus a controller-less cgroup2 mount at /sys/fs/cgroup/unified (a hybrid
//! host). Every test owns a parent group named `arena-test-<pid>-<test>`, so tests can run in
//! parallel, and a `Cleanup` guard removes that parent in every hierarchy even when the test
//! fails. Nothing outside those parents is touched.
//!
//! Where the host lacks what a test needs, the test fails and says why, instead of passing
//! silently.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use arena_sandbox::cgroup::{
    self, CgroupError, CgroupLimits, CgroupManager, CgroupOptions, CgroupSetup, CpuQuota,
    LeafCgroup,
};

const ROOT: &str = "/sys/fs/cgroup";
const UNIFIED: &str = "/sys/fs/cgroup/unified";
/// The hierarchies a hybrid leaf lives in, as named in /proc/<pid>/cgroup.
const V1_CONTROLLERS: [&str; 6] = ["memory", "pids", "cpuset", "cpu", "cpuacct", "freezer"];

const MIB: u64 = 1 << 20;

fn limits(memory_mib: u64) -> CgroupLimits {
    CgroupLimits {
        memory_bytes: memory_mib * MIB,
        pids: 16,
        cpus: vec![0],
        cpu_quota: None,
    }
}

/// Fails (not skips) with the reason when this is not the hybrid root host the tests expect.
fn require_hybrid_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "cgroup tests need root");
    let setup = cgroup::detect().expect("detect cgroup layout");
    assert_eq!(
        setup,
        CgroupSetup::Hybrid,
        "these tests expect a hybrid host (v1 controllers + /sys/fs/cgroup/unified)"
    );
}

/// Removes the test's parent group from every hierarchy on drop, killing whatever is left in
/// its leaves first. Declared before the manager and leaves so it drops last.
struct Cleanup {
    /// The test's parent group name.
    parent: String,
}

impl Cleanup {
    fn new(test: &str) -> Self {
        Self {
            parent: format!("arena-test-{}-{test}", std::process::id()),
        }
    }

    fn dirs(&self) -> Vec<PathBuf> {
        V1_CONTROLLERS
            .iter()
            .map(|c| Path::new(ROOT).join(c))
            .chain([PathBuf::from(UNIFIED)])
            .map(|h| h.join(&self.parent))
            .collect()
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for parent in self.dirs() {
            let Ok(entries) = fs::read_dir(&parent) else {
                continue;
            };
            for leaf in entries.flatten().filter(|e| e.path().is_dir()) {
                let leaf = leaf.path();
                let _ = fs::write(leaf.join("cgroup.kill"), "1");
                let _ = fs::write(leaf.join("freezer.state"), "THAWED");
                let deadline = Instant::now() + Duration::from_secs(3);
                while fs::remove_dir(&leaf).is_err() && Instant::now() < deadline {
                    for pid in read_pids(&leaf.join("cgroup.procs")) {
                        // SAFETY: kill with a positive pid read from our own leaf.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                    thread::sleep(Duration::from_millis(10));
                }
            }
            if let Err(e) = fs::remove_dir(&parent) {
                eprintln!("cleanup: rmdir {}: {e}", parent.display());
            }
        }
    }
}

fn read_pids(procs: &Path) -> Vec<i32> {
    fs::read_to_string(procs)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .filter(|&p| p > 0)
        .collect()
}

/// A child process killed and reaped on drop.
struct ChildGuard(Child);

impl ChildGuard {
    fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).unwrap()
    }

    /// Waits for exit, failing the test after `limit`.
    fn wait_for(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "child {} still running",
                self.0.id()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `argv` joined to `leaf`: between fork and exec the child writes "0" into every
/// `cgroup.procs` fd with plain write(2), as the sandbox's child does.
fn spawn_in(leaf: &LeafCgroup, argv: &[&str]) -> ChildGuard {
    let fds: Vec<OwnedFd> = leaf.open_procs_files().expect("open cgroup.procs files");
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the closure only calls write(2) on fds owned by the closure; no allocation.
    unsafe {
        cmd.pre_exec(move || {
            for fd in &fds {
                if libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    ChildGuard(cmd.spawn().expect("spawn child into the leaf"))
}

fn read_trimmed(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .to_owned()
}

fn leaf_dir(hierarchy: &str, parent: &str, name: &str) -> PathBuf {
    Path::new(ROOT).join(hierarchy).join(parent).join(name)
}

/// Waits until `cond` holds, failing after 2 s.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn detect_says_hybrid() {
    require_hybrid_root();
}

#[test]
fn hybrid_leaf_limits_join_kill_remove() {
    require_hybrid_root();
    let cleanup = Cleanup::new("join");
    let parent = cleanup.parent.clone();
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &parent).unwrap();
    let name = CgroupManager::owned_name("join");
    let leaf = manager.create(&name, &limits(64)).unwrap();

    let memory = leaf_dir("memory", &parent, &name);
    assert_eq!(
        read_trimmed(&memory.join("memory.limit_in_bytes")),
        "67108864"
    );
    assert_eq!(
        read_trimmed(&memory.join("memory.memsw.limit_in_bytes")),
        "67108864"
    );
    assert_eq!(
        read_trimmed(&leaf_dir("pids", &parent, &name).join("pids.max")),
        "16"
    );
    let cpuset = leaf_dir("cpuset", &parent, &name);
    assert_eq!(read_trimmed(&cpuset.join("cpuset.cpus")), "0");
    assert!(!read_trimmed(&cpuset.join("cpuset.mems")).is_empty());
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len() + 1);

    let mut child = spawn_in(&leaf, &["sleep", "30"]);
    let pid = child.pid();
    assert_eq!(leaf.pids().unwrap(), vec![pid]);
    // Every hierarchy, v1 and unified, has the child in this leaf.
    let membership = read_trimmed(Path::new(&format!("/proc/{pid}/cgroup")));
    let want = format!("/{parent}/{name}");
    for controller in V1_CONTROLLERS {
        let line = membership
            .lines()
            .find(|l| l.split(':').nth(1) == Some(controller))
            .unwrap_or_else(|| panic!("no {controller} line in {membership}"));
        assert!(line.ends_with(&format!(":{want}")), "{line}");
    }
    assert!(
        membership.lines().any(|l| l == format!("0::{want}")),
        "{membership}"
    );

    leaf.kill_all().unwrap();
    assert_eq!(leaf.pids().unwrap(), Vec::<i32>::new());
    assert_eq!(
        child.wait_for(Duration::from_secs(2)).signal(),
        Some(libc::SIGKILL)
    );

    let paths = leaf.paths();
    leaf.remove().unwrap();
    for p in paths {
        assert!(!p.exists(), "{} still exists", p.display());
    }
}

#[test]
fn hybrid_kill_stops_a_forking_process() {
    require_hybrid_root();
    let cleanup = Cleanup::new("forker");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("f"), &limits(64))
        .unwrap();
    // Forks until pids.max stops it, and keeps trying.
    let _child = spawn_in(&leaf, &["sh", "-c", "while :; do sleep 5 & done"]);
    eventually("the forker to fork", || leaf.pids().unwrap().len() > 3);
    leaf.kill_all().unwrap();
    assert!(leaf.pids().unwrap().is_empty());
    leaf.remove().unwrap();
}

#[test]
fn legacy_freezer_loop_stops_a_forking_process() {
    require_hybrid_root();
    let cleanup = Cleanup::new("v1kill");
    // The v1 backend alone: no cgroup.kill, so killing goes through freeze/SIGKILL/thaw.
    let manager = CgroupManager::new(CgroupSetup::Legacy, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("f"), &limits(64))
        .unwrap();
    assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len());
    let _child = spawn_in(&leaf, &["sh", "-c", "while :; do sleep 5 & done"]);
    eventually("the forker to fork", || leaf.pids().unwrap().len() > 3);
    let started = Instant::now();
    leaf.kill_all().unwrap();
    assert!(leaf.pids().unwrap().is_empty());
    eprintln!(
        "v1 kill loop emptied a forking leaf in {:?}",
        started.elapsed()
    );
    let freezer = leaf_dir("freezer", &cleanup.parent, leaf.name());
    assert_eq!(read_trimmed(&freezer.join("freezer.state")), "THAWED");
    leaf.remove().unwrap();
}

#[test]
fn oom_kill_is_counted() {
    require_hybrid_root();
    let cleanup = Cleanup::new("oom");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("oom"), &limits(32))
        .unwrap();
    assert_eq!(leaf.oom_kills().unwrap(), 0);
    // tail keeps everything after the last newline, and /dev/zero has none: ~200 MiB
    // touched against a 32 MiB limit with swap capped by memsw.
    let mut child = spawn_in(
        &leaf,
        &["sh", "-c", "head -c 200M /dev/zero | tail > /dev/null"],
    );
    let status = child.wait_for(Duration::from_secs(30));
    assert!(!status.success(), "the hog survived: {status:?}");
    assert!(leaf.oom_kills().unwrap() >= 1);
    let peak = leaf.peak_memory().unwrap().expect("v1 tracks peak usage");
    assert!(peak > 16 * MIB && peak <= 32 * MIB, "peak {peak}");
    leaf.remove().unwrap();
}

#[test]
fn cpu_time_counts_a_busy_loop() {
    require_hybrid_root();
    let cleanup = Cleanup::new("cpu");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    // CPU 1: the forking tests keep CPU 0 busy while they run in parallel.
    let pinned = CgroupLimits {
        cpus: vec![1],
        ..limits(64)
    };
    let leaf = manager
        .create(&CgroupManager::owned_name("cpu"), &pinned)
        .unwrap();
    assert_eq!(leaf.cpu_time().unwrap(), Duration::ZERO);
    let mut child = spawn_in(
        &leaf,
        &[
            "sh",
            "-c",
            "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
        ],
    );
    assert!(child.wait_for(Duration::from_secs(30)).success());
    let used = leaf.cpu_time().unwrap();
    assert!(used >= Duration::from_millis(10), "cpu time {used:?}");
    leaf.remove().unwrap();
}

/// A CPU quota lands in the v1 cpu controller, and the kernel enforces it: a busy loop in a
/// leaf capped at a quarter core gets about a quarter core. Where the cpu controller is
/// missing (the unified mount here), a leaf that needs a quota is refused, not left uncapped.
#[test]
fn cpu_quota_is_written_and_enforced() {
    require_hybrid_root();
    let cleanup = Cleanup::new("quota");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    let capped = CgroupLimits {
        cpus: vec![1],
        cpu_quota: Some(CpuQuota::share_of_one_core(4)),
        ..limits(64)
    };
    let leaf = manager
        .create(&CgroupManager::owned_name("quota"), &capped)
        .unwrap();
    let cpu = leaf_dir("cpu", &cleanup.parent, leaf.name());
    assert_eq!(read_trimmed(&cpu.join("cpu.cfs_period_us")), "100000");
    assert_eq!(read_trimmed(&cpu.join("cpu.cfs_quota_us")), "25000");
    let _child = spawn_in(&leaf, &["sh", "-c", "while :; do :; done"]);
    let (t0, u0) = (Instant::now(), leaf.cpu_time().unwrap());
    eventually("a second of wall time", || {
        t0.elapsed() >= Duration::from_secs(1)
    });
    let rate = (leaf.cpu_time().unwrap() - u0).as_secs_f64() / t0.elapsed().as_secs_f64();
    eprintln!("busy loop capped at 0.25 core used {rate:.3} cores");
    assert!(rate <= 0.25 * 1.2, "the cap did not hold: {rate:.3} cores");
    leaf.remove().unwrap();

    let unified =
        CgroupManager::new_with_root(CgroupSetup::Unified, Path::new(UNIFIED), &cleanup.parent)
            .unwrap();
    let err = unified.create("quota", &capped).unwrap_err();
    assert!(
        matches!(err, CgroupError::ControllerMissing { .. }),
        "{err}"
    );
}

#[test]
fn remove_stale_kills_and_removes_dead_runners_leaves_only() {
    require_hybrid_root();
    let cleanup = Cleanup::new("stale");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    let dead = "r999999999-1-x";
    let stale = manager.create(dead, &limits(64)).unwrap();
    let mut orphan = spawn_in(&stale, &["sleep", "30"]);
    let stale_paths = stale.paths();
    // A runner that crashed never dropped its handle.
    std::mem::forget(stale);
    let live = manager
        .create(&CgroupManager::owned_name("live"), &limits(64))
        .unwrap();

    assert_eq!(manager.remove_stale().unwrap(), 1);
    for p in &stale_paths {
        assert!(!p.exists(), "{} still exists", p.display());
    }
    assert_eq!(
        orphan.wait_for(Duration::from_secs(2)).signal(),
        Some(libc::SIGKILL)
    );
    for p in live.paths() {
        assert!(p.is_dir(), "live leaf {} was removed", p.display());
    }
    live.remove().unwrap();
}

#[test]
fn v2_code_path_on_the_unified_mount() {
    require_hybrid_root();
    let cleanup = Cleanup::new("v2");
    let unified = Path::new(UNIFIED);

    // The unified mount here offers no memory/pids/cpuset: a strict manager refuses limits
    // it cannot enforce.
    let strict =
        CgroupManager::new_with_root(CgroupSetup::Unified, unified, &cleanup.parent).unwrap();
    let err = strict.create("strict", &limits(64)).unwrap_err();
    assert!(
        matches!(
            err,
            CgroupError::ControllerMissing {
                controller: "memory",
                ..
            }
        ),
        "{err}"
    );
    assert!(!unified.join(&cleanup.parent).join("strict").exists());

    // Explicitly allowed: leaf, join, cgroup.kill, cgroup.events and rmdir on the real mount.
    let options = CgroupOptions {
        allow_missing_controllers: true,
    };
    let manager =
        CgroupManager::new_with_options(CgroupSetup::Unified, unified, &cleanup.parent, options)
            .unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("v2"), &limits(64))
        .unwrap();
    assert_eq!(
        leaf.paths(),
        vec![unified.join(&cleanup.parent).join(leaf.name())]
    );
    assert_eq!(leaf.open_procs_files().unwrap().len(), 1);
    let mut child = spawn_in(&leaf, &["sh", "-c", "sleep 30 & sleep 30 & wait"]);
    eventually("the shell and its two sleeps", || {
        leaf.pids().unwrap().len() == 3
    });
    assert!(leaf.pids().unwrap().contains(&child.pid()));
    // cpu.stat usage is there without the cpu controller.
    leaf.cpu_time().unwrap();
    assert!(matches!(
        leaf.oom_kills(),
        Err(CgroupError::ControllerMissing {
            controller: "memory",
            ..
        })
    ));
    assert_eq!(leaf.peak_memory().unwrap(), None);

    leaf.kill_all().unwrap();
    assert!(leaf.pids().unwrap().is_empty());
    let events = read_trimmed(&leaf.paths()[0].join("cgroup.events"));
    assert!(events.lines().any(|l| l == "populated 0"), "{events}");
    assert_eq!(
        child.wait_for(Duration::from_secs(2)).signal(),
        Some(libc::SIGKILL)
    );
    let paths = leaf.paths();
    leaf.remove().unwrap();
    assert!(!paths[0].exists());
}

#[test]
fn dropping_a_leaf_kills_and_removes_it() {
    require_hybrid_root();
    let cleanup = Cleanup::new("drop");
    let manager = CgroupManager::new(CgroupSetup::Hybrid, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("d"), &limits(64))
        .unwrap();
    let mut child = spawn_in(&leaf, &["sleep", "30"]);
    let paths = leaf.paths();
    drop(leaf);
    assert_eq!(
        child.wait_for(Duration::from_secs(2)).signal(),
        Some(libc::SIGKILL)
    );
    for p in paths {
        assert!(!p.exists(), "{} still exists", p.display());
    }
}
