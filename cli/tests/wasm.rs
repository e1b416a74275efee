//! WebAssembly bots in real Grid Royale matches: `arena play` builds each
//! module in the sandbox's cache, and the wasm host plays it inside the
//! seat's sandbox. Each test module's verdict, fuel accounting and banking,
//! start-up, the wall backstop, determinism, and what the guest can see.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::arena;

fn bots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots")
}

/// A submission holding the test module `name` (bots/test/wasm), with
/// `$default` rounds when given (the `counted` module).
fn module_bot(name: &str, default_rounds: Option<u32>) -> tempfile::TempDir {
    let dir = bots_dir().join("test/wasm");
    let mut text = arena_wasm::test_modules::named(&dir, name).unwrap();
    if let Some(rounds) = default_rounds {
        let from = "(global $default i32 (i32.const 0))";
        assert!(text.contains(from));
        text = text.replace(from, &format!("(global $default i32 (i32.const {rounds}))"));
    }
    wasm_bot(&wat::parse_str(&text).unwrap())
}

fn wasm_bot(wasm: &[u8]) -> tempfile::TempDir {
    let bot = tempfile::tempdir().unwrap();
    std::fs::write(bot.path().join("bot.wasm"), wasm).unwrap();
    bot
}

/// One sandboxed Grid Royale match.
fn play(bots: &[&Path], args: &[&str]) -> support::Played {
    support::play("grid-royale", 11, bots, args)
}

fn player(result: &Value, seat: usize) -> &Value {
    &result["players"][seat]
}

fn python() -> PathBuf {
    bots_dir().join("grid-royale-python")
}

#[test]
fn the_c_starter_built_for_wasm_plays_a_whole_game_without_faults() {
    let played = play(
        &[&bots_dir().join("grid-royale-c"), &python()],
        &["--rules", "max_turns=120"],
    );
    let c = player(&played.result, 0);
    assert_eq!(c["forfeit"], Value::Null, "{c}");
    assert_eq!(c["faults"]["fuel_exhausted"], 0, "{c}");
    assert_eq!(c["faults"]["illegal"], 0, "{c}");
    assert_eq!(c["moves"], 120);
    assert!(
        c["stats"]["bank"].as_u64().unwrap() > 0,
        "it banks ore: {c}"
    );
    let fuel = &c["fuel"];
    assert_eq!(fuel["turns"], 120);
    assert!(fuel["p50"].as_u64().unwrap() > 10_000, "{fuel}");
    assert!(fuel["max"].as_u64().unwrap() < 5_000_000, "{fuel}");
    // The process seat has no fuel.
    assert!(player(&played.result, 1).get("fuel").is_none());
}

#[test]
fn a_module_that_computes_forever_runs_dry_every_turn_and_is_never_forfeited() {
    let spin = module_bot("spin", None);
    let played = play(&[spin.path(), &python()], &["--rules", "max_turns=15"]);
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], Value::Null, "{p}");
    assert_eq!(p["faults"]["fuel_exhausted"], 15, "{p}");
    assert_eq!(p["moves"], 0);
    assert_eq!(played.result["turns"], 15, "the game goes on");
    // Each dry turn spends its whole budget: the first adds start-up fuel.
    assert_eq!(p["fuel"]["p50"], 5_000_000, "{p}");
    assert_eq!(p["fuel"]["max"], 55_000_000, "{p}");
}

#[test]
fn just_under_the_allowance_banks_and_just_over_drains_the_bank() {
    // 612,500 rounds of 8 fuel: 4,900,000 plus reading the frame.
    let under = module_bot("counted", Some(612_500));
    // 650,000 rounds: 5,200,000 plus reading the frame.
    let over = module_bot("counted", Some(650_000));
    let played = play(&[under.path(), over.path()], &["--rules", "max_turns=40"]);
    let under = player(&played.result, 0);
    assert_eq!(under["faults"]["fuel_exhausted"], 0, "{under}");
    assert_eq!(under["moves"], 40);
    let p50 = under["fuel"]["p50"].as_u64().unwrap();
    assert!((4_900_000..5_000_000).contains(&p50), "{under}");
    // Over: the start-up allowance fills the bank once (5,000,000), and
    // each turn spends 200,000 more than it earns; once it is empty the
    // turn runs dry, and never forfeits.
    let over = player(&played.result, 1);
    assert_eq!(over["forfeit"], Value::Null, "{over}");
    let dry = over["faults"]["fuel_exhausted"].as_u64().unwrap();
    assert!(dry >= 1, "{over}");
    assert!(over["moves"].as_u64().unwrap() >= 20, "{over}");
    assert!(over["fuel"]["max"].as_u64().unwrap() > 5_000_000, "{over}");
}

#[test]
fn a_trap_forfeits_with_its_message_in_the_log() {
    let trap = module_bot("trap", None);
    let played = play(&[trap.path(), &python()], &["--rules", "max_turns=10"]);
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], "trap", "{p}");
    assert_eq!(p["moves"], 1, "{p}");
    assert!(
        played.logs[0].contains("wasm trap") && played.logs[0].contains("unreachable"),
        "{}",
        played.logs[0]
    );
}

#[test]
fn memory_grown_without_bound_stops_at_the_limit_inside_the_cgroup() {
    let grow = module_bot("grow", None);
    let played = play(&[grow.path(), &python()], &["--rules", "max_turns=10"]);
    let p = player(&played.result, 0);
    // Refused at the 1 GiB limit (not killed by the 2 GiB cgroup), then
    // the module's own trap.
    assert_eq!(p["forfeit"], "trap", "{p}");
    assert!(played.logs[0].contains("unreachable"), "{}", played.logs[0]);
}

#[test]
fn garbage_replies_are_illegal_no_action_turns() {
    let garbage = module_bot("garbage", None);
    let played = play(&[garbage.path(), &python()], &["--rules", "max_turns=10"]);
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], Value::Null, "{p}");
    assert_eq!(p["faults"]["illegal"], 10, "{p}");
}

#[test]
fn sleeping_in_a_host_call_waits_for_nothing_and_runs_dry() {
    let sleep = module_bot("sleep", None);
    // A host call costs only the few instructions that make it, so a turn
    // of them takes wall time; a small allowance keeps the turns short in
    // debug builds.
    let played = play(
        &[sleep.path(), &python()],
        &[
            "--rules",
            "max_turns=5",
            "--init-fuel",
            "0",
            "--fuel-per-turn",
            "200000",
        ],
    );
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], Value::Null, "{p}");
    assert_eq!(p["faults"]["fuel_exhausted"], 5, "{p}");
}

#[test]
fn the_wall_backstop_forfeits_a_module_with_fuel_to_burn() {
    let spin = module_bot("spin", None);
    let played = play(
        &[spin.path(), &python()],
        &[
            "--rules",
            "max_turns=10",
            "--fuel-per-turn",
            "1000000000000",
            "--fuel-bank",
            "1000000000000",
            "--first-move-ms",
            "300",
        ],
    );
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], "wall_backstop", "{p}");
    assert!(played.logs[0].contains("backstop"), "{}", played.logs[0]);
}

#[test]
fn a_module_that_cannot_be_a_bot_fails_its_build_with_the_reason() {
    let foreign = wasm_bot(
        &wat::parse_str(
            r#"(module (import "env" "clock" (func)) (memory (export "memory") 1)
                       (func (export "_start")))"#,
        )
        .unwrap(),
    );
    let played = play(&[foreign.path(), &python()], &["--rules", "max_turns=5"]);
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], "build_failed", "{p}");
    assert!(played.logs[0].contains("env::clock"), "{}", played.logs[0]);
}

/// A valid module of `count` empty functions: cheap to send, costly to
/// compile (about a millisecond each in a debug build).
fn many_functions(count: usize) -> Vec<u8> {
    let text = format!(
        "(module (memory (export \"memory\") 1) (func (export \"_start\")) {})",
        "(func)".repeat(count)
    );
    wat::parse_str(text).unwrap()
}

/// A valid module whose `_start` is `count` additions in a row: compiling
/// it takes memory fast (about 250 MB for 300,000).
fn long_function(count: usize) -> Vec<u8> {
    let text = format!(
        "(module (memory (export \"memory\") 1) (func (export \"_start\") (local i32) {}))",
        "local.get 0 i32.const 1 i32.add local.set 0 ".repeat(count)
    );
    wat::parse_str(text).unwrap()
}

// Compiling runs confined as the seat, never in the worker's process: a
// module whose compilation needs more than the seat's memory is the
// module's failure, and the match goes on.
#[test]
fn a_module_whose_compilation_outgrows_the_seat_memory_fails_its_build() {
    let heavy = wasm_bot(&long_function(300_000));
    let played = play(
        &[heavy.path(), &python()],
        &["--rules", "max_turns=5", "--memory-mb", "96"],
    );
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], "build_failed", "{p}");
    assert!(
        played.logs[0].contains("compiling bot.wasm ran out of memory"),
        "{}",
        played.logs[0]
    );
    assert_eq!(player(&played.result, 1)["forfeit"], Value::Null);
}

#[test]
fn a_module_whose_compilation_outlasts_the_build_limit_fails_its_build() {
    let slow = wasm_bot(&many_functions(100_000));
    let played = play(
        &[slow.path(), &python()],
        &["--rules", "max_turns=5", "--build-timeout", "2"],
    );
    let p = player(&played.result, 0);
    assert_eq!(p["forfeit"], "build_failed", "{p}");
    assert!(
        played.logs[0].contains("compiling bot.wasm took longer than the build's wall limit of 2s"),
        "{}",
        played.logs[0]
    );
}

#[test]
fn the_same_modules_and_seed_replay_identically() {
    let counted = module_bot("counted", Some(650_000));
    let bots = [bots_dir().join("grid-royale-c"), counted.path().to_owned()];
    let bots: Vec<&Path> = bots.iter().map(PathBuf::as_path).collect();
    let first = play(&bots, &["--rules", "max_turns=60"]);
    let second = play(&bots, &["--rules", "max_turns=60"]);
    assert!(!first.replay.is_empty());
    assert_eq!(first.replay, second.replay, "equal replays");
    assert_eq!(first.result["placements"], second.result["placements"]);
    assert_eq!(
        player(&first.result, 1)["faults"],
        player(&second.result, 1)["faults"]
    );
}

#[test]
fn the_guest_sees_fixed_clocks_seeded_entropy_and_no_files() {
    let probe = bots_dir().join("test/wasm-probe");
    let first = play(&[&probe, &python()], &["--rules", "max_turns=3"]);
    let log = &first.logs[0];
    let value = |key: &str| -> String {
        log.lines()
            .find_map(|l| l.strip_prefix(&format!("probe: {key}=")))
            .unwrap_or_else(|| panic!("no {key} in {log}"))
            .to_owned()
    };
    assert_eq!(value("time"), "946684800");
    assert_eq!(value("realtime"), "946684800.000000000");
    assert_eq!(value("monotonic"), "0.000000000");
    assert!(value("fopen").starts_with("errno"), "{log}");
    assert!(value("opendir").starts_with("errno"), "{log}");
    assert_eq!(value("home"), "unset");
    let entropy = value("entropy");
    assert_eq!(entropy.len(), 32);
    // The same seed gives the same bytes.
    let again = play(&[&probe, &python()], &["--rules", "max_turns=3"]);
    assert!(again.logs[0].contains(&format!("probe: entropy={entropy}")));
    assert_eq!(player(&first.result, 0)["forfeit"], Value::Null);
}

#[test]
fn the_host_runs_from_an_arena_under_tmp_which_the_sandbox_replaces() {
    // The sandbox mounts its own /tmp: the host must still be found.
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let copy = dir.path().join("arena");
    let exe = Path::new(env!("CARGO_BIN_EXE_arena"));
    if std::fs::hard_link(exe, &copy).is_err() {
        std::fs::copy(exe, &copy).unwrap();
    }
    let idle = module_bot("idle", None);
    let cache = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&copy)
        .args(["play", "--game", "grid-royale", "--json", "--seed", "3"])
        .arg(idle.path())
        .arg(python())
        .args(["--rules", "max_turns=5", "--cache-dir"])
        .arg(cache.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(player(&result, 0)["moves"], 5, "{result}");
}

#[test]
fn the_example_grid_royale_swiss_of_wasm_and_process_bots_runs() {
    let cache = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/grid-royale.toml");
    let out = arena()
        .arg("run")
        .arg(&example)
        .args(["--state", "none"])
        .arg("--cache-dir")
        .arg(cache.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    for name in ["c-wasm", "python", "probe-wasm", "garbage"] {
        assert!(table.contains(name), "{table}");
    }
    // The C starter, a WebAssembly bot, plays both rounds without a fault.
    let c = table
        .lines()
        .find(|l| l.contains("c-wasm"))
        .unwrap_or_default();
    assert!(c.trim_end().ends_with("0/0/0/0/0"), "{table}");
}
