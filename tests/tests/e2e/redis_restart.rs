//! Redis dies (SIGKILL) while matches are being played and comes back on the
//! same append-only file. Results finished while it was down are not lost:
//! the coordinator answers UNAVAILABLE, the workers retry their reports with
//! backoff, the coordinator's store reconnects, and every match ends up
//! recorded once, on its first attempt: nothing had to be played again.

use std::time::Duration;

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::{Fixture, round_robin_matches};
use crate::support::redis::RedisServer;
use crate::support::tournament::{assert_all_done_once, matches, status, wait_finished};
use crate::support::wait::poll_until;

const BOTS: usize = 3;
const GAMES_PER_PAIRING: usize = 2;
/// Long: no lease may run out while Redis is down, or its match would be
/// replayed for a reason this test is not about.
const LEASE_TTL_S: u64 = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_finished_while_redis_is_down_are_kept() {
    let total = round_robin_matches(BOTS, GAMES_PER_PAIRING);
    let fixture = Fixture::gated(
        "redis-down",
        BOTS,
        "E2E redis down",
        41,
        GAMES_PER_PAIRING as u32,
    );
    let gate = fixture.gate();
    let mut redis = RedisServer::start_persistent("always");
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", LEASE_TTL_S);
    let url = coordinator.url();
    // Sandboxed, with the gate bound in: it holds the matches in flight
    // until Redis is gone.
    let mut workers = [
        Worker::start_gated("redis-down-1", &url, gate),
        Worker::start_gated("redis-down-2", &url, gate),
    ];
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    poll_until("a match done", Duration::from_secs(120), async || {
        (status(&mut admin, &id).await.done >= 1).then_some(())
    })
    .await;
    gate.close();
    // Both workers' bots are running (fetched, built, started) and held at
    // the gate: what remains of their matches needs no Redis until the end.
    poll_until(
        "both workers' bots held at the gate",
        Duration::from_secs(60),
        async || workers.iter().all(|w| w.running_bots() > 0).then_some(()),
    )
    .await;

    redis.kill();
    gate.open();
    // The held matches finish now; their reports meet a coordinator whose
    // store is gone, and are retried.
    let retried = poll_until(
        "a worker retrying a report",
        Duration::from_secs(60),
        async || {
            workers.iter().find_map(|w| {
                w.process
                    .stderr
                    .text()
                    .lines()
                    .find(|l| l.contains("ReportResult for match") && l.contains("retrying"))
                    .map(str::to_owned)
            })
        },
    )
    .await;
    redis.restart();

    wait_finished(&mut admin, &id).await;
    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    let replayed: Vec<_> = all
        .iter()
        .filter(|m| m.attempt != 1 || !m.failures.is_empty())
        .map(|m| (&m.match_id, m.attempt, &m.failures))
        .collect();
    assert!(
        replayed.is_empty(),
        "every result reported while Redis was down must be kept (first seen: {retried}); \
         replayed: {replayed:?}"
    );
    let mut accepted = 0;
    for worker in &mut workers {
        let summary = worker.drain();
        assert_eq!(summary.failed, 0, "{summary:?}");
        accepted += summary.accepted;
    }
    assert_eq!(
        accepted, total as u64,
        "each match reported and accepted once"
    );
}
