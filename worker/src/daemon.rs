//! The worker daemon: pulls matches from a coordinator and plays them.
//!
//! It registers, then keeps `slots` matches in flight: lease one, fetch its
//! submissions by hash (cached on disk, checked against the hash), play it
//! with the match runner on a blocking thread, report the result with its
//! lease id. A heartbeat task extends the leases in flight. On shutdown it
//! stops leasing, finishes what it started, and exits. A match it cannot
//! play for reasons of its own (a sandbox failure, an unknown game) is
//! reported as an infrastructure failure, so the coordinator requeues it; a
//! submission that is not a runnable bot is its entrant's `build_failed`
//! (see [`crate::leased`]).
//!
//! Reports are resent on transient errors until the coordinator answers,
//! refuses them, or the lease is gone ([`crate::delivery`]). A lease the
//! coordinator says is lost ends its match at once: the bots are killed, the
//! cores go back, and nothing is reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use arena_engine::registry::{self, FuelLimits, Limits};
use arena_engine::{Forfeit, Match, Rules};
use arena_proto::v1::worker_client::WorkerClient;
use arena_proto::v1::{
    FetchSubmissionRequest, Forfeit as WireForfeit, HeartbeatRequest, LeaseProgress, LeaseRequest,
    LeasedMatch, RegisterRequest, ReportFailureRequest, ReportOutcome, ReportResultRequest,
    SeatResult,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::{Channel, Endpoint};
use tracing::Instrument;

use crate::delivery::{self, Delivery, LeaseWatch};
use crate::launcher::{BotSpec, Launcher};
use crate::leased::{Abandon, LeasedLauncher};
use crate::metrics::WorkerMetrics;
use crate::referee::play_match;
use crate::report::MatchReport;
use crate::runner::{RunnerConfig, SeatSpec};
use crate::submission;

/// Largest submission archive a worker accepts: the limit every path a
/// submission takes applies ([`arena_proto::MAX_SUBMISSION_BYTES`]).
pub const MAX_ARCHIVE_BYTES: usize = arena_proto::MAX_SUBMISSION_BYTES as usize;

#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// `http://host:port` of the coordinator.
    pub coordinator: String,
    /// Bearer token admitting this worker.
    pub token: String,
    pub worker_id: String,
    /// Matches played at once, at most.
    pub slots: usize,
    /// Cores bots may be pinned to, one each, when the launcher gives bots
    /// dedicated cores; `None` in shared-core mode. A leased match waits
    /// until one core per bot process is free, so matches of different seat
    /// counts share the worker without oversubscribing it; a match with more
    /// bots than this plays with the extra bots sharing (logged).
    pub bot_cores: Option<usize>,
    /// Cores and memory announced to the coordinator.
    pub cores: u32,
    pub memory_mb: u64,
    pub environment_id: String,
    /// Where fetched submissions are kept.
    pub cache_dir: PathBuf,
    /// How long to wait before asking again when nothing is queued.
    pub idle_poll: Duration,
    /// PEM certificate(s) to trust for an `https://` coordinator (no system
    /// roots are built in, so TLS needs this).
    pub tls_ca: Option<Vec<u8>>,
    /// How this worker plays WebAssembly seats; `None` when it cannot (it
    /// then announces no wasm runtime and is never given such a match).
    pub wasm: Option<std::sync::Arc<crate::seat::wasm::WasmSupport>>,
    /// How this worker plays model-graph seats; `None` when it cannot (it
    /// then announces no model runtime and is never given such a match).
    pub models: Option<std::sync::Arc<crate::seat::model::ModelSupport>>,
}

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("invalid coordinator address {0:?} (expected http://HOST:PORT or https://HOST:PORT)")]
    Address(String),
    #[error("invalid token")]
    Token,
    #[error("cannot reach the coordinator at {address}")]
    Connect {
        address: String,
        source: tonic::transport::Error,
    },
    #[error("the coordinator refused {call}")]
    Rpc {
        call: &'static str,
        source: tonic::Status,
    },
}

/// What a worker did before it stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub played: u64,
    pub accepted: u64,
    pub dropped: u64,
    pub failed: u64,
    /// Matches stopped unreported because their lease was lost.
    pub abandoned: u64,
}

/// What the worker knows of one lease in flight.
struct LeaseState {
    /// Cancelled when a heartbeat answer lists the lease as lost.
    lost: CancellationToken,
    /// When the last heartbeat that extended the lease was sent (or the
    /// lease was granted): the lease lives at least `ttl` from then.
    renewed: Instant,
    /// How long the lease lives without a heartbeat.
    ttl: Duration,
    /// Its match, and the turns it has played, sent with heartbeats for
    /// live pages.
    match_id: String,
    progress: Arc<AtomicU32>,
}

/// The leases in flight, by lease id; the heartbeat task renews them.
type InFlight = Arc<Mutex<BTreeMap<String, LeaseState>>>;

/// One lease as a report's delivery sees it.
struct Watch<'a> {
    in_flight: &'a InFlight,
    lease_id: &'a str,
    lost: CancellationToken,
}

impl LeaseWatch for Watch<'_> {
    fn gone(&self) -> Option<&'static str> {
        if self.lost.is_cancelled() {
            return Some("the coordinator says it is lost");
        }
        let in_flight = lock(self.in_flight);
        let state = in_flight.get(self.lease_id)?;
        (state.renewed.elapsed() > state.ttl)
            .then_some("its TTL has passed since the last heartbeat that extended it")
    }

    async fn lost(&self) {
        self.lost.cancelled().await
    }
}

/// Adds `authorization: Bearer <token>` to every call (the worker's client
/// here, the CLI's admin client).
#[derive(Clone)]
pub struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl Bearer {
    /// Fails when the token cannot be sent as a header value.
    pub fn new(token: &str) -> Result<Self, tonic::metadata::errors::InvalidMetadataValue> {
        MetadataValue::try_from(format!("Bearer {token}")).map(Self)
    }
}

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

type Client = WorkerClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>>;

/// Connects to the coordinator, retrying until it answers or `shutdown`.
async fn connect(
    options: &WorkerOptions,
    shutdown: &CancellationToken,
) -> Result<Client, DaemonError> {
    // An address that can never work is an error now, not a silent retry loop.
    if !(options.coordinator.starts_with("http://") || options.coordinator.starts_with("https://"))
    {
        return Err(DaemonError::Address(options.coordinator.clone()));
    }
    let mut endpoint = Endpoint::from_shared(options.coordinator.clone())
        .map_err(|_| DaemonError::Address(options.coordinator.clone()))?
        .connect_timeout(Duration::from_secs(2));
    if let Some(ca) = &options.tls_ca {
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(ca));
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|source| DaemonError::Connect {
                address: options.coordinator.clone(),
                source,
            })?;
    }
    let bearer = Bearer::new(&options.token).map_err(|_| DaemonError::Token)?;
    let mut pause = Duration::from_millis(50);
    let mut failures: u32 = 0;
    loop {
        match endpoint.connect().await {
            Ok(channel) => {
                if failures > 0 {
                    tracing::info!(coordinator = %options.coordinator, "connected");
                }
                return Ok(WorkerClient::with_interceptor(channel, bearer));
            }
            Err(source) => {
                // Said on the first failure and then every 16th, so an
                // operator sees why the worker waits without a flood.
                if failures.is_multiple_of(16) {
                    tracing::warn!(
                        coordinator = %options.coordinator,
                        error = %arena_proto::error_chain(&source),
                        "cannot reach the coordinator; retrying"
                    );
                }
                failures = failures.saturating_add(1);
                if shutdown.is_cancelled() {
                    return Err(DaemonError::Connect {
                        address: options.coordinator.clone(),
                        source,
                    });
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.cancelled() => {}
                }
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// Runs the worker until `shutdown` is cancelled, then drains.
pub async fn run(
    options: WorkerOptions,
    launcher: Arc<dyn Launcher + Send + Sync>,
    metrics: WorkerMetrics,
    shutdown: CancellationToken,
) -> Result<WorkerSummary, DaemonError> {
    let mut client = connect(&options, &shutdown).await?;
    let cached = Arc::new(Mutex::new(cached_submissions(&options.cache_dir)));
    let registration = client
        .register(RegisterRequest {
            worker_id: options.worker_id.clone(),
            cores: options.cores,
            slots: u32::try_from(options.slots).unwrap_or(u32::MAX),
            memory_mb: options.memory_mb,
            environment_id: options.environment_id.clone(),
            cached_builds: snapshot(&cached),
            // Empty without wasm: such a worker is given no WebAssembly seat.
            wasm_runtime: options
                .wasm
                .as_ref()
                .map(|w| w.fingerprint().to_owned())
                .unwrap_or_default(),
            // Empty without models: such a worker is given no model seat.
            model_runtime: options
                .models
                .as_ref()
                .map(|m| m.runtime_id().to_owned())
                .unwrap_or_default(),
        })
        .await
        .map_err(|source| DaemonError::Rpc {
            call: "Register",
            source,
        })?
        .into_inner();

    let core_budget = options
        .bot_cores
        .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1))));
    let in_flight: InFlight = Arc::default();
    let default_ttl = match registration.lease_ttl_ms {
        0 => Duration::from_secs(30),
        ms => Duration::from_millis(ms),
    };
    let summary: Arc<Mutex<WorkerSummary>> = Arc::default();
    let heartbeat_stop = CancellationToken::new();
    let heartbeat = tokio::spawn(heartbeat_loop(
        client.clone(),
        options.worker_id.clone(),
        Duration::from_millis(registration.heartbeat_interval_ms.max(50)),
        Arc::clone(&in_flight),
        Arc::clone(&cached),
        heartbeat_stop.clone(),
    ));

    // Bounded by the slots: a match is only leased when a permit is free.
    let slots = Arc::new(tokio::sync::Semaphore::new(options.slots.max(1)));
    let tracker = TaskTracker::new();
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            _ = shutdown.cancelled() => break,
        };
        if shutdown.is_cancelled() {
            break;
        }
        let leased = client
            .lease(LeaseRequest {
                worker_id: options.worker_id.clone(),
            })
            .await;
        let leased = match leased {
            Ok(response) => response.into_inner().r#match,
            Err(status) => {
                tracing::warn!(%status, "lease failed");
                None
            }
        };
        let Some(leased) = leased else {
            drop(permit);
            tokio::select! {
                _ = tokio::time::sleep(options.idle_poll) => {}
                _ = shutdown.cancelled() => break,
            }
            continue;
        };
        let ttl = match leased.lease_ttl_ms {
            0 => default_ttl,
            ms => Duration::from_millis(ms),
        };
        lock(&in_flight).insert(
            leased.lease_id.clone(),
            LeaseState {
                lost: CancellationToken::new(),
                renewed: Instant::now(),
                ttl,
                match_id: leased.match_id.clone(),
                progress: Arc::default(),
            },
        );
        // The match's trace: fetch, build_and_play and report are its children.
        let span = tracing::info_span!(
            "match",
            match_id = %leased.match_id,
            lease_id = %leased.lease_id,
            attempt = leased.attempt,
            tournament = %leased.tournament_id,
            worker = %options.worker_id,
        );
        let job = Job {
            client: client.clone(),
            options: options.clone(),
            launcher: Arc::clone(&launcher),
            in_flight: Arc::clone(&in_flight),
            cached: Arc::clone(&cached),
            summary: Arc::clone(&summary),
            metrics: metrics.clone(),
            core_budget: core_budget.clone(),
        };
        tracker.spawn(
            async move {
                job.play(leased).await;
                drop(permit);
            }
            .instrument(span),
        );
    }
    // Drain: no new leases; finish and report what is in flight.
    tracker.close();
    tracker.wait().await;
    heartbeat_stop.cancel();
    let _ = heartbeat.await;
    Ok(lock(&summary).clone())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn snapshot(cached: &Mutex<BTreeSet<String>>) -> Vec<String> {
    lock(cached).iter().cloned().collect()
}

/// Submissions already unpacked in the cache.
fn cached_submissions(cache_dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(cache_dir.join("submissions"))
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

async fn heartbeat_loop(
    mut client: Client,
    worker_id: String,
    interval: Duration,
    in_flight: InFlight,
    cached: Arc<Mutex<BTreeSet<String>>>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.cancelled() => return,
        }
        let (lease_ids, progress): (Vec<String>, Vec<LeaseProgress>) = lock(&in_flight)
            .iter()
            .map(|(id, state)| {
                let progress = LeaseProgress {
                    lease_id: id.clone(),
                    match_id: state.match_id.clone(),
                    turn: state.progress.load(Ordering::Relaxed),
                };
                (id.clone(), progress)
            })
            .unzip();
        let request = HeartbeatRequest {
            worker_id: worker_id.clone(),
            lease_ids: lease_ids.clone(),
            cached_builds: snapshot(&cached),
            progress,
        };
        // Taken before sending: the coordinator extends from a later time.
        let sent = Instant::now();
        let answer = tokio::time::timeout(delivery::ATTEMPT_TIMEOUT, client.heartbeat(request))
            .await
            .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("no answer")));
        match answer {
            Ok(response) => {
                let lost: BTreeSet<String> =
                    response.into_inner().lost_lease_ids.into_iter().collect();
                let mut in_flight = lock(&in_flight);
                for id in &lease_ids {
                    let Some(state) = in_flight.get_mut(id) else {
                        continue;
                    };
                    if lost.contains(id) {
                        if !state.lost.is_cancelled() {
                            tracing::warn!(
                                lease = %id,
                                "the lease is no longer ours; its match stops unreported"
                            );
                        }
                        state.lost.cancel();
                    } else {
                        state.renewed = sent;
                    }
                }
            }
            Err(status) => tracing::warn!(%status, "heartbeat failed"),
        }
    }
}

/// What a played match leaves to report.
struct Played {
    report: MatchReport,
    replay: Vec<u8>,
    /// Each seat's bot log, in seat order.
    logs: Vec<Vec<u8>>,
    duration_s: f64,
}

/// One leased match and what it needs.
struct Job {
    client: Client,
    options: WorkerOptions,
    launcher: Arc<dyn Launcher + Send + Sync>,
    in_flight: InFlight,
    cached: Arc<Mutex<BTreeSet<String>>>,
    summary: Arc<Mutex<WorkerSummary>>,
    metrics: WorkerMetrics,
    /// One permit per bot core (see [`WorkerOptions::bot_cores`]).
    core_budget: Option<Arc<tokio::sync::Semaphore>>,
}

/// Why a leased match produced no result to report.
enum NotPlayed {
    /// The worker could not play it: an infrastructure failure, requeued.
    Failed(String),
    /// Its lease was lost while it played; it was stopped unreported.
    Abandoned,
}

impl From<String> for NotPlayed {
    fn from(reason: String) -> Self {
        NotPlayed::Failed(reason)
    }
}

/// A seat's submission as fetched.
enum Fetched {
    /// Unpacked here, ready to build.
    Dir(PathBuf),
    /// It arrived intact but is not a runnable bot (see
    /// [`submission::TreeError::is_submissions_fault`]): its seat forfeits.
    Refused(String),
}

impl Job {
    async fn play(self, leased: LeasedMatch) {
        let lost = lock(&self.in_flight)
            .get(&leased.lease_id)
            .map(|state| state.lost.clone())
            .unwrap_or_default();
        match self.play_inner(&leased, &lost).await {
            Ok(played) => self.report(&leased, &lost, played).await,
            Err(NotPlayed::Failed(_)) | Err(NotPlayed::Abandoned) if lost.is_cancelled() => {
                tracing::warn!(
                    match_id = %leased.match_id,
                    lease = %leased.lease_id,
                    "match stopped: its lease is lost"
                );
                lock(&self.summary).abandoned += 1;
            }
            Err(NotPlayed::Failed(reason)) => self.report_failure(&leased, &lost, reason).await,
            Err(NotPlayed::Abandoned) => lock(&self.summary).abandoned += 1,
        }
        lock(&self.in_flight).remove(&leased.lease_id);
    }

    fn watch<'a>(&'a self, leased: &'a LeasedMatch, lost: &CancellationToken) -> Watch<'a> {
        Watch {
            in_flight: &self.in_flight,
            lease_id: &leased.lease_id,
            lost: lost.clone(),
        }
    }

    /// Logs a transient error of a call that is retried (`call` says for
    /// what, e.g. "ReportResult for match M"): the first, then every 8th.
    fn retrying(call: String) -> impl FnMut(u32, &tonic::Status, Duration) {
        move |attempt, status, pause| {
            if attempt % 8 == 1 {
                tracing::warn!(call, %status, ?pause, attempt, "call failed; retrying");
            }
        }
    }

    /// Hands a match the worker could not play back to the coordinator.
    async fn report_failure(&self, leased: &LeasedMatch, lost: &CancellationToken, reason: String) {
        tracing::error!(match_id = %leased.match_id, %reason, "match failed");
        lock(&self.summary).failed += 1;
        let span = tracing::info_span!(
            "report",
            match_id = %leased.match_id,
            failure = %reason,
            outcome = tracing::field::Empty,
        );
        let request = ReportFailureRequest {
            worker_id: self.options.worker_id.clone(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            reason,
        };
        let sent = delivery::deliver(
            &self.watch(leased, lost),
            || {
                let mut client = self.client.clone();
                let request = request.clone();
                async move { client.report_failure(request).await }
            },
            Self::retrying(format!("ReportFailure for match {}", leased.match_id)),
        )
        .instrument(span.clone())
        .await;
        match sent {
            Delivery::Answered(_) => {
                span.record("outcome", "requeued");
            }
            Delivery::Refused(status) => {
                span.record("outcome", "error");
                tracing::error!(%status, "the coordinator refused the failure report");
            }
            Delivery::LeaseGone { why, last } => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %why,
                    last_error = last.map(|s| s.to_string()),
                    "gave up reporting the match's failure: its lease is gone"
                );
            }
        }
    }

    /// Fetches, builds and plays; stops early when `lost` is cancelled.
    async fn play_inner(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
    ) -> Result<Played, NotPlayed> {
        // Before fetching anything: a match this worker cannot set up needs no bots.
        let (game, config) = setup_match(leased)?;
        let progress = lock(&self.in_flight)
            .get(&leased.lease_id)
            .map(|state| Arc::clone(&state.progress))
            .unwrap_or_default();
        let config = config
            .with_wasm(self.options.wasm.clone())
            .with_models(self.options.models.clone())
            .with_progress(progress);
        let mut seats = Vec::with_capacity(leased.seats.len());
        let mut refused = BTreeMap::new();
        for seat in &leased.seats {
            if !seat.baseline.is_empty() {
                seats.push(SeatSpec::Baseline(seat.baseline.clone()));
                continue;
            }
            let span = tracing::info_span!(
                "fetch",
                submission = %seat.submission,
                bot = %seat.name,
                cached = tracing::field::Empty,
            );
            let watch = self.watch(leased, lost);
            let fetched = tokio::select! {
                fetched = self
                    .submission_dir(&seat.submission, &watch)
                    .instrument(span) => fetched?,
                _ = lost.cancelled() => return Err(NotPlayed::Abandoned),
            };
            let dir = match fetched {
                Fetched::Dir(dir) => dir,
                Fetched::Refused(reason) => {
                    tracing::info!(
                        submission = %seat.submission,
                        bot = %seat.name,
                        %reason,
                        "submission is not a runnable bot"
                    );
                    // A placeholder the leased launcher answers for.
                    let placeholder = self
                        .options
                        .cache_dir
                        .join("submissions")
                        .join(format!(".refused-{}", seat.submission));
                    refused.insert(placeholder.clone(), reason);
                    placeholder
                }
            };
            seats.push(SeatSpec::Bot(BotSpec {
                name: seat.name.clone(),
                dir,
            }));
        }
        let _cores = tokio::select! {
            cores = self.reserve_cores(&seats) => cores?,
            _ = lost.cancelled() => return Err(NotPlayed::Abandoned),
        };
        let abandon = Arc::new(Abandon::default());
        let launcher =
            LeasedLauncher::new(Arc::clone(&self.launcher), refused, Arc::clone(&abandon));
        let metrics = self.metrics.clone();
        let seed = leased.seed;
        let started = std::time::Instant::now();
        // Builds and the game run on a blocking thread; the span follows them there.
        let span = tracing::info_span!(
            "build_and_play",
            seed,
            turns = tracing::field::Empty,
            reason = tracing::field::Empty,
        );
        let blocking_span = span.clone();
        let mut playing = tokio::task::spawn_blocking(move || {
            blocking_span.in_scope(|| play_match(game, seed, &seats, &launcher, &config))
        });
        let played = tokio::select! {
            played = &mut playing => played,
            _ = lost.cancelled() => {
                // Kill the bots (off the runtime: teardown writes cgroup
                // files), then wait for the runner to notice and return, so
                // the cores and cgroups are free when this returns.
                let killer = Arc::clone(&abandon);
                if let Err(e) = tokio::task::spawn_blocking(move || killer.abandon()).await {
                    tracing::warn!(error = %e, "abandoning a match");
                }
                if let Err(e) = playing.await {
                    tracing::error!(error = %e, "the abandoned match's thread died");
                }
                return Err(NotPlayed::Abandoned);
            }
        }
        .map_err(|e| format!("the match thread died: {e}"))?;
        if let Ok(output) = &played {
            metrics.record(output, started.elapsed().as_secs_f64());
            span.record("turns", output.report.turns);
            span.record("reason", output.report.reason.as_str());
        }
        drop(span);
        let output = played.map_err(|e| arena_proto::error_chain(&e))?;
        Ok(Played {
            report: output.report,
            replay: output.replay,
            logs: output.logs,
            duration_s: started.elapsed().as_secs_f64(),
        })
    }

    /// Waits until this match's bots can each have a core of their own
    /// (baseline seats need none); the permits go back when dropped.
    async fn reserve_cores(
        &self,
        seats: &[SeatSpec],
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, String> {
        let (Some(budget), Some(total)) = (&self.core_budget, self.options.bot_cores) else {
            return Ok(None);
        };
        let bots = seats
            .iter()
            .filter(|s| matches!(s, SeatSpec::Bot(_)))
            .count();
        let plan = CorePlan::for_match(bots, total);
        if plan.shared {
            tracing::warn!(
                bots,
                cores = total,
                "shared-core fallback: more bots than bot cores"
            );
        }
        if plan.cores == 0 {
            return Ok(None);
        }
        let wanted = u32::try_from(plan.cores).unwrap_or(u32::MAX);
        Arc::clone(budget)
            .acquire_many_owned(wanted)
            .await
            .map(Some)
            .map_err(|_| "the worker is shutting down".to_owned())
    }

    /// One attempt at downloading submission `hash`: its archive, or `None`
    /// when it is larger than [`MAX_ARCHIVE_BYTES`].
    async fn fetch_archive(&self, hash: &str) -> Result<Option<Vec<u8>>, tonic::Status> {
        let mut client = self.client.clone();
        let mut stream = client
            .fetch_submission(FetchSubmissionRequest {
                hash: hash.to_owned(),
            })
            .await?
            .into_inner();
        let mut archive = Vec::new();
        while let Some(chunk) = stream.message().await? {
            if archive.len() + chunk.data.len() > MAX_ARCHIVE_BYTES {
                return Ok(None);
            }
            archive.extend_from_slice(&chunk.data);
        }
        Ok(Some(archive))
    }

    /// The unpacked submission `hash`, fetched from the coordinator if
    /// needed; `Fetched::Refused` when it arrived intact but cannot be a bot.
    async fn submission_dir(&self, hash: &str, watch: &Watch<'_>) -> Result<Fetched, String> {
        if hash.is_empty() || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("invalid submission hash {hash:?}"));
        }
        let root = self.options.cache_dir.join("submissions");
        let dir = root.join(hash);
        if dir.is_dir() {
            tracing::Span::current().record("cached", true);
            return Ok(Fetched::Dir(dir));
        }
        tracing::Span::current().record("cached", false);
        std::fs::create_dir_all(&root).map_err(|e| format!("creating {}: {e}", root.display()))?;
        // A transient error (the coordinator or its store restarting) is
        // waited out, as a report is, for as long as the lease stands.
        let fetched = delivery::deliver(
            watch,
            || self.fetch_archive(hash),
            Self::retrying(format!("FetchSubmission of {hash}")),
        )
        .await;
        let archive = match fetched {
            Delivery::Answered(Some(archive)) => archive,
            Delivery::Answered(None) => {
                // Every worker has this cap: no other would do better.
                return Ok(Fetched::Refused(format!(
                    "the submission's archive is larger than {MAX_ARCHIVE_BYTES} bytes"
                )));
            }
            Delivery::Refused(status) => {
                return Err(format!("fetching submission {hash}: {status}"));
            }
            Delivery::LeaseGone { why, last } => {
                return Err(format!(
                    "fetching submission {hash}: the lease is gone ({why}){}",
                    last.map(|s| format!("; last error: {s}"))
                        .unwrap_or_default()
                ));
            }
        };
        let actual = submission::archive_id(&archive);
        if actual != hash {
            return Err(format!("submission {hash} arrived with hash {actual}"));
        }
        let scratch = root.join(format!(".{hash}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(e) = submission::unpack(&archive, &scratch) {
            if let Err(cleanup) = std::fs::remove_dir_all(&scratch) {
                tracing::warn!(path = %scratch.display(), error = %cleanup, "cannot remove a scratch directory");
            }
            let reason = format!("unpacking {hash}: {}", arena_proto::error_chain(&e));
            return if e.is_submissions_fault() {
                Ok(Fetched::Refused(reason))
            } else {
                Err(reason)
            };
        }
        if std::fs::rename(&scratch, &dir).is_err() {
            // Another match unpacked it first.
            let _ = std::fs::remove_dir_all(&scratch);
        }
        lock(&self.cached).insert(hash.to_owned());
        Ok(Fetched::Dir(dir))
    }

    async fn report(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
        Played {
            report,
            replay,
            logs,
            duration_s,
        }: Played,
    ) {
        let seats = report
            .players
            .iter()
            .zip(&leased.seats)
            .map(|(p, seat)| SeatResult {
                submission: seat.submission.clone(),
                baseline: seat.baseline.clone(),
                rank: p.rank,
                score: p.score,
                team: p.team.unwrap_or(0),
                forfeit_kind: wire_forfeit(p.forfeit) as i32,
                timeouts: p.faults.timeout,
                malformed: p.faults.malformed,
                moves: p.moves,
                latency_p50_ms: p.latency_ms.p50,
                latency_p99_ms: p.latency_ms.p99,
                illegal: p.faults.illegal,
                fuel_exhausted: p.faults.fuel_exhausted,
                fuel_p50: p.fuel.map_or(0, |f| f.p50),
                fuel_max: p.fuel.map_or(0, |f| f.max),
                strike: p.faults.strike,
                // Refused replies also travel with the game's counters, as
                // before the wire had their field, for older coordinators.
                stats: p
                    .stats
                    .clone()
                    .into_iter()
                    .chain(
                        (p.faults.illegal > 0)
                            .then(|| ("illegal_replies".to_owned(), u64::from(p.faults.illegal))),
                    )
                    .collect(),
            })
            .collect();
        let request = ReportResultRequest {
            worker_id: self.options.worker_id.clone(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            seats,
            reason: report.reason.clone(),
            turns: report.turns,
            replay,
            duration_s,
            seat_logs: logs,
        };
        let span = tracing::info_span!(
            "report",
            match_id = %leased.match_id,
            lease_id = %leased.lease_id,
            outcome = tracing::field::Empty,
        );
        // Resent on transient errors: the coordinator keeps the first valid
        // result of a match and acknowledges repeats, so a resend is safe.
        let sent = delivery::deliver(
            &self.watch(leased, lost),
            || {
                let mut client = self.client.clone();
                let request = request.clone();
                async move { client.report_result(request).await }
            },
            Self::retrying(format!("ReportResult for match {}", leased.match_id)),
        )
        .instrument(span.clone())
        .await;
        let accepted = match sent {
            Delivery::Answered(response) => {
                let outcome = response.into_inner().outcome();
                span.record(
                    "outcome",
                    match outcome {
                        ReportOutcome::Accepted => "accepted",
                        ReportOutcome::Duplicate => "duplicate",
                        ReportOutcome::StaleLease => "stale_lease",
                        ReportOutcome::Unspecified => "unspecified",
                    },
                );
                outcome == ReportOutcome::Accepted
            }
            Delivery::Refused(status) => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %status,
                    "the coordinator refused the result"
                );
                false
            }
            Delivery::LeaseGone { why, last } => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %why,
                    last_error = last.map(|s| s.to_string()),
                    "gave up reporting the match: its lease is gone"
                );
                false
            }
        };
        let mut summary = lock(&self.summary);
        summary.played += 1;
        if accepted {
            summary.accepted += 1;
        } else {
            summary.dropped += 1;
        }
    }
}

/// How many of a worker's bot cores one match holds while it plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CorePlan {
    /// Bot cores reserved: one per bot process, at most all of them.
    cores: usize,
    /// More bots than cores: some bots share (the logged fallback).
    shared: bool,
}

impl CorePlan {
    fn for_match(bots: usize, bot_cores: usize) -> Self {
        Self {
            cores: bots.min(bot_cores.max(1)),
            shared: bots > bot_cores,
        }
    }
}

/// The game, its rules and the runner limits a lease asks for; `Err` when
/// this worker cannot play it (an unknown game, rules it does not accept).
fn setup_match(leased: &LeasedMatch) -> Result<(Box<dyn Match>, RunnerConfig), String> {
    let entry =
        registry::find(&leased.game).map_err(|e| format!("this worker cannot play: {e}"))?;
    let rules: Rules = if leased.rules_json.is_empty() {
        Rules::default()
    } else {
        serde_json::from_str(&leased.rules_json)
            .map_err(|e| format!("the lease's rules are not a JSON table: {e}"))?
    };
    let game = entry
        .create(leased.seed, leased.seats.len(), &rules)
        .map_err(|e| format!("cannot set up the match: {e}"))?;
    for seat in &leased.seats {
        if !seat.baseline.is_empty() && !entry.has_baseline(&seat.baseline) {
            return Err(format!(
                "{} has no baseline {:?}",
                entry.name, seat.baseline
            ));
        }
    }
    // Absent (zero) fields are the game's defaults: an older coordinator sends none.
    let or = |v: u64, d: u64| if v == 0 { d } else { v };
    let defaults = entry.limits;
    let limits = Limits {
        first_move_ms: or(leased.first_move_ms, defaults.first_move_ms),
        move_ms: or(leased.move_ms, defaults.move_ms),
        fault_limit: u32::try_from(or(
            u64::from(leased.fault_limit),
            u64::from(defaults.fault_limit),
        ))
        .unwrap_or(defaults.fault_limit),
        reply_cap: u32::try_from(or(
            u64::from(leased.reply_cap),
            u64::from(defaults.reply_cap),
        ))
        .unwrap_or(defaults.reply_cap),
        // The lease's fuel keys, field by field (zero: the default); a
        // game without WebAssembly seats has no fuel, whatever the lease says.
        fuel: defaults.fuel.map(|d| FuelLimits {
            per_turn: or(leased.fuel_per_turn, d.per_turn),
            bank: or(leased.fuel_bank, d.bank),
            init: or(leased.init_fuel, d.init),
            wall_ms: or(leased.fuel_wall_ms, d.wall_ms),
        }),
        model: defaults.model.map(|d| arena_engine::registry::ModelLimits {
            max_bytes: or(leased.model_bytes, d.max_bytes),
            max_macs: or(leased.model_macs, d.max_macs),
        }),
    };
    Ok((game, RunnerConfig::for_limits(&limits)))
}

/// The wire's forfeit enum for the engine's.
fn wire_forfeit(forfeit: Option<Forfeit>) -> WireForfeit {
    match forfeit {
        None => WireForfeit::None,
        Some(Forfeit::Crash) => WireForfeit::Crash,
        Some(Forfeit::Exit) => WireForfeit::Exit,
        Some(Forfeit::Memory) => WireForfeit::Memory,
        Some(Forfeit::Faults) => WireForfeit::Faults,
        Some(Forfeit::BuildFailed) => WireForfeit::BuildFailed,
        Some(Forfeit::Trap) => WireForfeit::Trap,
        Some(Forfeit::WallBackstop) => WireForfeit::WallBackstop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_proto::v1::Seat;

    const GENERALS: &str = arena_engine::generals::ENTRY.name;
    const FFA: &str = arena_engine::generals_ffa::ENTRY.name;

    #[test]
    fn a_match_holds_one_core_per_bot_and_shares_only_beyond_the_machine() {
        assert_eq!(
            CorePlan::for_match(2, 7),
            CorePlan {
                cores: 2,
                shared: false
            }
        );
        assert_eq!(
            CorePlan::for_match(4, 3),
            CorePlan {
                cores: 3,
                shared: true
            }
        );
        // Baseline seats need no core.
        assert_eq!(CorePlan::for_match(0, 3).cores, 0);
    }

    fn leased(game: &str, seats: &[(&str, &str)]) -> LeasedMatch {
        LeasedMatch {
            game: game.to_owned(),
            seed: 3,
            seats: seats
                .iter()
                .map(|(submission, baseline)| Seat {
                    submission: (*submission).to_owned(),
                    name: (*submission).to_owned(),
                    baseline: (*baseline).to_owned(),
                })
                .collect(),
            rules_json: "{}".to_owned(),
            ..LeasedMatch::default()
        }
    }

    #[test]
    fn leases_set_up_through_the_registry_with_the_games_defaults() {
        let two = [("aa", ""), ("bb", "")];
        let (game, config) = setup_match(&leased(GENERALS, &two)).unwrap();
        assert_eq!(game.seats(), 2);
        let defaults = arena_engine::generals::ENTRY.limits;
        assert_eq!(config.fault_limit, defaults.fault_limit);
        assert_eq!(config.per_move.as_millis(), u128::from(defaults.move_ms));

        let four = [("aa", ""), ("", "sprawl"), ("bb", ""), ("", "crown")];
        let mut lease = leased(FFA, &four);
        lease.move_ms = 1234;
        lease.rules_json = r#"{"blitz": true}"#.to_owned();
        let (game, config) = setup_match(&lease).unwrap();
        assert_eq!(game.name(), FFA);
        assert_eq!(config.per_move.as_millis(), 1234);

        for (lease, needle) in [
            (leased("chess", &two), "chess"),
            (leased(GENERALS, &four), "seats"),
            (
                leased(FFA, &[("aa", ""), ("", "nope"), ("bb", ""), ("cc", "")]),
                "nope",
            ),
            (
                LeasedMatch {
                    rules_json: "[1]".to_owned(),
                    ..leased(FFA, &four)
                },
                "JSON",
            ),
        ] {
            let err = setup_match(&lease).err().expect("refused");
            assert!(err.contains(needle), "{err}");
        }
    }

    #[test]
    fn the_leases_fuel_keys_override_the_games_field_by_field() {
        let grid = arena_engine::grid_royale::ENTRY.name;
        let two = [("aa", ""), ("bb", "")];
        let defaults = arena_engine::grid_royale::ENTRY
            .limits
            .fuel
            .expect("grid royale runs WebAssembly seats");
        // No fuel keys (an older coordinator): the game's own.
        let (_, config) = setup_match(&leased(grid, &two)).unwrap();
        assert_eq!(config.fuel, Some(defaults));

        let mut lease = leased(grid, &two);
        lease.fuel_per_turn = 1_000;
        lease.init_fuel = 7;
        let (_, config) = setup_match(&lease).unwrap();
        assert_eq!(
            config.fuel,
            Some(FuelLimits {
                per_turn: 1_000,
                init: 7,
                ..defaults
            })
        );
        lease.fuel_bank = 5_000;
        lease.fuel_wall_ms = 9;
        let (_, config) = setup_match(&lease).unwrap();
        assert_eq!(
            config.fuel,
            Some(FuelLimits {
                per_turn: 1_000,
                bank: 5_000,
                init: 7,
                wall_ms: 9,
            })
        );

        // A game without WebAssembly seats ignores them.
        let mut lease = leased(GENERALS, &two);
        lease.fuel_per_turn = 1_000;
        let (_, config) = setup_match(&lease).unwrap();
        assert_eq!(config.fuel, None);
    }
}
