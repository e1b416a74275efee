//! Leases and reports through the real gRPC services on loopback: what a
//! lease carries (the game's rules and limits, baseline seats), which
//! `ReportResult`s are refused before anything is recorded, who may act on
//! a lease, and what becomes of matches and workers whose attempts keep
//! failing. The store is in memory; no match is played (results are written
//! by hand).

use std::net::SocketAddr;
use std::sync::Arc;

use arena_coordinator::attachments::{Attachments, Blobs};
use arena_coordinator::grpc::Tokens;
use arena_coordinator::server;
use arena_coordinator::service::{
    Coordinator, CoordinatorConfig, MAX_BOARD_BYTES, Quarantine, now_ms,
};
use arena_coordinator::standings::Standings;
use arena_coordinator::store::{Store, WorkerInfo};
use arena_engine::placement_points;
use arena_engine::registry;
use arena_proto::v1::admin_client::AdminClient;
use arena_proto::v1::worker_client::WorkerClient;
use arena_proto::v1::{
    CreateTournamentRequest, Forfeit, HeartbeatRequest, LeaseProgress, LeaseRequest, LeasedMatch,
    MatchSummary, MatchesRequest, ProgressRequest, RegisterRequest, ReleaseWorkerRequest,
    ReportFailureRequest, ReportOutcome, ReportResultRequest, RequeueRequest, SeatResult,
    StandingsRequest, StatusRequest, UploadSubmissionRequest, WorkersRequest,
};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

const TOKEN: &str = "test-admin-token";

/// A coordinator serving on 127.0.0.1:0 until the returned sender is dropped.
struct Served {
    coordinator: Arc<Coordinator>,
    address: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn serve() -> Served {
    serve_with(CoordinatorConfig::default()).await
}

async fn serve_with(config: CoordinatorConfig) -> Served {
    serve_keeping(config, Attachments::default()).await
}

async fn serve_keeping(config: CoordinatorConfig, attachments: Attachments) -> Served {
    let coordinator = Coordinator::with_attachments(Store::memory(), config, attachments);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let tokens = Tokens {
        workers: Default::default(),
        admins: [TOKEN.to_owned()].into(),
    };
    tokio::spawn(server::serve(
        Arc::clone(&coordinator),
        tokens,
        listener,
        None,
        async {
            let _ = stopped.await;
        },
    ));
    Served {
        coordinator,
        address,
        _stop: stop,
    }
}

impl Served {
    async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.address))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    async fn worker(&self) -> WorkerClient<Channel> {
        WorkerClient::new(self.channel().await)
    }

    async fn admin(&self) -> AdminClient<Channel> {
        AdminClient::new(self.channel().await)
    }

    /// Stores one submission per name and returns their hashes.
    async fn submissions(&self, names: &[&str]) -> Vec<String> {
        let mut hashes = Vec::new();
        for name in names {
            let archive = format!("archive of {name}").into_bytes();
            let hash = arena_coordinator::submission_id(&archive);
            self.coordinator
                .store()
                .put_submission(&hash, archive)
                .await
                .unwrap();
            hashes.push(hash);
        }
        hashes
    }
}

fn authed<T>(message: T) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    request
}

/// A round robin of one game per group; over the wire, a bot's path is
/// its uploaded submission's hash.
fn tournament_toml(game: &str, extra: &str, hashes: &[String]) -> String {
    let mut text = format!(
        "name = \"wire\"\ngame = \"{game}\"\nseed = 3\n{extra}\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n"
    );
    for (i, hash) in hashes.iter().enumerate() {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"bot{i}\"\npath = \"{hash}\"\n"
        ));
    }
    text
}

async fn create(served: &Served, toml: String) -> String {
    served
        .admin()
        .await
        .create_tournament(authed(CreateTournamentRequest { spec_toml: toml }))
        .await
        .unwrap()
        .into_inner()
        .tournament_id
}

async fn register(served: &Served, worker_id: &str) {
    served
        .worker()
        .await
        .register(authed(RegisterRequest {
            worker_id: worker_id.into(),
            cores: 1,
            memory_mb: 1024,
            ..RegisterRequest::default()
        }))
        .await
        .unwrap();
}

/// The next match for `worker_id`, `None` when the queue is empty.
async fn lease_for(served: &Served, worker_id: &str) -> Result<Option<LeasedMatch>, Status> {
    Ok(served
        .worker()
        .await
        .lease(authed(LeaseRequest {
            worker_id: worker_id.into(),
        }))
        .await?
        .into_inner()
        .r#match)
}

async fn create_and_lease(served: &Served, toml: String) -> LeasedMatch {
    create(served, toml).await;
    register(served, "w").await;
    lease_for(served, "w")
        .await
        .unwrap()
        .expect("a match is queued")
}

async fn matches(served: &Served, tournament: &str) -> Vec<MatchSummary> {
    served
        .admin()
        .await
        .matches(authed(MatchesRequest {
            tournament_id: tournament.to_owned(),
        }))
        .await
        .unwrap()
        .into_inner()
        .matches
}

async fn fail(served: &Served, worker_id: &str, leased: &LeasedMatch, reason: &str) -> bool {
    served
        .worker()
        .await
        .report_failure(authed(ReportFailureRequest {
            worker_id: worker_id.into(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            reason: reason.into(),
        }))
        .await
        .unwrap()
        .into_inner()
        .requeued
}

/// A faithful report of `leased` with the given ranks.
fn report(leased: &LeasedMatch, ranks: &[u32]) -> ReportResultRequest {
    let points = placement_points(ranks);
    ReportResultRequest {
        worker_id: "w".into(),
        lease_id: leased.lease_id.clone(),
        match_id: leased.match_id.clone(),
        seats: leased
            .seats
            .iter()
            .zip(ranks)
            .zip(points)
            .map(|((seat, &rank), score)| SeatResult {
                submission: seat.submission.clone(),
                baseline: seat.baseline.clone(),
                rank,
                score,
                moves: 10,
                ..SeatResult::default()
            })
            .collect(),
        reason: "general_captured".into(),
        turns: 10,
        ..ReportResultRequest::default()
    }
}

/// Reports `request` and checks the coordinator accepted it.
async fn assert_accepted(served: &Served, request: ReportResultRequest) {
    let outcome = served
        .worker()
        .await
        .report_result(authed(request))
        .await
        .unwrap()
        .into_inner()
        .outcome;
    assert_eq!(outcome, ReportOutcome::Accepted as i32);
}

async fn standings(served: &Served, tournament: &str) -> Standings {
    let json = served
        .admin()
        .await
        .standings(authed(StandingsRequest {
            tournament_id: tournament.to_owned(),
        }))
        .await
        .unwrap()
        .into_inner()
        .json;
    Standings::from_json(&json).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_carries_the_resolved_rules_and_limits() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    let toml = tournament_toml("generals", "[limits]\nmove_ms = 20\n", &hashes);
    let leased = create_and_lease(&served, toml).await;
    let entry = registry::find("generals").unwrap();
    assert_eq!(leased.game, "generals");
    assert_eq!(leased.move_ms, 20, "the file's override");
    assert_eq!(leased.first_move_ms, entry.limits.first_move_ms);
    assert_eq!(leased.fault_limit, entry.limits.fault_limit);
    assert_eq!(leased.reply_cap, entry.limits.reply_cap);
    let rules: arena_engine::Rules = serde_json::from_str(&leased.rules_json).unwrap();
    assert_eq!(rules, entry.rules(&Default::default()).unwrap());
    let mut seated: Vec<&str> = leased.seats.iter().map(|s| s.submission.as_str()).collect();
    seated.sort_unstable();
    let mut expected: Vec<&str> = hashes.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(seated, expected);
    assert!(leased.seats.iter().all(|s| s.baseline.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_that_do_not_fit_the_match_are_refused() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    let leased = create_and_lease(&served, tournament_toml("generals", "", &hashes)).await;
    let mut worker = served.worker().await;

    let good = report(&leased, &[0, 1]);
    let mut three = report(&leased, &[0, 1, 2]);
    three.seats.push(SeatResult {
        submission: hashes[0].clone(),
        rank: 2,
        score: 0.0,
        ..SeatResult::default()
    });
    let mut far = good.clone();
    far.seats[1].rank = 99;
    let mut greedy = good.clone();
    greedy.seats[1].score = 1.0;
    // Each seat's rank and points still agree; only who sits where is wrong.
    let mut swapped = good.clone();
    swapped.seats.swap(0, 1);
    let mut stranger = good.clone();
    stranger.seats[1].submission = "f".repeat(64);
    let mut posing = good.clone();
    posing.seats[0].baseline = "sprawl".into();
    let mut odd_forfeit = good.clone();
    odd_forfeit.seats[1].forfeit_kind = 42;

    for (what, request, needle) in [
        ("a third seat", three, "has 2 seats, the result 3"),
        (
            "rank 99",
            far,
            "seat 1: rank 99 is out of range for 2 seats",
        ),
        (
            "the winner's points for the loser",
            greedy,
            "seat 1: score 1",
        ),
        ("seats swapped", swapped, "seat 0: the match seats"),
        ("another submission", stranger, "seat 1: the match seats"),
        ("submission and baseline", posing, "seat 0: names both"),
        (
            "an unknown forfeit",
            odd_forfeit,
            "seat 1: unknown forfeit kind 42",
        ),
    ] {
        let status = worker.report_result(authed(request)).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
        assert!(
            status.message().contains(needle),
            "{what}: {}",
            status.message()
        );
    }

    // A match id that was never scheduled names no match: NOT_FOUND, not
    // an "accepted" or "stale lease" answer.
    let mut unknown = good.clone();
    unknown.match_id = format!("{}:9:9", leased.tournament_id);
    let status = worker.report_result(authed(unknown)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(
        status.message().contains("no match"),
        "{}",
        status.message()
    );

    // Nothing was recorded: the lease is still current and takes the
    // faithful result, forfeit and all.
    let mut faithful = good.clone();
    faithful.seats[1].forfeit_kind = Forfeit::Crash as i32;
    faithful.reason = "forfeit".into();
    let outcome = worker
        .report_result(authed(faithful))
        .await
        .unwrap()
        .into_inner()
        .outcome;
    assert_eq!(outcome, ReportOutcome::Accepted as i32);
    let table = standings(&served, &leased.tournament_id).await;
    assert_eq!(table.rows.len(), 2);
    let loser = table.row(&leased.seats[1].submission).unwrap();
    assert_eq!(loser.points, 0.0);
    assert_eq!(
        loser.forfeits.get(&arena_engine::Forfeit::Crash).copied(),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baseline_seats_are_leased_by_name_and_score_for_no_one() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    // Two bots for four seats: generals-ffa has baselines to fill the rest.
    let leased = create_and_lease(&served, tournament_toml("generals-ffa", "", &hashes)).await;
    let entry = registry::find("generals-ffa").unwrap();
    assert_eq!(leased.seats.len(), 4);
    assert_eq!(leased.reply_cap, entry.limits.reply_cap);
    assert_eq!(leased.move_ms, entry.limits.move_ms);
    let fill = entry.baselines[0];
    let baselines: Vec<_> = leased
        .seats
        .iter()
        .filter(|s| !s.baseline.is_empty())
        .collect();
    assert_eq!(baselines.len(), 2);
    for seat in baselines {
        assert_eq!(seat.submission, "");
        assert_eq!(seat.baseline, fill);
        assert_eq!(seat.name, format!("baseline:{fill}"));
    }

    // A baseline the match does not have is refused by seat.
    let baseline_seat = leased
        .seats
        .iter()
        .position(|s| !s.baseline.is_empty())
        .unwrap();
    let mut other = report(&leased, &[0, 1, 2, 3]);
    other.seats[baseline_seat].baseline = "crown".into();
    let mut worker = served.worker().await;
    let status = worker.report_result(authed(other)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains(&format!(
            "seat {baseline_seat}: the match seats baseline:{fill}"
        )),
        "{}",
        status.message()
    );

    // Baselines take first and last place; the bots share second.
    let ranks: Vec<u32> = leased
        .seats
        .iter()
        .scan(0, |baselines_seen, seat| {
            Some(if seat.baseline.is_empty() {
                1
            } else {
                *baselines_seen += 1;
                if *baselines_seen == 1 { 0 } else { 3 }
            })
        })
        .collect();
    assert_accepted(&served, report(&leased, &ranks)).await;
    let table = standings(&served, &leased.tournament_id).await;
    let mut rows: Vec<&str> = table.rows.iter().map(|r| r.entrant.as_str()).collect();
    rows.sort_unstable();
    let mut expected: Vec<&str> = hashes.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(rows, expected, "no baseline row");
    for row in &table.rows {
        assert_eq!(row.points, 0.5, "a share of second of four");
        assert_eq!((row.wins, row.draws, row.losses), (0, 0, 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_go_only_to_registered_live_workers() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    create(&served, tournament_toml("generals", "", &hashes)).await;
    // Registered so long ago that it is not alive.
    let stale = WorkerInfo {
        id: "gone".into(),
        cores: 1,
        memory_mb: 1024,
        environment_id: String::new(),
        cached: Vec::new(),
        wasm_runtime: String::new(),
        model_runtime: String::new(),
        slots: 0,
    };
    served
        .coordinator
        .store()
        .register_worker(stale, now_ms() - 3_600_000)
        .await
        .unwrap();
    for (who, worker_id) in [
        ("never registered", "ghost"),
        ("empty id", ""),
        ("silent", "gone"),
    ] {
        let status = lease_for(&served, worker_id).await.unwrap_err();
        assert_eq!(status.code(), Code::FailedPrecondition, "{who}: {status:?}");
        assert!(
            status.message().contains("register first"),
            "{who}: {status:?}"
        );
    }
    // Nothing was leased by the refused calls: the one match is still there.
    register(&served, "w").await;
    assert!(lease_for(&served, "w").await.unwrap().is_some());
    // A heartbeat from a worker that never registered is refused too.
    let status = served
        .worker()
        .await
        .heartbeat(authed(HeartbeatRequest {
            worker_id: "ghost".into(),
            ..HeartbeatRequest::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_ids_are_random_and_only_their_worker_may_use_them() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b", "c"]).await;
    let tournament = create(&served, tournament_toml("generals", "", &hashes)).await;
    register(&served, "w").await;
    register(&served, "intruder").await;
    let leased = lease_for(&served, "w").await.unwrap().unwrap();
    let other = lease_for(&served, "w").await.unwrap().unwrap();
    for id in [&leased.lease_id, &other.lease_id] {
        assert_eq!(id.len(), 32, "128 bits in hex: {id}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        assert!(!id.contains('w'), "the id says nothing of its worker: {id}");
    }
    assert_ne!(leased.lease_id, other.lease_id);

    let mut intruder = served.worker().await;
    let heartbeat = intruder
        .heartbeat(authed(HeartbeatRequest {
            worker_id: "intruder".into(),
            lease_ids: vec![leased.lease_id.clone()],
            ..HeartbeatRequest::default()
        }))
        .await
        .unwrap_err();
    let failure = intruder
        .report_failure(authed(ReportFailureRequest {
            worker_id: "intruder".into(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            reason: "requeue a rival's match".into(),
        }))
        .await
        .unwrap_err();
    let mut forged = report(&leased, &[0, 1]);
    forged.worker_id = "intruder".into();
    let result = intruder.report_result(authed(forged)).await.unwrap_err();
    for (call, status) in [
        ("Heartbeat", heartbeat),
        ("ReportFailure", failure),
        ("ReportResult", result),
    ] {
        assert_eq!(status.code(), Code::PermissionDenied, "{call}: {status:?}");
        assert!(
            status.message().contains("belongs to another worker"),
            "{call}: {}",
            status.message()
        );
    }
    // Nothing changed: the match is still w's first attempt, unfailed, and
    // w's own report is the one accepted.
    let summary = matches(&served, &tournament)
        .await
        .into_iter()
        .find(|m| m.match_id == leased.match_id)
        .unwrap();
    assert_eq!(
        (
            summary.state.as_str(),
            summary.worker.as_str(),
            summary.attempt
        ),
        ("leased", "w", 1)
    );
    assert!(summary.failures.is_empty());
    assert_accepted(&served, report(&leased, &[0, 1])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_whose_attempts_keep_failing_is_stuck_until_requeued() {
    let served = serve_with(CoordinatorConfig {
        max_attempts: 2,
        ..CoordinatorConfig::default()
    })
    .await;
    let hashes = served.submissions(&["a", "b"]).await;
    let tournament = create(&served, tournament_toml("generals", "", &hashes)).await;
    register(&served, "w").await;
    let first = lease_for(&served, "w").await.unwrap().unwrap();
    assert!(fail(&served, "w", &first, "disk full").await, "requeued");
    let second = lease_for(&served, "w").await.unwrap().unwrap();
    assert_eq!(
        (second.match_id.as_str(), second.attempt),
        (first.match_id.as_str(), 2)
    );
    assert!(
        !fail(&served, "w", &second, "disk still full").await,
        "stuck, not requeued"
    );

    // Out of the queue, listed with every attempt's failure, and the
    // tournament is over with it left stuck.
    assert!(lease_for(&served, "w").await.unwrap().is_none());
    let summary = &matches(&served, &tournament).await[0];
    assert_eq!(summary.state, "stuck");
    let failures: Vec<(u32, &str, &str)> = summary
        .failures
        .iter()
        .map(|f| (f.attempt, f.worker.as_str(), f.reason.as_str()))
        .collect();
    assert_eq!(
        failures,
        [(1, "w", "disk full"), (2, "w", "disk still full")]
    );
    let status = served
        .admin()
        .await
        .status(authed(StatusRequest {
            tournament_id: tournament.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((status.stuck, status.done, status.queued), (1, 0, 0));
    assert!(status.finished);
    assert!(
        served
            .coordinator
            .render_metrics()
            .await
            .contains("arena_matches_stuck_total 1")
    );

    // An organiser requeues it; it plays and counts.
    let mut admin = served.admin().await;
    let unknown = admin
        .requeue(authed(RequeueRequest {
            match_id: format!("{tournament}:7:7"),
        }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    admin
        .requeue(authed(RequeueRequest {
            match_id: first.match_id.clone(),
        }))
        .await
        .unwrap();
    let again = admin
        .requeue(authed(RequeueRequest {
            match_id: first.match_id.clone(),
        }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    let third = lease_for(&served, "w").await.unwrap().unwrap();
    assert_eq!(third.attempt, 3);
    assert_accepted(&served, report(&third, &[0, 1])).await;
    assert_eq!(standings(&served, &tournament).await.rows.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_leases_keep_failing_is_quarantined() {
    let served = serve_with(CoordinatorConfig {
        quarantine: Quarantine {
            window: 4,
            failures: 2,
        },
        ..CoordinatorConfig::default()
    })
    .await;
    let hashes = served.submissions(&["a", "b", "c"]).await;
    create(&served, tournament_toml("generals", "", &hashes)).await;
    register(&served, "flaky").await;
    register(&served, "steady").await;
    let first = lease_for(&served, "flaky").await.unwrap().unwrap();
    assert!(fail(&served, "flaky", &first, "sandbox setup failed").await);
    // One failure is under the threshold.
    let second = lease_for(&served, "flaky").await.unwrap().unwrap();
    assert!(fail(&served, "flaky", &second, "sandbox setup failed").await);

    let refused = lease_for(&served, "flaky").await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(refused.message().contains("quarantined"), "{refused:?}");
    let workers = served
        .admin()
        .await
        .workers(authed(WorkersRequest {}))
        .await
        .unwrap()
        .into_inner()
        .workers;
    let flags: Vec<(&str, bool, bool)> = workers
        .iter()
        .map(|w| (w.worker_id.as_str(), w.alive, w.quarantined))
        .collect();
    assert_eq!(flags, [("flaky", true, true), ("steady", true, false)]);
    let metrics = served.coordinator.render_metrics().await;
    assert!(metrics.contains("arena_workers_quarantined 1"), "{metrics}");
    assert!(
        metrics.contains("arena_worker_quarantines_total 1"),
        "{metrics}"
    );
    // The others still play.
    assert!(lease_for(&served, "steady").await.unwrap().is_some());

    served
        .admin()
        .await
        .release_worker(authed(ReleaseWorkerRequest {
            worker_id: "flaky".into(),
        }))
        .await
        .unwrap();
    assert!(lease_for(&served, "flaky").await.unwrap().is_some());
    assert!(
        served
            .coordinator
            .render_metrics()
            .await
            .contains("arena_workers_quarantined 0")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replays_and_logs_go_to_the_blob_store_and_come_back_per_seat() {
    let dir = tempfile::tempdir().unwrap();
    let blobs = arena_blob::BlobStore::open(&dir.path().display().to_string())
        .await
        .unwrap();
    let attachments = Attachments {
        blobs: Blobs::Stored(blobs),
        retention: None,
    };
    let served = serve_keeping(CoordinatorConfig::default(), attachments).await;
    let hashes = served.submissions(&["a", "b"]).await;
    let leased = create_and_lease(&served, tournament_toml("generals", "", &hashes)).await;
    let replay = br#"{"format":"a replay","turns":[1,2,3]}"#.to_vec();
    let request = ReportResultRequest {
        replay: replay.clone(),
        seat_logs: vec![b"seat zero said this".to_vec(), Vec::new()],
        ..report(&leased, &[0, 1])
    };
    assert_accepted(&served, request).await;

    let coordinator = &served.coordinator;
    let id = &leased.match_id;
    assert_eq!(coordinator.replay(id).await.unwrap(), Some(replay.clone()));
    assert_eq!(
        coordinator.seat_log(id, 0).await.unwrap().as_deref(),
        Some(&b"seat zero said this"[..])
    );
    assert_eq!(
        coordinator.seat_log(id, 1).await.unwrap(),
        None,
        "an empty log is not kept"
    );
    assert_eq!(coordinator.seat_log(id, 9).await.unwrap(), None);
    // The store holds only the manifest; the bytes are files of the blob store.
    let slot = coordinator.store().replay(id).await.unwrap().unwrap();
    assert!(
        slot.starts_with(b"{\"attachments\":"),
        "{}",
        String::from_utf8_lossy(&slot)
    );
    let files = walk(dir.path());
    assert_eq!(files, 2, "the replay and one log");
    // The record names the worker that played it.
    let results = coordinator
        .store()
        .results(&id[..id.find(':').unwrap()])
        .await
        .unwrap();
    assert_eq!(results[0].worker, "w");
}

/// Regular files under `dir`, at any depth.
fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { walk(&p) } else { 1 })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_say_how_far_a_running_match_has_got() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    let leased = create_and_lease(&served, tournament_toml("generals", "", &hashes)).await;
    assert_eq!(served.coordinator.progress(&leased.match_id), None);
    let beat = |turn: u32, lease_id: String| HeartbeatRequest {
        worker_id: "w".into(),
        lease_ids: vec![leased.lease_id.clone()],
        progress: vec![LeaseProgress {
            lease_id,
            match_id: leased.match_id.clone(),
            turn,
            ..LeaseProgress::default()
        }],
        ..HeartbeatRequest::default()
    };
    let mut worker = served.worker().await;
    worker
        .heartbeat(authed(beat(17, leased.lease_id.clone())))
        .await
        .unwrap();
    assert_eq!(served.coordinator.progress(&leased.match_id), Some(17));
    // Progress under a lease the heartbeat did not extend says nothing.
    worker
        .heartbeat(authed(beat(99, "not-a-lease".into())))
        .await
        .unwrap();
    assert_eq!(served.coordinator.progress(&leased.match_id), Some(17));
    worker
        .heartbeat(authed(beat(40, leased.lease_id.clone())))
        .await
        .unwrap();
    assert_eq!(served.coordinator.progress(&leased.match_id), Some(40));
    // A finished match has no progress, only a result.
    assert_accepted(&served, report(&leased, &[0, 1])).await;
    assert_eq!(served.coordinator.progress(&leased.match_id), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_are_taken_only_from_the_worker_whose_heartbeat_extended_the_lease() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    let leased = create_and_lease(&served, tournament_toml("generals", "", &hashes)).await;
    let mut worker = served.worker().await;
    let board = |worker_id: &str, turn: u32, board: &[u8]| ProgressRequest {
        worker_id: worker_id.into(),
        progress: vec![LeaseProgress {
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            turn,
            board: board.to_vec(),
        }],
    };
    let live = || served.coordinator.live_match(&leased.match_id);
    // Before any heartbeat the coordinator cannot tell whose match it is.
    worker
        .report_progress(authed(board("w", 5, b"{\"turn\":5}")))
        .await
        .unwrap();
    assert_eq!(live(), None);
    worker
        .heartbeat(authed(HeartbeatRequest {
            worker_id: "w".into(),
            lease_ids: vec![leased.lease_id.clone()],
            progress: vec![LeaseProgress {
                lease_id: leased.lease_id.clone(),
                match_id: leased.match_id.clone(),
                turn: 3,
                ..LeaseProgress::default()
            }],
            ..HeartbeatRequest::default()
        }))
        .await
        .unwrap();
    assert_eq!(live().map(|l| (l.turn, l.board)), Some((3, None)));
    worker
        .report_progress(authed(board("w", 12, b"{\"turn\":12}")))
        .await
        .unwrap();
    let shown = live().expect("the worker's match is live");
    assert_eq!(shown.turn, 12);
    assert_eq!(shown.board.as_deref(), Some(&b"{\"turn\":12}"[..]));
    // Another worker's board, an older one and an oversized one are dropped.
    for (worker_id, turn, bytes) in [
        ("x", 30, b"{\"turn\":30}".to_vec()),
        ("w", 11, b"{\"turn\":11}".to_vec()),
        ("w", 40, vec![b' '; MAX_BOARD_BYTES + 1]),
    ] {
        worker
            .report_progress(authed(board(worker_id, turn, &bytes)))
            .await
            .unwrap();
    }
    let shown = live().unwrap();
    assert_eq!(shown.board.as_deref(), Some(&b"{\"turn\":12}"[..]));
    // The oversized board still said how far the match has got.
    assert_eq!(shown.turn, 40);
    assert_accepted(&served, report(&leased, &[0, 1])).await;
    assert_eq!(live(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_upload_issues_an_entrant_token_for_its_submission() {
    let served = serve().await;
    let mut admin = served.admin().await;
    let mut upload = async |archive: &[u8]| {
        admin
            .upload_submission(authed(UploadSubmissionRequest {
                name: "bot".into(),
                archive: archive.to_vec(),
            }))
            .await
            .unwrap()
            .into_inner()
    };
    let first = upload(b"archive one").await;
    let second = upload(b"archive two").await;
    let again = upload(b"archive one").await;
    assert_eq!(first.hash, again.hash);
    assert_ne!(
        first.entrant_token, again.entrant_token,
        "a fresh token each time"
    );
    let coordinator = &served.coordinator;
    for (uploaded, hash) in [
        (&first, &first.hash),
        (&second, &second.hash),
        (&again, &first.hash),
    ] {
        assert!(uploaded.entrant_token.len() >= 32);
        assert_eq!(
            coordinator
                .entrant_of_token(&uploaded.entrant_token)
                .await
                .unwrap()
                .as_ref(),
            Some(hash)
        );
    }
    assert_eq!(
        coordinator.entrant_of_token(&first.hash).await.unwrap(),
        None
    );
    assert_eq!(coordinator.entrant_of_token("").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejudged_match_is_played_again_and_its_new_result_counts() {
    let served = serve().await;
    let hashes = served.submissions(&["a", "b"]).await;
    let toml = tournament_toml("generals", "", &hashes);
    let leased = create_and_lease(&served, toml).await;
    let tournament = leased.match_id[..leased.match_id.find(':').unwrap()].to_owned();
    let coordinator = &served.coordinator;
    let refused = coordinator.rejudge(&leased.match_id).await.unwrap_err();
    assert!(refused.to_string().contains("no result"), "{refused}");
    assert_accepted(&served, report(&leased, &[0, 1])).await;
    let first = standings(&served, &tournament).await.rows[0].clone();
    assert_eq!((first.games, first.wins), (1, 1));

    coordinator.rejudge(&leased.match_id).await.unwrap();
    // Until the new result lands, the old one still counts.
    assert_eq!(
        coordinator
            .store()
            .results(&tournament)
            .await
            .unwrap()
            .len(),
        1
    );
    let waiting = standings(&served, &tournament).await.rows[0].clone();
    assert_eq!(
        (waiting.name.as_str(), waiting.games, waiting.wins),
        (first.name.as_str(), 1, 1)
    );
    let again = lease_for(&served, "w")
        .await
        .unwrap()
        .expect("queued again");
    assert_eq!(
        (again.match_id.as_str(), again.attempt),
        (leased.match_id.as_str(), 2)
    );
    assert_accepted(&served, report(&again, &[1, 0])).await;
    // The other seat won this time, and the old result counts for nothing.
    let after = standings(&served, &tournament).await;
    assert_ne!(after.rows[0].name, first.name);
    assert_eq!((after.rows[0].games, after.rows[0].wins), (1, 1));
    assert_eq!((after.rows[1].games, after.rows[1].wins), (1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_keeps_how_many_matches_a_worker_plays_at_once() {
    let served = serve().await;
    served
        .worker()
        .await
        .register(authed(RegisterRequest {
            worker_id: "w4".into(),
            cores: 8,
            slots: 4,
            ..RegisterRequest::default()
        }))
        .await
        .unwrap();
    let info = served
        .coordinator
        .store()
        .worker("w4")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((info.cores, info.slots), (8, 4));
}
