//! What every test of the `arena` binary needs.

use std::path::PathBuf;
use std::process::{Child, Command};

pub fn arena() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arena"))
}

/// Kills and reaps a child process on drop, so a failing test leaves nothing running.
// Not every test binary that shares this module starts a long-lived child.
#[allow(dead_code)]
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Removes what is left of cgroup parent `name` in every hierarchy when
/// dropped (empty leaves, then the parent), so a failing test leaves no
/// cgroup behind; [`CgroupParent::dirs`] lists where it still exists.
// Not every test binary that shares this module confines bots.
#[allow(dead_code)]
pub struct CgroupParent(pub String);

impl CgroupParent {
    #[allow(dead_code)]
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut hierarchies: Vec<PathBuf> = std::fs::read_dir("/sys/fs/cgroup")
            .map(|dir| {
                dir.filter_map(|e| e.ok()?.path().canonicalize().ok())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        // A v2-only host has the parent directly under the root.
        hierarchies.push(PathBuf::from("/sys/fs/cgroup"));
        hierarchies.sort();
        hierarchies.dedup();
        hierarchies
            .into_iter()
            .map(|h| h.join(&self.0))
            .filter(|d| d.is_dir())
            .collect()
    }
}

impl Drop for CgroupParent {
    fn drop(&mut self) {
        for parent in self.dirs() {
            for leaf in std::fs::read_dir(&parent).into_iter().flatten().flatten() {
                if leaf.path().is_dir()
                    && let Err(e) = std::fs::remove_dir(leaf.path())
                {
                    eprintln!("cannot remove cgroup {}: {e}", leaf.path().display());
                }
            }
            if let Err(e) = std::fs::remove_dir(&parent) {
                eprintln!("cannot remove cgroup {}: {e}", parent.display());
            }
        }
    }
}
