//! The `arena` binary as users and scripts call it: the JSON result document,
//! replay files and the documented exit codes.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{CgroupParent, Reaped, arena};

/// `arena play` with a private build cache (removed with the returned dir).
fn play(bots: [&str; 2]) -> (Command, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let mut command = arena();
    command
        .arg("play")
        .arg(bot(bots[0]))
        .arg(bot(bots[1]))
        .arg("--cache-dir")
        .arg(cache.path());
    (command, cache)
}

fn bot(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bots")
        .join(path)
}

/// `arena replay verify` on `replay`.
fn verify(replay: &Path) -> Output {
    arena()
        .args(["replay", "verify"])
        .arg(replay)
        .output()
        .unwrap()
}

#[test]
fn a_fault_limit_of_zero_is_refused_before_any_bot_starts() {
    let (mut command, _cache) = play(["test/random", "test/random"]);
    let out = command
        .args(["--no-sandbox", "--fault-limit", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("fault_limit must be at least 1"), "{said}");
}

#[test]
fn play_json_prints_the_documented_result_and_replays_verify() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("match.json");
    let (mut command, _cache) = play(["test/random", "test/garbage"]);
    let out = command
        .args(["--seed", "5", "--json", "--fault-limit", "3", "--replay"])
        .arg(&replay)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["game"], "generals");
    assert_eq!(result["seed"], 5);
    assert_eq!(result["winner"], 0);
    assert_eq!(result["reason"], "forfeit");
    assert!(result["turns"].is_u64());
    let players = result["players"].as_array().unwrap();
    assert_eq!(players.len(), 2);
    for (seat, p) in players.iter().enumerate() {
        assert_eq!(p["seat"], seat);
        for key in ["bot", "forfeit", "faults", "moves", "latency_ms"] {
            assert!(p.get(key).is_some(), "player lacks {key}: {p}");
        }
        for key in ["p50", "p99", "max"] {
            assert!(p["latency_ms"][key].is_number());
        }
    }
    assert_eq!(players[1]["forfeit"], "faults");
    assert_eq!(players[1]["faults"]["malformed"], 3);
    assert_eq!(players[1]["faults"]["timeout"], 0);
    assert_eq!(players[0]["forfeit"], serde_json::Value::Null);
    assert_eq!(result["placements"], serde_json::json!([0, 1]));
    assert_eq!(result["scores"], serde_json::json!([1.0, 0.0]));
    assert_eq!(players[0]["rank"], 0);
    assert_eq!(players[1]["score"], 0.0);

    assert_eq!(verify(&replay).status.code(), Some(0));
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&replay).unwrap()).unwrap();

    // Altering a recorded action changes the re-simulation: exit status 3.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&replay).unwrap()).unwrap();
    doc["result"]["reason"] = "turn_cap_draw".into();
    std::fs::write(&replay, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(verify(&replay).status.code(), Some(3));

    // A forged initial state (here a board one column wider than its planes)
    // is refused as input, exit status 1, rather than crashing the simulation.
    let width = doc["initial"]["width"].as_u64().unwrap();
    doc["initial"]["width"] = (width + 1).into();
    std::fs::write(&replay, serde_json::to_vec(&doc).unwrap()).unwrap();
    let forged = verify(&replay);
    assert_eq!(forged.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&forged.stderr);
    assert!(stderr.contains("plane has"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Another format, or a game the file's state is not: unreadable input,
    // exit status 1 (not 3, which means "reproduces differently").
    for (key, value) in [
        ("format", "arena-replay/1"),
        ("game", "generals-ffa"),
        ("game", "chess"),
    ] {
        let mut other = good.clone();
        other[key] = value.into();
        std::fs::write(&replay, serde_json::to_vec(&other).unwrap()).unwrap();
        let out = verify(&replay);
        assert_eq!(out.status.code(), Some(1), "{key} = {value}");
    }

    // Larger than any replay: refused before it is read (a sparse file, so
    // the test itself writes nothing).
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let out = verify(&huge);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("more than"),
        "{out:?}"
    );

    // Not a replay at all: an error, exit status 1.
    std::fs::write(&replay, b"{not json").unwrap();
    let garbage = verify(&replay);
    assert_eq!(garbage.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&garbage.stderr).contains("not a valid replay"));
}

#[test]
fn play_without_json_prints_a_summary() {
    let (mut command, _cache) = play(["test/random", "test/crash"]);
    let out = command.args(["--seed", "9"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("seed 9"), "{text}");
    assert!(text.contains("wins by forfeit"), "{text}");
    assert!(text.contains("forfeit: crash"), "{text}");
}

#[test]
fn no_sandbox_plays_unconfined_and_says_so() {
    let out = arena()
        .arg("play")
        .arg(bot("test/random"))
        .arg(bot("test/early-exit"))
        .args(["--seed", "2", "--json", "--no-sandbox"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("unconfined"));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["players"][1]["forfeit"], "exit");
}

#[test]
fn build_prints_the_artifact_id_and_caches_it() {
    let cache = tempfile::tempdir().unwrap();
    let build = || {
        arena()
            .arg("build")
            .arg(bot("starter-python"))
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap()
    };
    let first = build();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let id = String::from_utf8_lossy(&first.stdout).trim().to_owned();
    assert!(id.contains("-host-"), "{id}");
    assert!(cache.path().join(&id).join("tree/run.sh").is_file());
    let second = build();
    assert_eq!(String::from_utf8_lossy(&second.stdout).trim(), id);

    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("run.sh"), "exec cat\n").unwrap();
    std::fs::write(broken.path().join("build.sh"), "echo cannot >&2; exit 1\n").unwrap();
    let out = arena()
        .arg("build")
        .arg(broken.path())
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot") && err.contains("build failed"),
        "{err}"
    );
}

#[test]
fn a_missing_bot_is_a_clear_error() {
    let out = arena()
        .arg("play")
        .arg(bot("no-such-bot"))
        .arg(bot("test/random"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-bot"));
}

#[test]
fn bench_engine_json_reports_both_figures() {
    let out = arena()
        .args(["bench", "engine", "--seconds", "0.2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(figures["raw_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(figures["rendered_turns_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_sandbox_reports_spawn_and_round_trip_figures_beside_their_comparisons() {
    let parent = CgroupParent(format!("arena-cli-bench-sandbox-{}", std::process::id()));
    let cache = tempfile::tempdir().unwrap();
    let out = arena()
        .args([
            "bench",
            "sandbox",
            "--runs",
            "5",
            "--matches",
            "1",
            "--json",
        ])
        .args(["--cgroup-parent", &parent.0])
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let number = |key: &str| {
        figures[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} is not a number: {figures}"))
    };
    assert_eq!(figures["spawn_runs"], 5);
    let (p50, p99) = (
        number("spawn_to_first_line_us_p50"),
        number("spawn_to_first_line_us_p99"),
    );
    assert!(p50 > 0.0 && p99 >= p50, "{figures}");
    let cold = number("cold_spawn_to_first_line_us_p50");
    assert!(
        cold > 0.0 && number("cold_spawn_to_first_line_us_p99") >= cold,
        "{figures}"
    );
    // The worker's first spawn is cold; every later one is ordered.
    assert_eq!(figures["prestarted_spawns"], 4, "{figures}");
    for key in [
        "sandboxed_round_trip_us_p50_median",
        "plain_round_trip_us_p50_median",
    ] {
        assert!(number(key) > 0.0, "{key}: {figures}");
    }
    // bwrap is compared when it is installed, and said to be missing otherwise.
    let bwrap = figures["bwrap_spawn_to_first_line_us_p50"].as_f64();
    let installed = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert_eq!(bwrap.is_some(), installed, "{figures}");
    if let Some(bwrap) = bwrap {
        assert!((number("spawn_p50_ratio_to_bwrap") - p50 / bwrap).abs() < 1e-9);
        assert!((number("cold_spawn_p50_ratio_to_bwrap") - cold / bwrap).abs() < 1e-9);
    }
    assert!(
        parent.dirs().is_empty(),
        "the bench left {:?}",
        parent.dirs()
    );
}

/// Leaf cgroups under `parent` in the pids hierarchy (present on v1 and hybrid hosts).
fn leaves(parent: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(Path::new("/sys/fs/cgroup/pids").join(parent))
        .map(|dir| {
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// Processes listed in a leaf.
fn procs(leaf: &Path) -> Vec<String> {
    std::fs::read_to_string(leaf.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_killed_runner_leaves_no_bot_running_and_the_next_start_cleans_up() {
    let parent = format!("arena-cli-crash-test-{}", std::process::id());
    let cache = tempfile::tempdir().unwrap();
    let mut runner = arena()
        .arg("play")
        .arg(bot("test/sleeper"))
        .arg(bot("test/sleeper"))
        .args(["--first-move-ms", "60000", "--cgroup-parent", &parent])
        .arg("--cache-dir")
        .arg(cache.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("both bots to be running", || {
        let leaves = leaves(&parent);
        leaves.len() == 2 && leaves.iter().all(|l| !procs(l).is_empty())
    });
    let stale = leaves(&parent);

    runner.kill().unwrap();
    runner.wait().unwrap();
    // The kernel ends every bot with its runner (parent-death signal on the
    // namespace's first process takes the whole pid namespace with it).
    wait_for("the bots to die with their runner", || {
        stale.iter().all(|l| procs(l).is_empty())
    });
    assert!(
        stale.iter().all(|l| l.exists()),
        "only a new start removes them"
    );

    // The next runner on this parent removes what the dead one left behind.
    let out = arena()
        .arg("play")
        .arg(bot("test/random"))
        .arg(bot("test/crash"))
        .args(["--cgroup-parent", &parent])
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stale"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stale.iter().all(|l| !l.exists()), "stale leaves remain");
    assert!(
        !Path::new("/sys/fs/cgroup/pids").join(&parent).exists(),
        "the one-shot run removes its empty parent"
    );
}

/// Reads lines from `reader` until one starts with `prefix`; returns the rest.
fn line_starting(reader: &mut impl std::io::BufRead, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "no line starting {prefix:?}"
        );
        if let Some(rest) = line.trim().strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
}

/// Checks that the metrics at `address` mention each of `names`.
fn assert_scraped(address: &str, names: &[&str]) {
    let text = scrape(address);
    for name in names {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
}

fn scrape(address: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

#[test]
fn coordinator_and_worker_serve_prometheus_metrics() {
    let mut coordinator = Reaped(
        arena()
            .args([
                "coordinator",
                "--listen",
                "127.0.0.1:0",
                "--metrics",
                "127.0.0.1:0",
                "--worker-token",
                "w-token",
                "--admin-token",
                "a-token",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = std::io::BufReader::new(coordinator.0.stdout.take().unwrap());
    let metrics = line_starting(&mut out, "metrics on ");
    let listening = line_starting(&mut out, "listening on ");
    assert_scraped(
        &metrics,
        &[
            "arena_queue_depth 0",
            "arena_workers_connected 0",
            "arena_leases_expired_total 0",
            "arena_match_duration_seconds",
        ],
    );

    let cache = tempfile::tempdir().unwrap();
    let mut worker = Reaped(
        arena()
            .args(["worker", "--coordinator"])
            .arg(format!("http://{listening}"))
            .args([
                "--token",
                "w-token",
                "--no-sandbox",
                "--metrics",
                "127.0.0.1:0",
            ])
            .arg("--submissions-dir")
            .arg(cache.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut err = std::io::BufReader::new(worker.0.stderr.take().unwrap());
    let worker_metrics = line_starting(&mut err, "arena worker: metrics on ");
    assert_scraped(
        &worker_metrics,
        &[
            "arena_move_latency_seconds",
            "arena_match_duration_seconds",
            "arena_build_duration_seconds",
            "arena_sandbox_spawn_seconds",
        ],
    );
    // The worker registers: the coordinator counts it.
    wait_for("the worker to register", || {
        scrape(&metrics).contains("arena_workers_connected 1")
    });
}

#[test]
fn games_lists_every_registered_game_with_its_limits() {
    let out = arena().args(["games", "--json"]).output().unwrap();
    assert!(out.status.success());
    let games: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = games
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"generals") && names.contains(&"generals-ffa"));
    let grid = games
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "grid-royale")
        .unwrap();
    assert_eq!(grid["seats"], serde_json::json!([2, 4]));
    assert_eq!(grid["limits"]["move_ms"], 2000);
    let generals = &games[0];
    assert_eq!(generals["seats"], serde_json::json!([2]));
    assert_eq!(generals["limits"]["move_ms"], 150);
    assert_eq!(generals["limits"]["fault_limit"], 50);
    let ffa = games
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "generals-ffa")
        .unwrap();
    assert_eq!(ffa["seats"], serde_json::json!([4]));
    assert_eq!(ffa["baselines"], serde_json::json!(["sprawl", "crown"]));
    assert!(
        ffa["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"] == "blitz" && o["type"] == "bool")
    );

    let text = arena().arg("games").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("generals-ffa") && text.contains("baseline:sprawl"),
        "{text}"
    );
}

#[test]
fn play_refuses_bad_games_seats_rules_and_baselines_by_name() {
    for (args, needle) in [
        (vec!["--game", "chess", "a", "b"], "unknown game \"chess\""),
        (vec!["a", "b", "c"], "generals is played by 2 seats, not 3"),
        (
            vec![
                "--game",
                "generals-ffa",
                "--rules",
                "speed=2",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:sprawl",
            ],
            "rules.speed",
        ),
        (
            vec![
                "--game",
                "generals-ffa",
                "--rules",
                "blitz=7",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:sprawl",
            ],
            "rules.blitz",
        ),
        (
            vec![
                "--game",
                "generals-ffa",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:sprawl",
                "baseline:nope",
            ],
            "no baseline \"nope\"",
        ),
    ] {
        let out = arena().arg("play").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn a_four_seat_ffa_match_of_baselines_and_a_plan_bot_replays_and_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("ffa.json");
    let out = arena()
        .args(["play", "--game", "generals-ffa", "baseline:sprawl"])
        .arg(bot("ffa-plan-python"))
        .args(["baseline:crown", "baseline:sprawl", "--no-sandbox"])
        .args(["--rules", "blitz=true", "--seed", "4", "--json", "--replay"])
        .arg(&replay)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["game"], "generals-ffa");
    let scores: f64 = result["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .sum();
    assert!((scores - 2.0).abs() < 1e-9, "{result}");
    assert_eq!(result["placements"].as_array().unwrap().len(), 4);
    for p in result["players"].as_array().unwrap() {
        assert!(p["stats"]["invalid_moves"].is_u64(), "{p}");
    }
    assert_eq!(result["players"][1]["faults"]["malformed"], 0, "{result}");
    assert_eq!(result["players"][0]["bot"], "baseline:sprawl");

    assert_eq!(verify(&replay).status.code(), Some(0));
    let dump = arena()
        .args(["replay", "dump"])
        .arg(&replay)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&dump.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines[0].get("initial").is_some());
    assert_eq!(lines[1]["turn"], 1);
    assert!(lines.last().unwrap().get("result").is_some());
    assert_eq!(lines.len() as u64, result["turns"].as_u64().unwrap() + 2);
}

#[test]
fn bench_engine_measures_any_registered_game() {
    let out = arena()
        .args([
            "bench",
            "engine",
            "--game",
            "generals-ffa",
            "--seconds",
            "0.2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["game"], "generals-ffa");
    assert!(figures["fallback_turns_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn classic_generals_plays_replays_and_benches_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("classic.json");
    let out = arena()
        .args(["play", "--game", "generals-classic"])
        .arg(bot("test/random"))
        .arg(bot("test/random"))
        .args(["--no-sandbox", "--seed", "6", "--json", "--replay"])
        .arg(&replay)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["game"], "generals-classic");
    assert!(
        ["general_captured", "double_capture", "turn_cap_draw"]
            .contains(&result["reason"].as_str().unwrap()),
        "{result}"
    );
    assert!(result["turns"].as_u64().unwrap() <= 500);
    assert_eq!(verify(&replay).status.code(), Some(0));

    let out = arena()
        .args([
            "bench",
            "engine",
            "--game",
            "generals-classic",
            "--seconds",
            "0.2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(figures["raw_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(figures["competition_raw_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(figures["ffa8_raw_steps_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn classic_2v2_and_free_for_all_play_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let starter = bot("starter-python");
    let random = bot("test/random");
    for (mode, seats) in [("2v2", 4), ("ffa", 5)] {
        let replay = dir.path().join(format!("{mode}.json"));
        let mut command = arena();
        command.args(["play", "--game", "generals-classic", "--rules"]);
        command.arg(format!("mode={mode},max_turns=150"));
        for seat in 0..seats {
            command.arg(if seat % 2 == 0 { &starter } else { &random });
        }
        let out = command
            .args(["--no-sandbox", "--seed", "8", "--json", "--replay"])
            .arg(&replay)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let players = result["players"].as_array().unwrap();
        assert_eq!(players.len(), seats);
        for p in players {
            assert_eq!(p["faults"]["malformed"], 0, "{mode}: {p}");
            assert_eq!(p["forfeit"], serde_json::Value::Null, "{mode}: {p}");
        }
        if mode == "2v2" {
            let teams: Vec<&serde_json::Value> = players.iter().map(|p| &p["team"]).collect();
            assert_eq!(
                teams,
                [0, 1, 0, 1]
                    .map(serde_json::Value::from)
                    .iter()
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                players[0]["rank"], players[2]["rank"],
                "teammates share a place"
            );
        }
        let scores: f64 = result["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .sum();
        assert!((scores - seats as f64 / 2.0).abs() < 1e-9, "{result}");
        assert_eq!(verify(&replay).status.code(), Some(0), "{mode}");

        // The same replay as recorded before the rules version existed
        // (the rotating move order): refused as input, by version.
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&replay).unwrap()).unwrap();
        assert_eq!(doc["initial"]["rules_version"], 2, "{mode}");
        doc["initial"]
            .as_object_mut()
            .unwrap()
            .remove("rules_version");
        std::fs::write(&replay, serde_json::to_vec(&doc).unwrap()).unwrap();
        let old = verify(&replay);
        assert_eq!(old.status.code(), Some(1), "{mode}");
        let stderr = String::from_utf8_lossy(&old.stderr);
        assert!(
            stderr.contains("rules version 1 (moves in a rotating seat order)"),
            "{stderr}"
        );
    }
}

#[test]
fn a_worker_says_why_it_cannot_reach_its_coordinator() {
    // An address that can never work: an error at once.
    let out = arena()
        .args([
            "worker",
            "--coordinator",
            "garbage",
            "--token",
            "t",
            "--no-sandbox",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid coordinator address \"garbage\""),
        "{stderr}"
    );

    // A coordinator that is not there (yet): the worker says so and retries.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let mut child = arena()
        .args(["worker", "--coordinator", &format!("http://{address}")])
        .args(["--token", "t", "--no-sandbox"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    // Read on a thread, so a worker that never says it fails the test on
    // the deadline instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let line = std::io::BufRead::lines(std::io::BufReader::new(stderr))
            .map_while(Result::ok)
            .find(|line| line.contains("cannot reach the coordinator"));
        let _ = tx.send(line);
    });
    let said = rx.recv_timeout(std::time::Duration::from_secs(30));
    child.kill().unwrap();
    child.wait().unwrap();
    let said = said
        .ok()
        .flatten()
        .expect("the worker says it cannot reach the coordinator");
    assert!(
        said.contains(&address.to_string()) && said.contains("retrying"),
        "{said}"
    );
}

/// `arena run` of the example tournament, stopped by `signal` once both bots
/// of a match are running: it exits with 128 + the signal's number and
/// leaves neither its temp directory nor a cgroup behind.
fn a_signalled_run_cleans_up(signal: &str, number: i32) {
    let parent = CgroupParent(format!(
        "arena-cli-run-{}-{}",
        signal.to_ascii_lowercase(),
        std::process::id()
    ));
    // The run's temp directory goes under a TMPDIR of the test's own.
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let tournament = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tournament.toml");
    let mut run = Reaped(
        arena()
            .arg("run")
            .arg(&tournament)
            .args(["--cgroup-parent", &parent.0, "--state", "none"])
            .arg("--cache-dir")
            .arg(cache.path())
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let scratch = tmp.path().join(format!("arena-run-{}", run.0.id()));
    wait_for("a match's two bots to be running", || {
        let leaves = leaves(&parent.0);
        leaves.iter().filter(|l| !procs(l).is_empty()).count() == 2
    });
    assert!(
        scratch.is_dir(),
        "the run keeps its submissions in {scratch:?}"
    );

    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(run.0.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let mut status = None;
    wait_for("arena run to exit", || {
        status = run.0.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(128 + number),
        "{status:?}\n{stderr}"
    );
    assert!(stderr.contains(signal), "{stderr}");
    assert!(!scratch.exists(), "{scratch:?} is left behind\n{stderr}");
    assert_eq!(
        parent.dirs(),
        Vec::<PathBuf>::new(),
        "cgroups left behind\n{stderr}"
    );
}

#[test]
fn a_run_stopped_by_sigterm_removes_its_temp_dir_and_cgroups() {
    a_signalled_run_cleans_up("TERM", 15);
}

#[test]
fn a_run_stopped_by_sigint_removes_its_temp_dir_and_cgroups() {
    a_signalled_run_cleans_up("INT", 2);
}

/// Lines of `arena replay dump` on `replay`.
fn dump_lines(replay: &Path) -> Vec<serde_json::Value> {
    let dump = arena()
        .args(["replay", "dump"])
        .arg(replay)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    String::from_utf8_lossy(&dump.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn grid_royale_plays_two_and_four_starters_replays_dumps_and_benches() {
    let dir = tempfile::tempdir().unwrap();
    for seats in [2, 4] {
        let replay = dir.path().join(format!("grid-{seats}.json"));
        let mut cmd = arena();
        cmd.args(["play", "--game", "grid-royale"]);
        for _ in 0..seats {
            cmd.arg(bot("grid-royale-python"));
        }
        let out = cmd
            .args(["--no-sandbox", "--rules", "max_turns=40", "--seed", "8"])
            .args(["--json", "--replay"])
            .arg(&replay)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["game"], "grid-royale");
        assert_eq!(result["reason"], "turn_limit", "{result}");
        assert_eq!(result["turns"], 40);
        let mut ranks: Vec<u64> = result["placements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        ranks.sort_unstable();
        assert_eq!(
            ranks,
            (0..seats as u64).collect::<Vec<_>>(),
            "a strict order"
        );
        let banked: u64 = result["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                assert_eq!(p["forfeit"], serde_json::Value::Null, "{p}");
                assert_eq!(p["faults"]["illegal"], 0, "{p}");
                p["stats"]["bank"].as_u64().unwrap()
            })
            .sum();
        assert!(banked > 0, "the starters bank ore: {result}");

        assert_eq!(verify(&replay).status.code(), Some(0));
        let lines = dump_lines(&replay);
        assert_eq!(lines.len(), 40 + 2);
        assert_eq!(lines[0]["initial"]["turn"], 1);
        assert!(lines[0]["initial"].get("you").is_none());
        assert_eq!(lines[1]["actions"].as_array().unwrap().len(), seats);
        assert!(lines[1]["actions"][0]["orders"].is_array(), "{}", lines[1]);
        assert_eq!(lines[40]["state"]["turn"], 41);
        assert!(lines[41].get("result").is_some());
    }

    let out = arena()
        .args(["bench", "engine", "--game", "grid-royale"])
        .args(["--seconds", "0.1", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["units_per_player"], 50);
    assert!(figures["turns_per_s"].as_f64().unwrap() > 0.0);
}

/// Whether `text` holds anything that drives a terminal: an escape or
/// another control (newlines and tabs aside) or a bidirectional override.
fn drives_a_terminal(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t') || ('\u{202a}'..='\u{202e}').contains(&c)
    })
}

#[test]
fn names_from_outside_are_printed_escaped() {
    let scratch = tempfile::tempdir().unwrap();
    // A bot whose directory name recolours the terminal.
    let evil = scratch.path().join("evil\u{1b}[31m");
    std::fs::create_dir(&evil).unwrap();
    for file in ["run.sh", "bot.py"] {
        std::fs::copy(bot("test/random").join(file), evil.join(file)).unwrap();
    }
    // Its own submission, not the random bot's twice.
    std::fs::write(evil.join("note.txt"), "a copy\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = arena()
        .args(["play", "--seed", "3", "--no-sandbox", "--cache-dir"])
        .arg(cache.path())
        .arg(bot("test/random"))
        .arg(&evil)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("evil\\u{1b}[31m"), "{stdout}");
    assert!(!drives_a_terminal(&stdout), "{stdout:?}");

    // A tournament whose name retitles and clears the terminal, and an
    // entrant whose name reverses the text after it.
    let copy = scratch.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for file in ["run.sh", "bot.py", "note.txt"] {
        std::fs::copy(evil.join(file), copy.join(file)).unwrap();
    }
    let file = scratch.path().join("cup.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"Cup\\u001b]0;owned\\u0007\\u001b[2J\"\ngame = \"generals\"\nseed = 4\n\n\
             [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
             [[bots]]\nname = \"plain\"\npath = \"{}\"\n\n\
             [[bots]]\nname = \"exe\\u202egnp\"\npath = \"{}\"\n",
            bot("test/random").display(),
            copy.display()
        ),
    )
    .unwrap();
    let out = arena()
        .args(["run", "--no-sandbox"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("Cup\\u{1b}]0;owned\\u{7}\\u{1b}[2J"),
        "{stdout}"
    );
    assert!(stdout.contains("exe\\u{202e}gnp"), "{stdout}");
    assert!(!drives_a_terminal(&stdout), "{stdout:?}");
}

/// `arena bench` subcommands no other test runs, each once and briefly:
/// they must work as shipped (the wasm bench sandboxed, its process bot
/// started from where the sandbox shows the `arena` binary).
#[test]
fn the_remaining_bench_subcommands_run_briefly() {
    let parent = CgroupParent(format!("arena-cli-bench-wasm-{}", std::process::id()));
    let cache = tempfile::tempdir().unwrap();
    let runs: [(&str, Vec<&str>, &str); 4] = [
        (
            "wasm",
            vec![
                "--matches",
                "1",
                "--runs",
                "1",
                "--cgroup-parent",
                &parent.0,
            ],
            "wasm_round_trip_us_p50_median",
        ),
        ("runner", vec!["--matches", "1"], "matches"),
        (
            "pairing",
            vec!["--max-entrants", "1000"],
            "swiss_round_1000_entrants_ms",
        ),
        (
            "coordinator",
            vec![
                "--entrants",
                "20",
                "--workers",
                "2",
                "--connections",
                "2",
                "--seconds",
                "1",
            ],
            "ops_per_second",
        ),
    ];
    for (target, args, key) in runs {
        let mut command = arena();
        command.args(["bench", target, "--json"]).args(&args);
        if target == "wasm" {
            command.arg("--cache-dir").arg(cache.path());
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "bench {target}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let figures: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("bench {target}: {e}: {text}"));
        assert!(
            figures.get(key).is_some(),
            "bench {target}: no {key}: {figures}"
        );
    }
}

/// `arena bench coordinator --store embedded`: the embedded store alone,
/// named in both outputs, with a positive ops/s, and its temp state
/// directory gone afterwards. (The default, both stores, runs in the test
/// above, which reads the Redis figures under their old top-level keys.)
#[test]
fn bench_coordinator_measures_the_embedded_store() {
    let tmp = tempfile::tempdir().unwrap();
    let tiny = [
        "--store",
        "embedded",
        "--entrants",
        "10",
        "--workers",
        "2",
        "--connections",
        "1",
        "--seconds",
        "1",
    ];
    let out = arena()
        .args(["bench", "coordinator", "--json"])
        .args(tiny)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        figures["stores"],
        serde_json::json!(["embedded"]),
        "{figures}"
    );
    let embedded = &figures["embedded"];
    assert!(
        embedded["ops_per_second"].as_f64().unwrap() > 0.0,
        "{figures}"
    );
    assert_eq!(embedded["round_robin_matches"], 45, "{figures}");
    assert!(
        embedded["state_file_bytes"].as_u64().unwrap() > 0,
        "{figures}"
    );
    assert!(figures.get("redis").is_none(), "{figures}");
    assert!(figures.get("redis_cpu_s").is_none(), "{figures}");

    let out = arena()
        .args(["bench", "coordinator"])
        .args(tiny)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().nth(1).unwrap();
    assert_eq!(header.trim(), "embedded", "{text}");
    assert!(!text.contains("Redis") && !text.contains("redis"), "{text}");
    let ops: f64 = text
        .lines()
        .find(|l| l.starts_with("ops/s"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no ops/s figure in {text}"));
    assert!(ops > 0.0, "{text}");
    // The state directory went with the bench.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn services_raise_their_open_descriptor_limit_to_the_hard_limit() {
    use std::io::BufRead;
    let binary = support::arena().get_program().to_owned();
    // Started with a soft limit of 256 under a hard one of 4096.
    let mut coordinator = Reaped(
        Command::new("prlimit")
            .arg("--nofile=256:4096")
            .arg(binary)
            .args(["coordinator", "--listen", "127.0.0.1:0"])
            .args(["--worker-token", "w", "--admin-token", "a"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Once it listens, it has raised its limit.
    let mut out = std::io::BufReader::new(coordinator.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("listening on"), "{line:?}");
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", coordinator.0.id())).unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = open_files.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{open_files}");
}
