//! The coordinator keeps everything in Redis: SIGKILL it mid-tournament,
//! start another on the same Redis and address, and the tournament carries
//! on to exactly the standings an uninterrupted run produces. Workers are
//! sandboxed, their bots behind the fixture's gate.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
use crate::support::redis::RedisServer;
use crate::support::tournament::{assert_all_done_once, matches, status, wait_finished};
use crate::support::wait::poll_until;

const BOTS: usize = 4;
const GAMES_PER_PAIRING: usize = 2;
/// Short, so a result lost in the kill is replayed soon.
const LEASE_TTL_S: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_restart_resumes_and_standings_match_an_uninterrupted_run() {
    let total = round_robin_matches(BOTS, GAMES_PER_PAIRING);
    let fixture = Fixture::gated("restart", BOTS, "E2E restart", 31, GAMES_PER_PAIRING as u32);
    let gate = fixture.gate();
    let file = fixture.file();

    // Run A: uninterrupted.
    let (id_a, standings_a) = {
        let redis = RedisServer::start();
        let coordinator = Coordinator::start(&redis, "127.0.0.1:0", LEASE_TTL_S);
        let url = coordinator.url();
        let mut workers = [
            Worker::start_gated("restart-a1", &url, gate),
            Worker::start_gated("restart-a2", &url, gate),
        ];
        let id = arena::create_tournament(&url, file);
        let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
        wait_finished(&mut admin, &id).await;
        assert_all_done_once(&matches(&mut admin, &id).await, total);
        let json = arena::tournament(&url, &["standings", &id, "--json"]);
        for worker in &mut workers {
            worker.drain();
        }
        (id, json)
    };

    // Run B: a fresh Redis; the coordinator dies with matches in flight.
    let redis = RedisServer::start();
    let mut first = Coordinator::start(&redis, "127.0.0.1:0", LEASE_TTL_S);
    let addr = first.addr;
    let url = first.url();
    let mut workers = [
        Worker::start_gated("restart-b1", &url, gate),
        Worker::start_gated("restart-b2", &url, gate),
    ];
    let id = arena::create_tournament(&url, file);
    assert_eq!(id, id_a, "a tournament's id is derived from its content");
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let before = poll_until(
        "two matches to be done",
        Duration::from_secs(120),
        async || {
            let s = status(&mut admin, &id).await;
            (s.done >= 2).then_some(s)
        },
    )
    .await;
    // Hold the matches in flight where they are, then kill the coordinator.
    gate.close();
    first.process.kill();

    // Same Redis, same address: the workers reconnect by themselves.
    let second = Coordinator::start(&redis, &addr.to_string(), LEASE_TTL_S);
    assert_eq!(second.addr, addr);
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let resumed = status(&mut admin, &id).await;
    assert_eq!(resumed.total, total as u64);
    assert!(
        resumed.done >= before.done && resumed.done < resumed.total,
        "the restart must fall mid-tournament: before {before:?}, after {resumed:?}"
    );
    gate.open();
    wait_finished(&mut admin, &id).await;
    assert_all_done_once(&matches(&mut admin, &id).await, total);
    let standings_b = arena::tournament(&url, &["standings", &id, "--json"]);
    for worker in &mut workers {
        worker.drain();
    }

    let parse = |json: &str| -> serde_json::Value {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("standings JSON: {e}\n{json}"))
    };
    let (a, b) = (parse(&standings_a), parse(&standings_b));
    let rows = a["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), BOTS);
    let points: Vec<f64> = rows.iter().map(|r| r["points"].as_f64().unwrap()).collect();
    assert!(
        points.iter().any(|p| *p != points[0]),
        "the standings should not be a flat tie: {standings_a}"
    );
    for (row_a, row_b) in rows.iter().zip(b["rows"].as_array().expect("rows")) {
        for key in [
            "rank",
            "entrant",
            "name",
            "points",
            "buchholz",
            "sonneborn_berger",
            "rating_mu",
            "rating_sigma",
            "rating_conservative",
            "games",
            "wins",
            "draws",
            "losses",
        ] {
            assert_eq!(
                row_a[key], row_b[key],
                "{key} differs\nuninterrupted: {row_a}\nrestarted: {row_b}"
            );
        }
    }
    assert_eq!(a, b, "the whole standings documents differ");
}
