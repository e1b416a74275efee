//! A worker cut off from the coordinator mid-match loses its lease; the
//! match is replayed by another worker, and the cut-off worker, once its
//! next heartbeat tells it the lease is gone, stops that match at once and
//! reports nothing for it. Both workers are sandboxed, their bots behind the
//! fixture's gate.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
use crate::support::proxy::Proxy;
use crate::support::redis::RedisServer;
use crate::support::tournament::{
    assert_all_done_once, find, matches, wait_finished, wait_in_flight, wait_requeued,
};
use crate::support::wait::poll_until;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_worker_loses_its_lease_and_stops_that_match() {
    const BOTS: usize = 3;
    let total = round_robin_matches(BOTS, 1);

    let fixture = Fixture::gated("cut", BOTS, "E2E cut off", 47, 1);
    let gate = fixture.gate();
    gate.close();
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 2);
    let url = coordinator.url();
    let mut proxy = Proxy::start(coordinator.addr).await;
    // Both see the gate, so both are held by it.
    let mut worker_a = Worker::start_gated("cut-a", &proxy.url(), gate);
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let victim = wait_in_flight(&mut admin, &id, &worker_a).await;

    // Cut A off: its heartbeats stop reaching the coordinator, the lease
    // runs out and the match goes back to the queue.
    proxy.cut().await;
    let requeued = wait_requeued(&mut admin, &id, &victim.match_id).await;
    assert_eq!(requeued.attempt, victim.attempt + 1, "{requeued:#?}");

    // B takes it (requeued matches go to the front of the queue).
    let mut worker_b = Worker::start_gated("cut-b", &url, gate);
    poll_until(
        "B to lease the match",
        Duration::from_secs(60),
        async || {
            let all = matches(&mut admin, &id).await;
            let m = find(&all, &victim.match_id);
            (m.state == "leased" && m.attempt == requeued.attempt).then_some(())
        },
    )
    .await;

    // A reconnects, learns from its next heartbeat that the lease is gone,
    // and stops the match there and then, while the gate still holds it
    // (that its bots and cgroups go with it is the worker tests' business).
    proxy.restore().await;
    worker_a.process.wait_for_stderr(
        "A to stop the match whose lease it lost",
        Duration::from_secs(60),
        |l| l.contains("match stopped: its lease is lost") && l.contains(&victim.match_id),
    );
    // B plays it to the end; only B's result exists.
    gate.open();
    wait_finished(&mut admin, &id).await;
    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    assert!(find(&all, &victim.match_id).attempt >= 2);

    let a = worker_a.drain();
    let b = worker_b.drain();
    let a_log = worker_a.process.stderr.text();
    assert_eq!(
        (a.abandoned, a.dropped),
        (1, 0),
        "A stops the lost match and reports nothing for it: {a:?}\n{a_log}"
    );
    assert_eq!(a.accepted + b.accepted, total as u64, "A {a:?}, B {b:?}");
}
