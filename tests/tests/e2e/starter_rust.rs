//! The Rust starter bot as a participant gets it: `arena play
//! bots/starter-rust bots/starter-python` builds it with its `build.sh`
//! (Cargo, offline, in the sandbox, with no dependencies to fetch) and plays
//! a whole match that ends by the rules, with no forfeit and no fault.

use std::time::Duration;

use crate::support::arena::{arena, workspace};
use crate::support::cgroups::CgroupParent;
use crate::support::process::Proc;

/// A release build of the starter plus one match, debug runner.
const MATCH: Duration = Duration::from_secs(300);

#[test]
fn the_rust_starter_builds_offline_in_the_sandbox_and_plays_a_match() {
    let cache = tempfile::Builder::new()
        .prefix("arena-e2e-starter-rust-")
        .tempdir()
        .expect("temp dir");
    let cgroup = CgroupParent::new(format!("arena-e2e-starter-{}", std::process::id()));
    let mut command = arena();
    command
        .current_dir(workspace())
        .args(["play", "bots/starter-rust", "bots/starter-python", "--json"])
        .args(["--seed", "11", "--cgroup-parent", cgroup.name()])
        // A private build cache: the build really happens here.
        .arg("--cache-dir")
        .arg(cache.path());
    let mut play = Proc::spawn("arena play (starter-rust)", command);
    let status = play
        .wait_exit(MATCH)
        .unwrap_or_else(|| panic!("the match did not finish within {MATCH:?}"));
    let stdout = play.stdout.text();
    let stderr = play.stderr.text();
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    let result: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}:\n{stdout}\n{stderr}"));

    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        [
            "general_captured",
            "deathtouch",
            "double_capture_draw",
            "double_deathtouch_draw",
            "turn_cap_draw",
        ]
        .contains(&reason),
        "the game's own ending, not a forfeit: {result}"
    );
    assert!(result["turns"].as_u64().unwrap_or_default() > 0, "{result}");
    let players = result["players"].as_array().expect("players");
    assert_eq!(players.len(), 2, "{result}");
    assert_eq!(players[0]["bot"], "starter-rust", "{result}");
    for player in players {
        assert!(player["forfeit"].is_null(), "{player}");
        assert_eq!(player["faults"]["timeout"], 0, "{player}");
        assert_eq!(player["faults"]["malformed"], 0, "{player}");
        assert!(player["moves"].as_u64().unwrap_or_default() > 0, "{player}");
    }

    // The build ran here, in the cache's copy, and made the bot's binary.
    let built = std::fs::read_dir(cache.path())
        .expect("the build cache")
        .filter_map(|e| e.ok())
        .any(|e| e.path().join("tree/bot").is_file());
    assert!(built, "no built starter-rust in the cache:\n{stderr}");
    // A one-shot run removes its cgroup parent.
    assert!(!cgroup.exists(), "{} left behind", cgroup.name());
}
