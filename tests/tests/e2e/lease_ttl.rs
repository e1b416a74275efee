//! Workers are told to heartbeat often enough to keep their leases, and do.

use std::time::{Duration, Instant};

use crate::support::arena::{self, Coordinator, WORKER_TOKEN, Worker};
use crate::support::bots::Fixture;
use crate::support::redis::RedisServer;
use crate::support::tournament::{find, matches, wait_finished, wait_in_flight};

/// Heartbeats are derived from the lease TTL in milliseconds: with a 1 s
/// lease, a heartbeat every second would always arrive just after the lease
/// it should extend had expired, and a healthy worker would lose every match
/// longer than that.
///
/// The contract checked: at least two heartbeats per lease lifetime, so one
/// late heartbeat does not cost a lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_come_at_least_twice_per_lease_ttl() {
    let redis = RedisServer::start();
    for ttl_s in [1, 2, 3, 5, 30] {
        let coordinator = Coordinator::start(&redis, "127.0.0.1:0", ttl_s);
        let mut worker = arena::worker_rpc(&coordinator.url(), Some(WORKER_TOKEN)).await;
        let registration = worker
            .register(arena::register_request("ttl-probe"))
            .await
            .expect("Register")
            .into_inner();
        assert_eq!(registration.lease_ttl_ms, ttl_s * 1000);
        assert!(
            2 * registration.heartbeat_interval_ms <= registration.lease_ttl_ms,
            "--lease-ttl {ttl_s}: heartbeat every {} ms for a {} ms lease",
            registration.heartbeat_interval_ms,
            registration.lease_ttl_ms
        );
    }
}

/// A healthy worker keeps its lease on a match that runs far longer than
/// the lease TTL: its heartbeats extend the lease, so the match is never
/// requeued (it stays `leased` at attempt 1 throughout) and finishes on its
/// first attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeating_worker_keeps_its_lease_past_the_ttl() {
    const TTL_S: u64 = 2;
    /// How long the match is held in flight: several lease lifetimes.
    const HOLD: Duration = Duration::from_secs(3 * TTL_S);
    const POLL: Duration = Duration::from_millis(50);

    // Two bots, one game: exactly one match, held at the gate.
    let fixture = Fixture::gated("lease", 2, "E2E lease kept", 31, 1);
    let gate = fixture.gate();
    gate.close();
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", TTL_S);
    let url = coordinator.url();
    // Unsandboxed, so its bots see the gate. The only worker: a lease on
    // this match can only be this worker's.
    let mut worker = Worker::start("lease", &url, false);
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;

    let held = wait_in_flight(&mut admin, &id, &worker).await;
    assert_eq!(held.attempt, 1, "{held:#?}");

    // Check the match over the whole hold, not just at its end: a lease
    // that lapsed and was re-leased would show as `queued` in between, or
    // as attempt 2 afterwards.
    let started = Instant::now();
    let mut checks = 0u32;
    while started.elapsed() < HOLD {
        let all = matches(&mut admin, &id).await;
        assert_eq!(all.len(), 1, "{all:#?}");
        let m = find(&all, &held.match_id);
        let at = started.elapsed();
        assert_eq!(
            m.state, "leased",
            "after {at:?} of a {TTL_S} s lease: {m:#?}"
        );
        assert_eq!(m.attempt, 1, "after {at:?} of a {TTL_S} s lease: {m:#?}");
        checks += 1;
        tokio::time::sleep(POLL).await;
    }
    assert!(checks >= 10, "only {checks} checks in {HOLD:?}");
    let log = worker.process.stderr.text();
    assert!(
        !log.contains("is no longer ours"),
        "the worker lost its lease while heartbeating:\n{log}"
    );

    gate.open();
    wait_finished(&mut admin, &id).await;
    let all = matches(&mut admin, &id).await;
    let done = find(&all, &held.match_id);
    assert_eq!(done.state, "done", "{done:#?}");
    assert_eq!(done.attempt, 1, "the match was replayed: {done:#?}");
    let summary = worker.drain();
    assert_eq!(summary.played, 1, "{summary:?}");
    assert_eq!(summary.accepted, 1, "{summary:?}");
    assert_eq!(summary.dropped, 0, "{summary:?}");
}
