//! `arena bench coordinator`: what the coordinator sustains on each store
//! it can keep a tournament in. `--store embedded` measures the on-disk
//! store `arena run` uses (a fresh state directory in the temp dir,
//! removed when the bench ends, also on an error); `--store redis` a real
//! `redis-server` of the bench's own (a free loopback port, files in a
//! temp dir, killed and removed likewise); `--store both` (the default)
//! measures the embedded store and then Redis, one after the other, and
//! shows the two side by side. Per store, two figures:
//!
//! - the time to queue a round robin of `--entrants` entrants (1,000 by
//!   default: 499,500 two-seat matches), from `create_tournament` to every
//!   round stored (for the embedded store: durably on disk);
//! - lease, heartbeat and result operations per second: `--workers`
//!   simulated workers (tonic clients over loopback to an in-process gRPC
//!   server) each register, then lease a match, heartbeat its lease and
//!   report a synthetic valid result, over and over, for `--seconds`. The
//!   matches are the round robin's, so every lease works against a long
//!   queue and a large tournament, as a real one would.
//!
//! What queueing costs in space is measured where each store keeps it:
//! Redis's `used_memory` growth, and the state file's size after queueing
//! (and its growth) for the embedded store. Only Redis has the CPU seconds
//! of a server process of its own.
//!
//! # JSON (`--json`)
//!
//! One object: the plan (`entrants`, `workers`, `connections`), `stores`
//! (the stores measured, in order), and one object per store measured,
//! keyed by its name (`"embedded"`, `"redis"`), each with the figures'
//! keys below. When Redis was measured, its figures are also repeated at
//! the top level under the names they had before the bench measured more
//! than Redis (`ops_per_second`, `redis_cpu_s`, ...), so a reader of the
//! old document keeps working; new readers should read `redis.*`.
//!
//! Keys of every store: `entrants`, `workers`, `connections`,
//! `round_robin_matches`, `round_robin_queue_s`,
//! `round_robin_queue_matches_per_second`, `duration_s`, `ops`,
//! `ops_per_second`, `lease_ops_per_second`, `heartbeat_ops_per_second`,
//! `result_ops_per_second`, `matches_played`. Redis only:
//! `redis_bytes_per_10000_queued_matches`, `redis_cpu_s`,
//! `ops_per_redis_cpu_second`. Embedded only: `state_file_bytes` (after
//! queueing), `state_file_bytes_per_10000_queued_matches` (what queueing
//! added to the file).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use arena_coordinator::domain::Format;
use arena_coordinator::grpc::Tokens;
use arena_coordinator::server;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::store::{DISK_FILE_NAME, LiveBoard, Store};
use arena_engine::Rules;
use arena_engine::registry;
use arena_proto::v1::worker_client::WorkerClient;
use arena_proto::v1::{
    HeartbeatRequest, LeaseRequest, LeasedMatch, RegisterRequest, ReportOutcome,
    ReportResultRequest, SeatResult,
};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Channel, Endpoint};

use crate::cli::BenchStore;

/// The bearer token the simulated workers present.
const TOKEN: &str = "arena-bench-coordinator";

/// What to measure, from the command line.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Entrants of the round robin that is queued (and then played from).
    pub entrants: usize,
    /// Simulated workers playing at once.
    pub workers: usize,
    /// HTTP/2 connections the workers share (each carries many calls at once).
    pub connections: usize,
    /// How long the workers play.
    pub seconds: f64,
}

/// One store the bench measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Embedded,
    Redis,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Embedded => "embedded",
            Backend::Redis => "redis",
        }
    }
}

pub fn run(plan: Plan, store: BenchStore, json: bool) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(plan.entrants >= 2, "a round robin needs two entrants");
    anyhow::ensure!(plan.workers >= 1, "at least one worker");
    anyhow::ensure!(
        plan.seconds.is_finite() && plan.seconds > 0.0,
        "--seconds must be a positive number"
    );
    let backends: &[Backend] = match store {
        BenchStore::Embedded => &[Backend::Embedded],
        BenchStore::Redis => &[Backend::Redis],
        BenchStore::Both => &[Backend::Embedded, Backend::Redis],
    };
    let mut measured = Vec::with_capacity(backends.len());
    for &backend in backends {
        let figures = match backend {
            Backend::Embedded => measure_embedded(plan),
            Backend::Redis => measure_redis(plan),
        }
        .with_context(|| format!("measuring the {} store", backend.name()))?;
        measured.push(figures);
    }
    if json {
        println!("{}", to_json(plan, &measured));
    } else {
        print!("{}", table(plan, &measured));
    }
    Ok(ExitCode::SUCCESS)
}

/// The embedded store in a fresh state directory, removed afterwards.
fn measure_embedded(plan: Plan) -> anyhow::Result<Figures> {
    let dir = StateDir::create()?;
    let runtime = crate::distributed::runtime()?;
    let figures = runtime.block_on(async {
        let store = Store::open_dir(dir.path())
            .with_context(|| format!("opening the embedded store in {}", dir.path().display()))?;
        measure(plan, store, Probe::Embedded(dir.path())).await
    });
    // Every clone of the store goes with the runtime, which closes the
    // file, before its directory is removed.
    drop(runtime);
    dir.remove()?;
    figures
}

/// A `redis-server` of the bench's own, stopped afterwards.
fn measure_redis(plan: Plan) -> anyhow::Result<Figures> {
    let redis = RedisServer::start()?;
    let runtime = crate::distributed::runtime()?;
    let figures = runtime.block_on(async {
        let url = redis.url();
        let store = Store::redis(&url)
            .await
            .with_context(|| format!("connecting to {url}"))?;
        measure(plan, store, Probe::Redis(&redis)).await
    });
    // The server and clients stop with the runtime, before Redis does.
    drop(runtime);
    redis.stop()?;
    figures
}

/// What one store measured.
struct Figures {
    backend: Backend,
    /// Matches the round robin queued.
    matches: u64,
    /// Seconds from `create_tournament` to every round queued.
    queue_s: f64,
    /// What queueing added to the store's size: Redis's `used_memory`, or
    /// the embedded store's file, in bytes.
    queue_bytes: u64,
    /// The embedded store's file after queueing, in bytes.
    state_file_bytes: Option<u64>,
    /// CPU seconds redis-server spent while the workers played.
    redis_cpu_s: Option<f64>,
    /// Seconds the workers played.
    played_s: f64,
    leases: u64,
    heartbeats: u64,
    reports: u64,
}

impl Figures {
    fn ops(&self) -> u64 {
        self.leases + self.heartbeats + self.reports
    }

    fn bytes_per_10000_queued(&self) -> f64 {
        self.queue_bytes as f64 * 10_000.0 / self.matches.max(1) as f64
    }

    fn per_second(&self, count: u64) -> f64 {
        count as f64 / self.played_s
    }

    fn queued_per_second(&self) -> f64 {
        self.matches as f64 / self.queue_s
    }

    fn ops_per_redis_cpu_second(&self) -> Option<f64> {
        self.redis_cpu_s
            .map(|cpu| self.ops() as f64 / cpu.max(1e-9))
    }

    fn to_json(&self, plan: Plan) -> serde_json::Map<String, serde_json::Value> {
        let mut figures = serde_json::json!({
            "entrants": plan.entrants,
            "round_robin_matches": self.matches,
            "round_robin_queue_s": self.queue_s,
            "round_robin_queue_matches_per_second": self.queued_per_second(),
            "workers": plan.workers,
            "connections": plan.connections,
            "duration_s": self.played_s,
            "ops": self.ops(),
            "ops_per_second": self.per_second(self.ops()),
            "lease_ops_per_second": self.per_second(self.leases),
            "heartbeat_ops_per_second": self.per_second(self.heartbeats),
            "result_ops_per_second": self.per_second(self.reports),
            "matches_played": self.reports,
        });
        let object = figures
            .as_object_mut()
            .expect("json! of an object literal is an object");
        match self.backend {
            Backend::Redis => {
                object.insert(
                    "redis_bytes_per_10000_queued_matches".into(),
                    self.bytes_per_10000_queued().into(),
                );
                if let (Some(cpu), Some(per_cpu)) =
                    (self.redis_cpu_s, self.ops_per_redis_cpu_second())
                {
                    object.insert("redis_cpu_s".into(), cpu.into());
                    object.insert("ops_per_redis_cpu_second".into(), per_cpu.into());
                }
            }
            Backend::Embedded => {
                if let Some(bytes) = self.state_file_bytes {
                    object.insert("state_file_bytes".into(), bytes.into());
                }
                object.insert(
                    "state_file_bytes_per_10000_queued_matches".into(),
                    self.bytes_per_10000_queued().into(),
                );
            }
        }
        std::mem::take(object)
    }
}

/// The whole JSON document (see the module docs).
fn to_json(plan: Plan, measured: &[Figures]) -> serde_json::Value {
    let mut document = serde_json::Map::new();
    document.insert("entrants".into(), plan.entrants.into());
    document.insert("workers".into(), plan.workers.into());
    document.insert("connections".into(), plan.connections.into());
    document.insert(
        "stores".into(),
        measured.iter().map(|f| f.backend.name()).collect(),
    );
    for figures in measured {
        let object = figures.to_json(plan);
        if figures.backend == Backend::Redis {
            // The document as it was when only Redis was measured.
            for (key, value) in &object {
                document.insert(key.clone(), value.clone());
            }
        }
        document.insert(figures.backend.name().into(), object.into());
    }
    document.into()
}

/// The figures as a table, one column per store measured.
fn table(plan: Plan, measured: &[Figures]) -> String {
    const MIB: f64 = (1 << 20) as f64;
    let matches = measured.first().map_or(0, |f| f.matches);
    let mut out = format!(
        "round robin of {} entrants ({matches} matches), then {} workers over {} \
         connections for {:.1} s, per store:\n",
        plan.entrants, plan.workers, plan.connections, plan.seconds
    );
    let both = |f: &dyn Fn(&Figures) -> String| -> Vec<String> { measured.iter().map(f).collect() };
    let only = |backend: Backend, f: &dyn Fn(&Figures) -> Option<String>| -> Vec<String> {
        measured
            .iter()
            .map(|m| {
                (m.backend == backend)
                    .then(|| f(m))
                    .flatten()
                    .unwrap_or_else(|| "-".to_owned())
            })
            .collect()
    };
    let rows: Vec<(&str, Vec<String>)> = vec![
        (
            "",
            measured
                .iter()
                .map(|f| f.backend.name().to_owned())
                .collect(),
        ),
        (
            "queue the round robin (s)",
            both(&|f| format!("{:.2}", f.queue_s)),
        ),
        (
            "matches queued per s",
            both(&|f| format!("{:.0}", f.queued_per_second())),
        ),
        (
            "state file after queueing (MiB)",
            only(Backend::Embedded, &|f| {
                f.state_file_bytes.map(|b| format!("{:.1}", b as f64 / MIB))
            }),
        ),
        (
            "state file per 10,000 queued (MiB)",
            only(Backend::Embedded, &|f| {
                Some(format!("{:.2}", f.bytes_per_10000_queued() / MIB))
            }),
        ),
        (
            "Redis memory per 10,000 queued (MiB)",
            only(Backend::Redis, &|f| {
                Some(format!("{:.2}", f.bytes_per_10000_queued() / MIB))
            }),
        ),
        ("played (s)", both(&|f| format!("{:.1}", f.played_s))),
        (
            "ops/s (lease + heartbeat + result)",
            both(&|f| format!("{:.0}", f.per_second(f.ops()))),
        ),
        (
            "  lease/s",
            both(&|f| format!("{:.0}", f.per_second(f.leases))),
        ),
        (
            "  heartbeat/s",
            both(&|f| format!("{:.0}", f.per_second(f.heartbeats))),
        ),
        (
            "  result/s",
            both(&|f| format!("{:.0}", f.per_second(f.reports))),
        ),
        ("matches played", both(&|f| f.reports.to_string())),
        (
            "redis-server CPU (s)",
            only(Backend::Redis, &|f| {
                f.redis_cpu_s.map(|s| format!("{s:.2}"))
            }),
        ),
        (
            "ops per Redis CPU second",
            only(Backend::Redis, &|f| {
                f.ops_per_redis_cpu_second().map(|o| format!("{o:.0}"))
            }),
        ),
    ];
    let label_width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut widths = vec![0; measured.len()];
    for (_, cells) in &rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for (label, cells) in &rows {
        // A row only one store has, when only the other was measured.
        if !label.is_empty() && cells.iter().all(|c| c == "-") {
            continue;
        }
        let mut line = format!("{label:<label_width$}");
        for (cell, width) in cells.iter().zip(&widths) {
            line.push_str(&format!("  {cell:>width$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Where a store's size and its server's CPU time are read.
enum Probe<'a> {
    /// The embedded store's state directory.
    Embedded(&'a Path),
    /// The Redis server.
    Redis(&'a RedisServer),
}

impl Probe<'_> {
    fn backend(&self) -> Backend {
        match self {
            Probe::Embedded(_) => Backend::Embedded,
            Probe::Redis(_) => Backend::Redis,
        }
    }

    /// Redis's `used_memory`, or the size of the embedded store's file.
    fn size(&self) -> anyhow::Result<u64> {
        match self {
            Probe::Embedded(dir) => {
                let file = dir.join(DISK_FILE_NAME);
                Ok(std::fs::metadata(&file)
                    .with_context(|| format!("reading the size of {}", file.display()))?
                    .len())
            }
            Probe::Redis(redis) => redis.used_memory(),
        }
    }

    /// CPU seconds of the store's own server process, if it has one.
    fn cpu_seconds(&self) -> anyhow::Result<Option<f64>> {
        match self {
            Probe::Embedded(_) => Ok(None),
            Probe::Redis(redis) => Ok(Some(redis.cpu_seconds()?)),
        }
    }
}

async fn measure(plan: Plan, store: Store, probe: Probe<'_>) -> anyhow::Result<Figures> {
    // The production defaults, quarantine bookkeeping included.
    let coordinator = Coordinator::new(store.clone(), CoordinatorConfig::default());
    let entrants = upload_entrants(&store, plan.entrants).await?;
    let entry = registry::find(registry::DEFAULT_GAME)?;
    let size_before = probe.size()?;
    let started = Instant::now();
    let id = coordinator
        .create_tournament(NewTournament {
            name: "bench coordinator".into(),
            game: entry.name.into(),
            seats: 2,
            base_seed: 7,
            format: Format::RoundRobin {
                cycles: 1,
                games_per_pairing: 1,
            },
            rules: Rules::default(),
            limits: entry.limits,
            entrants,
            environment: None,
            teams: None,
            wasm_runtime: None,
            model_runtime: None,
            live_board: LiveBoard::default(),
        })
        .await
        .context("creating the round robin")?;
    let queue_s = started.elapsed().as_secs_f64();
    let size_after = probe.size()?;
    let queue_bytes = size_after.saturating_sub(size_before);
    let (status, _) = coordinator.status(&id).await?;
    let matches = status.total as u64;
    anyhow::ensure!(
        status.queued as u64 == matches && matches > 0,
        "the round robin queued {} of {matches} matches",
        status.queued
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the bench's gRPC listener")?;
    let addr = listener.local_addr()?;
    let tokens = Tokens {
        workers: [TOKEN.to_owned()].into(),
        admins: Default::default(),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server::serve(
        Arc::clone(&coordinator),
        tokens,
        listener,
        None,
        async {
            let _ = stopped.await;
        },
    ));
    let cpu_before = probe.cpu_seconds()?;
    let played = play(plan, addr).await;
    let cpu_after = probe.cpu_seconds()?;
    let _ = stop.send(());
    serving
        .await
        .context("the gRPC server task")?
        .context("serving")?;
    let (leases, heartbeats, reports, played_s) = played?;
    let backend = probe.backend();
    Ok(Figures {
        backend,
        matches,
        queue_s,
        queue_bytes,
        state_file_bytes: (backend == Backend::Embedded).then_some(size_after),
        redis_cpu_s: cpu_before
            .zip(cpu_after)
            .map(|(before, after)| after - before),
        played_s,
        leases,
        heartbeats,
        reports,
    })
}

/// A fresh directory for the embedded store, in the temp dir: made new
/// (never one that was there before), removed on drop (an error or panic
/// midway); [`StateDir::remove`] does the same and reports what failed.
struct StateDir {
    path: Option<PathBuf>,
}

impl StateDir {
    fn create() -> anyhow::Result<StateDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "arena-bench-embedded-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(StateDir { path: Some(path) })
    }

    fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    fn remove(mut self) -> anyhow::Result<()> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> anyhow::Result<()> {
        if let Some(path) = self.path.take() {
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("removing {}", path.display()))?;
        }
        Ok(())
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        if let Err(e) = self.remove_now() {
            crate::messages::say!("arena bench coordinator: {e:#}");
        }
    }
}

/// Stores `count` distinct tiny archives; returns (name, hash) per entrant.
async fn upload_entrants(store: &Store, count: usize) -> anyhow::Result<Vec<(String, String)>> {
    let mut entrants = Vec::with_capacity(count);
    for i in 0..count {
        let bytes = format!("arena bench entrant {i}").into_bytes();
        let hash = arena_coordinator::submission_id(&bytes);
        store.put_submission(&hash, bytes).await?;
        entrants.push((format!("bot-{i}"), hash));
    }
    Ok(entrants)
}

/// Operations counted over all workers.
#[derive(Default)]
struct Counts {
    leases: AtomicU64,
    heartbeats: AtomicU64,
    reports: AtomicU64,
}

/// Runs the workers for the plan's duration; returns the operation counts
/// and the seconds they took.
async fn play(plan: Plan, addr: SocketAddr) -> anyhow::Result<(u64, u64, u64, f64)> {
    let url = format!("http://{addr}");
    let mut channels = Vec::new();
    for _ in 0..plan.connections.max(1) {
        let channel = Endpoint::from_shared(url.clone())?
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .with_context(|| format!("connecting to {url}"))?;
        channels.push(channel);
    }
    let bearer: MetadataValue<Ascii> = format!("Bearer {TOKEN}").parse()?;
    let counts = Arc::new(Counts::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(plan.seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..plan.workers {
        let client = WorkerClient::new(channels[w % channels.len()].clone());
        let worker = SimulatedWorker {
            id: format!("bench-worker-{w}"),
            client,
            bearer: bearer.clone(),
        };
        tasks.spawn(worker.run(deadline, Arc::clone(&counts)));
    }
    while let Some(done) = tasks.join_next().await {
        done.context("a simulated worker panicked")??;
    }
    let played_s = started.elapsed().as_secs_f64();
    Ok((
        counts.leases.load(Ordering::Relaxed),
        counts.heartbeats.load(Ordering::Relaxed),
        counts.reports.load(Ordering::Relaxed),
        played_s,
    ))
}

/// One worker: leases, heartbeats the lease once and reports a result.
struct SimulatedWorker {
    id: String,
    client: WorkerClient<Channel>,
    bearer: MetadataValue<Ascii>,
}

impl SimulatedWorker {
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", self.bearer.clone());
        request
    }

    async fn run(mut self, deadline: Instant, counts: Arc<Counts>) -> anyhow::Result<()> {
        let register = self.request(RegisterRequest {
            worker_id: self.id.clone(),
            cores: 1,
            memory_mb: 512,
            ..Default::default()
        });
        self.client.register(register).await?;
        while Instant::now() < deadline {
            let lease = self.request(LeaseRequest {
                worker_id: self.id.clone(),
            });
            let leased = self.client.lease(lease).await?.into_inner().r#match;
            counts.leases.fetch_add(1, Ordering::Relaxed);
            let Some(leased) = leased else {
                // The queue ran dry: every match is played.
                return Ok(());
            };
            let heartbeat = self.request(HeartbeatRequest {
                worker_id: self.id.clone(),
                lease_ids: vec![leased.lease_id.clone()],
                cached_builds: Vec::new(),
                progress: Vec::new(),
            });
            let lost = self.client.heartbeat(heartbeat).await?.into_inner();
            counts.heartbeats.fetch_add(1, Ordering::Relaxed);
            anyhow::ensure!(
                lost.lost_lease_ids.is_empty(),
                "lease {} was lost",
                leased.lease_id
            );
            let report = self.request(synthetic_result(&self.id, &leased));
            let outcome = self.client.report_result(report).await?.into_inner();
            counts.reports.fetch_add(1, Ordering::Relaxed);
            anyhow::ensure!(
                outcome.outcome == ReportOutcome::Accepted as i32,
                "the result of {} was not accepted: outcome {}",
                leased.match_id,
                outcome.outcome
            );
        }
        Ok(())
    }
}

/// A valid result for a two-seat match: the seat named by the match id's
/// parity wins, so the same match always ends the same way.
pub fn synthetic_result(worker: &str, leased: &LeasedMatch) -> ReportResultRequest {
    let winner = leased.match_id.bytes().map(u32::from).sum::<u32>() % 2;
    let seats = leased
        .seats
        .iter()
        .enumerate()
        .map(|(seat, s)| {
            let rank = u32::from(seat as u32 != winner);
            SeatResult {
                submission: s.submission.clone(),
                baseline: s.baseline.clone(),
                rank,
                score: if rank == 0 { 1.0 } else { 0.0 },
                moves: 1,
                ..Default::default()
            }
        })
        .collect();
    ReportResultRequest {
        worker_id: worker.to_owned(),
        lease_id: leased.lease_id.clone(),
        match_id: leased.match_id.clone(),
        seats,
        reason: "bench".into(),
        turns: 1,
        replay: Vec::new(),
        duration_s: 0.0,
        seat_logs: Vec::new(),
    }
}

/// A `redis-server` of the bench's own: persistence off, on a loopback port
/// that was free a moment before, its files in a temp dir. Killed and its
/// dir removed on drop (an error or panic midway); [`RedisServer::stop`]
/// does the same and reports what failed.
struct RedisServer {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
}

impl RedisServer {
    /// How long a fresh server may take to answer PING.
    const STARTUP: Duration = Duration::from_secs(20);

    fn start() -> anyhow::Result<RedisServer> {
        let dir = std::env::temp_dir().join(format!("arena-bench-redis-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        // Bind port 0 for a free port and let it go for redis-server: the
        // gap is tiny, and a clash fails the start below visibly.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free loopback port")?
            .port();
        let mut server = RedisServer {
            child: None,
            dir,
            port,
        };
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&server.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting redis-server (is it installed?)")?;
        server.child = Some(child);
        server.wait_ready()?;
        Ok(server)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Polls PING until it answers; the pause only keeps the loop from spinning.
    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Self::STARTUP;
        loop {
            if self.ping() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                anyhow::bail!("redis-server exited with {status} on port {}", self.port);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "redis-server did not answer PING within {:?}",
                Self::STARTUP
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// User plus system CPU time redis-server has used so far, in seconds
    /// (`/proc/PID/stat`, fields 14 and 15, in clock ticks).
    fn cpu_seconds(&self) -> anyhow::Result<f64> {
        let pid = self
            .child
            .as_ref()
            .context("redis-server is not running")?
            .id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .with_context(|| format!("reading /proc/{pid}/stat"))?;
        // The command name (field 2) is parenthesised and may hold spaces.
        let after_name = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("an unexpected /proc/PID/stat")?;
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let ticks = |i: usize| -> anyhow::Result<f64> {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .context("an unexpected /proc/PID/stat")
        };
        // /proc counts in USER_HZ, which Linux fixes at 100 for userspace.
        const TICKS_PER_SECOND: f64 = 100.0;
        // Fields 14 and 15 of the line are the 12th and 13th after the name.
        Ok((ticks(11)? + ticks(12)?) / TICKS_PER_SECOND)
    }

    /// `used_memory` from `INFO memory`, in bytes.
    fn used_memory(&self) -> anyhow::Result<u64> {
        let mut stream =
            TcpStream::connect(("127.0.0.1", self.port)).context("connecting to redis-server")?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(b"INFO memory\r\n")?;
        // A bulk string: `$<length>\r\n<text>\r\n`.
        let mut reply = Vec::new();
        let mut chunk = [0u8; 4096];
        let text = loop {
            let n = stream.read(&mut chunk).context("reading INFO memory")?;
            anyhow::ensure!(n > 0, "redis-server closed the connection during INFO");
            reply.extend_from_slice(&chunk[..n]);
            let as_text = String::from_utf8_lossy(&reply);
            if let Some((header, body)) = as_text.split_once("\r\n")
                && let Some(len) = header
                    .strip_prefix('$')
                    .and_then(|l| l.parse::<usize>().ok())
                && body.len() >= len
            {
                break body[..len].to_owned();
            }
        };
        text.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .context("no used_memory in INFO memory")
    }

    fn ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }

    /// Kills the server, reaps it and removes its directory.
    fn stop(mut self) -> anyhow::Result<()> {
        self.kill()
    }

    fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill().context("killing redis-server")?;
            child.wait().context("reaping redis-server")?;
        }
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)
                .with_context(|| format!("removing {}", self.dir.display()))?;
        }
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Err(e) = self.kill() {
            crate::messages::say!("arena bench coordinator: {e:#}");
        }
    }
}
