//! Sweeping the cgroup parents that killed test processes left behind.
//!
//! The test harnesses name each cgroup parent after their own process
//! (`arena-e2e-<pid>-3`, `arena-worker-test-<pid>-0`, ...), so tests of
//! runs side by side never share one. A test process that is killed (a
//! timeout, Ctrl-C, SIGKILL) cannot remove its parents, and no later run
//! uses that name again, so Arena's own sweep of stale leaves
//! (`CgroupManager::remove_stale`, which looks inside the parent it is
//! given) never reaches them either. [`sweep`], run by each harness before
//! it makes its first parent, removes the parents whose name fits one of
//! the harness's patterns and whose pid no longer names a process. A parent
//! of a running process, or one that still holds a process, is left alone.
//!
//! Shared by the worker's tests (`worker/tests/support/`) and the
//! end-to-end harness (`tests/tests/e2e/support/cgroups.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where the cgroup hierarchies are mounted.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// What one sweep did.
#[derive(Debug, Default)]
pub struct Swept {
    /// Parent directories removed (one per hierarchy it was in).
    pub removed: Vec<PathBuf>,
    /// Parents of a dead process that could not be removed, and why.
    pub kept: Vec<String>,
}

/// The pid in `name` if it fits `pattern`: `<before>{pid}<after>`, where an
/// `after` ending in `*` stands for that text followed by at least one more
/// character (`arena-e2e-{pid}-*` fits `arena-e2e-41-resume`).
pub fn owner(name: &str, pattern: &str) -> Option<u32> {
    let (before, after) = pattern.split_once("{pid}")?;
    let rest = name.strip_prefix(before)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (pid, tail) = rest.split_at(digits);
    let fits = match after.strip_suffix('*') {
        Some(fixed) => tail
            .strip_prefix(fixed)
            .is_some_and(|more| !more.is_empty()),
        None => tail == after,
    };
    // No leading zero: `{pid}` is written by `format!`, never padded.
    if !fits || pid.is_empty() || pid.starts_with('0') {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process `pid` exists (in this pid namespace; a zombie counts).
pub fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Every mounted hierarchy under `root`: the root itself (the whole tree on
/// a cgroup2-only host) and each directory in it, with co-mounted
/// controllers (symlinks to one directory) counted once.
pub fn hierarchies(root: &Path) -> Vec<PathBuf> {
    let mut all = BTreeSet::from([root.to_path_buf()]);
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        if let Ok(dir) = entry.path().canonicalize()
            && dir.is_dir()
        {
            all.insert(dir);
        }
    }
    all.into_iter().collect()
}

/// Removes, in every hierarchy under `root`, each parent whose name fits
/// one of `patterns` and whose pid is not running: its leaves (deepest
/// first), then itself. A group that still lists a process is not touched
/// (nor anything above it), and is reported in [`Swept::kept`].
pub fn sweep_in(root: &Path, patterns: &[&str]) -> Swept {
    let mut swept = Swept::default();
    for hierarchy in hierarchies(root) {
        let Ok(entries) = std::fs::read_dir(&hierarchy) else {
            continue;
        };
        for entry in entries.flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|_| is_dir) else {
                continue;
            };
            let Some(pid) = patterns.iter().find_map(|p| owner(name, p)) else {
                continue;
            };
            if pid == std::process::id() || alive(pid) {
                continue;
            }
            let dir = entry.path();
            match remove_group(&dir) {
                Ok(()) => swept.removed.push(dir),
                Err(why) => swept.kept.push(format!("{}: {why}", dir.display())),
            }
        }
    }
    swept
}

/// [`sweep_in`] the real hierarchies; what it kept is printed.
pub fn sweep(patterns: &[&str]) -> Swept {
    let swept = sweep_in(Path::new(CGROUP_ROOT), patterns);
    for kept in &swept.kept {
        eprintln!("cgroup sweep: left a dead test's cgroup in place: {kept}");
    }
    swept
}

/// Removes the group `dir` and the groups under it, deepest first; refuses
/// (removing nothing more) at a group that lists a process.
fn remove_group(dir: &Path) -> Result<(), String> {
    let children: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list it: {e}"))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    for child in children {
        remove_group(&child)?;
    }
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    if !procs.trim().is_empty() {
        return Err(format!(
            "{} still holds processes {:?}",
            dir.display(),
            procs.split_whitespace().collect::<Vec<_>>()
        ));
    }
    std::fs::remove_dir(dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))
}
