//! A four-seat free-for-all Swiss through the distributed path: six
//! entrants (four plan bots, one that crashes, one that sends garbage) on
//! two sandboxed workers and a real Redis; the short group of every round is
//! filled with baseline seats. Every match is recorded once, and the
//! standings are recomputed here from the recorded placements, row by row.

use std::collections::BTreeMap;

use arena_engine::placement_points;

use crate::support::arena::workspace;
use crate::support::bots::write_bot;
use crate::support::tournament::play_on_two_workers;

const ROUNDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ffa_swiss_with_baseline_fill_on_two_workers() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-ffa-")
        .tempdir()
        .expect("temp dir");
    let plan_bot = std::fs::read(workspace().join("bots/ffa-plan-python/bot.py")).expect("bot.py");
    let planners = ["planner-a", "planner-b", "planner-c", "planner-d"];
    for name in planners {
        write_bot(
            root.path(),
            name,
            "#!/bin/sh\nexec python3 -B -u bot.py\n",
            &[("bot.py", &plan_bot)],
        );
    }
    // Reads its handshake and first frame, then dies of a real segfault (a
    // signal it sends itself would not do: the sandbox makes it PID 1).
    write_bot(
        root.path(),
        "crasher",
        "#!/bin/sh\nexec python3 -c 'import sys, ctypes; sys.stdin.readline(); \
         sys.stdin.readline(); ctypes.string_at(0)'\n",
        &[],
    );
    // Answers every frame with text that is not a plan.
    write_bot(
        root.path(),
        "garbage",
        "#!/bin/sh\nread hello\nwhile read frame; do echo '{\"rules\": \"attack!\"}'; done\n",
        &[],
    );
    let mut text = format!(
        "name = \"E2E FFA\"\ngame = \"generals-ffa\"\nseats = 4\nseed = 5\n\n\
         [format]\nkind = \"swiss\"\nrounds = {ROUNDS}\n\n\
         [rules]\nblitz = true\n\n\
         [limits]\nfirst_move_ms = 60000\nmove_ms = 60000\nfault_limit = 3\n"
    );
    let names: Vec<&str> = planners
        .iter()
        .copied()
        .chain(["crasher", "garbage"])
        .collect();
    for name in &names {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.path().join(name).display()
        ));
    }
    let file = root.path().join("ffa.toml");
    std::fs::write(&file, text).expect("tournament file");

    // Six entrants in groups of four: one full group and one of two
    // entrants plus two baselines, every round.
    let total = ROUNDS * 2;
    let played = play_on_two_workers("ffa", &file.display().to_string(), total).await;
    let (all, rows, summaries) = (&played.matches, &played.rows, &played.summaries);
    let json = serde_json::Value::from(rows.clone());
    assert_eq!(rows.len(), names.len(), "baselines are never rows: {json}");
    let entrant_of: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["entrant"].as_str().unwrap()))
        .collect();
    let crasher = entrant_of["crasher"];
    let garbage = entrant_of["garbage"];

    // Points recomputed from the recorded placements: every seat scores its
    // placement among all four seats; baseline seats score for no one.
    let mut expected_points: BTreeMap<&str, f64> = BTreeMap::new();
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    let mut baseline_seats = 0;
    // (Recorded once each and done: checked by `play_on_two_workers`.)
    for m in all {
        assert_eq!(m.seats.len(), 4, "{m:#?}");
        assert_eq!(m.ranks.len(), 4, "{m:#?}");
        let points = placement_points(&m.ranks);
        assert!((points.iter().sum::<f64>() - 2.0).abs() < 1e-9);
        for (seat, entrant) in m.seats.iter().enumerate() {
            if entrant.starts_with("baseline:") {
                baseline_seats += 1;
                continue;
            }
            *expected_points.entry(entrant.as_str()).or_default() += points[seat];
            *games.entry(entrant.as_str()).or_default() += 1;
        }
        // A forfeiting seat places below every seat that did not forfeit.
        for bad in [crasher, garbage] {
            if let Some(seat) = m.seats.iter().position(|e| e == bad) {
                for (other, entrant) in m.seats.iter().enumerate() {
                    if entrant != crasher && entrant != garbage {
                        assert!(m.ranks[seat] > m.ranks[other], "{m:#?}");
                    }
                }
            }
        }
    }
    assert_eq!(baseline_seats, ROUNDS * 2, "two baseline seats a round");
    for row in rows {
        let entrant = row["entrant"].as_str().unwrap();
        let name = row["name"].as_str().unwrap();
        assert_eq!(row["games"].as_u64(), Some(ROUNDS as u64), "{row}");
        assert_eq!(games[entrant], ROUNDS as u64, "{row}");
        assert_eq!(row["byes"], 0, "no byes while baselines can fill: {row}");
        let points = row["points"].as_f64().unwrap();
        assert!(
            (points - expected_points[entrant]).abs() < 1e-9,
            "{name}: {points} vs {}",
            expected_points[entrant]
        );
        let forfeits = &row["forfeits"];
        match name {
            "crasher" => assert_eq!(forfeits["crash"], ROUNDS as u64, "{row}"),
            "garbage" => {
                assert_eq!(forfeits["faults"], ROUNDS as u64, "{row}");
                assert_eq!(row["malformed"], 3 * ROUNDS as u64, "{row}");
            }
            _ => assert!(
                forfeits
                    .as_object()
                    .is_none_or(|f| f.values().all(|v| v == 0)),
                "{row}"
            ),
        }
    }

    for summary in summaries {
        assert_eq!(summary.dropped, 0, "{summaries:?}");
    }
}
