//! Generals model-graph bots through the distributed path, on sandboxed
//! workers and a real Redis: the shipped greedy model, a copy of it and a
//! model whose head is NaN, beside the Python starter, in a round robin of
//! the competition. The standings are recomputed here from the recorded
//! placements, and the NaN model's strikes reach them.

use std::collections::BTreeMap;
use std::path::Path;

use arena_engine::placement_points;

use crate::support::arena::workspace;
use crate::support::tournament::{Played, play_on_two_workers};

/// `bots/<from>` copied to `root/name`, its `bot.toml` (or `run.sh`) made
/// unique so that every entrant is its own submission.
fn write_bot(root: &Path, name: &str, from: &str) -> String {
    let source = workspace().join("bots").join(from);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    for file in std::fs::read_dir(&source).expect("bot source") {
        let file = file.expect("dir entry").path();
        std::fs::copy(&file, dir.join(file.file_name().expect("file name"))).expect("copy");
    }
    let manifest = dir.join("bot.toml");
    if manifest.exists() {
        let text = std::fs::read_to_string(&manifest).expect("bot.toml");
        std::fs::write(&manifest, format!("# {name}\n{text}")).expect("bot.toml");
    }
    format!(
        "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
        dir.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generals_round_robin_of_models_and_a_process_bot() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-generals-models-")
        .tempdir()
        .expect("temp dir");
    let mut text = "name = \"E2E generals models\"\ngame = \"generals\"\nseed = 12\n\n\
                    [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
                    [limits]\nfault_limit = 4\n"
        .to_owned();
    for (name, from) in [
        ("greedy", "generals-models/greedy"),
        ("greedy2", "generals-models/greedy"),
        ("nan", "test/generals-models/nan"),
        ("python", "starter-python"),
    ] {
        text.push_str(&write_bot(root.path(), name, from));
    }
    let file = root.path().join("tournament.toml");
    std::fs::write(&file, text).expect("tournament file");
    // Four entrants: six pairs, one game each.
    let Played { matches, rows, .. } =
        play_on_two_workers("generals-models", &file.display().to_string(), 6).await;
    let mut points: BTreeMap<String, f64> = BTreeMap::new();
    for m in &matches {
        let p = placement_points(&m.ranks);
        for (seat, entrant) in m.seats.iter().enumerate() {
            *points.entry(entrant.clone()).or_default() += p[seat];
        }
    }
    for r in &rows {
        let entrant = r["entrant"].as_str().expect("entrant");
        let expected = points.get(entrant).copied().unwrap_or(0.0);
        assert!(
            (r["points"].as_f64().expect("points") - expected).abs() < 1e-9,
            "{r}"
        );
    }
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}: {rows:#?}"))
            .clone()
    };
    // The NaN model strikes out of each of its three games.
    let nan = row("nan");
    assert_eq!(nan["strikes"], 12, "{nan}");
    assert_eq!(nan["forfeits"]["faults"], 3, "{nan}");
    assert_eq!(nan["points"], 0.0, "{nan}");
    for healthy in ["greedy", "greedy2", "python"] {
        let r = row(healthy);
        assert_eq!(r["strikes"], 0, "{r}");
        assert_eq!(r["forfeits"], serde_json::json!({}), "{r}");
    }
}
