//! Grid Royale through the distributed path, on sandboxed workers and a
//! real Redis: a two-seat round robin and a four-seat Swiss of copies of
//! the Python starter, with the standings recomputed here from the recorded
//! placements.

use std::collections::BTreeMap;
use std::path::Path;

use arena_engine::placement_points;

use crate::support::arena::workspace;
use crate::support::bots::write_bot;
use crate::support::tournament::{Played, play_on_two_workers};

/// The Python starter under `root/name`, a distinct submission per name.
fn write_starter(root: &Path, name: &str) {
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

/// Writes the tournament file (`head`, then one `[[bots]]` per name).
fn write_file(root: &Path, head: &str, names: &[&str]) -> String {
    let mut text = head.to_owned();
    for name in names {
        write_starter(root, name);
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let path = root.join("tournament.toml");
    std::fs::write(&path, text).expect("tournament file");
    path.display().to_string()
}

/// Every match has `seats` distinct entrants and was played to the turn
/// limit or an ending; returns each entrant's points and games.
fn tally(
    matches: &[arena_proto::v1::MatchSummary],
    seats: usize,
) -> (BTreeMap<String, f64>, BTreeMap<String, u64>) {
    let mut points = BTreeMap::new();
    let mut games = BTreeMap::new();
    for m in matches {
        assert_eq!(m.seats.len(), seats, "{m:#?}");
        let distinct: std::collections::BTreeSet<&String> = m.seats.iter().collect();
        assert_eq!(distinct.len(), seats, "distinct entrants: {m:#?}");
        assert_eq!(m.ranks.len(), seats, "{m:#?}");
        assert!(
            ["turn_limit", "last_standing"].contains(&m.reason.as_str()),
            "starters play to an ending, never a forfeit: {m:#?}"
        );
        let p = placement_points(&m.ranks);
        assert!((p.iter().sum::<f64>() - seats as f64 / 2.0).abs() < 1e-9);
        for (seat, entrant) in m.seats.iter().enumerate() {
            *points.entry(entrant.clone()).or_default() += p[seat];
            *games.entry(entrant.clone()).or_default() += 1;
        }
    }
    (points, games)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_seat_grid_royale_round_robin() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-grid2-")
        .tempdir()
        .expect("temp dir");
    let names = ["g1", "g2", "g3"];
    let file = write_file(
        root.path(),
        "name = \"E2E grid 2\"\ngame = \"grid-royale\"\nseats = 2\nseed = 5\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 2\n\n\
         [rules]\nmax_turns = 60\n",
        &names,
    );
    // Three pairs, each played twice with seats swapped.
    let Played { matches, rows, .. } = play_on_two_workers("grid2", &file, 6).await;
    let (points, games) = tally(&matches, 2);
    assert_eq!(rows.len(), names.len());
    for r in &rows {
        let entrant = r["entrant"].as_str().expect("entrant");
        assert_eq!(r["games"], games[entrant], "{r}");
        // Three entrants: a bye each (worth a win), then two games a pair.
        let expected = points[entrant] + r["byes"].as_f64().expect("byes");
        assert!(
            (r["points"].as_f64().expect("points") - expected).abs() < 1e-9,
            "{r}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_seat_grid_royale_swiss() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-grid4-")
        .tempdir()
        .expect("temp dir");
    let names = ["h1", "h2", "h3", "h4", "h5"];
    const ROUNDS: usize = 2;
    let file = write_file(
        root.path(),
        &format!(
            "name = \"E2E grid 4\"\ngame = \"grid-royale\"\nseats = 4\nseed = 6\n\n\
             [format]\nkind = \"swiss\"\nrounds = {ROUNDS}\n\n\
             [rules]\nmax_turns = 60\n"
        ),
        &names,
    );
    // Five entrants in groups of four: one match and one bye a round.
    let Played { matches, rows, .. } = play_on_two_workers("grid4", &file, ROUNDS).await;
    let (points, games) = tally(&matches, 4);
    assert_eq!(rows.len(), names.len());
    for r in &rows {
        let entrant = r["entrant"].as_str().expect("entrant");
        let played = games.get(entrant).copied().unwrap_or(0);
        let byes = r["byes"].as_u64().expect("byes");
        assert_eq!(r["games"], played, "{r}");
        assert!(byes <= 1, "nobody gets a second bye: {r}");
        assert_eq!(played + byes, ROUNDS as u64, "a game or a bye a round: {r}");
        let expected = points.get(entrant).copied().unwrap_or(0.0) + byes as f64;
        assert!(
            (r["points"].as_f64().expect("points") - expected).abs() < 1e-9,
            "{r}"
        );
    }
    let byes: u64 = rows.iter().map(|r| r["byes"].as_u64().unwrap_or(0)).sum();
    assert_eq!(byes, ROUNDS as u64, "one bye a round");
}
