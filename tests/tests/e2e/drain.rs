//! SIGTERM drains a worker: the match in flight is played out and reported,
//! nothing more is leased, and the sandboxed worker exits cleanly, its
//! cgroups removed.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::Fixture;
use crate::support::redis::RedisServer;
use crate::support::tournament::{find, matches, wait_in_flight};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_worker_finishes_its_match_and_leases_no_more() {
    // Two bots, two games: one to play, one that must stay queued.
    let fixture = Fixture::gated("drain", 2, "E2E drain", 59, 2);
    let gate = fixture.gate();
    gate.close();
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    let mut worker = Worker::start_gated("drain", &url, gate);
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let playing = wait_in_flight(&mut admin, &id, &worker).await;

    worker.process.signal(libc::SIGTERM);
    worker.process.wait_for_stderr(
        "the worker to start draining",
        Duration::from_secs(30),
        |l| l.contains("draining"),
    );
    // The gate holds the sandboxed bots: the match is still being played.
    let all = matches(&mut admin, &id).await;
    assert_eq!(find(&all, &playing.match_id).state, "leased", "{all:#?}");
    gate.open();
    let summary = worker.drain();
    assert_eq!(summary.played, 1, "{summary:?}");
    assert_eq!(summary.accepted, 1, "{summary:?}");

    let all = matches(&mut admin, &id).await;
    assert_eq!(all.len(), 2, "{all:#?}");
    assert_eq!(find(&all, &playing.match_id).state, "done", "{all:#?}");
    let other = all
        .iter()
        .find(|m| m.match_id != playing.match_id)
        .expect("the second game");
    assert_eq!(other.state, "queued", "{all:#?}");
    assert_eq!(other.attempt, 1, "never leased: {other:#?}");
}
