//! The store conformance suite: every test is an async fn over a [`Store`],
//! and `conformance!` stamps each one out three times: on a fresh
//! `MemoryStore`; on a `DiskStore` in a temp dir, whose file must then hold
//! exactly the state in memory; and on a `RedisStore` connected to a
//! redis-server of its own (on a unix socket in a temp dir, killed when the
//! test ends, even by a panic). Time is the `now_ms` the tests pass in, so
//! nothing sleeps.
//!
//! Redis-only tests at the bottom cover what only Redis can do: survive a
//! reconnect, and write only keys the key layout documents.

mod support;

use std::collections::BTreeMap;

use arena_coordinator::domain::{Format, MatchRecord, Pairing, SeatResult, baseline_id};
use arena_coordinator::store::{
    AttemptEnd, AttemptFailure, CompleteOutcome, DEFAULT_MAX_ATTEMPTS, Entrant, ExpiredLease,
    FailedLease, Lease, LeaseGrant, LiveBoard, MatchInfo, MatchState, QuarantineRule, Reported,
    ScheduledMatch, Status, Store, StoreError, TournamentSpec, WorkerInfo, keys,
};
use arena_engine::registry::{Limits, RuleValue, Rules};
use arena_engine::{Forfeit, placement_points};
use sha2::{Digest, Sha256};
use support::redis::RedisServer;

/// Stamps each named test for both backends.
macro_rules! conformance {
    ($($test:ident),* $(,)?) => {
        mod memory_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(arena_coordinator::store::Store::memory()).await;
                }
            )*
        }
        mod disk_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let dir = tempfile::tempdir().unwrap();
                    let store = arena_coordinator::store::DiskStore::open(dir.path()).unwrap();
                    super::$test(arena_coordinator::store::Store::Disk(store.clone())).await;
                    // Every change the test made reached the file, and
                    // nothing else did.
                    store.verify_against_disk().await.unwrap();
                }
            )*
        }
        mod redis_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let server = super::RedisServer::start();
                    super::$test(server.store().await).await;
                }
            )*
        }
    };
}

conformance!(
    tournaments_create_get_and_refuse_duplicates,
    tournament_specs_keep_their_teams,
    schedule_round_is_idempotent_and_ordered,
    unknown_tournaments_are_errors,
    lease_takes_the_oldest_match_first,
    lease_only_hands_out_matches_of_the_worker_s_environment,
    lease_looks_past_a_long_run_of_other_environments,
    lease_prefers_cached_entrants,
    lease_preference_is_limited_to_the_window,
    extend_then_expire_requeues_at_the_front,
    expire_requeues_earliest_expiry_first,
    next_expiry_follows_the_earliest_lease,
    complete_accepts_once_then_reports_duplicates,
    stale_lease_results_are_dropped,
    fail_requeues_at_the_front,
    cancel_drops_the_queue_and_stops_extensions,
    status_and_matches_count_every_state,
    submissions_round_trip,
    workers_alive_window,
    concurrent_completes_accept_exactly_one,
    records_keep_every_field,
    pairing_reads_back_what_was_scheduled,
    lease_counts_baseline_seats_as_built,
    leases_are_bound_to_their_worker,
    lease_ids_in_use_are_refused,
    failed_attempts_up_to_the_cap_make_a_match_stuck,
    requeue_gives_a_stuck_match_fresh_attempts,
    lease_ends_count_over_a_window_and_quarantine_is_kept,
    worker_seen_is_the_last_heartbeat,
    lease_worker_refuses_unknown_silent_and_quarantined_workers,
    lease_worker_leases_with_the_registered_cache_and_environment,
    heartbeat_leases_extends_every_lease_or_none,
    report_checks_the_seats_before_anything_else,
    report_is_complete_for_the_holder_and_idempotent,
    quarantine_counts_through_report_and_fail_counted,
    rejudge_replays_a_finished_match_from_the_front,
    entrant_tokens_name_their_submission,
    released_leases_go_back_in_schedule_order_without_a_strike,
    released_leases_of_a_cancelled_tournament_drop_their_matches,
);

// Fixtures.

const HOUR: u64 = 3_600_000;

/// The attempt cap the tests run with unless they test the cap.
const MAX_ATTEMPTS: u32 = DEFAULT_MAX_ATTEMPTS;

/// A lease id no other lease of the test has (the coordinator's are random;
/// the store only needs them unique).
fn fresh_lease_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!(
        "lease-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The next match for `worker` with no cached builds and no environment.
async fn lease_as(store: &Store, worker: &str, now_ms: u64, ttl_ms: u64) -> Option<Lease> {
    lease_with(store, worker, &fresh_lease_id(), now_ms, ttl_ms, &[], "")
        .await
        .unwrap()
}

// The calls a worker makes, through the store operations the coordinator
// uses for them.

/// The Lease call as the coordinator makes it, for `worker` having built
/// `cached` in `environment`: registers it so at `now_ms` (replacing an
/// earlier registration), then leases to it as alive. `None`: nothing it
/// may play is queued. A refusal of the worker itself is a panic.
async fn lease_with(
    store: &Store,
    worker: &str,
    lease_id: &str,
    now_ms: u64,
    ttl_ms: u64,
    cached: &[String],
    environment: &str,
) -> Result<Option<Lease>, StoreError> {
    let info = WorkerInfo {
        id: worker.to_owned(),
        cores: 2,
        memory_mb: 1024,
        environment_id: environment.to_owned(),
        cached: cached.to_vec(),
        wasm_runtime: String::new(),
        model_runtime: String::new(),
        slots: 0,
    };
    store.register_worker(info, now_ms).await.unwrap();
    match store
        .lease_worker(worker, lease_id, now_ms, ttl_ms, now_ms)
        .await?
    {
        LeaseGrant::Granted(lease) => Ok(Some(lease)),
        LeaseGrant::Empty => Ok(None),
        refused => panic!("{worker} was refused a lease: {refused:?}"),
    }
}

/// A Heartbeat call of a registered `worker` (its build cache unchanged)
/// that lists one lease; whether that lease was extended.
async fn extend(
    store: &Store,
    worker: &str,
    lease_id: &str,
    now_ms: u64,
    ttl_ms: u64,
) -> Result<bool, StoreError> {
    let info = store.worker(worker).await.unwrap();
    let cached = info.expect("a registered worker").cached;
    let lost = store
        .heartbeat_leases(worker, now_ms, ttl_ms, cached, &[lease_id.to_owned()])
        .await?;
    Ok(lost.expect("a registered worker").is_empty())
}

/// A ReportResult call without a quarantine; `record` must seat the
/// match's entrants (`report_checks_the_seats_before_anything_else` tests
/// the records that don't).
async fn complete(
    store: &Store,
    worker: &str,
    match_id: &str,
    lease_id: &str,
    record: MatchRecord,
    replay: Option<Vec<u8>>,
) -> Result<CompleteOutcome, StoreError> {
    match store
        .report(worker, match_id, lease_id, record, replay, None)
        .await?
    {
        Reported::Checked(outcome) => Ok(outcome),
        Reported::WrongSeats => panic!("the record of {match_id} seats other entrants"),
    }
}

/// A ReportFailure call without a quarantine: what became of the attempt.
async fn fail(
    store: &Store,
    worker: &str,
    match_id: &str,
    lease_id: &str,
    reason: &str,
    max_attempts: u32,
) -> Result<Option<AttemptEnd>, StoreError> {
    let failed = store
        .fail_counted(worker, match_id, lease_id, reason, max_attempts, None)
        .await?;
    Ok(failed.map(|failed| {
        assert!(!failed.quarantined, "quarantined without a rule");
        failed.end
    }))
}

/// The match ids of expired leases that went back to the queue, in order.
fn requeued(expired: Vec<ExpiredLease>) -> Vec<String> {
    expired
        .into_iter()
        .filter(|e| e.end == AttemptEnd::Requeued)
        .map(|e| e.match_id)
        .collect()
}

fn spec(id: &str) -> TournamentSpec {
    TournamentSpec {
        id: id.to_owned(),
        name: format!("Tournament {id}"),
        game: "generals".to_owned(),
        format: Format::RoundRobin {
            cycles: 1,
            games_per_pairing: 2,
        },
        seats: 2,
        // Not the game's defaults, and rules it does not declare: the store
        // keeps whatever it is given, resolved or not.
        rules: Rules(BTreeMap::from([
            ("blitz".to_owned(), RuleValue::Bool(true)),
            ("turns".to_owned(), RuleValue::Int(-3)),
        ])),
        limits: Limits {
            first_move_ms: 9_001,
            move_ms: 77,
            fault_limit: 3,
            reply_cap: 65_536,
            fuel: None,
            model: None,
        },
        environment: None,
        teams: Vec::new(),
        wasm_entrants: Vec::new(),
        model_entrants: Vec::new(),
        wasm_runtime: None,
        model_runtime: None,
        // Not the default, so a backend that drops it is caught.
        live_board: LiveBoard::Everyone,
        // Above 2^53, to catch any backend that passes seeds through a double.
        base_seed: u64::MAX - 7,
        entrants: ["a", "b", "c", "d"]
            .iter()
            .map(|id| Entrant {
                id: (*id).to_owned(),
                name: format!("bot {id}"),
            })
            .collect(),
        cancelled: false,
    }
}

fn pairing(seats: &[&str], seed: u64) -> Pairing {
    Pairing {
        seats: seats.iter().map(|s| (*s).to_owned()).collect(),
        seed,
    }
}

fn scheduled(match_id: &str, seats: &[&str]) -> ScheduledMatch {
    ScheduledMatch {
        match_id: match_id.to_owned(),
        pairing: pairing(seats, u64::MAX - 1),
    }
}

fn record(match_id: &str, round: u32, turns: u32) -> MatchRecord {
    MatchRecord {
        match_id: match_id.to_owned(),
        round,
        seats: vec![
            SeatResult {
                entrant: "a".to_owned(),
                rank: 0,
                moves: turns,
                ..SeatResult::default()
            },
            SeatResult {
                entrant: "b".to_owned(),
                rank: 1,
                moves: turns,
                ..SeatResult::default()
            },
        ],
        reason: "general_captured".to_owned(),
        turns,
        worker: String::new(),
    }
}

/// `record` with `seats` in place of its entrants, seat by seat.
fn reseated(mut record: MatchRecord, seats: &[&str]) -> MatchRecord {
    assert_eq!(record.seats.len(), seats.len());
    for (seat, entrant) in record.seats.iter_mut().zip(seats) {
        seat.entrant = (*entrant).to_owned();
    }
    record
}

fn owned(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// Creates tournament `t` with one round of matches `m0..mN` over `seats`.
async fn with_round(store: &Store, t: &str, matches: &[(&str, &[&str])]) {
    store.create_tournament(spec(t)).await.unwrap();
    let round = matches
        .iter()
        .map(|(id, seats)| scheduled(id, seats))
        .collect();
    assert!(store.schedule_round(t, 0, round, vec![]).await.unwrap());
}

/// The match worker `w` gets when it has built `cached`.
async fn next_match(store: &Store, cached: &[String]) -> String {
    let lease = lease_with(store, "w", &fresh_lease_id(), 0, 10, cached, "")
        .await
        .unwrap();
    lease.unwrap().match_id
}

const AB: &[&str] = &["a", "b"];
const CD: &[&str] = &["c", "d"];
const AC: &[&str] = &["a", "c"];

// The suite.

/// A four-seat record with everything a seat can carry: a shared first
/// place, a baseline seat, points that are not short decimals, teams,
/// forfeits and game counters.
fn full_record(match_id: &str) -> MatchRecord {
    let ranks = [0, 0, 2, 3];
    let points = placement_points(&ranks);
    let entrants = [
        "a".to_owned(),
        "b".to_owned(),
        "c".to_owned(),
        baseline_id("sprawl"),
    ];
    MatchRecord {
        match_id: match_id.to_owned(),
        round: 0,
        seats: entrants
            .iter()
            .zip(ranks)
            .zip(points)
            .enumerate()
            .map(|(i, ((entrant, rank), score))| SeatResult {
                entrant: entrant.clone(),
                rank,
                score,
                team: i as u32 % 2,
                forfeit: (i == 2).then_some(Forfeit::BuildFailed),
                baseline: (i == 3).then(|| "sprawl".to_owned()),
                stats: BTreeMap::from([
                    ("invalid_moves".to_owned(), i as u64),
                    ("cities".to_owned(), u64::MAX - i as u64),
                ]),
                timeouts: 1 + i as u32,
                malformed: 2 * i as u32,
                moves: 240,
            })
            .collect(),
        reason: "last_general_standing".to_owned(),
        turns: 240,
        worker: String::new(),
    }
}

async fn tournaments_create_get_and_refuse_duplicates(store: Store) {
    assert_eq!(store.tournament("t1").await.unwrap(), None);
    assert!(store.tournaments().await.unwrap().is_empty());

    store.create_tournament(spec("t2")).await.unwrap();
    store.create_tournament(spec("t1")).await.unwrap();
    assert_eq!(store.tournament("t1").await.unwrap(), Some(spec("t1")));
    assert_eq!(store.tournaments().await.unwrap(), owned(&["t1", "t2"]));

    let mut renamed = spec("t1");
    renamed.name = "other".to_owned();
    let err = store.create_tournament(renamed).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::AlreadyExists(id) if id == "t1"),
        "{err:?}"
    );
    assert_eq!(store.tournament("t1").await.unwrap(), Some(spec("t1")));

    let mut cancelled = spec("t3");
    cancelled.cancelled = true;
    store.create_tournament(cancelled.clone()).await.unwrap();
    assert_eq!(store.tournament("t3").await.unwrap(), Some(cancelled));
}

async fn tournament_specs_keep_their_teams(store: Store) {
    let mut teams = spec("2v2");
    teams.seats = 4;
    teams.teams = vec![0, 1, 0, 1];
    store.create_tournament(teams.clone()).await.unwrap();
    store.create_tournament(spec("solo")).await.unwrap();
    assert_eq!(store.tournament("2v2").await.unwrap(), Some(teams));
    let solo = store.tournament("solo").await.unwrap().unwrap();
    assert!(solo.teams.is_empty());
}

async fn schedule_round_is_idempotent_and_ordered(store: Store) {
    store.create_tournament(spec("t")).await.unwrap();
    assert_eq!(store.rounds_scheduled("t").await.unwrap(), 0);
    let round0 = vec![scheduled("t-0-0", AB), scheduled("t-0-1", CD)];

    assert!(
        store
            .schedule_round("t", 0, round0.clone(), owned(&["e"]))
            .await
            .unwrap()
    );
    // A restarted coordinator repeating its step: nothing changes.
    assert!(
        !store
            .schedule_round("t", 0, round0, owned(&["e"]))
            .await
            .unwrap()
    );
    assert_eq!(store.rounds_scheduled("t").await.unwrap(), 1);
    assert_eq!(store.status("t").await.unwrap().total, 2);
    assert_eq!(store.status("t").await.unwrap().queued, 2);
    assert_eq!(store.byes("t").await.unwrap(), vec![(0, "e".to_owned())]);

    let err = store
        .schedule_round("t", 2, vec![], vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RoundOutOfOrder {
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{err:?}"
    );
    let reused = vec![scheduled("t-1-0", AB), scheduled("t-0-1", AC)];
    let err = store
        .schedule_round("t", 1, reused, vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateMatch(id) if id == "t-0-1"),
        "{err:?}"
    );
    let twice = vec![scheduled("t-1-0", AB), scheduled("t-1-0", AC)];
    let err = store
        .schedule_round("t", 1, twice, vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateMatch(id) if id == "t-1-0"),
        "{err:?}"
    );
    // Refused rounds wrote nothing.
    assert_eq!(store.rounds_scheduled("t").await.unwrap(), 1);
    assert_eq!(store.status("t").await.unwrap().total, 2);

    let round1 = vec![scheduled("t-1-0", AC)];
    assert!(
        store
            .schedule_round("t", 1, round1, owned(&["b", "d"]))
            .await
            .unwrap()
    );
    assert_eq!(store.rounds_scheduled("t").await.unwrap(), 2);
    assert_eq!(
        store.byes("t").await.unwrap(),
        vec![
            (0, "e".to_owned()),
            (1, "b".to_owned()),
            (1, "d".to_owned())
        ]
    );
    let ids: Vec<_> = store
        .matches("t")
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.match_id, m.round))
        .collect();
    assert_eq!(
        ids,
        vec![
            ("t-0-0".into(), 0),
            ("t-0-1".into(), 0),
            ("t-1-0".into(), 1)
        ]
    );

    let err = store
        .schedule_round("nope", 0, vec![], vec![])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::UnknownTournament(_)), "{err:?}");
}

async fn unknown_tournaments_are_errors(store: Store) {
    fn unknown<T: std::fmt::Debug>(result: Result<T, StoreError>) {
        let err = result.unwrap_err();
        assert!(
            matches!(&err, StoreError::UnknownTournament(id) if id == "x"),
            "{err:?}"
        );
    }
    unknown(store.rounds_scheduled("x").await);
    unknown(store.byes("x").await);
    unknown(store.results("x").await);
    unknown(store.status("x").await);
    unknown(store.matches("x").await);
    unknown(store.cancel("x").await);
}

async fn lease_takes_the_oldest_match_first(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    let mut lease_ids = Vec::new();
    for (i, expected) in ["m0", "m1", "m2"].into_iter().enumerate() {
        let lease = lease_as(&store, "w1", 1000, 500).await.unwrap();
        assert_eq!(lease.match_id, expected);
        assert_eq!(lease.tournament, "t");
        assert_eq!(lease.round, 0);
        assert_eq!(lease.attempt, 1);
        assert_eq!(lease.expires_at_ms, 1500);
        assert_eq!(lease.pairing, scheduled(expected, [AB, CD, AC][i]).pairing);
        lease_ids.push(lease.lease_id);
    }
    assert_eq!(lease_as(&store, "w1", 1000, 500).await, None);
    lease_ids.sort();
    lease_ids.dedup();
    assert_eq!(lease_ids.len(), 3, "lease ids must be unique");
}

async fn lease_only_hands_out_matches_of_the_worker_s_environment(store: Store) {
    // "nix" needs workers in environment nix-1; "any" takes every worker.
    let mut nix = spec("nix");
    nix.environment = Some("nix-1".to_owned());
    store.create_tournament(nix.clone()).await.unwrap();
    assert_eq!(store.tournament("nix").await.unwrap(), Some(nix));
    let round = vec![scheduled("n0", AB), scheduled("n1", CD)];
    assert!(store.schedule_round("nix", 0, round, vec![]).await.unwrap());
    store.create_tournament(spec("any")).await.unwrap();
    assert!(
        store
            .schedule_round("any", 0, vec![scheduled("y0", AC)], vec![])
            .await
            .unwrap()
    );

    // A host-environment worker skips the nix matches, however old.
    let host = lease_with(&store, "h", &fresh_lease_id(), 0, 100, &[], "host-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(host.match_id, "y0");
    assert_eq!(
        lease_with(&store, "h", &fresh_lease_id(), 0, 100, &[], "host-1")
            .await
            .unwrap(),
        None
    );
    // A nix worker gets them, oldest first.
    let first = lease_with(&store, "n", &fresh_lease_id(), 0, 100, &[], "nix-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.match_id, "n0");
    let second = lease_with(
        &store,
        "n",
        &fresh_lease_id(),
        0,
        100,
        &["c".into(), "d".into()],
        "nix-1",
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(second.match_id, "n1");
    assert_eq!(
        lease_with(&store, "n", &fresh_lease_id(), 0, 100, &[], "nix-1")
            .await
            .unwrap(),
        None
    );
}

async fn lease_looks_past_a_long_run_of_other_environments(store: Store) {
    // More matches than one page of the Redis script's queue reads.
    let mut nix = spec("nix");
    nix.environment = Some("nix-1".to_owned());
    store.create_tournament(nix).await.unwrap();
    let round = (0..600).map(|i| scheduled(&format!("n{i}"), AB)).collect();
    assert!(store.schedule_round("nix", 0, round, vec![]).await.unwrap());
    with_round(&store, "any", &[("y0", CD), ("y1", AB)]).await;

    let cd = owned(&["c", "d"]);
    assert_eq!(
        lease_with(&store, "h", &fresh_lease_id(), 0, 100, &cd, "host-1")
            .await
            .unwrap()
            .map(|l| l.match_id),
        Some("y0".to_owned())
    );
    assert_eq!(
        lease_with(&store, "h", &fresh_lease_id(), 0, 100, &cd, "host-1")
            .await
            .unwrap()
            .map(|l| l.match_id),
        Some("y1".to_owned())
    );
    assert_eq!(
        lease_with(&store, "h", &fresh_lease_id(), 0, 100, &[], "host-1")
            .await
            .unwrap(),
        None
    );
}

async fn lease_prefers_cached_entrants(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    // Both of m1's entrants are built; m0 would need a build of b.
    let cd = owned(&["c", "d"]);
    assert_eq!(next_match(&store, &cd).await, "m1");
    // Only m2 is fully cached among what's left.
    let ac = owned(&["a", "c", "x"]);
    assert_eq!(next_match(&store, &ac).await, "m2");
    // Nothing cached fits: the oldest.
    let none = owned(&["z"]);
    assert_eq!(next_match(&store, &none).await, "m0");
}

async fn lease_preference_is_limited_to_the_window(store: Store) {
    store.create_tournament(spec("t")).await.unwrap();
    let mut round: Vec<_> = (0..20)
        .map(|i| scheduled(&format!("m{i:02}"), AB))
        .collect();
    round[16] = scheduled("m16", CD); // just past the 16-match window
    round[15] = scheduled("m15", AC);
    store.schedule_round("t", 0, round, vec![]).await.unwrap();

    let cd = owned(&["c", "d"]);
    assert_eq!(next_match(&store, &cd).await, "m00");
    // m15 is now 15th in the queue, inside the window.
    let ac = owned(&["a", "c"]);
    assert_eq!(next_match(&store, &ac).await, "m15");
    // With m00 and m15 gone, m16 is 15th: inside the window now.
    assert_eq!(next_match(&store, &cd).await, "m16");
}

async fn extend_then_expire_requeues_at_the_front(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = lease_as(&store, "w1", 0, 100).await.unwrap();
    assert_eq!(store.next_expiry().await.unwrap(), Some(100));

    assert!(
        extend(&store, &lease.worker, &lease.lease_id, 50, 100)
            .await
            .unwrap()
    );
    assert_eq!(store.next_expiry().await.unwrap(), Some(150));
    assert!(requeued(store.expire(149, MAX_ATTEMPTS).await.unwrap()).is_empty());
    assert!(
        !extend(&store, "w1", "w1#999", 60, 100).await.unwrap(),
        "unknown lease"
    );

    // Live while now < expiry: at the expiry it can no longer be extended,
    // and expire takes it.
    assert!(
        !extend(&store, &lease.worker, &lease.lease_id, 150, 100)
            .await
            .unwrap()
    );
    assert_eq!(
        requeued(store.expire(150, MAX_ATTEMPTS).await.unwrap()),
        owned(&["m0"])
    );
    assert_eq!(store.next_expiry().await.unwrap(), None);
    assert!(
        !extend(&store, &lease.worker, &lease.lease_id, 151, 100)
            .await
            .unwrap()
    );
    assert!(
        requeued(store.expire(10_000, MAX_ATTEMPTS).await.unwrap()).is_empty(),
        "expired once"
    );

    // m0 went back in front of m1, one attempt later.
    let again = lease_as(&store, "w2", 200, 100).await.unwrap();
    assert_eq!((again.match_id.as_str(), again.attempt), ("m0", 2));
    assert_ne!(again.lease_id, lease.lease_id);
    let info = &store.matches("t").await.unwrap()[0];
    assert_eq!(info.last_error.as_deref(), Some("lease expired"));
    assert_eq!(
        info.state,
        MatchState::Leased {
            worker: "w2".into(),
            attempt: 2
        }
    );
}

async fn expire_requeues_earliest_expiry_first(store: Store) {
    with_round(
        &store,
        "t",
        &[("m0", AB), ("m1", CD), ("m2", AC), ("m3", AB)],
    )
    .await;
    for ttl in [300, 100, 200] {
        lease_as(&store, "w", 0, ttl).await.unwrap();
    }
    assert_eq!(
        requeued(store.expire(250, MAX_ATTEMPTS).await.unwrap()),
        owned(&["m1", "m2"])
    );
    assert_eq!(
        requeued(store.expire(1000, MAX_ATTEMPTS).await.unwrap()),
        owned(&["m0"])
    );
    // Queue now: m0 (requeued last, at the front), m1, m2, then m3.
    let mut leased = Vec::new();
    while let Some(lease) = lease_as(&store, "w", 2000, 10).await {
        leased.push(lease.match_id);
    }
    assert_eq!(leased, owned(&["m0", "m1", "m2", "m3"]));
}

async fn next_expiry_follows_the_earliest_lease(store: Store) {
    assert_eq!(store.next_expiry().await.unwrap(), None);
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    let l0 = lease_as(&store, "w", 1000, 500).await.unwrap();
    let l1 = lease_as(&store, "w", 1000, 200).await.unwrap();
    assert_eq!(store.next_expiry().await.unwrap(), Some(1200));
    let outcome = complete(
        &store,
        &l1.worker,
        "m1",
        &l1.lease_id,
        reseated(record("m1", 0, 9), CD),
        None,
    );
    assert_eq!(outcome.await.unwrap(), CompleteOutcome::Accepted);
    assert_eq!(store.next_expiry().await.unwrap(), Some(1500));
    assert!(
        fail(
            &store,
            &l0.worker,
            "m0",
            &l0.lease_id,
            "worker lost",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_some()
    );
    assert_eq!(store.next_expiry().await.unwrap(), None);
}

async fn complete_accepts_once_then_reports_duplicates(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    let replay: Vec<u8> = (0..=255).cycle().take(100_000).collect();

    let err = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record("m1", 0, 5),
        None,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, StoreError::MismatchedRecord { .. }),
        "{err:?}"
    );

    let first = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record("m0", 0, 5),
        Some(replay.clone()),
    );
    assert_eq!(first.await.unwrap(), CompleteOutcome::Accepted);
    // The worker retries its report, with different content even: dropped.
    let retry = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record("m0", 0, 6),
        Some(vec![1]),
    );
    assert_eq!(retry.await.unwrap(), CompleteOutcome::Duplicate);

    assert_eq!(store.results("t").await.unwrap(), vec![record("m0", 0, 5)]);
    assert_eq!(store.replay("m0").await.unwrap(), Some(replay));
    assert_eq!(store.replay("m1").await.unwrap(), None);
    assert!(
        !extend(&store, &lease.worker, &lease.lease_id, 10, 100)
            .await
            .unwrap()
    );
    assert!(
        fail(
            &store,
            &lease.worker,
            "m0",
            &lease.lease_id,
            "late",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_none()
    );
    assert!(requeued(store.expire(1000, MAX_ATTEMPTS).await.unwrap()).is_empty());

    let unknown = complete(
        &store,
        &lease.worker,
        "zz",
        &lease.lease_id,
        record("zz", 0, 1),
        None,
    );
    assert_eq!(unknown.await.unwrap(), CompleteOutcome::Unknown);
    // m1 is queued, not leased: no lease is current.
    let queued = complete(
        &store,
        "w",
        "m1",
        "w#1",
        reseated(record("m1", 0, 1), CD),
        None,
    );
    assert_eq!(queued.await.unwrap(), CompleteOutcome::StaleLease);

    // Without a replay, nothing is stored for it.
    let l1 = lease_as(&store, "w", 0, 100).await.unwrap();
    let done = complete(
        &store,
        &l1.worker,
        "m1",
        &l1.lease_id,
        reseated(record("m1", 0, 7), CD),
        None,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    assert_eq!(store.replay("m1").await.unwrap(), None);
    assert_eq!(
        store.results("t").await.unwrap(),
        vec![record("m0", 0, 5), reseated(record("m1", 0, 7), CD)]
    );
}

async fn stale_lease_results_are_dropped(store: Store) {
    with_round(&store, "t", &[("m0", AB)]).await;
    let old = lease_as(&store, "slow", 0, 100).await.unwrap();
    assert_eq!(
        requeued(store.expire(100, MAX_ATTEMPTS).await.unwrap()),
        owned(&["m0"])
    );
    let new = lease_as(&store, "fast", 150, 100).await.unwrap();
    assert_eq!(new.attempt, 2);

    // The slow worker reports while the match is leased to someone else.
    let late = complete(
        &store,
        &old.worker,
        "m0",
        &old.lease_id,
        record("m0", 0, 1),
        Some(b"old".to_vec()),
    );
    assert_eq!(late.await.unwrap(), CompleteOutcome::StaleLease);
    assert_eq!(store.status("t").await.unwrap().leased, 1);
    assert!(store.results("t").await.unwrap().is_empty());
    assert_eq!(store.replay("m0").await.unwrap(), None);

    let winner = complete(
        &store,
        &new.worker,
        "m0",
        &new.lease_id,
        record("m0", 0, 2),
        Some(b"new".to_vec()),
    );
    assert_eq!(winner.await.unwrap(), CompleteOutcome::Accepted);
    // And again after the match is done: acknowledged, dropped.
    let later = complete(
        &store,
        &old.worker,
        "m0",
        &old.lease_id,
        record("m0", 0, 3),
        Some(b"old".to_vec()),
    );
    assert_eq!(later.await.unwrap(), CompleteOutcome::Duplicate);
    assert_eq!(store.results("t").await.unwrap(), vec![record("m0", 0, 2)]);
    assert_eq!(store.replay("m0").await.unwrap(), Some(b"new".to_vec()));
}

async fn fail_requeues_at_the_front(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    assert!(
        fail(&store, "w", "m0", "w#nope", "wrong lease", MAX_ATTEMPTS)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        fail(
            &store,
            &lease.worker,
            "m1",
            &lease.lease_id,
            "wrong match",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_none()
    );
    assert!(
        fail(
            &store,
            &lease.worker,
            "zz",
            &lease.lease_id,
            "unknown match",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_none()
    );

    assert!(
        fail(
            &store,
            &lease.worker,
            "m0",
            &lease.lease_id,
            "sandbox setup failed",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_some()
    );
    assert!(
        fail(
            &store,
            &lease.worker,
            "m0",
            &lease.lease_id,
            "again",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_none()
    );
    let info = &store.matches("t").await.unwrap()[0];
    assert_eq!(info.state, MatchState::Queued);
    assert_eq!(info.attempt, 2);
    assert_eq!(info.last_error.as_deref(), Some("sandbox setup failed"));

    let again = lease_as(&store, "w", 10, 100).await.unwrap();
    assert_eq!((again.match_id.as_str(), again.attempt), ("m0", 2));
    let stale = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record("m0", 0, 1),
        None,
    );
    assert_eq!(stale.await.unwrap(), CompleteOutcome::StaleLease);
}

async fn cancel_drops_the_queue_and_stops_extensions(store: Store) {
    with_round(
        &store,
        "t",
        &[("m0", AB), ("m1", CD), ("m2", AC), ("m3", AB)],
    )
    .await;
    with_round(&store, "other", &[("o0", AB)]).await;
    let l0 = lease_as(&store, "w", 0, 100).await.unwrap();
    let l1 = lease_as(&store, "w", 0, 100).await.unwrap();
    let l2 = lease_as(&store, "w", 0, 100).await.unwrap();
    let done = complete(
        &store,
        &l0.worker,
        "m0",
        &l0.lease_id,
        record("m0", 0, 4),
        None,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);

    assert_eq!(store.cancel("t").await.unwrap(), 1, "only m3 was queued");
    assert_eq!(store.queue_len().await.unwrap(), 1, "o0 is still queued");
    assert_eq!(
        store.cancel("t").await.unwrap(),
        0,
        "cancelling twice is harmless"
    );
    assert!(store.tournament("t").await.unwrap().unwrap().cancelled);
    assert!(
        !extend(&store, &l1.worker, &l1.lease_id, 10, 100)
            .await
            .unwrap()
    );

    // The other tournament's match is all that's left to lease.
    let o0 = lease_as(&store, "w", 10, 100).await.unwrap();
    assert_eq!(o0.match_id, "o0");
    assert_eq!(lease_as(&store, "w", 10, 100).await, None);

    // A result under a lease still running is kept; a lease that fails or
    // runs out drops its match instead of requeueing it.
    let late = complete(
        &store,
        &l1.worker,
        "m1",
        &l1.lease_id,
        reseated(record("m1", 0, 5), CD),
        None,
    );
    assert_eq!(late.await.unwrap(), CompleteOutcome::Accepted);
    assert!(
        fail(
            &store,
            &l2.worker,
            "m2",
            &l2.lease_id,
            "worker lost",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_some()
    );
    assert_eq!(
        requeued(store.expire(1000, MAX_ATTEMPTS).await.unwrap()),
        owned(&["o0"])
    );
    assert_eq!(
        lease_as(&store, "w", 1000, 100).await.unwrap().match_id,
        "o0"
    );

    assert_eq!(
        store.status("t").await.unwrap(),
        Status {
            total: 4,
            queued: 0,
            leased: 0,
            done: 2,
            dropped: 2,
            rounds_scheduled: 1,
            cancelled: true,
            stuck: 0,
        }
    );
    let states: Vec<_> = store
        .matches("t")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.state)
        .collect();
    assert!(matches!(states[2], MatchState::Dropped));
    assert!(matches!(states[3], MatchState::Dropped));
    assert_eq!(
        store.results("t").await.unwrap(),
        vec![record("m0", 0, 4), reseated(record("m1", 0, 5), CD)]
    );
    let err = store
        .schedule_round("t", 1, vec![], vec![])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Cancelled(_)), "{err:?}");
    // Repeating an already scheduled round is still a harmless no-op.
    assert!(!store.schedule_round("t", 0, vec![], vec![]).await.unwrap());
    assert!(!store.status("other").await.unwrap().cancelled);
}

async fn status_and_matches_count_every_state(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    store
        .schedule_round("t", 1, vec![scheduled("m3", AB)], vec![])
        .await
        .unwrap();
    let l0 = lease_as(&store, "w1", 0, 100).await.unwrap();
    lease_as(&store, "w2", 0, 100).await.unwrap();
    let done = complete(
        &store,
        &l0.worker,
        "m0",
        &l0.lease_id,
        record("m0", 0, 8),
        None,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);

    assert_eq!(
        store.status("t").await.unwrap(),
        Status {
            total: 4,
            queued: 2,
            leased: 1,
            done: 1,
            dropped: 0,
            rounds_scheduled: 2,
            cancelled: false,
            stuck: 0,
        }
    );
    assert_eq!(store.queue_len().await.unwrap(), 2);
    let matches = store.matches("t").await.unwrap();
    let summary: Vec<_> = matches
        .iter()
        .map(|m| (m.match_id.as_str(), m.round, m.state.clone(), m.attempt))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "m0",
                0,
                MatchState::Done {
                    reason: "general_captured".into(),
                    ranks: vec![0, 1]
                },
                1
            ),
            (
                "m1",
                0,
                MatchState::Leased {
                    worker: "w2".into(),
                    attempt: 1
                },
                1
            ),
            ("m2", 0, MatchState::Queued, 1),
            ("m3", 1, MatchState::Queued, 1),
        ]
    );
    assert_eq!(matches[1].pairing, scheduled("m1", CD).pairing);
    assert!(matches.iter().all(|m| m.last_error.is_none()));

    store.create_tournament(spec("empty")).await.unwrap();
    assert_eq!(store.status("empty").await.unwrap(), Status::default());
    assert!(store.matches("empty").await.unwrap().is_empty());
    assert!(store.results("empty").await.unwrap().is_empty());
}

async fn submissions_round_trip(store: Store) {
    let bytes: Vec<u8> = (0..=255).cycle().take(1 << 20).collect();
    let hash = hex_sha256(&bytes);
    assert!(!store.has_submission(&hash).await.unwrap());
    assert_eq!(store.get_submission(&hash).await.unwrap(), None);

    store.put_submission(&hash, bytes.clone()).await.unwrap();
    store.put_submission(&hash, bytes.clone()).await.unwrap();
    assert!(store.has_submission(&hash).await.unwrap());
    assert_eq!(store.get_submission(&hash).await.unwrap(), Some(bytes));

    let empty = hex_sha256(b"");
    store.put_submission(&empty, Vec::new()).await.unwrap();
    assert_eq!(
        store.get_submission(&empty).await.unwrap(),
        Some(Vec::new())
    );

    let err = store
        .put_submission(&hash, b"tampered".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::HashMismatch { .. }), "{err:?}");
    let err = store
        .put_submission("nothex", b"x".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::HashMismatch { .. }), "{err:?}");
    assert!(!store.has_submission("nothex").await.unwrap());
}

async fn workers_alive_window(store: Store) {
    let worker = |id: &str, cached: &[&str]| WorkerInfo {
        id: id.to_owned(),
        cores: 8,
        memory_mb: 16_384,
        environment_id: "env-1".to_owned(),
        cached: owned(cached),
        wasm_runtime: String::new(),
        model_runtime: String::new(),
        slots: 0,
    };
    store
        .register_worker(worker("w2", &["a"]), 500)
        .await
        .unwrap();
    store.register_worker(worker("w1", &[]), 0).await.unwrap();
    assert_eq!(
        store.workers(1000, 600).await.unwrap(),
        vec![worker("w2", &["a"])]
    );
    // The window is inclusive.
    assert_eq!(store.workers(1000, 1000).await.unwrap().len(), 2);

    // A heartbeat (listing no leases) records the worker's latest cache;
    // one from a worker that never registered records nothing.
    let beat = store.heartbeat_leases("w1", 900, 0, owned(&["b", "c"]), &[]);
    assert_eq!(beat.await.unwrap(), Some(vec![]));
    let ghost = store.heartbeat_leases("ghost", 900, 0, vec![], &[]);
    assert_eq!(ghost.await.unwrap(), None);
    assert_eq!(store.worker("ghost").await.unwrap(), None);
    assert_eq!(
        store.workers(1000, 600).await.unwrap(),
        vec![worker("w1", &["b", "c"]), worker("w2", &["a"])]
    );
    assert!(store.workers(HOUR, 600).await.unwrap().is_empty());
    // One worker by id, alive or not, with its latest cache.
    assert_eq!(
        store.worker("w1").await.unwrap(),
        Some(worker("w1", &["b", "c"]))
    );
    assert_eq!(store.worker("ghost").await.unwrap(), None);

    // Registering again replaces the worker.
    let mut bigger = worker("w1", &[]);
    bigger.cores = 16;
    store.register_worker(bigger.clone(), HOUR).await.unwrap();
    assert_eq!(store.workers(HOUR, 600).await.unwrap(), vec![bigger]);
}

async fn records_keep_every_field(store: Store) {
    let b = baseline_id("sprawl");
    with_round(&store, "t", &[("m0", &["a", "b", "c", &b])]).await;
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    let record = full_record("m0");
    let outcome = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record.clone(),
        None,
    );
    assert_eq!(outcome.await.unwrap(), CompleteOutcome::Accepted);
    let stored = store.results("t").await.unwrap();
    assert_eq!(stored, vec![record]);
    // Bit for bit: the points are thirds, which a lossy float would change.
    let scores: Vec<u64> = stored[0].seats.iter().map(|s| s.score.to_bits()).collect();
    let expected: Vec<u64> = placement_points(&[0, 0, 2, 3])
        .iter()
        .map(|p| p.to_bits())
        .collect();
    assert_eq!(scores, expected);
    let matches = store.matches("t").await.unwrap();
    assert_eq!(
        matches[0].state,
        MatchState::Done {
            reason: "last_general_standing".to_owned(),
            ranks: vec![0, 0, 2, 3],
        }
    );
}

async fn pairing_reads_back_what_was_scheduled(store: Store) {
    let b = baseline_id("crown");
    with_round(&store, "t", &[("m0", AB), ("m1", &["c", &b, &b, "d"])]).await;
    assert_eq!(
        store.pairing("m1").await.unwrap(),
        Some(pairing(&["c", &b, &b, "d"], u64::MAX - 1))
    );
    assert_eq!(store.pairing("m0").await.unwrap().unwrap().seats, owned(AB));
    assert_eq!(store.pairing("zz").await.unwrap(), None);
    // Leasing and finishing a match do not change its pairing.
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    let done = complete(
        &store,
        &lease.worker,
        "m0",
        &lease.lease_id,
        record("m0", 0, 5),
        None,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    assert_eq!(store.pairing("m0").await.unwrap().unwrap().seats, owned(AB));
}

async fn lease_counts_baseline_seats_as_built(store: Store) {
    let b = baseline_id("sprawl");
    with_round(&store, "t", &[("m0", AB), ("m1", &["c", &b, &b, "d"])]).await;
    // c and d are built and a baseline needs no build: m1 is fully cached.
    assert_eq!(next_match(&store, &owned(&["c", "d"])).await, "m1");
}

async fn concurrent_completes_accept_exactly_one(store: Store) {
    with_round(&store, "t", &[("m0", AB)]).await;
    let lease = lease_as(&store, "w", 0, HOUR).await.unwrap();
    let tasks: Vec<_> = (0..32u32)
        .map(|turns| {
            let store = store.clone();
            let lease_id = lease.lease_id.clone();
            tokio::spawn(async move {
                let replay = Some(turns.to_le_bytes().to_vec());
                let outcome =
                    complete(&store, "w", "m0", &lease_id, record("m0", 0, turns), replay);
                (turns, outcome.await.unwrap())
            })
        })
        .collect();
    let mut accepted = Vec::new();
    for task in tasks {
        let (turns, outcome) = task.await.unwrap();
        match outcome {
            CompleteOutcome::Accepted => accepted.push(turns),
            CompleteOutcome::Duplicate => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(accepted.len(), 1, "{accepted:?}");
    let winner = accepted[0];
    assert_eq!(
        store.results("t").await.unwrap(),
        vec![record("m0", 0, winner)]
    );
    assert_eq!(
        store.replay("m0").await.unwrap(),
        Some(winner.to_le_bytes().to_vec())
    );
}

async fn leases_are_bound_to_their_worker(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = lease_as(&store, "w1", 0, 100).await.unwrap();
    // w2 is registered too: an unregistered worker's heartbeat is refused
    // before any lease is looked at.
    store
        .register_worker(worker_info("w2", "", &[]), 0)
        .await
        .unwrap();
    let not_holder = |e: StoreError| {
        assert!(
            matches!(&e, StoreError::NotLeaseHolder { lease_id, worker }
                if *lease_id == lease.lease_id && worker == "w2"),
            "{e:?}"
        )
    };
    not_holder(
        extend(&store, "w2", &lease.lease_id, 10, 100)
            .await
            .unwrap_err(),
    );
    not_holder(
        complete(
            &store,
            "w2",
            "m0",
            &lease.lease_id,
            record("m0", 0, 1),
            None,
        )
        .await
        .unwrap_err(),
    );
    not_holder(
        fail(&store, "w2", "m0", &lease.lease_id, "forged", MAX_ATTEMPTS)
            .await
            .unwrap_err(),
    );
    // None of them changed anything: the lease is w1's, unextended, the
    // match unplayed and never failed.
    assert_eq!(store.next_expiry().await.unwrap(), Some(100));
    let info = &store.matches("t").await.unwrap()[0];
    assert_eq!(
        info.state,
        MatchState::Leased {
            worker: "w1".into(),
            attempt: 1
        }
    );
    assert!(info.failures.is_empty());
    assert!(
        extend(&store, "w1", &lease.lease_id, 10, 100)
            .await
            .unwrap()
    );
    let done = complete(
        &store,
        "w1",
        "m0",
        &lease.lease_id,
        record("m0", 0, 1),
        None,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    // Once done, anyone's repeat is only a duplicate: nothing left to protect.
    let repeat = complete(
        &store,
        "w2",
        "m0",
        &lease.lease_id,
        record("m0", 0, 1),
        None,
    );
    assert_eq!(repeat.await.unwrap(), CompleteOutcome::Duplicate);
}

async fn lease_ids_in_use_are_refused(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    lease_with(&store, "w1", "same", 0, 100, &[], "")
        .await
        .unwrap()
        .unwrap();
    let err = lease_with(&store, "w2", "same", 0, 100, &[], "")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateLease(id) if id == "same"),
        "{err:?}"
    );
    // The refused call leased nothing: m1 is still queued.
    assert_eq!(store.queue_len().await.unwrap(), 1);
}

async fn failed_attempts_up_to_the_cap_make_a_match_stuck(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    // Attempt 1 fails on w1, attempt 2 expires on w2: still queued, at the front.
    let l1 = lease_as(&store, "w1", 0, 100).await.unwrap();
    let end = fail(&store, "w1", "m0", &l1.lease_id, "no space left", 3)
        .await
        .unwrap();
    assert_eq!(end, Some(AttemptEnd::Requeued));
    let l2 = lease_as(&store, "w2", 0, 100).await.unwrap();
    assert_eq!((l2.match_id.as_str(), l2.attempt), ("m0", 2));
    let expired = store.expire(100, 3).await.unwrap();
    assert_eq!(
        expired,
        vec![ExpiredLease {
            match_id: "m0".into(),
            worker: "w2".into(),
            end: AttemptEnd::Requeued
        }]
    );
    // Attempt 3 is the last: its failure sets the match aside.
    let l3 = lease_as(&store, "w1", 200, 100).await.unwrap();
    assert_eq!((l3.match_id.as_str(), l3.attempt), ("m0", 3));
    let end = fail(&store, "w1", "m0", &l3.lease_id, "cgroup gone", 3)
        .await
        .unwrap();
    assert_eq!(end, Some(AttemptEnd::Stuck));

    let info = &store.matches("t").await.unwrap()[0];
    assert_eq!(info.state, MatchState::Stuck);
    assert_eq!(info.attempt, 3);
    assert_eq!(info.last_error.as_deref(), Some("cgroup gone"));
    let failure = |attempt: u32, worker: &str, reason: &str| AttemptFailure {
        attempt,
        worker: worker.into(),
        reason: reason.into(),
    };
    assert_eq!(
        info.failures,
        vec![
            failure(1, "w1", "no space left"),
            failure(2, "w2", "lease expired"),
            failure(3, "w1", "cgroup gone"),
        ]
    );
    let status = store.status("t").await.unwrap();
    assert_eq!((status.stuck, status.queued, status.done), (1, 1, 0));
    // A stuck match is out of the queue: the next lease is m1, then nothing.
    let next = lease_as(&store, "w1", 300, 100).await.unwrap();
    assert_eq!(next.match_id, "m1");
    assert_eq!(lease_as(&store, "w1", 300, 100).await, None);
    // And no result: a late report under its last lease is stale.
    let late = complete(&store, "w1", "m0", &l3.lease_id, record("m0", 0, 1), None);
    assert_eq!(late.await.unwrap(), CompleteOutcome::StaleLease);
    assert!(store.results("t").await.unwrap().is_empty());
}

async fn rejudge_replays_a_finished_match_from_the_front(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let l1 = lease_as(&store, "w1", 0, 100).await.unwrap();
    assert!(
        !store.rejudge("m0").await.unwrap(),
        "a leased match has no result to rejudge"
    );
    let done = complete(
        &store,
        "w1",
        "m0",
        &l1.lease_id,
        record("m0", 0, 3),
        Some(vec![7]),
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    let unknown = store.rejudge("zz").await.unwrap_err();
    assert!(
        matches!(&unknown, StoreError::UnknownMatch(id) if id == "zz"),
        "{unknown:?}"
    );

    assert!(store.rejudge("m0").await.unwrap());
    assert!(!store.rejudge("m0").await.unwrap(), "rejudged once");
    // Its result and replay stay (and count) until a new result replaces
    // them, and it is leased first, as attempt 2.
    let kept = store.results("t").await.unwrap();
    assert_eq!((kept.len(), kept[0].turns), (1, 3));
    assert_eq!(store.replay("m0").await.unwrap(), Some(vec![7]));
    let status = store.status("t").await.unwrap();
    assert_eq!((status.queued, status.done), (2, 0));
    let l2 = lease_as(&store, "w2", 0, 100).await.unwrap();
    assert_eq!((l2.match_id.as_str(), l2.attempt), ("m0", 2));
    let again = complete(&store, "w2", "m0", &l2.lease_id, record("m0", 0, 9), None);
    assert_eq!(again.await.unwrap(), CompleteOutcome::Accepted);
    let results = store.results("t").await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].turns, 9, "the new result replaces the old");
    assert_eq!(
        store.replay("m0").await.unwrap(),
        None,
        "and so does its replay"
    );

    store.cancel("t").await.unwrap();
    let cancelled = store.rejudge("m0").await.unwrap_err();
    assert!(
        matches!(cancelled, StoreError::Cancelled(_)),
        "{cancelled:?}"
    );
}

async fn entrant_tokens_name_their_submission(store: Store) {
    assert_eq!(store.entrant_token("d1").await.unwrap(), None);
    store.put_entrant_token("d1", "sub-a").await.unwrap();
    store.put_entrant_token("d2", "sub-b").await.unwrap();
    assert_eq!(
        store.entrant_token("d1").await.unwrap().as_deref(),
        Some("sub-a")
    );
    assert_eq!(
        store.entrant_token("d2").await.unwrap().as_deref(),
        Some("sub-b")
    );
    assert_eq!(store.entrant_token("sub-a").await.unwrap(), None);
}

async fn requeue_gives_a_stuck_match_fresh_attempts(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    // A cap of one: the first failure is enough.
    let l1 = lease_as(&store, "w1", 0, 100).await.unwrap();
    assert_eq!(
        fail(&store, "w1", "m0", &l1.lease_id, "boom", 1)
            .await
            .unwrap(),
        Some(AttemptEnd::Stuck)
    );
    assert!(
        !store.requeue("m1").await.unwrap(),
        "m1 is queued, not stuck"
    );
    let unknown = store.requeue("zz").await.unwrap_err();
    assert!(
        matches!(&unknown, StoreError::UnknownMatch(id) if id == "zz"),
        "{unknown:?}"
    );

    assert!(store.requeue("m0").await.unwrap());
    assert!(!store.requeue("m0").await.unwrap(), "requeued once");
    // At the front, with the next attempt number, and two fresh attempts
    // under a cap of two.
    let l2 = lease_as(&store, "w2", 0, 100).await.unwrap();
    assert_eq!((l2.match_id.as_str(), l2.attempt), ("m0", 2));
    assert_eq!(
        fail(&store, "w2", "m0", &l2.lease_id, "again", 2)
            .await
            .unwrap(),
        Some(AttemptEnd::Requeued)
    );
    let l3 = lease_as(&store, "w2", 0, 100).await.unwrap();
    assert_eq!((l3.match_id.as_str(), l3.attempt), ("m0", 3));
    let done = complete(&store, "w2", "m0", &l3.lease_id, record("m0", 0, 3), None);
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    let info = &store.matches("t").await.unwrap()[0];
    assert_eq!(info.failures.len(), 2, "failures stay on record: {info:?}");

    // A cancelled tournament's stuck matches stay stuck.
    let l4 = lease_as(&store, "w1", 0, 100).await.unwrap();
    assert_eq!(l4.match_id, "m1");
    fail(&store, "w1", "m1", &l4.lease_id, "boom", 1)
        .await
        .unwrap();
    store.cancel("t").await.unwrap();
    let refused = store.requeue("m1").await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::Cancelled(t) if t == "t"),
        "{refused:?}"
    );
}

async fn lease_ends_count_over_a_window_and_quarantine_is_kept(store: Store) {
    // Window of three: fail, ok, fail, fail -> the oldest fail has left it.
    assert_eq!(store.record_lease_end("w1", true, 3).await.unwrap(), 1);
    assert_eq!(store.record_lease_end("w1", false, 3).await.unwrap(), 1);
    assert_eq!(store.record_lease_end("w1", true, 3).await.unwrap(), 2);
    assert_eq!(store.record_lease_end("w1", true, 3).await.unwrap(), 2);
    assert_eq!(store.record_lease_end("w1", true, 3).await.unwrap(), 3);
    // Per worker.
    assert_eq!(store.record_lease_end("w2", false, 3).await.unwrap(), 0);

    assert!(store.quarantined().await.unwrap().is_empty());
    store.set_quarantined("w1", true).await.unwrap();
    store.set_quarantined("w0", true).await.unwrap();
    assert_eq!(store.quarantined().await.unwrap(), owned(&["w0", "w1"]));
    assert!(store.is_quarantined("w1").await.unwrap());
    assert!(!store.is_quarantined("w2").await.unwrap());
    // Releasing forgets the window: the next failure counts alone.
    store.set_quarantined("w1", false).await.unwrap();
    assert_eq!(store.quarantined().await.unwrap(), owned(&["w0"]));
    assert_eq!(store.record_lease_end("w1", true, 3).await.unwrap(), 1);
}

async fn worker_seen_is_the_last_heartbeat(store: Store) {
    assert_eq!(store.worker_seen("w1").await.unwrap(), None);
    let info = WorkerInfo {
        id: "w1".into(),
        cores: 2,
        memory_mb: 1024,
        environment_id: "e".into(),
        cached: Vec::new(),
        wasm_runtime: String::new(),
        model_runtime: String::new(),
        slots: 0,
    };
    store.register_worker(info, 1_000).await.unwrap();
    assert_eq!(store.worker_seen("w1").await.unwrap(), Some(1_000));
    let beat = store.heartbeat_leases("w1", 5_000, 0, Vec::new(), &[]);
    assert_eq!(beat.await.unwrap(), Some(vec![]));
    assert_eq!(store.worker_seen("w1").await.unwrap(), Some(5_000));
    assert_eq!(store.worker_seen("w2").await.unwrap(), None);
}

/// A worker of environment `env` that has built `cached`.
fn worker_info(id: &str, env: &str, cached: &[&str]) -> WorkerInfo {
    WorkerInfo {
        id: id.to_owned(),
        cores: 2,
        memory_mb: 1024,
        environment_id: env.to_owned(),
        cached: owned(cached),
        wasm_runtime: String::new(),
        model_runtime: String::new(),
        slots: 0,
    }
}

/// `record(match_id, 0, 1)` with `seats` in place of `a`, `b` (ranks 0, 1, …).
fn seated_record(match_id: &str, seats: &[&str]) -> MatchRecord {
    let mut r = record(match_id, 0, 1);
    r.seats = seats
        .iter()
        .enumerate()
        .map(|(rank, entrant)| SeatResult {
            entrant: (*entrant).to_owned(),
            rank: rank as u32,
            moves: 1,
            ..SeatResult::default()
        })
        .collect();
    r
}

/// A granted lease, or a panic naming what came instead.
fn granted(grant: LeaseGrant) -> Lease {
    match grant {
        LeaseGrant::Granted(lease) => lease,
        other => panic!("expected a lease, got {other:?}"),
    }
}

async fn lease_worker_refuses_unknown_silent_and_quarantined_workers(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = |worker: &'static str, alive_since: u64| {
        let store = store.clone();
        async move {
            store
                .lease_worker(worker, &fresh_lease_id(), 2_000, 100, alive_since)
                .await
                .unwrap()
        }
    };
    assert_eq!(lease("ghost", 0).await, LeaseGrant::Unregistered);
    // Heard from at 1000: alive from 1000 on (inclusive), silent after.
    store
        .register_worker(worker_info("w1", "", &[]), 1_000)
        .await
        .unwrap();
    assert_eq!(lease("w1", 1_001).await, LeaseGrant::Unregistered);
    store
        .register_worker(worker_info("q", "", &[]), 1_000)
        .await
        .unwrap();
    store.set_quarantined("q", true).await.unwrap();
    assert_eq!(lease("q", 0).await, LeaseGrant::Quarantined);
    // None of the refusals leased anything.
    assert_eq!(store.queue_len().await.unwrap(), 2);
    assert_eq!(store.next_expiry().await.unwrap(), None);

    // Alive and free: the oldest match, bound to the worker.
    let first = granted(lease("w1", 1_000).await);
    assert_eq!(first.match_id, "m0");
    assert_eq!(first.worker, "w1");
    assert_eq!(first.expires_at_ms, 2_100);
    assert_eq!(first.pairing, pairing(AB, u64::MAX - 1));
    assert_eq!(
        store.matches("t").await.unwrap()[0].state,
        MatchState::Leased {
            worker: "w1".into(),
            attempt: 1
        }
    );
    let not_holder = complete(&store, "q", "m0", &first.lease_id, record("m0", 0, 1), None)
        .await
        .unwrap_err();
    assert!(
        matches!(not_holder, StoreError::NotLeaseHolder { .. }),
        "{not_holder:?}"
    );
    // A lease id in use is refused and leases nothing.
    let reused = store
        .lease_worker("w1", &first.lease_id, 2_000, 100, 0)
        .await
        .unwrap_err();
    assert!(
        matches!(&reused, StoreError::DuplicateLease(id) if *id == first.lease_id),
        "{reused:?}"
    );
    assert_eq!(store.queue_len().await.unwrap(), 1);
    granted(lease("w1", 0).await);
    assert_eq!(lease("w1", 0).await, LeaseGrant::Empty);
}

async fn lease_worker_leases_with_the_registered_cache_and_environment(store: Store) {
    store.create_tournament(spec("t")).await.unwrap();
    let mut only = spec("e");
    only.environment = Some("gpu".into());
    store.create_tournament(only).await.unwrap();
    let round = |m: &str, seats| vec![scheduled(m, seats)];
    assert!(
        store
            .schedule_round("e", 0, round("e0", AB), vec![])
            .await
            .unwrap()
    );
    let round_t = vec![scheduled("m0", AB), scheduled("m1", CD)];
    assert!(store.schedule_round("t", 0, round_t, vec![]).await.unwrap());
    // Built c and d, in no particular environment: m1, over the older e0
    // (not its environment) and m0 (not built).
    store
        .register_worker(worker_info("w", "cpu", &["c", "d"]), 0)
        .await
        .unwrap();
    let lease = store.lease_worker("w", &fresh_lease_id(), 0, 10, 0).await;
    assert_eq!(granted(lease.unwrap()).match_id, "m1");
    // A heartbeat's cache counts from then on: now a and b.
    let beat = store.heartbeat_leases("w", 1, 0, owned(&["a", "b"]), &[]);
    assert_eq!(beat.await.unwrap(), Some(vec![]));
    let lease = store.lease_worker("w", &fresh_lease_id(), 1, 10, 0).await;
    assert_eq!(granted(lease.unwrap()).match_id, "m0");
    let lease = store.lease_worker("w", &fresh_lease_id(), 1, 10, 0).await;
    assert_eq!(lease.unwrap(), LeaseGrant::Empty);
    store
        .register_worker(worker_info("g", "gpu", &[]), 0)
        .await
        .unwrap();
    let lease = store.lease_worker("g", &fresh_lease_id(), 1, 10, 0).await;
    assert_eq!(granted(lease.unwrap()).match_id, "e0");
}

async fn heartbeat_leases_extends_every_lease_or_none(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    let ghost = store
        .heartbeat_leases("ghost", 5, 100, vec![], &[])
        .await
        .unwrap();
    assert_eq!(ghost, None);
    assert_eq!(store.worker_seen("ghost").await.unwrap(), None);
    for w in ["w1", "w2"] {
        store
            .register_worker(worker_info(w, "", &[]), 0)
            .await
            .unwrap();
    }
    let mine = granted(store.lease_worker("w1", "l1", 0, 100, 0).await.unwrap());
    let theirs = granted(store.lease_worker("w2", "l2", 0, 200, 0).await.unwrap());
    let done = granted(store.lease_worker("w1", "l3", 0, 300, 0).await.unwrap());
    let accepted = complete(
        &store,
        "w1",
        &done.match_id,
        "l3",
        seated_record(&done.match_id, AC),
        None,
    )
    .await
    .unwrap();
    assert_eq!(accepted, CompleteOutcome::Accepted);

    // One lease of another worker's among them: refused, and none extended.
    let ids = owned(&["l1", "l2"]);
    let err = store
        .heartbeat_leases("w1", 50, 1_000, vec![], &ids)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotLeaseHolder { lease_id, worker }
            if lease_id == "l2" && worker == "w1"),
        "{err:?}"
    );
    assert_eq!(store.next_expiry().await.unwrap(), Some(100));
    assert_eq!(
        store.expire(100, MAX_ATTEMPTS).await.unwrap(),
        vec![ExpiredLease {
            match_id: mine.match_id.clone(),
            worker: "w1".into(),
            end: AttemptEnd::Requeued,
        }]
    );

    // Its own leases only: the current one extended, the rest named lost
    // (expired, completed, never granted), and the cache recorded.
    let again = granted(store.lease_worker("w1", "l4", 100, 100, 0).await.unwrap());
    assert_eq!(again.match_id, mine.match_id);
    let ids = owned(&["l1", "l4", "l3", "nope"]);
    let lost = store
        .heartbeat_leases("w1", 150, 1_000, owned(&["a"]), &ids)
        .await
        .unwrap();
    assert_eq!(lost, Some(owned(&["l1", "l3", "nope"])));
    assert_eq!(store.worker_seen("w1").await.unwrap(), Some(150));
    assert_eq!(
        store.worker("w1").await.unwrap().unwrap().cached,
        owned(&["a"])
    );
    // l2 (w2's, until 200) is now the earliest; l4 runs to 1150.
    assert_eq!(store.next_expiry().await.unwrap(), Some(200));
    let expired = store.expire(1_149, MAX_ATTEMPTS).await.unwrap();
    assert_eq!(requeued(expired), vec![theirs.match_id.clone()]);
    assert_eq!(store.next_expiry().await.unwrap(), Some(1_150));
    // A lease already run out is lost, not revived.
    let lost = store
        .heartbeat_leases("w1", 1_150, 1_000, vec![], &owned(&["l4"]))
        .await
        .unwrap();
    assert_eq!(lost, Some(owned(&["l4"])));
    assert_eq!(store.next_expiry().await.unwrap(), Some(1_150));
}

/// A quarantine window of three, two failures in it quarantine.
const RULE: Option<QuarantineRule> = Some(QuarantineRule {
    window: 3,
    failures: 2,
});

async fn report_checks_the_seats_before_anything_else(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    let report = |record: MatchRecord, worker: &'static str| {
        let store = store.clone();
        let lease_id = lease.lease_id.clone();
        async move {
            let match_id = record.match_id.clone();
            store
                .report(worker, &match_id, &lease_id, record, None, RULE)
                .await
        }
    };
    let misfits = [
        seated_record("m0", &["b", "a"]),
        seated_record("m0", &["a", "c"]),
        seated_record("m0", &["a"]),
        seated_record("m0", &["a", "b", "c"]),
    ];
    for misfit in &misfits {
        // Refused as a misfit even from another worker: the seats come first.
        for worker in ["w", "other"] {
            let answer = report(misfit.clone(), worker).await.unwrap();
            assert_eq!(answer, Reported::WrongSeats, "{misfit:?}");
        }
    }
    // A record for another match is refused before anything is compared.
    let err = store
        .report(
            "w",
            "m0",
            &lease.lease_id,
            seated_record("m1", CD),
            None,
            RULE,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::MismatchedRecord { .. }),
        "{err:?}"
    );
    // Nothing was written: still w's lease, no result, no ending counted.
    assert!(store.results("t").await.unwrap().is_empty());
    assert_eq!(store.next_expiry().await.unwrap(), Some(100));
    assert_eq!(store.record_lease_end("w", true, 3).await.unwrap(), 1);

    let answer = report(seated_record("m0", AB), "w").await.unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::Accepted));
    // Done, a misfit is still a misfit, and a fitting repeat a duplicate.
    let answer = report(seated_record("m0", &["b", "a"]), "w").await.unwrap();
    assert_eq!(answer, Reported::WrongSeats);
    let answer = report(seated_record("m0", AB), "other").await.unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::Duplicate));
    // No such match: unknown, whatever the seats.
    let answer = report(seated_record("zz", &["x"]), "w").await.unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::Unknown));
    // Queued, not leased: stale.
    let answer = report(seated_record("m1", CD), "w").await.unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::StaleLease));
}

async fn report_is_complete_for_the_holder_and_idempotent(store: Store) {
    with_round(&store, "t", &[("m0", AB)]).await;
    let lease = lease_as(&store, "w", 0, 100).await.unwrap();
    let replay = b"moves".to_vec();
    let err = store
        .report(
            "x",
            "m0",
            &lease.lease_id,
            seated_record("m0", AB),
            None,
            RULE,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NotLeaseHolder { lease_id, worker }
            if *lease_id == lease.lease_id && worker == "x"),
        "{err:?}"
    );
    assert!(store.results("t").await.unwrap().is_empty());

    let first = seated_record("m0", AB);
    let answer = store
        .report(
            "w",
            "m0",
            &lease.lease_id,
            first.clone(),
            Some(replay.clone()),
            RULE,
        )
        .await
        .unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::Accepted));
    // The worker retries, with other content even: a duplicate, dropped.
    let mut retry = first.clone();
    retry.turns = 99;
    let answer = store
        .report("w", "m0", &lease.lease_id, retry, Some(vec![1]), RULE)
        .await
        .unwrap();
    assert_eq!(answer, Reported::Checked(CompleteOutcome::Duplicate));
    assert_eq!(store.results("t").await.unwrap(), vec![first]);
    assert_eq!(store.replay("m0").await.unwrap(), Some(replay));
    // The lease ended with the result.
    assert_eq!(store.next_expiry().await.unwrap(), None);
    assert!(!extend(&store, "w", &lease.lease_id, 1, 100).await.unwrap());
    let status = store.status("t").await.unwrap();
    assert_eq!((status.done, status.leased), (1, 0));
}

async fn quarantine_counts_through_report_and_fail_counted(store: Store) {
    let three: Vec<(String, &[&str])> = (0..3).map(|i| (format!("m{i}"), AB)).collect();
    let round: Vec<(&str, &[&str])> = three.iter().map(|(m, s)| (m.as_str(), *s)).collect();
    with_round(&store, "t", &round).await;
    let fail = |worker: &'static str, lease: &Lease, rule| {
        let (store, lease) = (store.clone(), lease.clone());
        async move {
            store
                .fail_counted(worker, &lease.match_id, &lease.lease_id, "x", 10, rule)
                .await
        }
    };

    // Window [failed]: one of two.
    let l = lease_as(&store, "w", 0, 100).await.unwrap();
    let failed = fail("w", &l, RULE).await.unwrap();
    let requeued = FailedLease {
        end: AttemptEnd::Requeued,
        quarantined: false,
    };
    assert_eq!(failed, Some(requeued));
    // A failure of someone else's lease, or of one no longer current,
    // ends nothing and counts nothing.
    let err = fail("v", &l, RULE).await;
    assert_eq!(err.unwrap(), None);
    let l = lease_as(&store, "w", 0, 100).await.unwrap();
    let err = fail("v", &l, RULE).await.unwrap_err();
    assert!(matches!(err, StoreError::NotLeaseHolder { .. }), "{err:?}");
    // Window [result, failed]: a result counts, and does not quarantine.
    let done = store
        .report(
            "w",
            &l.match_id,
            &l.lease_id,
            seated_record(&l.match_id, AB),
            None,
            RULE,
        )
        .await
        .unwrap();
    assert_eq!(done, Reported::Checked(CompleteOutcome::Accepted));
    // A duplicate counts nothing.
    let again = store
        .report(
            "w",
            &l.match_id,
            &l.lease_id,
            seated_record(&l.match_id, AB),
            None,
            RULE,
        )
        .await
        .unwrap();
    assert_eq!(again, Reported::Checked(CompleteOutcome::Duplicate));
    assert!(!store.is_quarantined("w").await.unwrap());
    // Window [failed, result, failed]: two, quarantined.
    let l = lease_as(&store, "w", 0, 100).await.unwrap();
    let failed = fail("w", &l, RULE).await.unwrap();
    assert_eq!(
        failed,
        Some(FailedLease {
            end: AttemptEnd::Requeued,
            quarantined: true,
        })
    );
    assert!(store.is_quarantined("w").await.unwrap());
    assert_eq!(store.quarantined().await.unwrap(), owned(&["w"]));
    // v's refused failure above was never counted: its first is its only one.
    assert_eq!(store.record_lease_end("v", true, 3).await.unwrap(), 1);

    // Released, w starts afresh; without a rule nothing is counted.
    store.set_quarantined("w", false).await.unwrap();
    let l = lease_as(&store, "w", 0, 100).await.unwrap();
    assert_eq!(fail("w", &l, None).await.unwrap(), Some(requeued));
    let l = lease_as(&store, "w", 0, 100).await.unwrap();
    let done = store
        .report(
            "w",
            &l.match_id,
            &l.lease_id,
            seated_record(&l.match_id, AB),
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(done, Reported::Checked(CompleteOutcome::Accepted));
    assert!(!store.is_quarantined("w").await.unwrap());
    assert_eq!(store.record_lease_end("w", true, 3).await.unwrap(), 1);
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn released_leases_go_back_in_schedule_order_without_a_strike(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    store.create_tournament(spec("u")).await.unwrap();
    let l0 = lease_as(&store, "w", 0, HOUR).await.unwrap();
    let l1 = lease_as(&store, "w", 0, HOUR).await.unwrap();
    assert_eq!((l0.match_id.as_str(), l1.match_id.as_str()), ("m0", "m1"));
    // Another tournament's release touches nothing here.
    assert_eq!(store.release_leases("u", "gone").await.unwrap(), 0);
    assert_eq!(store.status("t").await.unwrap().leased, 2);

    assert_eq!(store.release_leases("t", "the run ended").await.unwrap(), 2);
    assert_eq!(store.next_expiry().await.unwrap(), None);
    assert_eq!(store.release_leases("t", "again").await.unwrap(), 0);
    let m1 = &store.matches("t").await.unwrap()[1];
    assert_eq!(m1.state, MatchState::Queued);
    assert_eq!(
        m1.failures,
        vec![AttemptFailure {
            attempt: 1,
            worker: "w".into(),
            reason: "the run ended".into(),
        }]
    );
    // A result under a taken-back lease is stale; so is a heartbeat.
    let stale = complete(
        &store,
        "w",
        "m1",
        &l1.lease_id,
        reseated(record("m1", 0, 5), CD),
        None,
    );
    assert_eq!(stale.await.unwrap(), CompleteOutcome::StaleLease);
    assert!(!extend(&store, "w", &l0.lease_id, 1, HOUR).await.unwrap());

    // Back at the front in schedule order, on their next attempt.
    let again = lease_as(&store, "w2", 2, HOUR).await.unwrap();
    assert_eq!((again.match_id.as_str(), again.attempt), ("m0", 2));
    // No strike was counted: m1 still has every allowed failure left.
    for attempt in 2..=MAX_ATTEMPTS + 1 {
        let lease = lease_as(&store, "w2", 3, HOUR).await.unwrap();
        assert_eq!((lease.match_id.as_str(), lease.attempt), ("m1", attempt));
        let end = fail(&store, "w2", "m1", &lease.lease_id, "flaky", MAX_ATTEMPTS);
        let expected = if attempt == MAX_ATTEMPTS + 1 {
            AttemptEnd::Stuck
        } else {
            AttemptEnd::Requeued
        };
        assert_eq!(end.await.unwrap(), Some(expected));
    }
    assert!(matches!(
        store.release_leases("nope", "x").await,
        Err(StoreError::UnknownTournament(_))
    ));
}

async fn released_leases_of_a_cancelled_tournament_drop_their_matches(store: Store) {
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let _l0 = lease_as(&store, "w", 0, HOUR).await.unwrap();
    assert_eq!(store.cancel("t").await.unwrap(), 1);
    assert_eq!(store.release_leases("t", "the run ended").await.unwrap(), 1);
    let status = store.status("t").await.unwrap();
    assert_eq!((status.dropped, status.leased, status.queued), (2, 0, 0));
    assert_eq!(store.queue_len().await.unwrap(), 0);
}

// The disk store only.

/// The state file of a store in `dir`.
fn state_file(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join(arena_coordinator::store::DISK_FILE_NAME)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_store_is_open_in_one_process_at_a_time_but_readable_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_dir(dir.path()).unwrap();
    with_round(&store, "t", &[("m0", AB), ("m1", CD)]).await;
    let err = Store::open_dir(dir.path()).unwrap_err().to_string();
    assert!(err.contains("open in another process"), "{err}");
    assert!(
        err.contains(&state_file(dir.path()).display().to_string()),
        "{err}"
    );

    // A read-only copy sees every committed change, while the writer runs.
    let copy = arena_coordinator::store::DiskStore::snapshot(dir.path()).unwrap();
    assert_eq!(snapshot(&Store::Memory(copy)).await, snapshot(&store).await);
    let _lease = lease_as(&store, "w", 0, HOUR).await.unwrap();
    let copy = arena_coordinator::store::DiskStore::snapshot(dir.path()).unwrap();
    assert_eq!(Store::Memory(copy).status("t").await.unwrap().leased, 1);
    drop(store);
    let copy = arena_coordinator::store::DiskStore::snapshot(dir.path()).unwrap();
    assert_eq!(Store::Memory(copy).status("t").await.unwrap().leased, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_state_file_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_dir(dir.path()).unwrap();
    with_round(&store, "t", &[("m0", AB), ("m1", CD), ("m2", AC)]).await;
    store
        .put_submission(&hex_sha256(b"bot"), b"bot".to_vec())
        .await
        .unwrap();
    drop(store);
    let path = state_file(dir.path());
    let good = std::fs::read(&path).unwrap();
    let name = path.display().to_string();
    let refused = |what: &str| {
        let err = Store::open_dir(dir.path())
            .expect_err(&format!("opened a state file that is {what}"))
            .to_string();
        assert!(err.contains(&name), "{what}: {err}");
        let read = arena_coordinator::store::DiskStore::snapshot(dir.path());
        assert!(read.is_err(), "{what}: read back");
    };

    // Torn: only the first part of the file reached the disk.
    std::fs::write(&path, &good[..good.len() / 3]).unwrap();
    refused("truncated");
    // Garbage in place of every byte after the header.
    let mut garbled = good.clone();
    for byte in garbled.iter_mut().skip(512) {
        *byte = !*byte;
    }
    std::fs::write(&path, &garbled).unwrap();
    refused("garbled");
    // Not a state file at all.
    std::fs::write(&path, b"tournament = \"not a database\"").unwrap();
    refused("text");

    // The intact file still opens with everything in it.
    std::fs::write(&path, &good).unwrap();
    let store = Store::open_dir(dir.path()).unwrap();
    assert_eq!(store.status("t").await.unwrap().queued, 3);
}

// Redis only.

/// Everything a coordinator would read back after a restart.
#[derive(Debug, PartialEq)]
struct Snapshot {
    tournaments: Vec<String>,
    spec: Option<TournamentSpec>,
    status: Status,
    matches: Vec<MatchInfo>,
    results: Vec<MatchRecord>,
    byes: Vec<(u32, String)>,
    next_expiry: Option<u64>,
    workers: Vec<WorkerInfo>,
    replay: Option<Vec<u8>>,
    submission: Option<Vec<u8>>,
}

async fn snapshot(store: &Store) -> Snapshot {
    Snapshot {
        tournaments: store.tournaments().await.unwrap(),
        spec: store.tournament("t").await.unwrap(),
        status: store.status("t").await.unwrap(),
        matches: store.matches("t").await.unwrap(),
        results: store.results("t").await.unwrap(),
        byes: store.byes("t").await.unwrap(),
        next_expiry: store.next_expiry().await.unwrap(),
        workers: store.workers(0, 0).await.unwrap(),
        replay: store.replay("m0").await.unwrap(),
        submission: store.get_submission(&hex_sha256(b"bot")).await.unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stores_a_submission_larger_than_a_chunk_in_chunks() {
    let server = RedisServer::start();
    let store = server.store().await;
    let chunk = arena_coordinator::store::SUBMISSION_CHUNK;
    let bytes: Vec<u8> = (0..2 * chunk + 12_345)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    let hash = hex_sha256(&bytes);
    store.put_submission(&hash, bytes.clone()).await.unwrap();
    store.put_submission(&hash, bytes.clone()).await.unwrap();
    assert_eq!(store.get_submission(&hash).await.unwrap(), Some(bytes));

    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let chunks: usize = redis::cmd("LLEN")
        .arg(keys::submission(&hash))
        .query(&mut raw)
        .unwrap();
    assert_eq!(chunks, 3, "no value larger than a chunk");
    let uploads: Vec<String> = redis::cmd("KEYS")
        .arg("arena:upload:*")
        .query(&mut raw)
        .unwrap();
    assert!(uploads.is_empty(), "half-written copies left: {uploads:?}");

    // A submission stored whole by an older coordinator still reads.
    let old = b"an archive from before chunking".to_vec();
    let old_hash = hex_sha256(&old);
    let () = redis::cmd("SET")
        .arg(keys::submission(&old_hash))
        .arg(&old)
        .query(&mut raw)
        .unwrap();
    assert_eq!(store.get_submission(&old_hash).await.unwrap(), Some(old));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_command_after_a_redis_restart_succeeds() {
    let mut server = RedisServer::start();
    let store = server.store().await;
    store.create_tournament(spec("t")).await.unwrap();
    server.restart();
    // The old connection is dead; the store sends the command again on a
    // new one instead of failing it ("broken pipe").
    assert_eq!(store.tournaments().await.unwrap(), Vec::<String>::new());
    store.create_tournament(spec("u")).await.unwrap();
    assert_eq!(store.tournaments().await.unwrap(), owned(&["u"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_state_survives_a_coordinator_restart() {
    let server = RedisServer::start();
    let store = server.store().await;
    state_survives_a_restart(store, |store| async {
        // The coordinator goes away; Redis also forgets its script cache, as
        // a Redis restart would, so the new one must load the scripts again.
        drop(store);
        let mut admin = redis::Client::open(server.url())
            .unwrap()
            .get_connection()
            .unwrap();
        let () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut admin).unwrap();
        server.store().await
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_state_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_dir(dir.path()).unwrap();
    state_survives_a_restart(store, |store| async {
        drop(store);
        Store::open_dir(dir.path()).unwrap()
    })
    .await;
}

/// Plays part of a tournament, has `restart` replace the store by a new
/// one on the same state, and checks the new one carries on exactly where
/// the old one stopped.
async fn state_survives_a_restart<F, R>(store: Store, restart: R)
where
    R: FnOnce(Store) -> F,
    F: std::future::Future<Output = Store>,
{
    with_round(
        &store,
        "t",
        &[("m0", AB), ("m1", CD), ("m2", AC), ("m3", AB)],
    )
    .await;
    store
        .schedule_round("t", 1, vec![scheduled("m4", CD)], owned(&["e"]))
        .await
        .unwrap();
    let l0 = lease_as(&store, "w", 0, 100).await.unwrap();
    let l1 = lease_as(&store, "w", 0, 500).await.unwrap();
    let l2 = lease_as(&store, "w", 0, 500).await.unwrap();
    let done = complete(
        &store,
        &l0.worker,
        "m0",
        &l0.lease_id,
        record("m0", 0, 3),
        Some(b"replay".to_vec()),
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);
    assert!(
        fail(
            &store,
            &l2.worker,
            "m2",
            &l2.lease_id,
            "oom in sandbox",
            MAX_ATTEMPTS
        )
        .await
        .unwrap()
        .is_some()
    );
    store
        .register_worker(
            WorkerInfo {
                id: "w".into(),
                cores: 2,
                memory_mb: 2048,
                environment_id: "env".into(),
                cached: owned(&["a"]),
                wasm_runtime: String::new(),
                model_runtime: String::new(),
                slots: 0,
            },
            0,
        )
        .await
        .unwrap();
    store
        .put_submission(&hex_sha256(b"bot"), b"bot".to_vec())
        .await
        .unwrap();
    let before = snapshot(&store).await;
    assert_eq!(before.status.leased, 1);
    assert_eq!(before.status.queued, 3);

    let store = restart(store).await;
    assert_eq!(snapshot(&store).await, before);

    // It carries on where the old one stopped.
    assert!(
        extend(&store, &l1.worker, &l1.lease_id, 50, 500)
            .await
            .unwrap()
    );
    assert!(
        !store
            .schedule_round("t", 1, vec![scheduled("m4", CD)], vec![])
            .await
            .unwrap()
    );
    let again = lease_as(&store, "w2", 60, 100).await.unwrap();
    assert_eq!((again.match_id.as_str(), again.attempt), ("m2", 2));
    assert!(![&l0, &l1, &l2].iter().any(|l| l.lease_id == again.lease_id));
    let repeat = complete(
        &store,
        &l0.worker,
        "m0",
        &l0.lease_id,
        record("m0", 0, 99),
        None,
    );
    assert_eq!(repeat.await.unwrap(), CompleteOutcome::Duplicate);
    let l1_done = complete(
        &store,
        &l1.worker,
        "m1",
        &l1.lease_id,
        reseated(record("m1", 0, 4), CD),
        None,
    );
    assert_eq!(l1_done.await.unwrap(), CompleteOutcome::Accepted);
    assert_eq!(
        requeued(store.expire(1000, MAX_ATTEMPTS).await.unwrap()),
        owned(&["m2"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_writes_only_documented_keys() {
    let server = RedisServer::start();
    // Exercise every writing operation once.
    workers_alive_window(server.store().await).await;
    submissions_round_trip(server.store().await).await;
    cancel_drops_the_queue_and_stops_extensions(server.store().await).await;
    let store = server.store().await;
    store
        .schedule_round("other", 1, vec![scheduled("o1", AB)], owned(&["c"]))
        .await
        .unwrap();
    let lease = lease_as(&store, "w", 0, 10).await.unwrap();
    assert!(
        extend(&store, &lease.worker, &lease.lease_id, 1, 10)
            .await
            .unwrap()
    );
    let replay = Some(b"r".to_vec());
    let done = complete(
        &store,
        &lease.worker,
        &lease.match_id,
        &lease.lease_id,
        record("o1", 1, 1),
        replay,
    );
    assert_eq!(done.await.unwrap(), CompleteOutcome::Accepted);

    assert_only_documented_keys(&server, 20);

    // The combined report and failure calls, with their quarantine counts,
    // on a server of their own (their tournament is "t" too).
    let server = RedisServer::start();
    quarantine_counts_through_report_and_fail_counted(server.store().await).await;
    assert_only_documented_keys(&server, 10);
}

/// Every key in `server` matches a pattern of the key layout, and there are
/// more than `at_least` of them (so the check saw something).
fn assert_only_documented_keys(server: &RedisServer, at_least: usize) {
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let all: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    assert!(all.len() > at_least, "{all:?}");
    for key in all {
        let documented = keys::PATTERNS
            .iter()
            .any(|pattern| match pattern.find('{') {
                Some(brace) => key.starts_with(&pattern[..brace]),
                None => key == *pattern,
            });
        assert!(documented, "undocumented key {key}");
    }
}

/// The red team's finding: Redis stalls writes for longer than the store's
/// response timeout in the middle of an upload, so a chunk command whose
/// reply was late is sent again. Each chunk must still be stored once, the
/// upload must read back as its hash, and a copy stored wrong (as an older
/// coordinator could leave it) is replaced by the next upload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_stall_during_an_upload_stores_each_chunk_once() {
    use arena_coordinator::store::RedisStore;
    use redis::aio::ConnectionManagerConfig;
    use std::time::Duration;

    let server = RedisServer::start();
    let config =
        ConnectionManagerConfig::new().set_response_timeout(Some(Duration::from_millis(500)));
    let store = Store::Redis(
        RedisStore::connect_with_config(&server.url(), config)
            .await
            .unwrap(),
    );
    let chunk = arena_coordinator::store::SUBMISSION_CHUNK;
    let bytes: Vec<u8> = (0..8 * chunk).map(|i| (i * 13 % 251) as u8).collect();
    let hash = hex_sha256(&bytes);
    let url = server.url();
    // Writes stall for 700 ms once the upload is under way (its first
    // chunk is there).
    let pauser = tokio::spawn(async move {
        let mut raw = redis::Client::open(url)
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        loop {
            let started: Vec<String> = redis::cmd("KEYS")
                .arg("arena:upload:*")
                .query_async(&mut raw)
                .await
                .unwrap();
            if !started.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(700)
            .arg("WRITE")
            .query_async(&mut raw)
            .await
            .unwrap();
    });
    store.put_submission(&hash, bytes.clone()).await.unwrap();
    pauser.await.unwrap();
    let mut raw = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let chunks: usize = redis::cmd("LLEN")
        .arg(keys::submission(&hash))
        .query(&mut raw)
        .unwrap();
    assert_eq!(chunks, 8);
    assert!(store.get_submission(&hash).await.unwrap() == Some(bytes.clone()));

    // A stored copy with a chunk too many is replaced by the next upload.
    let () = redis::cmd("RPUSH")
        .arg(keys::submission(&hash))
        .arg(&b"a chunk stored twice"[..])
        .query(&mut raw)
        .unwrap();
    assert!(store.get_submission(&hash).await.unwrap() != Some(bytes.clone()));
    store.put_submission(&hash, bytes.clone()).await.unwrap();
    assert!(store.get_submission(&hash).await.unwrap() == Some(bytes));
    let uploads: Vec<String> = redis::cmd("KEYS")
        .arg("arena:upload:*")
        .query(&mut raw)
        .unwrap();
    assert!(uploads.is_empty(), "half-written copies left: {uploads:?}");

    // What a retry does: the same chunk's command sent twice stores it once
    // (the script the store pushes chunks with, run as Redis runs it).
    let push = include_str!("../src/store/redis_store/lua/push_chunk.lua");
    for (index, expected) in [(0, 1), (0, 1), (1, 2), (1, 2), (3, 2)] {
        let length: i64 = redis::cmd("EVAL")
            .arg(push)
            .arg(1)
            .arg("arena:upload:probe")
            .arg(index)
            .arg(format!("chunk {index}"))
            .arg(60)
            .query(&mut raw)
            .unwrap();
        assert_eq!(length, expected, "chunk {index}");
    }
}
