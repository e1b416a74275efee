//! The primary Redis dies mid-tournament behind Sentinel. The coordinator
//! reaches Redis only through the sentinels (`redis+sentinel://`); when the
//! primary is killed, its commands fail (UNAVAILABLE to the workers, which
//! retry) until a sentinel promotes the replica, and then its next command
//! asks the sentinels again and lands on the new primary. The tournament
//! finishes with every scheduled match recorded exactly once in the new
//! primary's results.
//!
//! Replication is asynchronous, so the old primary may have acknowledged
//! writes the replica never received: a result (the worker then believes it
//! was accepted), a lease, a heartbeat. On the new primary such a match is
//! still leased under a lease nobody renews, or queued; lease expiry puts it
//! back in the queue and it is played again. So this test does not count
//! attempts or worker summaries: it checks the end state, which must hold
//! each match once whatever was lost.

// The e2e harness, shared with `tests/e2e`; this test uses part of it.
#[allow(dead_code)]
#[path = "e2e/support/mod.rs"]
mod support;
#[path = "sentinel_failover/topology.rs"]
mod topology;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use arena_proto::v1::StatusRequest;

use support::arena::{self, ADMIN_TOKEN, Admin, STARTUP, WORKER_TOKEN, Worker};
use support::bots::{Fixture, round_robin_matches};
use support::process::Proc;
use support::tournament::{assert_all_done_once, matches};
use support::wait::poll_until;
use topology::{Reply, Topology};

const BOTS: usize = 3;
const GAMES_PER_PAIRING: usize = 2;
/// Short, so a match whose result the failover lost is re-leased soon; long
/// enough that the leases in flight outlive the failover (about two
/// seconds here) and their results are not lost for that reason too.
const LEASE_TTL_S: u64 = 10;
/// From the kill to the end of the tournament.
const RECOVERY: Duration = Duration::from_secs(45);

/// `arena coordinator` on `redis_url`, with the test tokens; waits for its
/// `listening on ADDR` line and returns it with its URL.
fn start_coordinator(redis_url: &str, blobs: &std::path::Path) -> (Proc, String) {
    let mut command = arena::arena();
    command
        .args([
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--redis",
            redis_url,
        ])
        .args(["--worker-token", WORKER_TOKEN, "--admin-token", ADMIN_TOKEN])
        .args(["--lease-ttl", &LEASE_TTL_S.to_string()])
        .arg("--blobs")
        .arg(blobs)
        // The store logs each primary it follows (checked at the end).
        .env("RUST_LOG", "arena_coordinator=info");
    let process = Proc::spawn("coordinator", command);
    let line = process.wait_for_stdout("its listening line", STARTUP, |l| {
        l.starts_with("listening on ")
    });
    let addr = line["listening on ".len()..].trim().to_owned();
    (process, format!("http://{addr}"))
}

/// Matches done, or `None` while the coordinator cannot answer (its store
/// has no primary during the failover).
async fn done(admin: &mut Admin, id: &str) -> Option<(u64, bool)> {
    let status = admin
        .status(StatusRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .ok()?
        .into_inner();
    Some((status.done, status.finished))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournament_survives_a_sentinel_failover() {
    let started = Instant::now();
    let total = round_robin_matches(BOTS, GAMES_PER_PAIRING);
    let fixture = Fixture::gated(
        "sentinel",
        BOTS,
        "E2E sentinel failover",
        53,
        GAMES_PER_PAIRING as u32,
    );
    let gate = fixture.gate();
    let mut redis = Topology::start();
    eprintln!("e2e: sentinel topology up in {:.1?}", started.elapsed());
    // Replays and logs go to a directory of the test's own.
    let blobs = tempfile::Builder::new()
        .prefix("arena-sentinel-blobs-")
        .tempdir()
        .expect("a temp dir for the blob store");
    let (coordinator, url) = start_coordinator(&redis.url(), blobs.path());
    // Plain processes: the gate is a file they see directly.
    let mut workers = [
        Worker::start("sentinel-a", &url, false),
        Worker::start("sentinel-b", &url, false),
    ];
    let id = arena::create_tournament(&url, fixture.file());
    let mut admin = arena::admin(&url, Some(ADMIN_TOKEN)).await;

    poll_until("a match done", Duration::from_secs(60), async || {
        done(&mut admin, &id).await.filter(|(d, _)| *d >= 1)
    })
    .await;
    gate.close();
    // Both workers hold a match at the gate: the primary dies with results
    // still to come.
    poll_until(
        "both workers' bots held at the gate",
        Duration::from_secs(30),
        async || workers.iter().all(|w| w.running_bots() > 0).then_some(()),
    )
    .await;
    let (done_before, _) = done(&mut admin, &id).await.expect("status before the kill");
    assert!(
        (1..total as u64).contains(&done_before),
        "some but not all matches done before the kill: {done_before}/{total}"
    );

    let killed = Instant::now();
    redis.primary.process.kill();
    gate.open();
    redis.wait_promoted(Duration::from_secs(30));
    eprintln!(
        "e2e: replica promoted {:.1?} after the kill",
        killed.elapsed()
    );

    poll_until("the tournament to finish", RECOVERY, async || {
        done(&mut admin, &id)
            .await
            .filter(|(_, finished)| *finished)
    })
    .await;
    eprintln!(
        "e2e: finished {:.1?} after the kill ({:.1?} in all)",
        killed.elapsed(),
        started.elapsed()
    );

    // Through the coordinator: every match done, once.
    let all = matches(&mut admin, &id).await;
    assert_all_done_once(&all, total);
    let ids: BTreeSet<String> = all.iter().map(|m| m.match_id.clone()).collect();

    // On the new primary itself: one result per scheduled match, keyed by
    // match id (so a result cannot be there twice), and nothing else.
    let results = redis
        .replica
        .command(&["HKEYS", "arena:results"])
        .expect("HKEYS on the new primary");
    let recorded: Vec<String> = results
        .items()
        .iter()
        .filter_map(Reply::text)
        .map(str::to_owned)
        .collect();
    assert_eq!(recorded.len(), total, "{recorded:?}");
    assert_eq!(recorded.into_iter().collect::<BTreeSet<_>>(), ids);

    // The coordinator followed the primary: it was told of the replica's
    // address after the failover.
    let address = format!("127.0.0.1:{}", redis.replica.port);
    let followed = coordinator
        .stderr
        .text()
        .lines()
        .chain(coordinator.stdout.text().lines())
        .any(|l| l.contains("following the Redis primary") && l.contains(&address));
    assert!(
        followed,
        "the coordinator never said it follows {address}:\n{}",
        coordinator.stderr.text()
    );

    for worker in &mut workers {
        let summary = worker.drain();
        eprintln!("e2e: {} {summary:?}", worker.id);
    }
}
