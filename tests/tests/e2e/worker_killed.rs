//! A worker SIGKILLed in the middle of a match: its lease expires, the match
//! is replayed elsewhere, and nothing is lost or counted twice. Both workers
//! are sandboxed; the sandboxes the killed one left behind are removed.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
use crate::support::cgroups::dirs_named;
use crate::support::redis::RedisServer;
use crate::support::tournament::{
    assert_all_done_once, find, matches, wait_finished, wait_in_flight, wait_requeued,
};
use crate::support::wait::poll_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_worker_mid_match_loses_nothing() {
    const BOTS: usize = 4;
    let total = round_robin_matches(BOTS, 1);

    // Closed from the start: worker A cannot finish anything before it dies.
    let fixture = Fixture::gated("kill", BOTS, "E2E worker killed", 23, 1);
    let gate = fixture.gate();
    gate.close();
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 2);
    let url = coordinator.url();
    let mut worker_a = Worker::start_gated("kill-a", &url, gate);
    let cgroup_a = worker_a.cgroup_name().expect("a sandboxed worker");
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;

    // Both bots running (held at the gate): the match is truly in flight.
    let victim = wait_in_flight(&mut admin, &id, &worker_a).await;
    assert_eq!(victim.attempt, 1);

    worker_a.process.kill();
    poll_until(
        "A's bots to die with it",
        Duration::from_secs(10),
        async || worker_a.bot_processes().is_empty().then_some(()),
    )
    .await;

    // The lease runs out (2 s without a heartbeat) and the match is queued
    // again, one attempt later.
    let requeued = wait_requeued(&mut admin, &id, &victim.match_id).await;
    assert_eq!(requeued.attempt, 2, "{requeued:#?}");

    // Worker B plays everything, the killed match included.
    gate.open();
    let mut worker_b = Worker::start_gated("kill-b", &url, gate);
    wait_finished(&mut admin, &id).await;

    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    let replayed = find(&all, &victim.match_id);
    assert!(replayed.attempt >= 2, "{replayed:#?}");
    let summary = worker_b.drain();
    assert_eq!(summary.accepted, total as u64, "{summary:?}");
    assert_eq!(summary.failed, 0, "{summary:?}");

    // A SIGKILLed runner cannot remove its sandboxes' cgroups; the killed
    // worker's guard removes whatever it left behind.
    drop(worker_a);
    assert_eq!(
        dirs_named(&cgroup_a),
        Vec::<std::path::PathBuf>::new(),
        "the killed worker's cgroups remain"
    );
}
