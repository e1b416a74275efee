//! Helpers shared by the worker's integration tests.
// Each test file uses some of them.
#![allow(dead_code)]

pub mod stale_cgroups;

use std::sync::Once;

use arena_worker::SandboxLauncher;

/// The bases of the worker tests' cgroup parents: [`own_parent`] takes no
/// other, so every parent these tests make has a name [`sweep_stale`]
/// recognises.
pub const PARENT_BASES: &[&str] = &[
    "arena-worker-test",
    "arena-worker-test-signals",
    "arena-worker-build-test",
    "arena-cores-test",
    "arena-daemon-test",
];

/// The names [`own_parent`] makes, as [`stale_cgroups::owner`] patterns.
pub fn parent_patterns() -> Vec<String> {
    PARENT_BASES
        .iter()
        .map(|base| format!("{base}-{{pid}}-*"))
        .collect()
}

/// Removes the cgroup parents that killed runs of these tests left behind
/// (named for a pid that no longer runs); once per test process, before its
/// first parent is made.
pub fn sweep_stale() {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        let patterns = parent_patterns();
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let swept = stale_cgroups::sweep(&patterns);
        if !swept.removed.is_empty() {
            eprintln!(
                "worker tests: removed cgroups of dead test runs: {:?}",
                swept.removed
            );
        }
    });
}

/// A cgroup parent named after `base` that no other test of this run uses:
/// tests run in parallel, and one removing a shared empty parent would pull
/// it from under another creating its leaf (or show it another's leaves).
/// The first call of a test process sweeps what dead ones left behind.
pub fn own_parent(base: &str) -> String {
    assert!(
        PARENT_BASES.contains(&base),
        "{base:?} is not in PARENT_BASES, so no sweep would find its leftovers"
    );
    sweep_stale();
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{base}-{}-{n}", std::process::id())
}

/// Removes a test's own cgroup parent at its end and checks that it is
/// gone: every bot's and build's leaf was removed as its process was
/// reaped, so nothing may be left in it. A test that is already failing
/// only reports what is left (a second panic would abort the run).
pub fn remove_parent(launcher: &SandboxLauncher) {
    let parent = &launcher.sandbox().config().cgroup_parent;
    let outcome = launcher.sandbox().remove_parent_if_empty();
    if std::thread::panicking() {
        if !matches!(outcome, Ok(true)) {
            eprintln!("removing the test's cgroup parent {parent}: {outcome:?}");
        }
        return;
    }
    match outcome {
        Ok(true) => {}
        Ok(false) => panic!("the test's cgroup parent {parent} still holds a leaf"),
        Err(e) => panic!("cannot remove the test's cgroup parent {parent}: {e}"),
    }
}
