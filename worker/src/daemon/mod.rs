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
//!
//! # Layout
//!
//! - `client`: the connection to the coordinator and its bearer token.
//! - `heartbeat`: the leases in flight and the task that extends them.
//! - `job`: one leased match, from lease to report; `fetch` gets its
//!   submissions, `lease_setup` turns the lease into a game and limits,
//!   `report` sends the result or the failure back.
//! - `error`: why a job could not play its match.

mod client;
mod error;
mod fetch;
mod heartbeat;
mod job;
mod lease_setup;
mod report;
#[cfg(test)]
mod tests;

pub use client::Bearer;
pub use error::JobError;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arena_proto::v1::{LeaseRequest, LeasedMatch, RegisterRequest, RegisterResponse};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::launcher::Launcher;
use crate::metrics::WorkerMetrics;
use client::{Client, connect};
use heartbeat::{InFlight, LeaseState, heartbeat_loop, progress_loop};
use job::Job;

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

/// Registers with the coordinator, then leases and plays matches until
/// `shutdown`, then finishes the matches in flight.
pub async fn run(
    options: WorkerOptions,
    launcher: Arc<dyn Launcher + Send + Sync>,
    metrics: WorkerMetrics,
    shutdown: CancellationToken,
) -> Result<WorkerSummary, DaemonError> {
    let mut client = connect(&options, &shutdown).await?;
    let cached = Arc::new(Mutex::new(fetch::cached_submissions(&options.cache_dir)));
    let registration = register(&mut client, &options, &cached).await?;
    let default_ttl = match registration.lease_ttl_ms {
        0 => Duration::from_secs(30),
        ms => Duration::from_millis(ms),
    };
    let template = Job {
        client: client.clone(),
        core_budget: options
            .bot_cores
            .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1)))),
        in_flight: Arc::default(),
        summary: Arc::default(),
        cached,
        launcher,
        metrics,
        options,
    };
    let heartbeat_stop = CancellationToken::new();
    let heartbeat = tokio::spawn(heartbeat_loop(
        client.clone(),
        template.options.worker_id.clone(),
        Duration::from_millis(registration.heartbeat_interval_ms.max(50)),
        Arc::clone(&template.in_flight),
        Arc::clone(&template.cached),
        heartbeat_stop.clone(),
    ));
    let progress = (registration.progress_interval_ms > 0).then(|| {
        tokio::spawn(progress_loop(
            client.clone(),
            template.options.worker_id.clone(),
            Duration::from_millis(registration.progress_interval_ms.max(50)),
            Arc::clone(&template.in_flight),
            heartbeat_stop.clone(),
        ))
    });
    lease_and_play(&mut client, &template, default_ttl, &shutdown).await;
    heartbeat_stop.cancel();
    let _ = heartbeat.await;
    if let Some(progress) = progress {
        let _ = progress.await;
    }
    Ok(lock(&template.summary).clone())
}

/// Announces this worker: its capacity, environment, cached builds and the
/// runtimes it plays WebAssembly and model-graph seats with.
async fn register(
    client: &mut Client,
    options: &WorkerOptions,
    cached: &Mutex<BTreeSet<String>>,
) -> Result<RegisterResponse, DaemonError> {
    let request = RegisterRequest {
        worker_id: options.worker_id.clone(),
        cores: options.cores,
        slots: u32::try_from(options.slots).unwrap_or(u32::MAX),
        memory_mb: options.memory_mb,
        environment_id: options.environment_id.clone(),
        cached_builds: snapshot(cached),
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
    };
    client
        .register(request)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|source| DaemonError::Rpc {
            call: "Register",
            source,
        })
}

/// Leases a match whenever a slot is free and plays it as a job, until
/// `shutdown`; then waits for the jobs in flight (drain).
async fn lease_and_play(
    client: &mut Client,
    template: &Job,
    default_ttl: Duration,
    shutdown: &CancellationToken,
) {
    // Bounded by the slots: a match is only leased when a permit is free.
    let slots = Arc::new(tokio::sync::Semaphore::new(template.options.slots.max(1)));
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
        let Some(leased) = lease(client, &template.options.worker_id).await else {
            drop(permit);
            tokio::select! {
                _ = tokio::time::sleep(template.options.idle_poll) => {}
                _ = shutdown.cancelled() => break,
            }
            continue;
        };
        track(&template.in_flight, default_ttl, &leased);
        // The match's trace: fetch, build_and_play and report are its children.
        let span = tracing::info_span!(
            "match",
            match_id = %leased.match_id,
            lease_id = %leased.lease_id,
            attempt = leased.attempt,
            tournament = %leased.tournament_id,
            worker = %template.options.worker_id,
        );
        let job = template.clone();
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
}

/// One lease request: the match granted, or `None` (nothing queued, or the
/// call failed and is logged).
async fn lease(client: &mut Client, worker_id: &str) -> Option<LeasedMatch> {
    let leased = client
        .lease(LeaseRequest {
            worker_id: worker_id.to_owned(),
        })
        .await;
    match leased {
        Ok(response) => response.into_inner().r#match,
        Err(status) => {
            tracing::warn!(%status, "lease failed");
            None
        }
    }
}

/// Puts a granted lease in flight, for the heartbeats to extend.
fn track(in_flight: &InFlight, default_ttl: Duration, leased: &LeasedMatch) {
    let ttl = match leased.lease_ttl_ms {
        0 => default_ttl,
        ms => Duration::from_millis(ms),
    };
    lock(in_flight).insert(
        leased.lease_id.clone(),
        LeaseState {
            lost: CancellationToken::new(),
            renewed: Instant::now(),
            ttl,
            match_id: leased.match_id.clone(),
            progress: Arc::default(),
        },
    );
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn snapshot(cached: &Mutex<BTreeSet<String>>) -> Vec<String> {
    lock(cached).iter().cloned().collect()
}
