//! A worker SIGKILLed in the middle of a match: its bots die with it, its
//! lease expires, the match is replayed elsewhere, and nothing is lost or
//! counted twice. Both workers are sandboxed. The killed worker cannot
//! remove its sandboxes' cgroups; the worker started after it in the same
//! cgroup parent, as a restarted worker on that host would be, removes
//! them as it starts (the sandbox's sweep of leaves whose runner is gone).

use std::time::Duration;

use crate::support::arena::{self, Coordinator, STARTUP, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
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
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;

    // Both bots running (held at the gate): the match is truly in flight.
    let victim = wait_in_flight(&mut admin, &id, &worker_a).await;
    assert_eq!(victim.attempt, 1);
    let pid_a = worker_a.process.pid();
    let cgroup = worker_a.cgroup().expect("a sandboxed worker");
    assert!(
        !cgroup.leaves_of(pid_a).is_empty(),
        "A's bots run in cgroup leaves of their own"
    );

    worker_a.process.kill();
    poll_until(
        "A's bots to die with it",
        Duration::from_secs(10),
        async || worker_a.bot_processes().is_empty().then_some(()),
    )
    .await;
    // A SIGKILLed runner cannot remove its sandboxes' cgroups: they are
    // still there, empty, for whoever comes next.
    let cgroup = worker_a.cgroup().expect("a sandboxed worker");
    let left = cgroup.leaves_of(pid_a);
    assert!(!left.is_empty(), "the killed worker's leaves vanished");

    // The lease runs out (2 s without a heartbeat) and the match is queued
    // again, one attempt later.
    let requeued = wait_requeued(&mut admin, &id, &victim.match_id).await;
    assert_eq!(requeued.attempt, 2, "{requeued:#?}");

    // Worker B, started in A's cgroup parent, removes A's leftovers as it
    // starts, and plays everything, the killed match included.
    gate.open();
    let mut worker_b = Worker::replace_gated(&mut worker_a, "kill-b", &url, gate);
    let cgroup = worker_b.cgroup().expect("a sandboxed worker");
    poll_until(
        "B to remove the leaves A left behind",
        STARTUP,
        async || cgroup.leaves_of(pid_a).is_empty().then_some(()),
    )
    .await;
    wait_finished(&mut admin, &id).await;

    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    let replayed = find(&all, &victim.match_id);
    assert!(replayed.attempt >= 2, "{replayed:#?}");
    let first = replayed
        .failures
        .iter()
        .find(|f| f.attempt == 1)
        .unwrap_or_else(|| panic!("no failure of the first attempt: {replayed:#?}"));
    assert_eq!(
        (first.worker.as_str(), first.reason.as_str()),
        ("kill-a", "lease expired"),
        "{replayed:#?}"
    );
    // B's results are every result: one per match, none twice. Draining,
    // B removes the cgroup parent, which it can only do with no leaf of A's
    // (or its own) left in it.
    let summary = worker_b.drain();
    assert_eq!(summary.accepted, total as u64, "{summary:?}");
    assert_eq!(summary.played, total as u64, "{summary:?}");
    assert_eq!(summary.failed, 0, "{summary:?}");
}
