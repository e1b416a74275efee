//! Classic generals tournaments through the distributed path, on sandboxed
//! workers and a real Redis: a 2v2 round robin of team entrants (one
//! submission plays both seats of its side) and a six-player free-for-all
//! Swiss. The standings are recomputed here, by hand, from the recorded
//! placements.

use std::collections::BTreeMap;
use std::path::Path;

use arena_engine::placement_points;

use crate::support::arena::workspace;
use crate::support::bots::write_bot;
use crate::support::tournament::{Played, play_on_two_workers};

/// Entrant `name` under `root`: the starter or the random test bot, with a
/// file of its own so that every entrant is a distinct submission.
fn write_entrant(root: &Path, name: &str, starter: bool) {
    let source = if starter {
        "bots/starter-python/bot.py"
    } else {
        "bots/test/random/bot.py"
    };
    let code = std::fs::read(workspace().join(source)).expect("bot source");
    write_bot(
        root,
        name,
        "#!/bin/sh\nexec python3 -B -u bot.py\n",
        &[("bot.py", &code)],
    );
}

/// Writes the tournament file and returns its path.
fn write_file(root: &Path, head: &str, names: &[&str]) -> String {
    let mut text = head.to_owned();
    for name in names {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let path = root.join("tournament.toml");
    std::fs::write(&path, text).expect("tournament file");
    path.display().to_string()
}

fn row<'a>(rows: &'a [serde_json::Value], entrant: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["entrant"] == entrant)
        .unwrap_or_else(|| panic!("no row for {entrant}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2v2_round_robin_of_team_entrants() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-2v2-")
        .tempdir()
        .expect("temp dir");
    let names = ["team-a", "team-b", "team-r"];
    for (i, name) in names.iter().enumerate() {
        write_entrant(root.path(), name, i < 2);
    }
    let file = write_file(
        root.path(),
        "name = \"E2E 2v2\"\ngame = \"generals-classic\"\nseats = 4\nseed = 3\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 2\n\n\
         [rules]\nmode = \"2v2\"\nmax_turns = 150\n\n\
         [limits]\nfirst_move_ms = 60000\nmove_ms = 60000\n",
        &names,
    );
    // Three sides: every pair meets twice, sides swapped.
    let Played {
        matches: all, rows, ..
    } = play_on_two_workers("2v2", &file, 6).await;
    assert_eq!(rows.len(), names.len());

    // By hand: a match is won, drawn or lost by a side; teammates share a
    // place, and the side scores 1, ½ or 0.
    let mut points: BTreeMap<&str, f64> = BTreeMap::new();
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    let mut opponents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for m in &all {
        assert_eq!(m.seats.len(), 4, "{m:#?}");
        assert_eq!(
            m.seats[0], m.seats[2],
            "one entrant plays both seats of a side"
        );
        assert_eq!(m.seats[1], m.seats[3], "{m:#?}");
        assert_ne!(m.seats[0], m.seats[1], "{m:#?}");
        assert_eq!(m.ranks[0], m.ranks[2], "teammates share a place: {m:#?}");
        assert_eq!(m.ranks[1], m.ranks[3], "{m:#?}");
        let sides = [m.seats[0].as_str(), m.seats[1].as_str()];
        let side_points = placement_points(&[m.ranks[0], m.ranks[1]]);
        for (side, entrant) in sides.iter().enumerate() {
            *points.entry(entrant).or_default() += side_points[side];
            *games.entry(entrant).or_default() += 1;
            opponents.entry(entrant).or_default().push(sides[1 - side]);
        }
    }
    let total: f64 = points.values().sum();
    assert!((total - all.len() as f64).abs() < 1e-9, "one point a match");
    // Three sides: the circle method gives each one bye a cycle, worth a win.
    let totals: BTreeMap<&str, f64> = points
        .iter()
        .map(|(e, p)| (*e, p + row(&rows, e)["byes"].as_f64().unwrap()))
        .collect();
    for (entrant, expected) in &totals {
        let r = row(&rows, entrant);
        assert_eq!(r["games"], games[entrant], "{r}");
        assert_eq!(r["byes"], 1, "{r}");
        assert!(
            (r["points"].as_f64().unwrap() - expected).abs() < 1e-9,
            "{r}"
        );
        // Buchholz: the opponents' totals, teammates never among them.
        let buchholz: f64 = opponents[entrant].iter().map(|o| totals[o]).sum();
        assert!(
            (r["buchholz"].as_f64().unwrap() - buchholz).abs() < 1e-9,
            "{r}"
        );
        let results = r["wins"].as_u64().unwrap()
            + r["draws"].as_u64().unwrap()
            + r["losses"].as_u64().unwrap();
        assert_eq!(results, games[entrant], "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_six_player_free_for_all_swiss() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-ffa6-")
        .tempdir()
        .expect("temp dir");
    let names = ["s1", "s2", "s3", "s4", "r1", "r2", "r3"];
    for name in names {
        write_entrant(root.path(), name, name.starts_with('s'));
    }
    const ROUNDS: usize = 2;
    let file = write_file(
        root.path(),
        &format!(
            "name = \"E2E FFA6\"\ngame = \"generals-classic\"\nseats = 6\nseed = 4\n\n\
             [format]\nkind = \"swiss\"\nrounds = {ROUNDS}\n\n\
             [rules]\nmode = \"ffa\"\nmax_turns = 150\n\n\
             [limits]\nfirst_move_ms = 60000\nmove_ms = 60000\n"
        ),
        &names,
    );
    // Seven entrants in groups of six: one match and one bye a round.
    let Played {
        matches: all, rows, ..
    } = play_on_two_workers("ffa6", &file, ROUNDS).await;
    assert_eq!(rows.len(), names.len());
    let mut points: BTreeMap<&str, f64> = BTreeMap::new();
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    for m in &all {
        assert_eq!(m.seats.len(), 6, "{m:#?}");
        let distinct: std::collections::BTreeSet<&String> = m.seats.iter().collect();
        assert_eq!(distinct.len(), 6, "six different entrants: {m:#?}");
        let p = placement_points(&m.ranks);
        assert!((p.iter().sum::<f64>() - 3.0).abs() < 1e-9);
        for (seat, entrant) in m.seats.iter().enumerate() {
            *points.entry(entrant.as_str()).or_default() += p[seat];
            *games.entry(entrant.as_str()).or_default() += 1;
        }
    }
    for r in &rows {
        let entrant = r["entrant"].as_str().unwrap();
        let played = games.get(entrant).copied().unwrap_or(0);
        assert_eq!(r["games"], played, "{r}");
        let byes = r["byes"].as_u64().unwrap();
        assert_eq!(
            played + byes,
            ROUNDS as u64,
            "a game or a bye each round: {r}"
        );
        // A bye is worth a win.
        let expected = points.get(entrant).copied().unwrap_or(0.0) + byes as f64;
        assert!(
            (r["points"].as_f64().unwrap() - expected).abs() < 1e-9,
            "{r}"
        );
    }
    let byes: u64 = rows.iter().map(|r| r["byes"].as_u64().unwrap()).sum();
    assert_eq!(byes, ROUNDS as u64, "one bye a round");
}
