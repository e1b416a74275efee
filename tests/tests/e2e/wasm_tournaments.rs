//! WebAssembly bots through the distributed path: a two-seat Grid Royale
//! round robin between the C starter (its `build.sh` compiles `bot.c` to
//! `bot.wasm` in the sandboxed build), a WebAssembly test module, and two
//! copies of the Python starter, on a real Redis and two sandboxed workers,
//! one of them started with `--no-wasm`. Matches with a WebAssembly seat
//! must all go to the other one; the standings are recomputed here from
//! the recorded placements, and the stored results show the fuel spent.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use arena_engine::placement_points;

use crate::support::arena::{self, STARTUP, WORKER_TOKEN, Worker, workspace};
use crate::support::bots::write_bot;
use crate::support::cgroups::CgroupParent;
use crate::support::process::Proc;
use crate::support::redis::RedisServer;
use crate::support::tournament::{TOURNAMENT, matches};
use crate::support::wait::poll_until;

/// The C starter's sources (no prebuilt module: the build makes it).
fn write_c_starter(root: &Path, name: &str) {
    let from = workspace().join("bots/grid-royale-c");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    for file in ["bot.c", "build.sh"] {
        std::fs::copy(from.join(file), dir.join(file)).expect("the C starter");
    }
    std::fs::set_permissions(dir.join("build.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod build.sh");
}

/// A test module of `bots/test/wasm` as a bot: `(module` + the body's
/// imports + the prelude + the rest of the body + `)`, as `bot.wasm`.
fn write_test_module(root: &Path, name: &str, module: &str) {
    let dir = workspace().join("bots/test/wasm");
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).expect("test module");
    let body = read(&format!("{module}.wat"));
    let prelude = read("prelude.wat");
    let (imports, rest): (Vec<&str>, Vec<&str>) = body
        .lines()
        .partition(|line| line.trim_start().starts_with("(import"));
    let text = format!(
        "(module\n{}\n{prelude}\n{}\n)",
        imports.join("\n"),
        rest.join("\n")
    );
    let wasm = wat::parse_str(&text).expect("the test module assembles");
    let bot = root.join(name);
    std::fs::create_dir_all(&bot).expect("bot dir");
    std::fs::write(bot.join("bot.wasm"), wasm).expect("bot.wasm");
}

/// The Python starter under `root/name`, a distinct submission per name.
fn write_python_starter(root: &Path, name: &str) {
    let code = std::fs::read(workspace().join("bots/grid-royale-python/bot.py"))
        .expect("the grid-royale starter");
    let own = format!("# {name}\n");
    write_bot(
        root,
        name,
        "#!/bin/sh\nexec python3 -B -u bot.py\n",
        &[("bot.py", &[own.as_bytes(), &code].concat())],
    );
}

/// A sandboxed `arena worker --no-wasm` with a private cache and cgroup
/// parent (the harness's [`Worker`] takes no extra flags).
struct NoWasmWorker {
    process: Proc,
    cgroup: CgroupParent,
    _dir: tempfile::TempDir,
}

impl NoWasmWorker {
    fn start(id: &str, coordinator_url: &str) -> NoWasmWorker {
        let dir = tempfile::Builder::new()
            .prefix(&format!("arena-e2e-{id}-"))
            .tempdir()
            .expect("worker temp dir");
        let cgroup = CgroupParent::new(format!("arena-e2e-{}-{id}", std::process::id()));
        let mut command: Command = arena::arena();
        command
            .args(["worker", "--no-wasm", "--coordinator", coordinator_url])
            .args(["--token", WORKER_TOKEN, "--id", id])
            .arg("--submissions-dir")
            .arg(dir.path().join("submissions"))
            .arg("--cache-dir")
            .arg(dir.path().join("builds"))
            .args(["--cgroup-parent", cgroup.name()]);
        NoWasmWorker {
            process: Proc::spawn(format!("worker {id}"), command),
            cgroup,
            _dir: dir,
        }
    }

    /// SIGTERM, then its summary line's (played, accepted, failed).
    fn drain(&mut self) -> (u64, u64, u64) {
        self.process.terminate(Duration::from_secs(60));
        let line = self.process.wait_for_stderr("its summary", STARTUP, |l| {
            l.starts_with("arena worker: played ")
        });
        let count = |key: &str| -> u64 {
            line.split(", ")
                .find_map(|field| field.trim_start_matches("arena worker: ").strip_prefix(key))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
        };
        assert!(!self.cgroup.exists(), "the worker left its cgroup parent");
        (count("played "), count("accepted "), count("failed "))
    }
}

/// Every stored result (`arena:results`), by match id.
fn stored_results(redis: &RedisServer) -> BTreeMap<String, serde_json::Value> {
    let out = Command::new("redis-cli")
        .arg("-s")
        .arg(redis.socket())
        .args(["--no-raw", "HGETALL", "arena:results"])
        .output()
        .expect("redis-cli");
    assert!(out.status.success(), "{out:?}");
    // `--no-raw` quotes every value: one JSON string per line.
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let quoted = line.split_once(") ").map_or(line, |(_, v)| v);
            serde_json::from_str::<String>(quoted).expect("a quoted redis-cli value")
        })
        .collect();
    lines
        .chunks_exact(2)
        .map(|pair| {
            let record = serde_json::from_str(&pair[1]).expect("a stored MatchRecord");
            (pair[0].clone(), record)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wasm_seats_play_only_on_the_wasm_worker() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-wasm-")
        .tempdir()
        .expect("temp dir");
    let root = root.path();
    write_c_starter(root, "c");
    write_test_module(root, "idle", "idle");
    write_python_starter(root, "py1");
    write_python_starter(root, "py2");
    let mut text = "name = \"E2E wasm\"\ngame = \"grid-royale\"\nseats = 2\nseed = 9\n\n\
                    [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
                    [rules]\nmax_turns = 30\n"
        .to_owned();
    let names = ["c", "idle", "py1", "py2"];
    for name in names {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let file = root.join("tournament.toml");
    std::fs::write(&file, text).expect("tournament file");
    // Four entrants, each pair once: six matches, five with a wasm seat.
    const TOTAL: usize = 6;

    let redis = RedisServer::start();
    let coordinator = arena::Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    let mut wasm_worker = Worker::start("wasm-yes", &url, true);
    let mut plain_worker = NoWasmWorker::start("wasm-no", &url);
    let id = arena::create_tournament(&url, file.to_str().expect("UTF-8 path"));
    assert!(id.starts_with("t-"), "create printed {id:?}");

    // Who holds each match while it is in flight, until all are done.
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let mut holders: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let all = poll_until("the tournament to finish", TOURNAMENT, async || {
        let all = matches(&mut admin, &id).await;
        for m in all.iter().filter(|m| m.state == "leased") {
            holders
                .entry(m.match_id.clone())
                .or_default()
                .insert(m.worker.clone());
        }
        (all.len() == TOTAL && all.iter().all(|m| m.state == "done")).then_some(all)
    })
    .await;

    let json = arena::tournament(&url, &["standings", &id, "--json"]);
    let standings: serde_json::Value = serde_json::from_str(&json).expect("standings JSON");
    let rows = standings["rows"].as_array().expect("rows").clone();
    let entrant_of = |name: &str| -> String {
        rows.iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["entrant"].as_str())
            .unwrap_or_else(|| panic!("no row for {name}: {rows:#?}"))
            .to_owned()
    };
    let wasm: BTreeSet<String> = [entrant_of("c"), entrant_of("idle")].into();

    // Every match recorded once, on its first attempt: the worker without
    // wasm was never given one it could not play.
    let mut ids = BTreeSet::new();
    for m in &all {
        assert!(ids.insert(m.match_id.clone()), "recorded twice: {m:#?}");
        assert_eq!(m.attempt, 1, "{m:#?}");
        assert!(m.failures.is_empty(), "{m:#?}");
        assert!(
            ["turn_limit", "last_standing"].contains(&m.reason.as_str()),
            "played to an ending, never a forfeit: {m:#?}"
        );
        if m.seats.iter().any(|s| wasm.contains(s)) {
            for holder in holders.get(&m.match_id).into_iter().flatten() {
                assert_eq!(holder, "wasm-yes", "{m:#?}");
            }
        }
    }
    let (wasm_summary, plain) = (wasm_worker.drain(), plain_worker.drain());
    let (plain_played, plain_accepted, plain_failed) = plain;
    assert_eq!(plain_failed, 0, "{plain:?}");
    assert_eq!(wasm_summary.failed, 0, "{wasm_summary:?}");
    assert!(
        plain_played <= 1,
        "only py1 v py2 has no wasm seat: {plain:?}"
    );
    assert_eq!(
        wasm_summary.accepted + plain_accepted,
        TOTAL as u64,
        "{wasm_summary:?} {plain:?}"
    );

    // The wasm seats spent fuel; the process seats none.
    let results = stored_results(&redis);
    assert_eq!(results.len(), TOTAL, "{results:#?}");
    for record in results.values() {
        for seat in record["seats"].as_array().expect("seats") {
            let entrant = seat["entrant"].as_str().expect("entrant");
            let fuel_p50 = seat["stats"]["fuel_p50"].as_u64().unwrap_or(0);
            if wasm.contains(entrant) {
                assert!(fuel_p50 > 0, "{seat}");
                assert!(seat["stats"]["fuel_max"].as_u64().unwrap_or(0) >= fuel_p50);
            } else {
                assert_eq!(fuel_p50, 0, "{seat}");
            }
        }
    }

    // The standings add up from the recorded placements, and the C
    // starter played without a fault.
    let mut points: BTreeMap<String, f64> = BTreeMap::new();
    let mut games: BTreeMap<String, u64> = BTreeMap::new();
    for m in &all {
        assert_eq!(m.ranks.len(), 2, "{m:#?}");
        let p = placement_points(&m.ranks);
        for (seat, entrant) in m.seats.iter().enumerate() {
            *points.entry(entrant.clone()).or_default() += p[seat];
            *games.entry(entrant.clone()).or_default() += 1;
        }
    }
    assert_eq!(rows.len(), names.len());
    for r in &rows {
        let entrant = r["entrant"].as_str().expect("entrant");
        assert_eq!(r["games"], games[entrant], "{r}");
        let expected = points[entrant] + r["byes"].as_f64().expect("byes");
        assert!(
            (r["points"].as_f64().expect("points") - expected).abs() < 1e-9,
            "{r}"
        );
        if r["name"] == "c" {
            for fault in ["timeouts", "malformed", "illegal", "fuel_exhausted"] {
                assert_eq!(r[fault], 0, "{fault}: {r}");
            }
            assert_eq!(r["forfeits"], serde_json::json!({}), "{r}");
        }
    }
}
