//! SIGTERM drains a worker: the match in flight is played out and reported,
//! nothing more is leased, and the worker exits cleanly.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Gate, write_bots, write_tournament};
use crate::support::redis::RedisServer;
use crate::support::tournament::{find, first_in_state, matches};
use crate::support::wait::poll_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_worker_finishes_its_match_and_leases_no_more() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-drain-")
        .tempdir()
        .unwrap();
    let gate = Gate::new(dir.path().join("gate"));
    gate.close();
    let bots = write_bots(&dir.path().join("bots"), 2, Some(&gate));
    // Two bots, two games: one to play, one that must stay queued.
    let file = write_tournament(
        &dir.path().join("tournament.toml"),
        "E2E drain",
        59,
        2,
        &bots,
    );
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    let mut worker = Worker::start("drain", &url, false);
    let id = arena::tournament(&url, &["create", file.to_str().unwrap()])
        .trim()
        .to_owned();
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let playing = poll_until(
        "the worker to lease a match",
        Duration::from_secs(60),
        async || first_in_state(&matches(&mut admin, &id).await, "leased").cloned(),
    )
    .await;
    poll_until(
        "its two bots to start",
        Duration::from_secs(60),
        async || (worker.bot_processes().len() == 2).then_some(()),
    )
    .await;

    worker.process.signal(libc::SIGTERM);
    worker.process.wait_for_stderr(
        "the worker to start draining",
        Duration::from_secs(30),
        |l| l.contains("draining"),
    );
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
