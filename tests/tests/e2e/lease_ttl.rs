//! Workers are told to heartbeat often enough to keep their leases, and do.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
///
/// The mechanism is read where the coordinator keeps it: the lease's expiry
/// in the store (`arena:leases`, scored by expiry, `docs/redis-keys.md`)
/// must move forward with the heartbeats, and the match must still be the
/// worker's after the lease it was first given has run out. The TTL leaves
/// a heartbeat (every third of it) seconds of slack before the lease
/// lapses, so a loaded machine delaying one does not cost the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeating_worker_keeps_its_lease_past_the_ttl() {
    const TTL_S: u64 = 8;
    /// Extensions to see before the hold may end.
    const EXTENSIONS: usize = 3;
    /// How far past the first lease's expiry the hold goes.
    const PAST_FIRST_EXPIRY: Duration = Duration::from_secs(2);
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
    let (lease, first_expiry) = the_lease(&redis);

    // Check the match over the whole hold, not just at its end: a lease
    // that lapsed and was re-leased would show as `queued` in between, or
    // as attempt 2 afterwards, or under another lease id.
    let mut expiries = vec![first_expiry];
    loop {
        let all = matches(&mut admin, &id).await;
        assert_eq!(all.len(), 1, "{all:#?}");
        let m = find(&all, &held.match_id);
        let now = now_ms();
        let (current, expiry) = the_lease(&redis);
        let at = format!(
            "{} ms past the first lease's expiry",
            now as i64 - first_expiry as i64
        );
        assert_eq!(m.state, "leased", "{at}: {m:#?}");
        assert_eq!(m.attempt, 1, "{at}: {m:#?}");
        assert_eq!(current, lease, "{at}: the match is under another lease");
        if expiry != *expiries.last().expect("the first expiry") {
            assert!(
                expiry > *expiries.last().expect("the first expiry"),
                "{at}: the expiry went back: {expiries:?}, then {expiry}"
            );
            expiries.push(expiry);
        }
        let past = Duration::from_millis(now.saturating_sub(first_expiry));
        if expiries.len() > EXTENSIONS && past >= PAST_FIRST_EXPIRY {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
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

/// The one current lease in the store and its expiry (ms since the epoch).
fn the_lease(redis: &RedisServer) -> (String, u64) {
    let out = redis.cli(&["ZRANGE", "arena:leases", "0", "-1", "WITHSCORES"]);
    let fields: Vec<&str> = out.lines().collect();
    match fields[..] {
        [lease, expiry] => (
            lease.to_owned(),
            expiry
                .parse()
                .unwrap_or_else(|e| panic!("expiry {expiry:?}: {e}")),
        ),
        _ => panic!("not one current lease: {out:?}"),
    }
}

fn now_ms() -> u64 {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970");
    u64::try_from(since_epoch.as_millis()).expect("milliseconds fit in u64")
}
