//! What every test of the `arena` binary needs.

use std::path::{Path, PathBuf};
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

/// One sandboxed `arena play` match: its result, each seat's log, and
/// the replay file's bytes.
// Not every test binary that shares this module plays matches.
#[allow(dead_code)]
pub struct Played {
    pub result: serde_json::Value,
    pub logs: Vec<String>,
    pub replay: Vec<u8>,
}

/// Plays `game` with `seed` between `bots` (plus `args`), in a scratch
/// build cache; the run must succeed.
#[allow(dead_code)]
pub fn play(game: &str, seed: u64, bots: &[&Path], args: &[&str]) -> Played {
    let scratch = tempfile::tempdir().unwrap();
    let replay = scratch.path().join("replay.json");
    let logs = scratch.path().join("logs");
    let out = arena()
        .args([
            "play",
            "--game",
            game,
            "--json",
            "--seed",
            &seed.to_string(),
        ])
        .args(bots)
        .arg("--cache-dir")
        .arg(scratch.path().join("cache"))
        .arg("--replay")
        .arg(&replay)
        .arg("--logs")
        .arg(&logs)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = serde_json::from_slice(&out.stdout).unwrap();
    let logs = (0..bots.len())
        .map(|seat| {
            std::fs::read_to_string(logs.join(format!("seat-{seat}.log"))).unwrap_or_default()
        })
        .collect();
    Played {
        result,
        logs,
        replay: std::fs::read(&replay).unwrap_or_default(),
    }
}
