//! Model-graph bots in real, sandboxed generals matches: the model host in
//! the seat's sandbox reads the handshake and every frame, keeps the
//! seat's memory, evaluates the graph and plays the best legal entry of
//! its head. Each match is then replayed with the same graph evaluated in
//! this process on the frames the referee sent: the seat played exactly
//! what the policy chooses, turn by turn.

mod support;

use std::path::{Path, PathBuf};

use arena_engine::generals::Generals;
use arena_engine::generals_classic::GeneralsClassicMulti;
use arena_engine::registry;
use arena_engine::replay::Replay;
use arena_engine::{Game, generals_classic::GeneralsClassic};
use arena_model::Policy;
use serde_json::Value;
use support::Played;

fn bots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots")
}

fn model(name: &str) -> PathBuf {
    bots().join("generals-models").join(name)
}

fn starter() -> PathBuf {
    bots().join("starter-python")
}

/// Replays `played` with the model at `path` evaluated here on the frames
/// seat `seat` was sent; every action the seat played must be the one the
/// policy chooses. Returns how many turns were compared.
fn played_as_the_policy_chooses<G>(played: &Played, game: &str, path: &Path, seat: usize) -> usize
where
    G: Game + serde::de::DeserializeOwned,
{
    let replay: Replay<G> = serde_json::from_slice(&played.replay).unwrap();
    let entry = registry::find(game).unwrap();
    let interface = entry.model.expect("generals plays model graphs");
    let limits = entry.limits.model.expect("generals has model limits");
    let mut policy = Policy::load(path, interface, &limits).unwrap();
    let mut state = replay.initial.clone();
    let mut message = Vec::new();
    let mut compared = 0;
    for (turn, step) in replay.turns.iter().enumerate() {
        if state.is_due(seat) {
            message.clear();
            if compared == 0 {
                state.write_handshake(seat, &mut message);
            }
            state.write_frame(seat, &mut message);
            let reply = policy.evaluate(&message).unwrap();
            let chosen = state.parse_action(seat, &reply).unwrap();
            assert_eq!(
                step.actions[seat],
                Some(chosen),
                "turn {turn}: the seat played something else than its policy chooses"
            );
            assert_eq!(step.faults[seat], None, "turn {turn}");
            compared += 1;
        }
        if state.step(&step.actions).is_some() {
            break;
        }
    }
    compared
}

fn check_model_seat(played: &Played, seat: usize) {
    let p = &played.result["players"][seat];
    let log = &played.logs[seat];
    assert_eq!(p["forfeit"], Value::Null, "{p}\n{log}");
    assert_eq!(p["faults"]["strike"], 0, "{p}\n{log}");
    assert!(p["evaluation_ms"]["p50"].as_f64().unwrap() > 0.0, "{p}");
    // The greedy head scores moves out of cells it cannot move from: those
    // turns are counted, and the best legal entry played instead.
    assert!(
        p["stats"]["illegal_best_entries"].as_u64().unwrap() > 0,
        "{p}"
    );
    assert!(log.contains("model ready"), "{log}");
}

#[test]
fn a_competition_model_plays_exactly_what_its_policy_chooses() {
    let greedy = model("greedy");
    let played = support::play("generals", 7, &[greedy.as_path(), &starter()], &[]);
    check_model_seat(&played, 0);
    let compared = played_as_the_policy_chooses::<Generals>(&played, "generals", &greedy, 0);
    assert!(compared > 50, "only {compared} turns");
    let replay = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(replay.path(), &played.replay).unwrap();
    let verified = support::arena()
        .args(["replay", "verify"])
        .arg(replay.path())
        .output()
        .unwrap();
    assert!(verified.status.success(), "{verified:?}");
}

#[test]
fn classic_models_play_the_duel_and_free_for_all() {
    let greedy = model("greedy-classic");
    let played = support::play(
        "generals-classic",
        11,
        &[&starter(), greedy.as_path()],
        &["--rules", "max_turns=150"],
    );
    check_model_seat(&played, 1);
    let compared =
        played_as_the_policy_chooses::<GeneralsClassic>(&played, "generals-classic", &greedy, 1);
    assert!(compared > 50, "only {compared} turns");

    let played = support::play(
        "generals-classic",
        12,
        &[&starter(), &starter(), greedy.as_path()],
        &["--rules", "mode=ffa,max_turns=150"],
    );
    check_model_seat(&played, 2);
    let compared = played_as_the_policy_chooses::<GeneralsClassicMulti>(
        &played,
        "generals-classic",
        &greedy,
        2,
    );
    assert!(compared > 50, "only {compared} turns");
}

#[test]
fn a_graph_for_the_other_ruleset_is_a_failed_build() {
    // The competition's head has a build column the classic one lacks.
    let greedy = model("greedy");
    let played = support::play(
        "generals-classic",
        3,
        &[greedy.as_path(), &starter()],
        &["--rules", "max_turns=50"],
    );
    let p = &played.result["players"][0];
    assert_eq!(p["forfeit"], "build_failed", "{p}");
    assert!(played.logs[0].contains("head"), "{}", played.logs[0]);
}

#[test]
fn a_board_larger_than_the_graph_is_a_strike_each_turn() {
    let small = bots().join("test/generals-models/small-board");
    // Classic boards are 15x15 to 23x23: seed 2 draws a larger one, so the
    // adapters refuse every frame (the log names the sizes).
    let played = support::play(
        "generals-classic",
        2,
        &[small.as_path(), &starter()],
        &["--rules", "max_turns=50", "--fault-limit", "3"],
    );
    let p = &played.result["players"][0];
    assert_eq!(p["faults"]["strike"], 3, "{p}\n{}", played.logs[0]);
    assert_eq!(p["forfeit"], "faults", "{p}");
    assert!(
        played.logs[0].contains("larger than the graph's 15x15"),
        "{}",
        played.logs[0]
    );
}

#[test]
fn bench_model_measures_every_turn_in_the_sandbox() {
    let greedy = model("greedy-classic");
    let out = support::arena()
        .args([
            "bench",
            "model",
            "--game",
            "generals-classic",
            "--rules",
            "max_turns=40",
            "--json",
        ])
        .arg(&greedy)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Two seats, 40 turns each, every one measured.
    assert_eq!(figures["turns"], 80, "{figures}");
    let (p50, p99, max) = (
        figures["turn_ms_p50"].as_f64().unwrap(),
        figures["turn_ms_p99"].as_f64().unwrap(),
        figures["turn_ms_max"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{figures}");
    assert_eq!(figures["deadline_ms"], 150, "{figures}");
    assert!(figures["macs"].as_u64().unwrap() > 100_000, "{figures}");

    // A game without model seats is refused with the reason.
    let out = support::arena()
        .args(["bench", "model", "--game", "generals-ffa"])
        .arg(&greedy)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no model-graph seats"),
        "{out:?}"
    );
}

#[test]
fn the_check_refuses_a_graph_whose_loading_needs_more_than_a_seat_has() {
    // Small on disk; loading it makes a 3.2 GB constant.
    let huge = bots().join("test/generals-models/huge-constant");
    let out = support::arena()
        .args(["model", "check", "--game", "generals"])
        .arg(&huge)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(stderr.contains("failed to allocate"), "{stderr}");
    // A graph that fits passes under the same cap.
    let out = support::arena()
        .args(["model", "check", "--game", "generals", "--memory-mb", "512"])
        .arg(model("greedy"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
