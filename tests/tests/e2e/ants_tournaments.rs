//! Ants through the distributed path, on sandboxed workers and a real
//! Redis: model-graph bots (the shipped starter, stay and random models,
//! and a model whose head is NaN) with a process bot beside them, in a
//! two-seat round robin, a four-seat Swiss and one eight-seat match. The
//! standings are recomputed here from the recorded placements, and the
//! strikes of the NaN model reach them.

use std::collections::BTreeMap;
use std::path::Path;

use arena_engine::placement_points;

use crate::support::arena::workspace;
use crate::support::tournament::{Played, play_on_two_workers};

/// A shipped (or test) model under `root/name`: its `bot.toml` gains a
/// comment naming the copy, so every entrant is its own submission.
fn write_model(root: &Path, name: &str, from: &str) {
    let source = workspace().join("bots").join(from);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    std::fs::copy(source.join("model.onnx"), dir.join("model.onnx")).expect("model.onnx");
    let manifest = std::fs::read_to_string(source.join("bot.toml")).expect("bot.toml");
    std::fs::write(dir.join("bot.toml"), format!("# {name}\n{manifest}")).expect("bot.toml");
}

/// The Python process starter under `root/name`.
fn write_python(root: &Path, name: &str) {
    let source = workspace().join("bots/ants-python");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    for file in ["run.sh", "bot.py"] {
        std::fs::copy(source.join(file), dir.join(file)).expect("the Python starter");
    }
}

/// Writes the tournament file: `head`, then one `[[bots]]` per entrant
/// (`name`, what it is a copy of: a directory under `bots/`, or `python`).
fn write_file(root: &Path, head: &str, bots: &[(&str, &str)]) -> String {
    let mut text = head.to_owned();
    for (name, from) in bots {
        if *from == "python" {
            write_python(root, name);
        } else {
            write_model(root, name, from);
        }
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let path = root.join("tournament.toml");
    std::fs::write(&path, text).expect("tournament file");
    path.display().to_string()
}

/// Each entrant's points, from the recorded placements; every match has
/// `seats` distinct entrants.
fn tally(matches: &[arena_proto::v1::MatchSummary], seats: usize) -> BTreeMap<String, f64> {
    let mut points = BTreeMap::new();
    for m in matches {
        assert_eq!(m.seats.len(), seats, "{m:#?}");
        let distinct: std::collections::BTreeSet<&String> = m.seats.iter().collect();
        assert_eq!(distinct.len(), seats, "distinct entrants: {m:#?}");
        let p = placement_points(&m.ranks);
        for (seat, entrant) in m.seats.iter().enumerate() {
            *points.entry(entrant.clone()).or_default() += p[seat];
        }
    }
    points
}

fn row<'a>(rows: &'a [serde_json::Value], entrant: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["name"] == entrant)
        .unwrap_or_else(|| panic!("no standings row for {entrant}: {rows:#?}"))
}

fn points_match(rows: &[serde_json::Value], points: &BTreeMap<String, f64>) {
    for r in rows {
        let entrant = r["entrant"].as_str().expect("entrant");
        let expected =
            points.get(entrant).copied().unwrap_or(0.0) + r["byes"].as_f64().expect("byes");
        assert!(
            (r["points"].as_f64().expect("points") - expected).abs() < 1e-9,
            "{r}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_seat_ants_round_robin_of_models_and_a_process_bot() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-ants2-")
        .tempdir()
        .expect("temp dir");
    let bots = [
        ("starter", "ants-models/starter"),
        ("stay", "ants-models/stay"),
        ("nan", "test/ants-models/nan"),
        ("python", "python"),
    ];
    let file = write_file(
        root.path(),
        "name = \"E2E ants 2\"\ngame = \"ants\"\nseats = 2\nseed = 8\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
         [rules]\nmax_turns = 40\n\n[limits]\nfault_limit = 4\n",
        &bots,
    );
    // Four entrants: six pairs, one game each.
    let Played { matches, rows, .. } = play_on_two_workers("ants2", &file, 6).await;
    points_match(&rows, &tally(&matches, 2));
    // The NaN model strikes out of every game it plays: four strikes each.
    let nan = row(&rows, "nan");
    assert_eq!(nan["strikes"], 12, "{nan}");
    assert_eq!(nan["forfeits"]["faults"], 3, "{nan}");
    for healthy in ["starter", "stay", "python"] {
        let r = row(&rows, healthy);
        assert_eq!(r["strikes"], 0, "{r}");
        assert_eq!(r["forfeits"], serde_json::json!({}), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_seat_ants_swiss_and_an_eight_seat_match() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-ants48-")
        .tempdir()
        .expect("temp dir");
    let four = [
        ("s1", "ants-models/starter"),
        ("s2", "ants-models/starter"),
        ("r1", "ants-models/random"),
        ("p1", "python"),
    ];
    let file = write_file(
        &root.path().join("four"),
        "name = \"E2E ants 4\"\ngame = \"ants\"\nseats = 4\nseed = 9\n\n\
         [format]\nkind = \"swiss\"\nrounds = 2\n\n[rules]\nmax_turns = 30\n",
        &four,
    );
    // Four entrants, one group of four a round.
    let Played { matches, rows, .. } = play_on_two_workers("ants4", &file, 2).await;
    points_match(&rows, &tally(&matches, 4));
    for r in &rows {
        assert_eq!(r["games"], 2, "{r}");
    }

    let eight: Vec<(String, &str)> = (0..8)
        .map(|i| {
            let from = ["ants-models/starter", "ants-models/random"][i % 2];
            (format!("e{i}"), from)
        })
        .collect();
    let eight: Vec<(&str, &str)> = eight.iter().map(|(n, f)| (n.as_str(), *f)).collect();
    let file = write_file(
        &root.path().join("eight"),
        "name = \"E2E ants 8\"\ngame = \"ants\"\nseats = 8\nseed = 10\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
         [rules]\nmax_turns = 30\n",
        &eight,
    );
    let Played { matches, rows, .. } = play_on_two_workers("ants8", &file, 1).await;
    points_match(&rows, &tally(&matches, 8));
    assert_eq!(rows.len(), 8);
    for r in &rows {
        assert_eq!(r["strikes"], 0, "{r}");
        assert_eq!(r["forfeits"], serde_json::json!({}), "{r}");
    }
}
