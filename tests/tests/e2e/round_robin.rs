//! A whole round robin through the distributed path, on sandboxed workers.

use std::collections::BTreeSet;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
use crate::support::redis::RedisServer;
use crate::support::tournament::{TOURNAMENT, assert_all_done_once, matches};
use crate::support::wait::poll_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_of_six_bots_on_two_workers() {
    const BOTS: usize = 6;
    const GAMES_PER_PAIRING: usize = 2;
    let total = round_robin_matches(BOTS, GAMES_PER_PAIRING);
    assert_eq!(total, BOTS * (BOTS - 1));

    let fixture = Fixture::ungated("rr", BOTS, "E2E round robin", 11, GAMES_PER_PAIRING as u32);
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    // Sandboxed: each worker confines its bots under a cgroup parent of its
    // own, which it removes when it drains (checked by `drain`).
    let mut workers = [
        Worker::start("rr-a", &url, true),
        Worker::start("rr-b", &url, true),
    ];

    let created = arena::tournament(&url, &["create", fixture.file()]);
    let id = created.trim().to_owned();
    assert!(id.starts_with("t-"), "create printed {created:?}");

    let status = poll_until(
        "`arena tournament status` to say finished",
        TOURNAMENT,
        async || {
            let line = arena::tournament(&url, &["status", &id]);
            line.contains(", finished").then_some(line)
        },
    )
    .await;
    assert!(
        status.contains(&format!("{total}/{total} matches done")),
        "{status}"
    );

    let json = arena::tournament(&url, &["standings", &id, "--json"]);
    let standings: serde_json::Value = serde_json::from_str(&json).expect("standings JSON");
    let rows = standings["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), BOTS, "{json}");
    let names: BTreeSet<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    let expected: BTreeSet<&str> = fixture.bots.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, expected);
    let count = |row: &serde_json::Value, key: &str| row[key].as_u64().unwrap();
    let (mut points, mut wins, mut losses) = (0.0, 0, 0);
    for row in rows {
        // Every entrant meets the other five twice (seats swapped).
        assert_eq!(
            count(row, "games"),
            (GAMES_PER_PAIRING * (BOTS - 1)) as u64,
            "{row}"
        );
        assert_eq!(
            count(row, "wins") + count(row, "draws") + count(row, "losses"),
            count(row, "games"),
            "{row}"
        );
        assert_eq!(count(row, "byes"), 0, "{row}");
        points += row["points"].as_f64().unwrap();
        wins += count(row, "wins");
        losses += count(row, "losses");
    }
    // A two-seat game hands out one point, and a win is someone's loss.
    assert_eq!(points, total as f64, "{json}");
    assert_eq!(wins, losses, "{json}");
    assert!(wins > 0, "some games are decided: {json}");

    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);

    // Each match was accepted exactly once, and both workers played.
    let summaries = workers.each_mut().map(|w| w.drain());
    let accepted: u64 = summaries.iter().map(|s| s.accepted).sum();
    assert_eq!(accepted, total as u64, "{summaries:?}");
    for summary in &summaries {
        assert!(summary.accepted > 0, "{summaries:?}");
        assert_eq!(summary.failed, 0, "{summaries:?}");
        assert_eq!(summary.dropped, 0, "{summaries:?}");
    }
}
