//! Model-graph bots in real, sandboxed Ants matches: `arena play` starts
//! the model host in each model seat's sandbox, which checks the graph
//! before its first turn and evaluates it every turn. The shipped models
//! play; every malformed model gets its verdict (a failed build with the
//! check's reason, strikes up to the limit, or a forfeit for memory); and
//! nothing is left behind.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{CgroupParent, Played, arena};

fn bots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots")
}

fn model(name: &str) -> PathBuf {
    bots().join("ants-models").join(name)
}

fn malformed(name: &str) -> PathBuf {
    bots().join("test/ants-models").join(name)
}

/// One sandboxed Ants match.
fn play(bots: &[&Path], args: &[&str]) -> Played {
    support::play("ants", 5, bots, args)
}

fn short_game() -> [&'static str; 2] {
    ["--rules", "max_turns=60"]
}

#[test]
fn the_starter_model_plays_and_its_evaluations_are_measured_and_replayable() {
    let starter = model("starter");
    let stay = model("stay");
    let played = play(&[starter.as_path(), stay.as_path()], &short_game());
    let result = &played.result;
    assert_eq!(result["game"], "ants", "{result}");
    for seat in 0..2 {
        let p = &result["players"][seat];
        assert_eq!(p["forfeit"], Value::Null, "{p}\n{}", played.logs[seat]);
        assert_eq!(p["faults"]["strike"], 0, "{p}\n{}", played.logs[seat]);
        let evaluation = &p["evaluation_ms"];
        assert!(evaluation["p50"].as_f64().unwrap() > 0.0, "{p}");
        assert!(
            evaluation["p99"].as_f64().unwrap() >= evaluation["p50"].as_f64().unwrap(),
            "{p}"
        );
        assert!(p["moves"].as_u64().unwrap() > 0, "{p}");
    }
    // The replay holds the orders as applied: verifying needs no model.
    let replay = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(replay.path(), &played.replay).unwrap();
    let verified = arena()
        .args(["replay", "verify"])
        .arg(replay.path())
        .output()
        .unwrap();
    assert!(verified.status.success(), "{verified:?}");
}

#[test]
fn a_graph_the_check_refuses_is_a_failed_build_with_the_reason() {
    let stay = model("stay");
    let cases: [(PathBuf, &[&str], &str); 3] = [
        (malformed("wrong-head"), &[], "head"),
        (malformed("unsupported-op"), &[], "operator"),
        // The shipped starter, over a lowered size limit.
        (model("starter"), &["--model-bytes", "1000"], "bytes"),
    ];
    for (bot, args, reason) in cases {
        let mut all: Vec<&str> = short_game().to_vec();
        all.extend_from_slice(args);
        let played = play(&[bot.as_path(), stay.as_path()], &all);
        let p = &played.result["players"][0];
        assert_eq!(p["forfeit"], "build_failed", "{}: {p}", bot.display());
        assert!(
            played.logs[0].contains(reason),
            "{}: the log does not say {reason:?}:\n{}",
            bot.display(),
            played.logs[0]
        );
        assert_eq!(played.result["winner"], 1, "{}", played.result);
    }
}

#[test]
fn a_graph_over_the_cost_limit_is_refused() {
    let starter = model("starter");
    let stay = model("stay");
    let mut args = short_game().to_vec();
    args.extend_from_slice(&["--model-macs", "10"]);
    let played = play(&[starter.as_path(), stay.as_path()], &args);
    let p = &played.result["players"][0];
    assert_eq!(p["forfeit"], "build_failed", "{p}");
    assert!(
        played.logs[0].contains("multiply-accumulates"),
        "{}",
        played.logs[0]
    );
}

#[test]
fn failed_evaluations_are_strikes_up_to_the_limit() {
    let stay = model("stay");
    let nan = malformed("nan");
    let mut args = short_game().to_vec();
    args.extend_from_slice(&["--fault-limit", "3"]);
    let played = play(&[nan.as_path(), stay.as_path()], &args);
    let p = &played.result["players"][0];
    assert_eq!(p["faults"]["strike"], 3, "{p}");
    assert_eq!(p["forfeit"], "faults", "{p}");
    assert_eq!(p["forfeit_turn"], 2, "{p}");
    assert!(played.logs[0].contains("not_finite"), "{}", played.logs[0]);
}

#[test]
fn a_graph_too_slow_for_the_deadline_takes_strikes() {
    let stay = model("stay");
    let slow = malformed("too-slow");
    let mut args = short_game().to_vec();
    // Past the default cost limit on purpose: the deadline must catch it.
    args.extend_from_slice(&[
        "--fault-limit",
        "2",
        "--move-ms",
        "20",
        "--first-move-ms",
        "20",
        "--model-macs",
        "5000000000",
    ]);
    let played = play(&[slow.as_path(), stay.as_path()], &args);
    let p = &played.result["players"][0];
    assert_eq!(p["faults"]["strike"], 2, "{p}\n{}", played.logs[0]);
    assert_eq!(p["forfeit"], "faults", "{p}");
    assert!(played.logs[0].contains("late"), "{}", played.logs[0]);
}

#[test]
fn a_graph_that_allocates_past_the_cap_forfeits_for_memory_and_leaves_nothing() {
    let parent = CgroupParent(format!("arena-cli-ants-alloc-{}", std::process::id()));
    let stay = model("stay");
    let huge = malformed("huge-alloc");
    let mut args = short_game().to_vec();
    args.extend_from_slice(&["--cgroup-parent", &parent.0]);
    let played = play(&[huge.as_path(), stay.as_path()], &args);
    let p = &played.result["players"][0];
    assert_eq!(p["forfeit"], "memory", "{p}\n{}", played.logs[0]);
    assert_eq!(played.result["winner"], 1, "{}", played.result);
    assert!(
        parent.dirs().is_empty(),
        "the match left {:?}",
        parent.dirs()
    );
}
