//! The sweep of cgroup parents that killed test runs left behind
//! (`support/stale_cgroups.rs`, run by this harness and the end-to-end one
//! before their first parent), on the real hierarchies: a parent named for
//! a pid that no longer runs goes, leaves first, from every hierarchy; one
//! named for a running process, or still holding a process, stays. Needs
//! root and cgroups.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use support::stale_cgroups::{CGROUP_ROOT, alive, hierarchies, owner, sweep_in};

/// The names these tests make: a pattern no harness sweeps on its own, so a
/// test run beside this one cannot take the fixtures first.
const PATTERN: &str = "arena-sweep-selftest-{pid}-*";

#[test]
fn parent_patterns_fit_only_their_own_shape() {
    let e2e = "arena-e2e-{pid}-*";
    assert_eq!(owner("arena-e2e-41-3", e2e), Some(41));
    assert_eq!(owner("arena-e2e-41-resume", e2e), Some(41));
    for other in [
        "arena-e2e-41",
        "arena-e2e-41-",
        "arena-e2e-starter-41",
        "arena-e2e-041-3",
        "arena-e2e--3",
        "arena-e2e-x41-3",
        "arena",
        "arena-41-3",
        "r41-100-seat0",
    ] {
        assert_eq!(owner(other, e2e), None, "{other}");
    }
    let starter = "arena-e2e-starter-{pid}";
    assert_eq!(owner("arena-e2e-starter-41", starter), Some(41));
    assert_eq!(owner("arena-e2e-starter-41-x", starter), None);
    assert_eq!(
        owner("arena-worker-test-signals-7-0", "arena-worker-test-{pid}-*"),
        None
    );
    assert_eq!(
        owner(
            "arena-worker-test-signals-7-0",
            "arena-worker-test-signals-{pid}-*"
        ),
        Some(7)
    );
}

#[test]
fn every_parent_the_worker_tests_make_is_one_the_sweep_recognises() {
    let patterns = support::parent_patterns();
    for base in support::PARENT_BASES {
        let name = support::own_parent(base);
        let owners: Vec<u32> = patterns.iter().filter_map(|p| owner(&name, p)).collect();
        assert_eq!(owners, [std::process::id()], "{name}");
    }
}

#[test]
fn a_dead_runs_parents_are_swept_and_live_ones_kept() {
    let dead = dead_pid();
    let also_dead = dead_pid();
    let me = std::process::id();
    let gone = Fixture::make(&format!("arena-sweep-selftest-{dead}-worker"));
    // Named for this (running) process, and for a dead one but still
    // holding a process: neither may be touched.
    let live = Fixture::make(&format!("arena-sweep-selftest-{me}-worker"));
    let held = Fixture::make(&format!("arena-sweep-selftest-{also_dead}-held"));
    let mut sleeper = Sleeper::start();
    let holding = held.hold(sleeper.pid());

    let swept = sweep_in(Path::new(CGROUP_ROOT), &[PATTERN]);
    assert!(gone.gone_everywhere(), "{swept:?}");
    for dir in &gone.parents {
        assert!(
            swept.removed.contains(dir),
            "{} not reported: {swept:?}",
            dir.display()
        );
    }
    assert!(live.exists_everywhere(), "{swept:?}");
    assert!(
        holding.is_dir(),
        "a group holding a process was removed: {swept:?}"
    );
    let held_parent = holding.parent().expect("a leaf has a parent");
    assert!(
        swept
            .kept
            .iter()
            .any(|k| k.starts_with(&*held_parent.to_string_lossy())),
        "{swept:?}"
    );
    assert!(!swept.removed.iter().any(|d| d == held_parent), "{swept:?}");

    // Once its process is gone, the next sweep takes it too; the live one
    // still stays.
    sleeper.stop();
    let swept = sweep_in(Path::new(CGROUP_ROOT), &[PATTERN]);
    assert!(held.gone_everywhere(), "{swept:?}");
    assert!(swept.kept.is_empty(), "{swept:?}");
    assert!(live.exists_everywhere(), "{swept:?}");
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("start true");
    let pid = child.id();
    child.wait().expect("reap true");
    assert!(!alive(pid), "pid {pid} runs again already");
    pid
}

/// A parent group with one leaf, made in every hierarchy that takes it,
/// as a killed test would leave it; removed (checked) on drop if still
/// there.
struct Fixture {
    parents: Vec<PathBuf>,
}

const LEAF: &str = "r1-1-seat0";

impl Fixture {
    fn make(name: &str) -> Fixture {
        let mut parents = Vec::new();
        for hierarchy in hierarchies(Path::new(CGROUP_ROOT)) {
            // The root of a hybrid host is a tmpfs, not a hierarchy.
            if !hierarchy.join("cgroup.procs").is_file() {
                continue;
            }
            let parent = hierarchy.join(name);
            if std::fs::create_dir(&parent).is_ok() {
                std::fs::create_dir(parent.join(LEAF))
                    .unwrap_or_else(|e| panic!("mkdir {}/{LEAF}: {e}", parent.display()));
                parents.push(parent);
            }
        }
        assert!(
            !parents.is_empty(),
            "no cgroup hierarchy under {CGROUP_ROOT} takes {name} (needs root and cgroups)"
        );
        Fixture { parents }
    }

    fn gone_everywhere(&self) -> bool {
        self.parents.iter().all(|p| !p.exists())
    }

    fn exists_everywhere(&self) -> bool {
        self.parents.iter().all(|p| p.join(LEAF).is_dir())
    }

    /// Moves `pid` into the leaf of the first hierarchy that accepts it;
    /// returns that leaf.
    fn hold(&self, pid: u32) -> PathBuf {
        self.parents
            .iter()
            .map(|p| p.join(LEAF))
            .find(|leaf| std::fs::write(leaf.join("cgroup.procs"), pid.to_string()).is_ok())
            .expect("some hierarchy takes a process into the leaf")
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for parent in self.parents.iter().filter(|p| p.exists()) {
            let leaf = parent.join(LEAF);
            let removed = std::fs::remove_dir(&leaf)
                .or_else(|e| if leaf.exists() { Err(e) } else { Ok(()) })
                .and_then(|()| std::fs::remove_dir(parent));
            if let Err(e) = removed {
                if std::thread::panicking() {
                    eprintln!("cannot remove the fixture {}: {e}", parent.display());
                } else {
                    panic!("cannot remove the fixture {}: {e}", parent.display());
                }
            }
        }
    }
}

/// A `sleep` child, killed and reaped on drop (also when the test fails).
struct Sleeper(Option<Child>);

impl Sleeper {
    fn start() -> Sleeper {
        Sleeper(Some(
            Command::new("sleep")
                .arg("600")
                .spawn()
                .expect("start sleep"),
        ))
    }

    fn pid(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.0.take() {
            child.kill().expect("kill sleep");
            child.wait().expect("reap sleep");
        }
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take()
            && let Err(e) = child.kill().and_then(|()| child.wait().map(drop))
        {
            eprintln!("cannot stop the sleep child: {e}");
        }
    }
}
