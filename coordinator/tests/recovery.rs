//! Scheduling resumes after a crash. A coordinator can die between storing a
//! result and scheduling what that result unblocks, or halfway through
//! queueing a round robin. Each test builds exactly the state such a crash
//! leaves in the store (by doing the stored half of the step through the
//! store and skipping the rest), then hands the store to a fresh coordinator
//! and checks the tournament goes on to the same end as an uninterrupted
//! one. Every test runs on the in-memory store, on the on-disk store (in a
//! temp dir) and on a real redis-server.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arena_coordinator::domain::{Format, MatchRecord, SeatResult};
use arena_coordinator::grpc::Tokens;
use arena_coordinator::server;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::store::{CompleteOutcome, LiveBoard, Reported, Store, WorkerInfo};
use arena_engine::placement_points;
use arena_engine::registry;

use support::redis::RedisServer;

/// Stamps each test for every backend; a Redis test gets a server of its
/// own, a disk test a fresh directory for each store.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod memory_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(&|| Box::pin(async { super::Store::memory() })).await;
                }
            )*
        }
        mod disk_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let dirs = std::sync::Mutex::new(Vec::new());
                    let fresh = || {
                        let dir = tempfile::tempdir().unwrap();
                        let store = super::Store::open_dir(dir.path()).unwrap();
                        dirs.lock().unwrap().push(dir);
                        Box::pin(async move { store }) as super::StoreFuture
                    };
                    super::$test(&fresh).await;
                }
            )*
        }
        mod redis_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    // One server per test; each call gives a fresh database.
                    let servers = std::sync::Mutex::new(Vec::new());
                    let fresh = || {
                        let server = super::RedisServer::start();
                        let url = server.url();
                        servers.lock().unwrap().push(server);
                        Box::pin(async move {
                            super::Store::Redis(
                                arena_coordinator::store::RedisStore::connect(&url)
                                    .await
                                    .unwrap(),
                            )
                        }) as super::StoreFuture
                    };
                    super::$test(&fresh).await;
                }
            )*
        }
    };
}

type StoreFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Store> + Send>>;
/// Makes a new, empty store of the backend under test.
type Fresh<'a> = &'a (dyn Fn() -> StoreFuture + Sync);

on_both_stores!(
    swiss_continues_after_a_crash_between_rounds,
    a_round_robin_interrupted_while_queueing_finishes_scheduling,
    the_periodic_recovery_step_needs_no_restart,
    a_served_coordinator_recovers_at_start_up,
);

const WORKER: &str = "w1";

fn entrant_hashes() -> Vec<(String, String)> {
    ["ant", "bee", "cat", "dog", "eel", "fox"]
        .iter()
        .map(|name| {
            let archive = format!("bot {name}").into_bytes();
            (name.to_string(), arena_coordinator::submission_id(&archive))
        })
        .collect()
}

fn tournament(format: Format) -> NewTournament {
    let entry = registry::find("generals").unwrap();
    NewTournament {
        name: "recovery".into(),
        game: entry.name.into(),
        seats: 2,
        base_seed: 11,
        format,
        rules: Default::default(),
        limits: entry.limits,
        entrants: entrant_hashes(),
        environment: None,
        teams: None,
        wasm_runtime: None,
        model_runtime: None,
        live_board: LiveBoard::default(),
    }
}

fn swiss() -> NewTournament {
    tournament(Format::Swiss { rounds: 3 })
}

fn round_robin() -> NewTournament {
    tournament(Format::RoundRobin {
        cycles: 1,
        games_per_pairing: 2,
    })
}

/// A coordinator on `store` with the entrants' submissions uploaded and one
/// registered worker.
async fn coordinator_on(store: Store, config: CoordinatorConfig) -> Arc<Coordinator> {
    let coordinator = Coordinator::new(store, config);
    for (name, hash) in entrant_hashes() {
        let archive = format!("bot {name}").into_bytes();
        coordinator
            .store()
            .put_submission(&hash, archive)
            .await
            .unwrap();
    }
    coordinator
        .register_worker(WorkerInfo {
            id: WORKER.into(),
            cores: 4,
            memory_mb: 8192,
            environment_id: String::new(),
            cached: Vec::new(),
            wasm_runtime: String::new(),
            model_runtime: String::new(),
            slots: 0,
        })
        .await
        .unwrap();
    coordinator
}

/// The result every match gets here: the entrant whose hash sorts first
/// wins, so results depend only on who plays.
fn result_of(match_id: &str, round: u32, seats: &[String]) -> MatchRecord {
    let winner = seats.iter().min().cloned().unwrap_or_default();
    let ranks: Vec<u32> = seats.iter().map(|s| u32::from(*s != winner)).collect();
    let points = placement_points(&ranks);
    MatchRecord {
        match_id: match_id.to_owned(),
        round,
        seats: seats
            .iter()
            .zip(ranks.iter().zip(points))
            .map(|(entrant, (&rank, score))| SeatResult {
                entrant: entrant.clone(),
                rank,
                score,
                moves: 5,
                ..SeatResult::default()
            })
            .collect(),
        reason: "general_captured".into(),
        turns: 5,
        worker: String::new(),
    }
}

/// Leases and reports until nothing is left to lease.
async fn play_out(coordinator: &Coordinator) {
    while let Some(leased) = coordinator.lease(WORKER).await.unwrap() {
        let lease = &leased.lease;
        let record = result_of(&lease.match_id, lease.round, &lease.pairing.seats);
        let outcome = coordinator
            .report(WORKER, &lease.lease_id, record, None, Vec::new(), 1.0)
            .await
            .unwrap();
        assert_eq!(outcome, CompleteOutcome::Accepted);
    }
}

/// Plays `new` through without interruption and returns its standings.
async fn undisturbed(fresh: Fresh<'_>, new: NewTournament) -> String {
    let coordinator = coordinator_on(fresh().await, CoordinatorConfig::default()).await;
    let id = coordinator.create_tournament(new).await.unwrap();
    play_out(&coordinator).await;
    let (status, rounds) = coordinator.status(&id).await.unwrap();
    assert!(arena_coordinator::service::is_finished(&status, rounds));
    coordinator.standings(&id).await.unwrap().to_json()
}

/// A Swiss tournament whose coordinator died after storing round 0's last
/// result and before scheduling round 1: plays round 0 but stores its last
/// result through the store alone. Returns the store and the tournament id.
async fn swiss_crashed_between_rounds(fresh: Fresh<'_>) -> (Store, String) {
    let store = fresh().await;
    let before = coordinator_on(store.clone(), CoordinatorConfig::default()).await;
    let id = before.create_tournament(swiss()).await.unwrap();
    let round_size = before.store().status(&id).await.unwrap().total;
    for played in 0..round_size {
        let leased = before.lease(WORKER).await.unwrap().expect("round 0 match");
        let lease = &leased.lease;
        let record = result_of(&lease.match_id, lease.round, &lease.pairing.seats);
        let outcome = if played + 1 < round_size {
            before
                .report(WORKER, &lease.lease_id, record, None, Vec::new(), 1.0)
                .await
        } else {
            // The crash: the result is stored, the advance never runs.
            let reported = store
                .report(WORKER, &lease.match_id, &lease.lease_id, record, None, None)
                .await
                .unwrap();
            match reported {
                Reported::Checked(outcome) => Ok(outcome),
                Reported::WrongSeats => panic!("{reported:?}"),
            }
        };
        assert_eq!(outcome.unwrap(), CompleteOutcome::Accepted);
    }
    let status = store.status(&id).await.unwrap();
    assert_eq!((status.rounds_scheduled, status.done), (1, round_size));
    assert!(before.lease(WORKER).await.unwrap().is_none(), "the stall");
    (store, id)
}

async fn swiss_continues_after_a_crash_between_rounds(fresh: Fresh<'_>) {
    let expected = undisturbed(fresh, swiss()).await;
    let (store, id) = swiss_crashed_between_rounds(fresh).await;

    let after = coordinator_on(store.clone(), CoordinatorConfig::default()).await;
    after.recover().await.unwrap();
    assert_eq!(store.rounds_scheduled(&id).await.unwrap(), 2);
    // Recovering again changes nothing.
    after.recover().await.unwrap();
    assert_eq!(store.rounds_scheduled(&id).await.unwrap(), 2);
    play_out(&after).await;
    assert_eq!(after.standings(&id).await.unwrap().to_json(), expected);
}

async fn a_round_robin_interrupted_while_queueing_finishes_scheduling(fresh: Fresh<'_>) {
    // What an uninterrupted creation queues.
    let reference = coordinator_on(fresh().await, CoordinatorConfig::default()).await;
    let id = reference.create_tournament(round_robin()).await.unwrap();
    let whole = reference.store().matches(&id).await.unwrap();
    let rounds = reference.status(&id).await.unwrap().1;
    assert!(rounds > 2);

    // The crash: the tournament and its first two rounds are stored, the
    // rest never queued.
    let store = fresh().await;
    let spec = reference.store().tournament(&id).await.unwrap().unwrap();
    store.create_tournament(spec).await.unwrap();
    let byes = reference.store().byes(&id).await.unwrap();
    for round in 0..2 {
        let matches = whole
            .iter()
            .filter(|m| m.round == round)
            .map(|m| arena_coordinator::store::ScheduledMatch {
                match_id: m.match_id.clone(),
                pairing: m.pairing.clone(),
            })
            .collect();
        let round_byes = byes
            .iter()
            .filter(|(r, _)| *r == round)
            .map(|(_, e)| e.clone())
            .collect();
        assert!(
            store
                .schedule_round(&id, round, matches, round_byes)
                .await
                .unwrap()
        );
    }
    let after = coordinator_on(store.clone(), CoordinatorConfig::default()).await;
    let (status, total) = after.status(&id).await.unwrap();
    assert!(!arena_coordinator::service::is_finished(&status, total));

    // Creating it again (what an organiser would do) and the recovery step
    // both finish the schedule, to the match what creation queues.
    assert_eq!(after.create_tournament(round_robin()).await.unwrap(), id);
    after.recover().await.unwrap();
    let resumed = store.matches(&id).await.unwrap();
    let key =
        |m: &arena_coordinator::store::MatchInfo| (m.match_id.clone(), m.round, m.pairing.clone());
    assert_eq!(
        resumed.iter().map(key).collect::<Vec<_>>(),
        whole.iter().map(key).collect::<Vec<_>>()
    );
    assert_eq!(store.byes(&id).await.unwrap(), byes);
    assert_eq!(store.rounds_scheduled(&id).await.unwrap(), rounds);

    let expected = undisturbed(fresh, round_robin()).await;
    play_out(&after).await;
    assert_eq!(after.standings(&id).await.unwrap().to_json(), expected);
}

/// Polls `done` until it holds or ten seconds pass.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn the_periodic_recovery_step_needs_no_restart(fresh: Fresh<'_>) {
    let (store, id) = swiss_crashed_between_rounds(fresh).await;
    let config = CoordinatorConfig {
        recovery_interval: Duration::from_millis(20),
        ..CoordinatorConfig::default()
    };
    let coordinator = coordinator_on(store.clone(), config).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = Arc::clone(&coordinator);
    let recovery = tokio::spawn(async move {
        running
            .run_recovery(async {
                let _ = stopped.await;
            })
            .await
    });
    eventually("round 1 scheduled", async || {
        store.rounds_scheduled(&id).await.unwrap() == 2
    })
    .await;
    let _ = stop.send(());
    recovery.await.unwrap();
}

async fn a_served_coordinator_recovers_at_start_up(fresh: Fresh<'_>) {
    let (store, id) = swiss_crashed_between_rounds(fresh).await;
    // A long period: only the start-up step can schedule within the test.
    let config = CoordinatorConfig {
        recovery_interval: Duration::from_secs(3600),
        ..CoordinatorConfig::default()
    };
    let coordinator = coordinator_on(store.clone(), config).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(server::serve(
        coordinator,
        Tokens::default(),
        listener,
        None,
        async {
            let _ = stopped.await;
        },
    ));
    eventually("round 1 scheduled at start-up", async || {
        store.rounds_scheduled(&id).await.unwrap() == 2
    })
    .await;
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}
