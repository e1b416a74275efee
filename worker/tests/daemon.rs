//! The worker daemon against a scripted coordinator: a small in-process
//! tonic server on 127.0.0.1:0 implementing the Worker service, whose
//! answers each test chooses (UNAVAILABLE for the first reports, a lease
//! that is lost mid-match, a submission that is not a runnable bot). The
//! bots are real processes: plain ones for the report tests, the real
//! sandbox where cores and cgroups must be freed.

mod support;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arena_proto::v1::worker_server::{Worker, WorkerServer};
use arena_proto::v1::{
    FetchSubmissionRequest, Forfeit as WireForfeit, HeartbeatRequest, HeartbeatResponse,
    LeaseRequest, LeaseResponse, LeasedMatch, ProgressRequest, ProgressResponse, RegisterRequest,
    RegisterResponse, ReportFailureRequest, ReportFailureResponse, ReportOutcome,
    ReportResultRequest, ReportResultResponse, Seat, SubmissionChunk,
};
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::daemon::{self, WorkerOptions, WorkerSummary};
use arena_worker::launcher::Launcher;
use arena_worker::metrics::WorkerMetrics;
use arena_worker::{ProcessLauncher, SandboxLauncher, submission};
use tokio_util::sync::CancellationToken;
use tonic::{Code, Request, Response, Status};

const GENERALS: &str = arena_engine::generals::ENTRY.name;

/// What the scripted coordinator answers, and what it was told.
#[derive(Default)]
struct Script {
    /// Matches handed out by Lease, in order.
    leases: Mutex<VecDeque<LeasedMatch>>,
    /// Archives by submission hash.
    archives: BTreeMap<String, Vec<u8>>,
    /// ReportResult answers UNAVAILABLE this many times before accepting.
    unavailable_reports: u32,
    /// ReportResult always answers this code (a refusal or a transient one).
    report_status: Option<Code>,
    /// Heartbeats list every lease as lost once this is set.
    lose: AtomicBool,
    /// Set `lose` after this many ReportResult calls (0: never).
    lose_after_reports: u32,
    result_calls: AtomicU32,
    results: Mutex<Vec<ReportResultRequest>>,
    failures: Mutex<Vec<ReportFailureRequest>>,
    progress: Mutex<Vec<ProgressRequest>>,
}

#[derive(Clone)]
struct Fake(Arc<Script>);

#[tonic::async_trait]
impl Worker for Fake {
    async fn register(
        &self,
        _: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
        Ok(Response::new(RegisterResponse {
            heartbeat_interval_ms: 50,
            lease_ttl_ms: 60_000,
            progress_interval_ms: 50,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        let lost_lease_ids = if self.0.lose.load(Ordering::SeqCst) {
            request.into_inner().lease_ids
        } else {
            Vec::new()
        };
        Ok(Response::new(HeartbeatResponse { lost_lease_ids }))
    }

    async fn lease(&self, _: Request<LeaseRequest>) -> Result<Response<LeaseResponse>, Status> {
        let next = self.0.leases.lock().unwrap().pop_front();
        Ok(Response::new(LeaseResponse { r#match: next }))
    }

    type FetchSubmissionStream =
        tonic::codegen::tokio_stream::Iter<std::vec::IntoIter<Result<SubmissionChunk, Status>>>;

    async fn fetch_submission(
        &self,
        request: Request<FetchSubmissionRequest>,
    ) -> Result<Response<Self::FetchSubmissionStream>, Status> {
        let hash = request.into_inner().hash;
        let archive = self
            .0
            .archives
            .get(&hash)
            .ok_or_else(|| Status::not_found(hash))?;
        let chunks: Vec<_> = archive
            .chunks(64 << 10)
            .map(|c| Ok(SubmissionChunk { data: c.to_vec() }))
            .collect();
        Ok(Response::new(tonic::codegen::tokio_stream::iter(chunks)))
    }

    async fn report_result(
        &self,
        request: Request<ReportResultRequest>,
    ) -> Result<Response<ReportResultResponse>, Status> {
        let call = self.0.result_calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.0.lose_after_reports != 0 && call >= self.0.lose_after_reports {
            self.0.lose.store(true, Ordering::SeqCst);
        }
        if let Some(code) = self.0.report_status {
            return Err(Status::new(code, "scripted"));
        }
        if call <= self.0.unavailable_reports {
            return Err(Status::unavailable("store: broken pipe"));
        }
        self.0.results.lock().unwrap().push(request.into_inner());
        Ok(Response::new(ReportResultResponse {
            outcome: ReportOutcome::Accepted as i32,
        }))
    }

    async fn report_failure(
        &self,
        request: Request<ReportFailureRequest>,
    ) -> Result<Response<ReportFailureResponse>, Status> {
        self.0.failures.lock().unwrap().push(request.into_inner());
        Ok(Response::new(ReportFailureResponse { requeued: true }))
    }

    async fn report_progress(
        &self,
        request: Request<ProgressRequest>,
    ) -> Result<Response<ProgressResponse>, Status> {
        self.0.progress.lock().unwrap().push(request.into_inner());
        Ok(Response::new(ProgressResponse {}))
    }
}

/// Serves `script` on a free loopback port; the server stops with `stop`.
async fn serve(script: Arc<Script>, stop: CancellationToken) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(WorkerServer::new(Fake(script)))
            .serve_with_incoming_shutdown(incoming, stop.cancelled_owned())
            .await
            .unwrap();
    });
    address
}

fn options(coordinator: String, cache: &Path) -> WorkerOptions {
    WorkerOptions {
        coordinator,
        token: "t".to_owned(),
        worker_id: "w-test".to_owned(),
        slots: 1,
        bot_cores: None,
        cores: 1,
        memory_mb: 1024,
        environment_id: String::new(),
        cache_dir: cache.to_owned(),
        idle_poll: Duration::from_millis(20),
        tls_ca: None,
        wasm: None,
        models: None,
    }
}

/// A generals match between two submissions (the tests' second bots end
/// it on turn 0, by exiting or by failing to build).
fn leased(id: &str, seats: &[&str], first_move_ms: u64) -> LeasedMatch {
    LeasedMatch {
        lease_id: format!("lease-{id}"),
        match_id: format!("m-{id}"),
        tournament_id: "t".to_owned(),
        game: GENERALS.to_owned(),
        seed: 3,
        seats: seats
            .iter()
            .map(|hash| Seat {
                submission: (*hash).to_owned(),
                name: format!("bot-{}", &hash[..6]),
                baseline: String::new(),
            })
            .collect(),
        attempt: 1,
        lease_ttl_ms: 60_000,
        move_ms: 500,
        first_move_ms,
        fault_limit: 50,
        rules_json: "{}".to_owned(),
        reply_cap: 4096,
        ..LeasedMatch::default()
    }
}

/// A packed bot of `files` (name, content); its hash and archive.
fn packed(files: &[(&str, &str)]) -> (String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }
    let archive = submission::pack(dir.path()).unwrap();
    (submission::archive_id(&archive), archive)
}

/// The engine's random test bot, packed.
fn random_bot() -> (String, Vec<u8>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/random");
    let archive = submission::pack(&dir).unwrap();
    (submission::archive_id(&archive), archive)
}

/// Runs a worker against `script` until `done` holds (polled, bounded),
/// then drains it; its summary and how long it ran.
async fn run_worker(
    script: Arc<Script>,
    launcher: Arc<dyn Launcher + Send + Sync>,
    cache: &Path,
    done: impl Fn(&Script) -> bool,
    within: Duration,
) -> (WorkerSummary, Duration) {
    let stop_server = CancellationToken::new();
    let address = serve(Arc::clone(&script), stop_server.clone()).await;
    let shutdown = CancellationToken::new();
    let started = Instant::now();
    let worker = tokio::spawn(daemon::run(
        options(address, cache),
        launcher,
        WorkerMetrics::new().unwrap(),
        shutdown.clone(),
    ));
    let deadline = Instant::now() + within;
    while !done(&script) {
        assert!(
            Instant::now() < deadline,
            "the worker did not get there in {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shutdown.cancel();
    let summary = tokio::time::timeout(within, worker)
        .await
        .expect("the worker drains")
        .unwrap()
        .unwrap();
    let took = started.elapsed();
    stop_server.cancel();
    (summary, took)
}

fn plain() -> Arc<dyn Launcher + Send + Sync> {
    Arc::new(ProcessLauncher::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_refused_as_unavailable_is_resent_until_accepted() {
    let cache = tempfile::tempdir().unwrap();
    let (a, archive_a) = random_bot();
    let (b, archive_b) = packed(&[("run.sh", "exit 0\n")]);
    let script = Arc::new(Script {
        leases: Mutex::new([leased("retry", &[&a, &b], 2000)].into()),
        archives: [(a, archive_a), (b, archive_b)].into(),
        unavailable_reports: 3,
        ..Script::default()
    });
    let (summary, _) = run_worker(
        Arc::clone(&script),
        plain(),
        cache.path(),
        |s| !s.results.lock().unwrap().is_empty(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(script.result_calls.load(Ordering::SeqCst), 4);
    let results = script.results.lock().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].match_id, "m-retry");
    assert_eq!(summary.accepted, 1, "{summary:?}");
    assert!(script.failures.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_match_reports_its_board_as_the_engine_sees_it() {
    let cache = tempfile::tempdir().unwrap();
    let (a, archive_a) = random_bot();
    // Never answers: each of its turns waits out the move time until it
    // has faulted out, so the match runs for a second or more.
    let sleeper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/sleeper");
    let archive_b = submission::pack(&sleeper).unwrap();
    let b = submission::archive_id(&archive_b);
    let mut lease = leased("live", &[&a, &b], 2000);
    lease.move_ms = 20;
    let script = Arc::new(Script {
        leases: Mutex::new([lease].into()),
        archives: [(a, archive_a), (b, archive_b)].into(),
        ..Script::default()
    });
    run_worker(
        Arc::clone(&script),
        plain(),
        cache.path(),
        |s| !s.results.lock().unwrap().is_empty(),
        Duration::from_secs(60),
    )
    .await;
    let reports = script.progress.lock().unwrap();
    let boards: Vec<(u32, serde_json::Value)> = reports
        .iter()
        .inspect(|r| assert_eq!(r.worker_id, "w-test"))
        .flat_map(|r| &r.progress)
        .map(|p| {
            assert_eq!(
                (p.lease_id.as_str(), p.match_id.as_str()),
                ("lease-live", "m-live")
            );
            (
                p.turn,
                serde_json::from_slice(&p.board).expect("a board is JSON"),
            )
        })
        .collect();
    assert!(boards.len() >= 2, "{} boards", boards.len());
    let turns: Vec<u32> = boards.iter().map(|(turn, _)| *turn).collect();
    assert!(turns.is_sorted() && turns[0] > 0, "{turns:?}");
    let result_turns = script.results.lock().unwrap()[0].turns;
    for (turn, board) in &boards {
        assert!(*turn <= result_turns, "{turn} > {result_turns}");
        assert_eq!(board["game"], GENERALS, "{board}");
        assert_eq!(board["turn"], *turn, "{board}");
        assert!(board["state"].is_object(), "{board}");
        assert_eq!(board["faults"].as_array().map(Vec::len), Some(2), "{board}");
    }
    // The sleeper's timeouts are counted as the match goes.
    let (_, last) = boards.last().unwrap();
    assert!(last["faults"][1].as_u64() > Some(0), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_result_is_not_resent_and_a_lost_lease_ends_the_resending() {
    // A refusal is an answer: sent once, logged, never again.
    for code in [Code::InvalidArgument, Code::PermissionDenied] {
        let cache = tempfile::tempdir().unwrap();
        let (a, archive_a) = random_bot();
        let (b, archive_b) = packed(&[("run.sh", "exit 0\n")]);
        let script = Arc::new(Script {
            leases: Mutex::new([leased("refused", &[&a, &b], 2000)].into()),
            archives: [(a, archive_a), (b, archive_b)].into(),
            report_status: Some(code),
            ..Script::default()
        });
        let (summary, _) = run_worker(
            Arc::clone(&script),
            plain(),
            cache.path(),
            |s| s.result_calls.load(Ordering::SeqCst) >= 1,
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(script.result_calls.load(Ordering::SeqCst), 1, "{code:?}");
        assert_eq!(summary.dropped, 1, "{summary:?}");
    }

    // Transient errors are resent until the heartbeat says the lease is
    // lost (after the third call here); then the worker stops and drains.
    let cache = tempfile::tempdir().unwrap();
    let (a, archive_a) = random_bot();
    let (b, archive_b) = packed(&[("run.sh", "exit 0\n")]);
    let script = Arc::new(Script {
        leases: Mutex::new([leased("gone", &[&a, &b], 2000)].into()),
        archives: [(a, archive_a), (b, archive_b)].into(),
        report_status: Some(Code::Internal),
        lose_after_reports: 3,
        ..Script::default()
    });
    let (summary, _) = run_worker(
        Arc::clone(&script),
        plain(),
        cache.path(),
        |s| s.result_calls.load(Ordering::SeqCst) >= 3,
        Duration::from_secs(60),
    )
    .await;
    let calls = script.result_calls.load(Ordering::SeqCst);
    assert!((3..=4).contains(&calls), "{calls} ReportResult calls");
    assert_eq!(summary.dropped, 1, "{summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_that_cannot_run_is_its_entrants_build_failed_not_a_requeue() {
    let (good, good_archive) = random_bot();
    // No run.sh at all; an archive entry climbing out through a link.
    let (no_run, no_run_archive) = packed(&[("main.py", "print('hi')\n")]);
    let escaping = {
        let mut builder = tar::Builder::new(Vec::new());
        let mut run = tar::Header::new_gnu();
        run.set_entry_type(tar::EntryType::Regular);
        run.set_size(9);
        run.set_mode(0o755);
        builder
            .append_data(&mut run, "run.sh", &b"exec cat\n"[..])
            .unwrap();
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Symlink);
        link.set_size(0);
        builder.append_link(&mut link, "out", "/tmp").unwrap();
        let mut file = tar::Header::new_gnu();
        file.set_entry_type(tar::EntryType::Regular);
        file.set_size(1);
        file.set_mode(0o644);
        builder
            .append_data(&mut file, "out/planted", &b"x"[..])
            .unwrap();
        builder.into_inner().unwrap()
    };
    let escaping_hash = submission::archive_id(&escaping);
    for (bad, archive, why) in [
        (no_run, no_run_archive, "run.sh"),
        (escaping_hash, escaping, "unpacking"),
    ] {
        let cache = tempfile::tempdir().unwrap();
        let script = Arc::new(Script {
            leases: Mutex::new([leased("bad", &[&good, &bad], 2000)].into()),
            archives: [(good.clone(), good_archive.clone()), (bad.clone(), archive)].into(),
            ..Script::default()
        });
        let (summary, _) = run_worker(
            Arc::clone(&script),
            plain(),
            cache.path(),
            |s| !s.results.lock().unwrap().is_empty() || !s.failures.lock().unwrap().is_empty(),
            Duration::from_secs(60),
        )
        .await;
        assert!(
            script.failures.lock().unwrap().is_empty(),
            "{why}: reported as an infrastructure failure: {:?}",
            script.failures.lock().unwrap()
        );
        let results = script.results.lock().unwrap();
        let seats = &results[0].seats;
        assert_eq!(seats[1].submission, bad);
        assert_eq!(
            seats[1].forfeit_kind,
            WireForfeit::BuildFailed as i32,
            "{why}"
        );
        assert_eq!(seats[0].forfeit_kind, WireForfeit::None as i32, "{why}");
        assert!(seats[0].rank < seats[1].rank, "{why}");
        assert_eq!(summary.accepted, 1, "{why}: {summary:?}");
        assert!(!Path::new("/tmp/planted").exists());
    }
}

/// Host processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<i32> {
    let entries = std::fs::read_dir("/proc").expect("/proc must be readable to look");
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
        })
        .collect()
}

/// Directories under the test's cgroup parent, in every v1 hierarchy.
fn leftover_cgroups(parent: &str) -> Vec<std::path::PathBuf> {
    let mut left = Vec::new();
    for controller in ["memory", "pids", "cpuset", "freezer", "cpuacct", "unified"] {
        let dir = Path::new("/sys/fs/cgroup").join(controller).join(parent);
        if let Ok(entries) = std::fs::read_dir(&dir) {
            left.extend(
                entries
                    .filter_map(|e| e.ok())
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
    }
    left
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_stops_its_match_at_once_unreported_and_frees_the_sandbox() {
    let parent = support::own_parent("arena-daemon-test");
    let cache = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(SandboxConfig {
        limits: Limits {
            memory_bytes: 256 << 20,
            ..Limits::default()
        },
        env: RuntimeEnv::host_default(),
        cgroup_parent: parent.clone(),
        ..SandboxConfig::default()
    })
    .expect("the sandbox needs root and cgroups");
    let cores = CoreAllocator::new(&CoreAllocator::available().unwrap(), 2).unwrap();
    let launcher = Arc::new(SandboxLauncher::new(
        sandbox,
        cores,
        cache.path().join("builds"),
    ));
    let _tidy = Tidy(Arc::clone(&launcher));
    // Both bots think for a minute before their first move.
    let marker = format!("{}", 600_000 + std::process::id());
    let run = format!("exec sleep {marker}\n");
    let (a, archive_a) = packed(&[("run.sh", &run)]);
    let (b, archive_b) = packed(&[("run.sh", &run), ("b", "other")]);
    let script = Arc::new(Script {
        leases: Mutex::new([leased("lost", &[&a, &b], 60_000)].into()),
        archives: [(a, archive_a), (b, archive_b)].into(),
        ..Script::default()
    });
    let stop_server = CancellationToken::new();
    let address = serve(Arc::clone(&script), stop_server.clone()).await;
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(daemon::run(
        options(address, cache.path()),
        Arc::clone(&launcher) as Arc<dyn Launcher + Send + Sync>,
        WorkerMetrics::new().unwrap(),
        shutdown.clone(),
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with(&format!("sleep {marker}")).len() < 2 {
        assert!(Instant::now() < deadline, "the bots never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !leftover_cgroups(&parent).is_empty(),
        "the bots have cgroups"
    );

    // The coordinator says the lease is gone: both bots must go at once,
    // well before their first-move deadline.
    let lost_at = Instant::now();
    script.lose.store(true, Ordering::SeqCst);
    while !processes_with(&format!("sleep {marker}")).is_empty() {
        assert!(
            lost_at.elapsed() < Duration::from_secs(10),
            "the bots of a match whose lease is lost still run"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    while !leftover_cgroups(&parent).is_empty() {
        assert!(
            lost_at.elapsed() < Duration::from_secs(10),
            "cgroups left: {:?}",
            leftover_cgroups(&parent)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shutdown.cancel();
    let summary = tokio::time::timeout(Duration::from_secs(10), worker)
        .await
        .expect("the worker drains at once")
        .unwrap()
        .unwrap();
    stop_server.cancel();
    assert_eq!(summary.abandoned, 1, "{summary:?}");
    assert_eq!(script.result_calls.load(Ordering::SeqCst), 0);
    assert!(script.failures.lock().unwrap().is_empty());
}

/// Removes the test's cgroup parent, even when the test fails, and checks
/// that nothing was left in it (see [`support::remove_parent`]).
struct Tidy(Arc<SandboxLauncher>);

impl Drop for Tidy {
    fn drop(&mut self) {
        support::remove_parent(&self.0);
    }
}
