//! The cgroup layer against the real kernel, on whichever layout this host offers:
//!
//! * hybrid (this machine and CI's host): cgroup v1 controllers under
//!   `/sys/fs/cgroup/<controller>` plus a controller-less cgroup2 mount at
//!   `/sys/fs/cgroup/unified`;
//! * pure cgroup v2 at `/sys/fs/cgroup` (most production hosts; CI boots one in the QEMU guest
//!   of `tests/guest/` and runs this file there);
//! * v1 alone (legacy).
//!
//! [`cgroup::detect`] picks the layout, as the sandbox does, and every test drives the backend
//! the sandbox would use on that host, checking the control files it writes in that layout's
//! own terms (`memory.limit_in_bytes` or `memory.max`, `cpu.cfs_quota_us` or `cpu.max`, one
//! line of `/proc/<pid>/cgroup` per hierarchy or one in all). Three checks have no counterpart
//! on every layout: the v1 freezer kill loop needs v1 controllers, and the v2 backend without
//! controllers and the cpu quota refused without the cpu controller need a cgroup2 mount (a
//! hybrid host's unified mount, or on a pure v2 host a group below the root with nothing
//! enabled). Where a layout cannot have what such a check needs, the test says so on stderr.
//!
//! `ARENA_EXPECT_CGROUP=hybrid|unified|legacy` makes every test fail unless the host has that
//! layout: the guest sets `unified`, so a guest that came up with v1 controllers cannot pass
//! for a v2 host.
//!
//! Every test owns a parent group named `arena-test-<pid>-<test>`, so tests can run in
//! parallel, and a `Cleanup` guard removes that parent and everything below it in every
//! hierarchy even when the test fails. Nothing outside those parents is touched, except that
//! on a pure v2 host the sandbox's manager enables the controllers it needs in the root's
//! `cgroup.subtree_control`, as it does in production.
//!
//! Where the host lacks what a test needs (root, a supported layout, the controllers), the
//! test fails and says why, instead of passing silently.

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
use arena_sandbox::cpus::CoreAllocator;

const ROOT: &str = "/sys/fs/cgroup";
/// A hybrid host's cgroup2 mount.
const UNIFIED: &str = "/sys/fs/cgroup/unified";
/// The v1 hierarchies a leaf lives in, as named under [`ROOT`] and in /proc/<pid>/cgroup.
const V1_CONTROLLERS: [&str; 6] = ["memory", "pids", "cpuset", "cpu", "cpuacct", "freezer"];
/// The controllers the sandbox needs on a pure v2 host.
const V2_CONTROLLERS: [&str; 4] = ["memory", "pids", "cpuset", "cpu"];
/// Names the layout every test must find (`hybrid`, `unified` or `legacy`), when set.
const EXPECT_ENV: &str = "ARENA_EXPECT_CGROUP";
/// How long a condition may take to come true. Generous: in CI these tests also run in a
/// software-emulated guest, where a process start takes about 0.1 s.
const PATIENCE: Duration = Duration::from_secs(10);

const MIB: u64 = 1 << 20;

/// The limits most tests use, pinned to the first CPU this process may use.
fn limits(memory_mib: u64) -> CgroupLimits {
    CgroupLimits {
        memory_bytes: memory_mib * MIB,
        pids: 16,
        cpus: vec![first_cpu()],
        cpu_quota: None,
    }
}

fn cpus() -> Vec<usize> {
    CoreAllocator::available().expect("this process's CPU affinity")
}

fn first_cpu() -> usize {
    cpus()[0]
}

/// The last CPU this process may use: the forking tests keep the first one busy while they
/// run in parallel.
fn last_cpu() -> usize {
    *cpus().last().expect("a CPU")
}

fn layout_name(setup: CgroupSetup) -> &'static str {
    match setup {
        CgroupSetup::Legacy => "legacy",
        CgroupSetup::Hybrid => "hybrid",
        CgroupSetup::Unified => "unified",
    }
}

/// The host's layout. Fails (not skips) with the reason when the tests cannot run here: not
/// root, no cgroup filesystem, a layout other than [`EXPECT_ENV`] names, or a pure v2 root
/// that does not offer the controllers the sandbox needs.
fn host() -> CgroupSetup {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "cgroup tests need root");
    let setup = cgroup::detect().expect("detect the cgroup layout");
    if let Ok(expected) = std::env::var(EXPECT_ENV) {
        assert_eq!(
            layout_name(setup),
            expected,
            "{EXPECT_ENV}={expected}, but /sys/fs/cgroup has another layout"
        );
    }
    match setup {
        CgroupSetup::Unified => {
            let offered = read_trimmed(&Path::new(ROOT).join("cgroup.controllers"));
            for controller in V2_CONTROLLERS {
                assert!(
                    offered.split_whitespace().any(|c| c == controller),
                    "this pure cgroup v2 host does not offer {controller}: \
                     /sys/fs/cgroup/cgroup.controllers is {offered:?}"
                );
            }
        }
        CgroupSetup::Hybrid | CgroupSetup::Legacy => {
            for controller in V1_CONTROLLERS {
                let dir = Path::new(ROOT).join(controller);
                assert!(
                    dir.join("cgroup.procs").is_file(),
                    "no v1 {controller} hierarchy at {}",
                    dir.display()
                );
            }
        }
    }
    setup
}

/// Every hierarchy a test's parent group lives in on this layout.
fn hierarchies(setup: CgroupSetup) -> Vec<PathBuf> {
    let v1 = V1_CONTROLLERS.iter().map(|c| Path::new(ROOT).join(c));
    match setup {
        CgroupSetup::Legacy => v1.collect(),
        CgroupSetup::Hybrid => v1.chain([PathBuf::from(UNIFIED)]).collect(),
        CgroupSetup::Unified => vec![PathBuf::from(ROOT)],
    }
}

/// Removes the test's parent group, and every group below it, from every hierarchy on drop,
/// killing whatever is left in them first. Declared before the manager and leaves so it drops
/// last.
struct Cleanup {
    /// The test's parent group name.
    parent: String,
    /// The layout, for the hierarchies to clean.
    setup: CgroupSetup,
}

impl Cleanup {
    fn new(setup: CgroupSetup, test: &str) -> Self {
        Self {
            parent: format!("arena-test-{}-{test}", std::process::id()),
            setup,
        }
    }

    /// The parent group's directory in every hierarchy.
    fn dirs(&self) -> Vec<PathBuf> {
        hierarchies(self.setup)
            .into_iter()
            .map(|h| h.join(&self.parent))
            .collect()
    }

    /// The parent group's directory on a pure v2 host (or a hybrid host's unified mount).
    fn v2_dir(&self) -> PathBuf {
        match self.setup {
            CgroupSetup::Unified => Path::new(ROOT).join(&self.parent),
            _ => Path::new(UNIFIED).join(&self.parent),
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for parent in self.dirs() {
            if parent.is_dir() {
                remove_tree(&parent);
            }
        }
    }
}

/// Kills everything in `dir` and the groups below it, and removes them, deepest first.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for child in entries.flatten().filter(|e| e.path().is_dir()) {
            remove_tree(&child.path());
        }
    }
    let _ = fs::write(dir.join("cgroup.kill"), "1");
    let _ = fs::write(dir.join("freezer.state"), "THAWED");
    let deadline = Instant::now() + Duration::from_secs(3);
    while let Err(e) = fs::remove_dir(dir) {
        if Instant::now() >= deadline {
            eprintln!("cleanup: rmdir {}: {e}", dir.display());
            return;
        }
        for pid in read_pids(&dir.join("cgroup.procs")) {
            // SAFETY: kill with a positive pid read from a group of this test.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        thread::sleep(Duration::from_millis(10));
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

/// One key of a flat-keyed file such as `pids.events` or `memory.events`.
fn keyed(path: &Path, key: &str) -> u64 {
    let text = read_trimmed(path);
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {}: {text:?}", path.display()))
}

/// Where a leaf's control file for `controller` is: on v1 (and hybrid) hosts in that
/// controller's hierarchy, on a pure v2 host in the leaf's one directory.
fn control_file(
    setup: CgroupSetup,
    parent: &str,
    name: &str,
    controller: &str,
    file: &str,
) -> PathBuf {
    match setup {
        CgroupSetup::Unified => Path::new(ROOT).join(parent).join(name).join(file),
        _ => Path::new(ROOT)
            .join(controller)
            .join(parent)
            .join(name)
            .join(file),
    }
}

/// The control files a leaf made with `limits` must hold, with their values, in this layout's
/// terms: memory capped with no swap on top, the pids cap, the cpuset.
fn expected_limits(
    setup: CgroupSetup,
    parent: &str,
    name: &str,
    limits: &CgroupLimits,
) -> Vec<(PathBuf, String)> {
    let file = |controller, file| control_file(setup, parent, name, controller, file);
    let memory = limits.memory_bytes.to_string();
    let cpus = cgroup::format_cpu_list(&limits.cpus);
    let pids = (file("pids", "pids.max"), limits.pids.to_string());
    let cpuset = (file("cpuset", "cpuset.cpus"), cpus);
    match setup {
        CgroupSetup::Unified => vec![
            (file("memory", "memory.max"), memory),
            // v2 counts swap on its own: none at all.
            (file("memory", "memory.swap.max"), "0".to_owned()),
            pids,
            cpuset,
        ],
        _ => vec![
            (file("memory", "memory.limit_in_bytes"), memory.clone()),
            // v1 counts memory and swap together: the same cap, so no swap on top.
            (file("memory", "memory.memsw.limit_in_bytes"), memory),
            pids,
            cpuset,
        ],
    }
}

/// Checks that `/proc/<pid>/cgroup` puts the process in `/<parent>/<name>` in every hierarchy
/// of the layout.
fn assert_member(setup: CgroupSetup, pid: i32, parent: &str, name: &str) {
    let membership = read_trimmed(Path::new(&format!("/proc/{pid}/cgroup")));
    let want = format!("/{parent}/{name}");
    if setup != CgroupSetup::Unified {
        for controller in V1_CONTROLLERS {
            let line = membership
                .lines()
                .find(|l| l.split(':').nth(1) == Some(controller))
                .unwrap_or_else(|| panic!("no {controller} line in {membership}"));
            assert!(line.ends_with(&format!(":{want}")), "{line}");
        }
    }
    match setup {
        CgroupSetup::Unified => assert_eq!(membership, format!("0::{want}")),
        CgroupSetup::Hybrid => assert!(
            membership.lines().any(|l| l == format!("0::{want}")),
            "{membership}"
        ),
        CgroupSetup::Legacy => {}
    }
}

/// Waits until `cond` holds, failing after [`PATIENCE`].
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

/// Makes a group below `dir` whose `cgroup.controllers` offers exactly `offered` (a pure v2
/// host): `dir/<name>` enables them for its one child `dir/<name>/root`, which is returned.
/// With nothing offered it is a group without controllers, like a hybrid host's unified mount.
fn v2_group_offering(dir: &Path, name: &str, offered: &[&str]) -> PathBuf {
    let middle = dir.join(name);
    fs::create_dir_all(&middle).unwrap_or_else(|e| panic!("mkdir {}: {e}", middle.display()));
    if !offered.is_empty() {
        let request: Vec<String> = offered.iter().map(|c| format!("+{c}")).collect();
        let control = middle.join("cgroup.subtree_control");
        fs::write(&control, request.join(" "))
            .unwrap_or_else(|e| panic!("write {}: {e}", control.display()));
    }
    let root = middle.join("root");
    fs::create_dir(&root).unwrap_or_else(|e| panic!("mkdir {}: {e}", root.display()));
    let controllers = read_trimmed(&root.join("cgroup.controllers"));
    let mut got: Vec<&str> = controllers.split_whitespace().collect();
    let mut want = offered.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{} offers other controllers", root.display());
    root
}

#[test]
fn detect_finds_a_supported_layout() {
    let setup = host();
    eprintln!("cgroup layout of this host: {}", layout_name(setup));
}

/// A leaf gets its limits in the layout's own control files; the parent groups offer the
/// controllers; a process joined between fork and exec is in the leaf in every hierarchy and
/// runs only on the leaf's CPU; killing the leaf kills it, and removing the leaf removes
/// every directory.
#[test]
fn leaf_limits_join_pin_kill_remove() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "join");
    let parent = cleanup.parent.clone();
    let manager = CgroupManager::new(setup, &parent).unwrap();
    let name = CgroupManager::owned_name("join");
    let pinned = CgroupLimits {
        cpus: vec![last_cpu()],
        ..limits(64)
    };
    let leaf = manager.create(&name, &pinned).unwrap();

    for (path, value) in expected_limits(setup, &parent, &name, &pinned) {
        assert_eq!(read_trimmed(&path), value, "{}", path.display());
    }
    // The memory nodes: v1 copies them into the leaf, v2 inherits them.
    let mems_file = match setup {
        CgroupSetup::Unified => "cpuset.mems.effective",
        _ => "cpuset.mems",
    };
    let mems = control_file(setup, &parent, &name, "cpuset", mems_file);
    assert!(!read_trimmed(&mems).is_empty(), "{}", mems.display());
    match setup {
        CgroupSetup::Unified => {
            assert_eq!(
                leaf.paths(),
                vec![Path::new(ROOT).join(&parent).join(&name)]
            );
            // Offered from the root down to the parent, so the leaf has them.
            for dir in [PathBuf::from(ROOT), Path::new(ROOT).join(&parent)] {
                let enabled = read_trimmed(&dir.join("cgroup.subtree_control"));
                for controller in V2_CONTROLLERS {
                    assert!(
                        enabled.split_whitespace().any(|c| c == controller),
                        "{controller} is not enabled in {}: {enabled:?}",
                        dir.display()
                    );
                }
            }
        }
        CgroupSetup::Hybrid => assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len() + 1),
        CgroupSetup::Legacy => assert_eq!(leaf.paths().len(), V1_CONTROLLERS.len()),
    }

    let mut child = spawn_in(&leaf, &["sleep", "30"]);
    let pid = child.pid();
    assert_eq!(leaf.pids().unwrap(), vec![pid]);
    assert_member(setup, pid, &parent, &name);
    let status = read_trimmed(Path::new(&format!("/proc/{pid}/status")));
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no Cpus_allowed_list in {status}"));
    assert_eq!(allowed, last_cpu().to_string(), "the process is not pinned");

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

/// Forks children that sleep, and keeps forking when a fork is refused.
const FORKER: &str = "\
import os, time
while True:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    except OSError:
        pass
";

/// A process that forks without end is held at the leaf's pids cap (the kernel counts the
/// refusals), and killing the leaf stops it for good.
#[test]
fn a_forking_process_is_capped_and_killed() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "forker");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("f"), &limits(64))
        .unwrap();
    let cap = usize::try_from(limits(64).pids).unwrap();
    let events = control_file(setup, &cleanup.parent, leaf.name(), "pids", "pids.events");
    // Forks until pids.max stops it, and keeps trying (a shell would give up at the first
    // refused fork).
    let _child = spawn_in(&leaf, &["/usr/bin/python3", "-c", FORKER]);
    eventually("the forker to reach its pids cap", || {
        let count = leaf.pids().unwrap().len();
        assert!(count <= cap, "{count} processes in a leaf capped at {cap}");
        count == cap
    });
    eventually("pids.events to count a refused fork", || {
        keyed(&events, "max") > 0
    });
    assert!(leaf.pids().unwrap().len() <= cap);
    leaf.kill_all().unwrap();
    assert!(leaf.pids().unwrap().is_empty());
    leaf.remove().unwrap();
}

/// v1 has no `cgroup.kill`: the v1 backend freezes, SIGKILLs and thaws until the leaf is
/// empty. Needs v1 controllers; a pure v2 host has none.
#[test]
fn v1_freezer_loop_stops_a_forking_process() {
    let setup = host();
    if setup == CgroupSetup::Unified {
        eprintln!("a pure cgroup v2 host has no v1 freezer: nothing to check here");
        return;
    }
    let cleanup = Cleanup::new(setup, "v1kill");
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
    let freezer = Path::new(ROOT)
        .join("freezer")
        .join(&cleanup.parent)
        .join(leaf.name());
    assert_eq!(read_trimmed(&freezer.join("freezer.state")), "THAWED");
    leaf.remove().unwrap();
}

/// Going over the memory cap is an OOM kill in the leaf (swap is no way out), counted by the
/// kernel where the verdict reads it; the peak stays under the cap.
#[test]
fn oom_kill_is_counted() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "oom");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("oom"), &limits(32))
        .unwrap();
    assert_eq!(leaf.oom_kills().unwrap(), 0);
    // tail keeps everything after the last newline, and /dev/zero has none: ~200 MiB
    // touched against a 32 MiB limit with no swap.
    let mut child = spawn_in(
        &leaf,
        &["sh", "-c", "head -c 200M /dev/zero | tail > /dev/null"],
    );
    let status = child.wait_for(Duration::from_secs(60));
    assert!(!status.success(), "the hog survived: {status:?}");
    assert!(leaf.oom_kills().unwrap() >= 1);
    if setup == CgroupSetup::Unified {
        let events = control_file(
            setup,
            &cleanup.parent,
            leaf.name(),
            "memory",
            "memory.events",
        );
        assert!(keyed(&events, "oom_kill") >= 1, "{}", events.display());
    }
    // v1 always tracks the peak; v2 from kernel 5.19 on (memory.peak).
    let peak_file = control_file(setup, &cleanup.parent, leaf.name(), "memory", "memory.peak");
    match leaf.peak_memory().unwrap() {
        Some(peak) => assert!(peak > 16 * MIB && peak <= 32 * MIB, "peak {peak}"),
        None => assert!(
            setup == CgroupSetup::Unified && !peak_file.exists(),
            "no peak memory on a {} host",
            layout_name(setup)
        ),
    }
    leaf.remove().unwrap();
}

#[test]
fn cpu_time_counts_a_busy_loop() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "cpu");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
    // The last CPU: the forking tests keep the first busy while they run in parallel.
    let pinned = CgroupLimits {
        cpus: vec![last_cpu()],
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
    assert!(child.wait_for(Duration::from_secs(120)).success());
    let used = leaf.cpu_time().unwrap();
    assert!(used >= Duration::from_millis(10), "cpu time {used:?}");
    leaf.remove().unwrap();
}

/// A CPU quota lands in the layout's cpu files, and the kernel enforces it: a busy loop in a
/// leaf capped at a quarter core gets about a quarter core. Where the cpu controller is
/// missing (a hybrid host's unified mount; on a pure v2 host, a group whose parent did not
/// enable cpu), a leaf that needs a quota is refused, not left uncapped.
#[test]
fn cpu_quota_is_written_and_enforced() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "quota");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
    let capped = CgroupLimits {
        cpus: vec![last_cpu()],
        cpu_quota: Some(CpuQuota::share_of_one_core(4)),
        ..limits(64)
    };
    let leaf = manager
        .create(&CgroupManager::owned_name("quota"), &capped)
        .unwrap();
    let file = |name| control_file(setup, &cleanup.parent, leaf.name(), "cpu", name);
    match setup {
        CgroupSetup::Unified => assert_eq!(read_trimmed(&file("cpu.max")), "25000 100000"),
        _ => {
            assert_eq!(read_trimmed(&file("cpu.cfs_period_us")), "100000");
            assert_eq!(read_trimmed(&file("cpu.cfs_quota_us")), "25000");
        }
    }
    let _child = spawn_in(&leaf, &["sh", "-c", "while :; do :; done"]);
    let (t0, u0) = (Instant::now(), leaf.cpu_time().unwrap());
    eventually("a second of wall time", || {
        t0.elapsed() >= Duration::from_secs(1)
    });
    let rate = (leaf.cpu_time().unwrap() - u0).as_secs_f64() / t0.elapsed().as_secs_f64();
    eprintln!("busy loop capped at 0.25 core used {rate:.3} cores");
    assert!(rate <= 0.25 * 1.2, "the cap did not hold: {rate:.3} cores");
    leaf.remove().unwrap();

    let no_cpu_root = match setup {
        CgroupSetup::Hybrid => PathBuf::from(UNIFIED),
        CgroupSetup::Unified => {
            v2_group_offering(&cleanup.v2_dir(), "nocpu", &["memory", "pids", "cpuset"])
        }
        CgroupSetup::Legacy => {
            eprintln!("a v1-only host has no cgroup2 mount without cpu to refuse a quota on");
            return;
        }
    };
    let without_cpu =
        CgroupManager::new_with_root(CgroupSetup::Unified, &no_cpu_root, &cleanup.parent).unwrap();
    let err = without_cpu.create("quota", &capped).unwrap_err();
    let CgroupError::ControllerMissing { controller, .. } = err else {
        panic!("{err}");
    };
    // A hybrid host's unified mount offers nothing at all, so memory is missed first there.
    if setup == CgroupSetup::Unified {
        assert_eq!(controller, "cpu");
    }
}

#[test]
fn remove_stale_kills_and_removes_dead_runners_leaves_only() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "stale");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
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

/// The v2 backend on a cgroup2 group that offers no controllers (a hybrid host's unified
/// mount; on a pure v2 host, a group whose parent enabled none): it refuses limits it cannot
/// enforce, and when told to allow that, still makes a leaf, joins it, kills it with
/// `cgroup.kill`, sees `populated 0` and removes it.
#[test]
fn v2_backend_on_a_group_without_controllers() {
    let setup = host();
    let cleanup = Cleanup::new(setup, "v2");
    let bare = match setup {
        CgroupSetup::Hybrid => PathBuf::from(UNIFIED),
        CgroupSetup::Unified => v2_group_offering(&cleanup.v2_dir(), "bare", &[]),
        CgroupSetup::Legacy => {
            eprintln!("a v1-only host has no cgroup2 mount for the v2 backend");
            return;
        }
    };
    // A pure v2 host's bare group is below the test's parent, which the leaf's own parent
    // group then sits in again.
    let parent = &cleanup.parent;

    // No memory/pids/cpuset offered: a strict manager refuses limits it cannot enforce.
    let strict = CgroupManager::new_with_root(CgroupSetup::Unified, &bare, parent).unwrap();
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
    assert!(!bare.join(parent).join("strict").exists());

    // Explicitly allowed: leaf, join, cgroup.kill, cgroup.events and rmdir on the real mount.
    let options = CgroupOptions {
        allow_missing_controllers: true,
    };
    let manager =
        CgroupManager::new_with_options(CgroupSetup::Unified, &bare, parent, options).unwrap();
    let leaf = manager
        .create(&CgroupManager::owned_name("v2"), &limits(64))
        .unwrap();
    assert_eq!(leaf.paths(), vec![bare.join(parent).join(leaf.name())]);
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
    let setup = host();
    let cleanup = Cleanup::new(setup, "drop");
    let manager = CgroupManager::new(setup, &cleanup.parent).unwrap();
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
