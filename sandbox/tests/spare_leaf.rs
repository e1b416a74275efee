//! A long-lived sandbox keeps one cgroup leaf made ahead for its next
//! spawn: the next spawn with the same limits uses it, and nothing is left
//! once the sandbox is gone.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{RuntimeEnv, Sandbox, SandboxCommand, SandboxConfig};

/// Leaf directories under `parent` in the pids hierarchy (v1 here; the
/// unified mount's on v2 hosts).
fn leaves(parent: &str) -> Vec<PathBuf> {
    let roots = [
        Path::new("/sys/fs/cgroup/pids").join(parent),
        Path::new("/sys/fs/cgroup").join(parent),
    ];
    let Some(root) = roots.iter().find(|r| r.is_dir()) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Removes the test's cgroup parent from every hierarchy, also when the
/// test fails (the sandbox, dropped first, has removed its leaves).
struct ParentGuard(String);

impl Drop for ParentGuard {
    fn drop(&mut self) {
        let Ok(mounts) = std::fs::read_dir("/sys/fs/cgroup") else {
            return;
        };
        for mount in mounts.flatten() {
            let _ = std::fs::remove_dir(mount.path().join(&self.0));
        }
        let _ = std::fs::remove_dir(Path::new("/sys/fs/cgroup").join(&self.0));
    }
}

#[test]
fn the_next_spawn_takes_the_leaf_made_ahead_and_none_outlives_the_sandbox() {
    let parent = format!("arena-spare-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = Sandbox::new(SandboxConfig {
        cgroup_parent: parent.clone(),
        spare_leaf: true,
        ..SandboxConfig::default()
    })
    .expect("the sandbox needs root and cgroups");
    let app = tempfile::tempdir().unwrap();
    std::fs::set_permissions(app.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let cores = CoreAllocator::available().unwrap();
    let command = SandboxCommand::new("/bin/true", app.path(), 65_534)
        .env("PATH", RuntimeEnv::host_default().search_path())
        .cpus(vec![cores[0]])
        .label("bot");

    let mut first = sandbox.spawn(&command).unwrap();
    assert_eq!(first.wait().unwrap().code, Some(0));
    drop(first);
    // Made on the spawner's thread once the spawn has been answered.
    let waited = std::time::Instant::now();
    while leaves(&parent).is_empty() && waited.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let ahead = leaves(&parent);
    assert_eq!(ahead.len(), 1, "one leaf made ahead: {ahead:?}");
    assert!(ahead[0].to_string_lossy().ends_with("-spare"), "{ahead:?}");

    // Same limits: the spawn runs in the leaf made ahead.
    let mut second = sandbox.spawn(&command).unwrap();
    let during = leaves(&parent);
    assert!(during.contains(&ahead[0]), "{during:?}");
    let verdict = second.wait().unwrap();
    assert_eq!(verdict.code, Some(0), "{verdict:?}");
    drop(second);

    // Other limits: a fresh leaf, and the one made ahead is replaced.
    let other = command.clone().cpus(vec![*cores.last().unwrap()]);
    let mut third = sandbox.spawn(&other).unwrap();
    let verdict = third.wait().unwrap();
    assert_eq!(verdict.code, Some(0), "{verdict:?}");
    drop(third);

    assert!(
        sandbox.remove_parent_if_empty().unwrap(),
        "{:?}",
        leaves(&parent)
    );
    drop(sandbox);
    assert!(leaves(&parent).is_empty());
}
