//! A worker SIGKILLed in the middle of a match: its lease expires, the match
//! is replayed elsewhere, and nothing is lost or counted twice.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Gate, round_robin_matches, write_bots, write_tournament};
use crate::support::redis::RedisServer;
use crate::support::tournament::{
    assert_all_done_once, find, first_in_state, matches, wait_finished,
};
use crate::support::wait::poll_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_worker_mid_match_loses_nothing() {
    const BOTS: usize = 4;
    let total = round_robin_matches(BOTS, 1);

    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-kill-")
        .tempdir()
        .unwrap();
    // Closed from the start: worker A cannot finish anything before it dies.
    let gate = Gate::new(dir.path().join("gate"));
    gate.close();
    let bots = write_bots(&dir.path().join("bots"), BOTS, Some(&gate));
    let file = write_tournament(
        &dir.path().join("tournament.toml"),
        "E2E worker killed",
        23,
        1,
        &bots,
    );
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 2);
    let url = coordinator.url();
    // Unsandboxed: a SIGKILLed sandboxed worker would leave its cgroups
    // behind (only a later start on the same parent removes them).
    let mut worker_a = Worker::start("kill-a", &url, false);
    let id = arena::tournament(&url, &["create", file.to_str().unwrap()])
        .trim()
        .to_owned();
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;

    let victim = poll_until(
        "worker A to lease a match",
        Duration::from_secs(60),
        async || first_in_state(&matches(&mut admin, &id).await, "leased").cloned(),
    )
    .await;
    assert_eq!(victim.attempt, 1);
    // Both bots running (held at the gate): the match is truly in flight.
    poll_until(
        "A's two bots to start",
        Duration::from_secs(60),
        async || (worker_a.bot_processes().len() == 2).then_some(()),
    )
    .await;

    worker_a.process.kill();
    poll_until(
        "A's bots to die with it",
        Duration::from_secs(10),
        async || worker_a.bot_processes().is_empty().then_some(()),
    )
    .await;

    // The lease runs out (2 s without a heartbeat) and the match is queued
    // again, one attempt later.
    let requeued = poll_until("A's lease to expire", Duration::from_secs(30), async || {
        let all = matches(&mut admin, &id).await;
        let m = find(&all, &victim.match_id);
        (m.state == "queued").then(|| m.clone())
    })
    .await;
    assert_eq!(requeued.attempt, 2, "{requeued:#?}");

    // Worker B (sandboxed: its bots would not see the gate anyway) plays
    // everything, the killed match included.
    gate.open();
    let mut worker_b = Worker::start("kill-b", &url, true);
    wait_finished(&mut admin, &id).await;

    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    let replayed = find(&all, &victim.match_id);
    assert!(replayed.attempt >= 2, "{replayed:#?}");
    let summary = worker_b.drain();
    assert_eq!(summary.accepted, total as u64, "{summary:?}");
    assert_eq!(summary.failed, 0, "{summary:?}");
}
