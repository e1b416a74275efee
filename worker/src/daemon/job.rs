//! One leased match, from lease to report: set it up, fetch its
//! submissions, wait for its cores, play it on a blocking thread (stopped
//! at once if the lease is lost), then report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arena_engine::Match;
use arena_proto::v1::LeasedMatch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::client::Client;
use super::fetch::Fetched;
use super::heartbeat::{InFlight, Watch};
use super::{JobError, WorkerOptions, WorkerSummary, lease_setup, lock};
use crate::launcher::{BotSpec, Launcher};
use crate::leased::{Abandon, LeasedLauncher};
use crate::metrics::WorkerMetrics;
use crate::referee::play_match;
use crate::report::MatchReport;
use crate::runner::{RunnerConfig, SeatSpec};

/// What a played match leaves to report.
pub(super) struct Played {
    pub(super) report: MatchReport,
    pub(super) replay: Vec<u8>,
    /// Each seat's bot log, in seat order.
    pub(super) logs: Vec<Vec<u8>>,
    pub(super) duration_s: f64,
}

/// One leased match and what it needs: what every match of this worker
/// shares, cloned for each lease.
#[derive(Clone)]
pub(super) struct Job {
    pub(super) client: Client,
    pub(super) options: WorkerOptions,
    pub(super) launcher: Arc<dyn Launcher + Send + Sync>,
    pub(super) in_flight: InFlight,
    pub(super) cached: Arc<Mutex<BTreeSet<String>>>,
    pub(super) summary: Arc<Mutex<WorkerSummary>>,
    pub(super) metrics: WorkerMetrics,
    /// One permit per bot core (see [`WorkerOptions::bot_cores`]).
    pub(super) core_budget: Option<Arc<tokio::sync::Semaphore>>,
}

/// Why a leased match produced no result to report.
enum NotPlayed {
    /// The worker could not play it: an infrastructure failure, requeued.
    Failed(JobError),
    /// Its lease was lost while it played; it was stopped unreported.
    Abandoned,
}

impl From<JobError> for NotPlayed {
    fn from(failure: JobError) -> Self {
        NotPlayed::Failed(failure)
    }
}

/// The seats as the runner gets them, and the submissions refused as bots
/// (by placeholder directory, with the reason) that the leased launcher
/// answers for.
type FetchedSeats = (Vec<SeatSpec>, BTreeMap<PathBuf, String>);

impl Job {
    pub(super) async fn play(self, leased: LeasedMatch) {
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
            Err(NotPlayed::Failed(failure)) => {
                self.report_failure(&leased, &lost, failure.to_string())
                    .await
            }
            Err(NotPlayed::Abandoned) => lock(&self.summary).abandoned += 1,
        }
        lock(&self.in_flight).remove(&leased.lease_id);
    }

    pub(super) fn watch<'a>(
        &'a self,
        leased: &'a LeasedMatch,
        lost: &CancellationToken,
    ) -> Watch<'a> {
        Watch {
            in_flight: &self.in_flight,
            lease_id: &leased.lease_id,
            lost: lost.clone(),
        }
    }

    /// Logs a transient error of a call that is retried (`call` says for
    /// what, e.g. "ReportResult for match M"): the first, then every 8th.
    pub(super) fn retrying(call: String) -> impl FnMut(u32, &tonic::Status, Duration) {
        move |attempt, status, pause| {
            if attempt % 8 == 1 {
                tracing::warn!(call, %status, ?pause, attempt, "call failed; retrying");
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
        let (game, config) = lease_setup::setup_match(leased)?;
        let config = self.with_runtimes(leased, config);
        let (seats, refused) = self.fetch_seats(leased, lost).await?;
        let _cores = tokio::select! {
            cores = self.reserve_cores(&seats) => cores?,
            _ = lost.cancelled() => return Err(NotPlayed::Abandoned),
        };
        self.play_blocking(game, leased.seed, seats, refused, config, lost)
            .await
    }

    /// The lease's runner limits with this worker's seat runtimes and the
    /// counter its heartbeats report progress from.
    fn with_runtimes(&self, leased: &LeasedMatch, config: RunnerConfig) -> RunnerConfig {
        let progress = lock(&self.in_flight)
            .get(&leased.lease_id)
            .map(|state| Arc::clone(&state.progress))
            .unwrap_or_default();
        config
            .with_wasm(self.options.wasm.clone())
            .with_models(self.options.models.clone())
            .with_progress(progress)
    }

    /// Every seat's submission, fetched and unpacked (baselines need none).
    async fn fetch_seats(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
    ) -> Result<FetchedSeats, NotPlayed> {
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
        Ok((seats, refused))
    }

    /// Builds and plays the match on a blocking thread; if the lease is
    /// lost meanwhile, kills its bots and waits for the runner to return.
    async fn play_blocking(
        &self,
        game: Box<dyn Match>,
        seed: u64,
        seats: Vec<SeatSpec>,
        refused: BTreeMap<PathBuf, String>,
        config: RunnerConfig,
        lost: &CancellationToken,
    ) -> Result<Played, NotPlayed> {
        let abandon = Arc::new(Abandon::default());
        let launcher =
            LeasedLauncher::new(Arc::clone(&self.launcher), refused, Arc::clone(&abandon));
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
        .map_err(|e| JobError::ThreadDied(e.to_string()))?;
        if let Ok(output) = &played {
            self.metrics.record(output, started.elapsed().as_secs_f64());
            span.record("turns", output.report.turns);
            span.record("reason", output.report.reason.as_str());
        }
        drop(span);
        let output = played.map_err(JobError::Runner)?;
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
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, JobError> {
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
            .map_err(|_| JobError::ShuttingDown)
    }
}

/// How many of a worker's bot cores one match holds while it plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CorePlan {
    /// Bot cores reserved: one per bot process, at most all of them.
    pub(super) cores: usize,
    /// More bots than cores: some bots share (the logged fallback).
    pub(super) shared: bool,
}

impl CorePlan {
    pub(super) fn for_match(bots: usize, bot_cores: usize) -> Self {
        Self {
            cores: bots.min(bot_cores.max(1)),
            shared: bots > bot_cores,
        }
    }
}
