//! Leases and reports through the real gRPC services on loopback: what a
//! lease carries (the game's rules and limits, baseline seats), and which
//! `ReportResult`s are refused before anything is recorded. The store is in
//! memory; no match is played (results are written by hand).

use std::net::SocketAddr;
use std::sync::Arc;

use arena_coordinator::grpc::Tokens;
use arena_coordinator::server;
use arena_coordinator::service::{Coordinator, CoordinatorConfig};
use arena_coordinator::standings::Standings;
use arena_coordinator::store::Store;
use arena_engine::placement_points;
use arena_engine::registry;
use arena_proto::v1::admin_client::AdminClient;
use arena_proto::v1::worker_client::WorkerClient;
use arena_proto::v1::{
    CreateTournamentRequest, Forfeit, LeaseRequest, LeasedMatch, RegisterRequest, ReportOutcome,
    ReportResultRequest, SeatResult, StandingsRequest,
};
use tonic::transport::Channel;
use tonic::{Code, Request};

const TOKEN: &str = "test-admin-token";

/// A coordinator serving on 127.0.0.1:0 until the returned sender is dropped.
struct Served {
    coordinator: Arc<Coordinator>,
    address: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn serve() -> Served {
    let coordinator = Coordinator::new(Store::memory(), CoordinatorConfig::default());
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

async fn create_and_lease(served: &Served, toml: String) -> LeasedMatch {
    let mut admin = served.admin().await;
    admin
        .create_tournament(authed(CreateTournamentRequest { spec_toml: toml }))
        .await
        .unwrap();
    let mut worker = served.worker().await;
    worker
        .register(authed(RegisterRequest {
            worker_id: "w".into(),
            cores: 1,
            memory_mb: 1024,
            ..RegisterRequest::default()
        }))
        .await
        .unwrap();
    worker
        .lease(authed(LeaseRequest {
            worker_id: "w".into(),
        }))
        .await
        .unwrap()
        .into_inner()
        .r#match
        .expect("a match is queued")
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
    let outcome = worker
        .report_result(authed(report(&leased, &ranks)))
        .await
        .unwrap()
        .into_inner()
        .outcome;
    assert_eq!(outcome, ReportOutcome::Accepted as i32);
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
