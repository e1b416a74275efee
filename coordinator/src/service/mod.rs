//! The coordinator's logic, independent of the wire: tournaments are created
//! and scheduled, matches leased to workers, results recorded (first valid
//! result wins), rounds advanced, expired leases requeued, standings computed.
//! Everything it knows lives in the [`Store`], so a restarted coordinator
//! carries on where the last one stopped.
//!
//! Layout: this module holds the [`Coordinator`] and the types it takes and
//! gives; `ids` derives tournament and match ids; `known` keeps what never
//! changes about each tournament, so leases and reports need not re-read it.

mod attached;
mod ids;
mod known;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arena_engine::Rules;
use arena_engine::registry::limits::LimitError;
use arena_engine::registry::{self, GameEntry, LimitOverrides, Limits, RulesError, SetupError};
use tokio::sync::Notify;
use tracing::Instrument;
use tracing::field::Empty;

pub(crate) use self::ids::match_round;
pub use self::ids::tournament_id;
use self::ids::{match_id, match_tournament};
use self::known::{Known, KnownTournaments};
use crate::attachments::{AttachmentError, Attachments};
use crate::metrics::CoordinatorMetrics;
use crate::model::{EntrantId, Format, MatchRecord, baseline_name};
use crate::report::{self, ResultError};
use crate::schedule::{self, ScheduleError};
use crate::standings::{self, Standings, StandingsError};
use crate::store::{
    AttemptEnd, CompleteOutcome, DEFAULT_MAX_ATTEMPTS, Entrant, Lease, LeaseGrant, QuarantineRule,
    Reported, ScheduledMatch, Status, Store, StoreError, TournamentSpec, WorkerInfo,
};
use crate::teams::{self, Sides, TeamError};

/// Timing and fault policy.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    /// How long a lease lives without a heartbeat.
    pub lease_ttl: Duration,
    /// How often workers are asked to heartbeat (well under the TTL).
    pub heartbeat_interval: Duration,
    /// How many attempts of a match may fail in a row (infrastructure
    /// failures and expired leases) before it is set aside as stuck.
    pub max_attempts: u32,
    /// When a worker stops getting leases.
    pub quarantine: Quarantine,
    /// How often every tournament is advanced even if nothing happened
    /// (the recovery step; see [`Coordinator::recover`]).
    pub recovery_interval: Duration,
}

/// A worker is quarantined (no new leases) once `failures` of its last
/// `window` leases ended without a result. `failures == 0` never
/// quarantines anyone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quarantine {
    pub window: u32,
    pub failures: u32,
}

impl Quarantine {
    /// Five failed leases out of a worker's last ten.
    pub const DEFAULT: Quarantine = Quarantine {
        window: 10,
        failures: 5,
    };
    /// Nobody is ever quarantined (a single machine's own workers).
    pub const OFF: Quarantine = Quarantine {
        window: 1,
        failures: 0,
    };
}

impl CoordinatorConfig {
    /// A lease TTL with heartbeats three times per TTL, so one lost
    /// heartbeat never costs a lease; the other policies at their defaults.
    pub fn with_lease_ttl(lease_ttl: Duration) -> Self {
        let lease_ttl = lease_ttl.max(Duration::from_millis(300));
        Self {
            lease_ttl,
            heartbeat_interval: lease_ttl / 3,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            quarantine: Quarantine::DEFAULT,
            recovery_interval: Duration::from_secs(5),
        }
    }
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        Self::with_lease_ttl(Duration::from_secs(30))
    }
}

/// A tournament as submitted: entrants are submissions already uploaded.
/// `game`, `seats`, `rules` and `limits` are checked against the game's
/// registry entry again on creation (a [`TournamentFile`] has resolved them
/// already; resolving twice changes nothing).
///
/// [`TournamentFile`]: crate::tournament_file::TournamentFile
#[derive(Clone, Debug)]
pub struct NewTournament {
    pub name: String,
    /// A registered game's name.
    pub game: String,
    pub seats: usize,
    pub base_seed: u64,
    pub format: Format,
    /// The game's options; completed with the game's defaults on creation.
    pub rules: Rules,
    /// The limits every match is played under, complete.
    pub limits: Limits,
    /// (display name, submission hash), one per entrant.
    pub entrants: Vec<(String, String)>,
    /// Only workers reporting this environment id may play its matches.
    pub environment: Option<String>,
    /// The side each seat plays for. `None`, the usual: read from the game
    /// on creation ([`teams::probe`]). `Some(layout)` declares it: it must
    /// be the game's own layout where the game reports one, and is taken as
    /// given for a game that reports none (so a team layout can be played
    /// before its game reports it, as the tests do).
    pub teams: Option<Vec<u32>>,
    /// The wasm runtime (a fingerprint, `arena_wasm::fingerprint`) its
    /// WebAssembly seats must be played with: `arena tournament create` and
    /// `arena run` name their own unless the tournament file names one.
    /// `None`: any worker that runs wasm. Dropped on creation when no
    /// entrant is a WebAssembly bot (see [`crate::wasm`]).
    pub wasm_runtime: Option<String>,
    /// The model runtime (such as `tract-onnx-0.23.9`) its model-graph
    /// seats must be played with: `arena tournament create` and `arena run`
    /// name their own unless the tournament file names one. `None`: any
    /// worker that plays models. Dropped on creation when no entrant is a
    /// model-graph bot (see [`crate::model_graph`]).
    pub model_runtime: Option<String>,
}

/// A lease with what a worker needs to play it.
#[derive(Clone, Debug)]
pub struct LeasedMatch {
    pub lease: Lease,
    pub game: String,
    /// The tournament's resolved rules (every option present).
    pub rules: Rules,
    /// The tournament's resolved limits.
    pub limits: Limits,
    /// Who plays, in seat order.
    pub seats: Vec<LeasedSeat>,
    pub ttl: Duration,
}

/// One seat of a leased match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedSeat {
    /// The submission's content hash; empty for a baseline seat.
    pub submission: String,
    /// The entrant's display name, or `baseline:NAME` for a baseline seat.
    pub name: String,
    /// The in-engine baseline that plays this seat, if one does.
    pub baseline: Option<String>,
}

/// A registered worker as operators see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerState {
    pub info: WorkerInfo,
    /// Heard from within three heartbeat intervals.
    pub alive: bool,
    /// Gets no new leases until an organiser releases it.
    pub quarantined: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    #[error("store")]
    Store(#[from] StoreError),
    #[error("scheduling")]
    Schedule(#[from] ScheduleError),
    #[error("standings")]
    Standings(#[from] StandingsError),
    #[error("no tournament {0:?}")]
    UnknownTournament(String),
    #[error("no match {0:?}")]
    UnknownMatch(String),
    #[error(
        "tournament {0} was cancelled; its results stay, and a tournament with the same \
         definition cannot be created again (change its name to run it anew)"
    )]
    Cancelled(String),
    #[error("submission {0} was never uploaded")]
    UnknownSubmission(String),
    #[error("the same submission is entered twice ({0}); enter each bot once")]
    DuplicateSubmission(String),
    #[error("invalid tournament: {0}")]
    Invalid(String),
    #[error("invalid tournament")]
    Game(#[from] SetupError),
    #[error("invalid tournament")]
    Rules(#[from] RulesError),
    #[error("invalid tournament")]
    Limits(#[from] LimitError),
    #[error("invalid team layout")]
    Teams(#[from] TeamError),
    #[error("result refused")]
    InvalidResult(#[from] ResultError),
    #[error(
        "worker {0:?} is not registered, or has not been heard from within three heartbeat \
         intervals; register first"
    )]
    UnregisteredWorker(String),
    #[error(
        "worker {0:?} is quarantined after too many leases ended without a result; an \
         organiser can release it (arena tournament release-worker)"
    )]
    Quarantined(String),
    #[error("match {0} is not stuck; only a stuck match can be requeued")]
    NotStuck(String),
    #[error("reading the kernel's randomness for a lease id")]
    Entropy(#[source] getrandom::Error),
    #[error("the scheduling task failed")]
    SchedulingTask(#[source] tokio::task::JoinError),
    #[error("replays and logs")]
    Attachments(#[from] AttachmentError),
    #[error("match {0} has no result to rejudge")]
    NotDone(String),
    #[error("match {match_id} cannot be played again: {reason}")]
    Unplayable { match_id: String, reason: String },
}

type Result<T> = std::result::Result<T, CoordinatorError>;

/// Whether a status snapshot shows every round scheduled and every match
/// decided. Callers that also print the counts must decide from the same
/// snapshot, or a result landing in between shows "29/30 done, finished".
pub fn is_finished(status: &Status, rounds_total: u32) -> bool {
    status.rounds_scheduled >= rounds_total && status.queued + status.leased == 0
}

/// The progress map, whatever a panicking holder left in it (it is only
/// ever a cache of the latest heartbeats).
fn lock_progress(
    progress: &Mutex<HashMap<String, u32>>,
) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
    progress
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Milliseconds since the epoch: lease deadlines survive a coordinator restart.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The coordinator. Cheap to share (`Arc`).
pub struct Coordinator {
    store: Store,
    config: CoordinatorConfig,
    metrics: CoordinatorMetrics,
    /// Woken when a lease is granted that runs out before the expiry task
    /// would wake, so it re-reads the earliest deadline.
    lease_granted: Notify,
    /// The deadline (ms) the expiry task sleeps until: `u64::MAX` when no
    /// lease is current, 0 while it is reading the deadlines (then every
    /// new lease wakes it). A lease that runs out later than this needs no
    /// wake-up, which spares a store read per lease.
    expiry_wake_ms: AtomicU64,
    /// What never changes about each tournament, read once.
    known: KnownTournaments,
    /// Where replays and bot logs are kept, and for how long.
    attachments: Attachments,
    /// The turn each running match has reached, by match id, as its
    /// worker's heartbeats last said: live progress for the web pages,
    /// kept in memory only (it is stale within a heartbeat anyway).
    progress: Mutex<HashMap<String, u32>>,
    /// Set when nothing will play another match (an `arena run` whose
    /// workers have finished): why a rejudge is refused.
    unplayable: Mutex<Option<String>>,
}

impl Coordinator {
    pub fn new(store: Store, config: CoordinatorConfig) -> Arc<Coordinator> {
        Self::with_attachments(store, config, Attachments::default())
    }

    /// A coordinator keeping replays and logs as `attachments` says.
    pub fn with_attachments(
        store: Store,
        config: CoordinatorConfig,
        attachments: Attachments,
    ) -> Arc<Coordinator> {
        Arc::new(Coordinator {
            store,
            config,
            // Building fixed, valid metric definitions cannot fail.
            metrics: CoordinatorMetrics::new().expect("metric definitions are valid"),
            lease_granted: Notify::new(),
            expiry_wake_ms: AtomicU64::new(0),
            known: KnownTournaments::default(),
            attachments,
            progress: Mutex::default(),
            unplayable: Mutex::default(),
        })
    }

    pub fn attachments(&self) -> &Attachments {
        &self.attachments
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    /// The metrics in the text exposition format, gauges refreshed from the store.
    pub async fn render_metrics(&self) -> String {
        // Exactly the queued matches sit in the queue: one length read,
        // not every tournament's match states on every scrape.
        let queued = self.store.queue_len().await.unwrap_or(0);
        let workers = self.live_workers().await.map(|w| w.len()).unwrap_or(0);
        let quarantined = self.store.quarantined().await.map(|q| q.len()).unwrap_or(0);
        self.metrics.set_gauges(queued, workers, quarantined);
        self.metrics.encode()
    }

    /// Workers heard from within three heartbeat intervals, so a worker
    /// that misses a heartbeat or two still counts as connected.
    pub async fn live_workers(&self) -> Result<Vec<WorkerInfo>> {
        Ok(self.store.workers(now_ms(), self.alive_window_ms()).await?)
    }

    /// How recently a worker must have been heard from to count as alive.
    fn alive_window_ms(&self) -> u64 {
        3 * self.config.heartbeat_interval.as_millis() as u64
    }

    /// Creates (or, for an identical tournament, finds) a tournament and
    /// schedules what can be scheduled. Returns its id, which is derived from
    /// its content: submitting the same tournament twice is harmless.
    pub async fn create_tournament(&self, mut new: NewTournament) -> Result<String> {
        let entry = registry::find(&new.game)?;
        entry.check_seats(new.seats)?;
        new.rules = entry.rules(&new.rules)?;
        // Complete already; this checks every limit is playable.
        new.limits = new.limits.with(&LimitOverrides::default())?;
        let layout = resolve_teams(entry, &new)?;
        let sides = Sides::new(new.seats, &layout)?.count();
        new.teams = Some(layout);
        if new.entrants.is_empty() {
            return Err(CoordinatorError::Invalid(
                "a tournament needs at least one entrant".into(),
            ));
        }
        // Baselines fill the seats entrants leave empty, if the game has
        // any. A team entrant plays every seat of its side, so a team game
        // needs one entrant per side.
        if new.entrants.len() < sides && fill_baseline(entry).is_none() {
            return Err(CoordinatorError::Invalid(format!(
                "{} entrants cannot fill {sides} {}",
                new.entrants.len(),
                if sides == new.seats { "seats" } else { "sides" },
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (_, hash) in &new.entrants {
            if baseline_name(hash).is_some() {
                return Err(CoordinatorError::UnknownSubmission(hash.clone()));
            }
            if !seen.insert(hash.clone()) {
                return Err(CoordinatorError::DuplicateSubmission(hash.clone()));
            }
            if !self.store.has_submission(hash).await? {
                return Err(CoordinatorError::UnknownSubmission(hash.clone()));
            }
        }
        let wasm_entrants = self.wasm_entrants(&new).await?;
        if wasm_entrants.is_empty() {
            new.wasm_runtime = None;
        }
        let model_entrants = self.model_entrants(&new).await?;
        if model_entrants.is_empty() {
            new.model_runtime = None;
        }
        let id = tournament_id(&new);
        let spec = TournamentSpec {
            id: id.clone(),
            name: new.name,
            game: new.game,
            format: new.format,
            seats: new.seats,
            base_seed: new.base_seed,
            entrants: new
                .entrants
                .into_iter()
                .map(|(name, hash)| Entrant { id: hash, name })
                .collect(),
            cancelled: false,
            rules: new.rules,
            limits: new.limits,
            environment: new.environment,
            teams: new.teams.unwrap_or_default(),
            wasm_entrants,
            wasm_runtime: new.wasm_runtime,
            model_entrants,
            model_runtime: new.model_runtime,
        };
        match self.store.create_tournament(spec).await {
            Ok(()) => {}
            // The same definition again is the same tournament, unless it
            // was cancelled: then creating it is refused, not a silent no-op.
            Err(StoreError::AlreadyExists(_)) => {
                if self.spec(&id).await?.cancelled {
                    return Err(CoordinatorError::Cancelled(id));
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.advance(&id).await?;
        Ok(id)
    }

    /// The entrants of `new` that are WebAssembly bots, read off their
    /// archives ([`crate::wasm::is_wasm_archive`]); none in a game without
    /// fuel, whose archives are not read at all.
    async fn wasm_entrants(&self, new: &NewTournament) -> Result<Vec<EntrantId>> {
        if new.limits.fuel.is_none() {
            return Ok(Vec::new());
        }
        self.entrants_whose_archive(new, crate::wasm::is_wasm_archive)
            .await
    }

    /// The entrants of `new` that are model-graph bots, read off their
    /// archives ([`crate::model_graph::is_model_archive`]); none in a game
    /// without model limits, whose archives are not read for it at all.
    async fn model_entrants(&self, new: &NewTournament) -> Result<Vec<EntrantId>> {
        if new.limits.model.is_none() {
            return Ok(Vec::new());
        }
        self.entrants_whose_archive(new, crate::model_graph::is_model_archive)
            .await
    }

    /// The entrants of `new` whose submission archive passes `test`, in
    /// entrant order.
    async fn entrants_whose_archive(
        &self,
        new: &NewTournament,
        test: fn(&[u8]) -> bool,
    ) -> Result<Vec<EntrantId>> {
        let mut found = Vec::new();
        for (_, hash) in &new.entrants {
            let archive = self
                .store
                .get_submission(hash)
                .await?
                .ok_or_else(|| CoordinatorError::UnknownSubmission(hash.clone()))?;
            if test(&archive) {
                found.push(hash.clone());
            }
        }
        Ok(found)
    }

    async fn spec(&self, id: &str) -> Result<TournamentSpec> {
        self.store
            .tournament(id)
            .await?
            .ok_or_else(|| CoordinatorError::UnknownTournament(id.to_owned()))
    }

    /// The unchanging part of a tournament, from the store on first use.
    async fn known(&self, id: &str) -> Result<Arc<Known>> {
        if let Some(known) = self.known.get(id) {
            return Ok(known);
        }
        let spec = self.spec(id).await?;
        let sides = sides(&spec)?;
        Ok(self.known.insert(Known::new(spec, sides)))
    }

    /// Total rounds of a tournament.
    pub fn rounds_total(spec: &TournamentSpec) -> Result<u32> {
        Ok(match spec.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } => {
                let rounds = schedule::round_robin_round_count_by_side(
                    &entrant_ids(spec),
                    &sides(spec)?,
                    cycles,
                    games_per_pairing,
                    fill_baseline(registry::find(&spec.game)?),
                )?;
                rounds as u32
            }
            Format::Swiss { rounds } => rounds,
        })
    }

    /// Schedules the next rounds once they can be: a round-robin all at
    /// once, Swiss one round after the previous one is complete. Safe to call
    /// any number of times (the store ignores a round scheduled twice).
    #[tracing::instrument(
        name = "advance",
        skip_all,
        fields(tournament = %id, round = Empty, scheduled = Empty)
    )]
    pub async fn advance(&self, id: &str) -> Result<()> {
        // What is scheduled is read first, and cheaply: after most results
        // there is nothing to schedule, and only then is the whole spec
        // (whether the tournament is cancelled) read.
        let known = self.known(id).await?;
        let scheduled = self.store.rounds_scheduled(id).await?;
        match known.spec.format {
            Format::RoundRobin { .. } => {
                if scheduled >= Self::rounds_total(&known.spec)? {
                    known.set_all_scheduled();
                    return Ok(());
                }
            }
            Format::Swiss { rounds } => {
                if scheduled >= rounds {
                    return Ok(());
                }
            }
        }
        let spec = self.spec(id).await?;
        if spec.cancelled {
            return Ok(());
        }
        let ids = entrant_ids(&spec);
        let sides = known.sides.clone();
        let baseline = fill_baseline(registry::find(&spec.game)?);
        match spec.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } => {
                // The whole schedule is known up front; rounds already
                // queued (all of them, or those queued before a crash cut
                // the scheduling short) are skipped, the rest queued.
                let total = Self::rounds_total(&spec)?;
                if scheduled < total {
                    let base_seed = spec.base_seed;
                    let rounds = off_the_runtime(move || {
                        schedule::round_robin_by_side(
                            &ids,
                            &sides,
                            cycles,
                            games_per_pairing,
                            base_seed,
                            baseline,
                        )
                    })
                    .await??;
                    let count = rounds.len();
                    for (index, round) in rounds.into_iter().enumerate().skip(scheduled as usize) {
                        self.schedule(id, index as u32, round).await?;
                    }
                    let span = tracing::Span::current();
                    span.record("round", count.saturating_sub(1));
                    span.record("scheduled", count.saturating_sub(scheduled as usize));
                }
            }
            Format::Swiss { rounds } => {
                if scheduled >= rounds {
                    return Ok(());
                }
                let status = self.store.status(id).await?;
                if status.queued + status.leased > 0 {
                    return Ok(());
                }
                let history = self.store.results(id).await?;
                let base_seed = spec.base_seed;
                let round = off_the_runtime(move || {
                    schedule::swiss_round_by_side(
                        scheduled, &ids, &history, &sides, base_seed, baseline,
                    )
                })
                .await??;
                self.schedule(id, scheduled, round).await?;
                let span = tracing::Span::current();
                span.record("round", scheduled);
                span.record("scheduled", 1);
            }
        }
        Ok(())
    }

    async fn schedule(&self, id: &str, round: u32, plan: crate::model::Round) -> Result<()> {
        let matches = plan
            .pairings
            .into_iter()
            .enumerate()
            .map(|(index, pairing)| ScheduledMatch {
                match_id: match_id(id, round, index),
                pairing,
            })
            .collect();
        self.store
            .schedule_round(id, round, matches, plan.byes)
            .await?;
        Ok(())
    }

    pub async fn register_worker(&self, info: WorkerInfo) -> Result<()> {
        self.store.register_worker(info, now_ms()).await?;
        Ok(())
    }

    /// Leases the next match for `worker`, preferring matches whose
    /// submissions it has already built.
    #[tracing::instrument(
        name = "lease",
        skip_all,
        fields(worker = %worker, match_id = Empty, lease_id = Empty, attempt = Empty)
    )]
    pub async fn lease(&self, worker: &str) -> Result<Option<LeasedMatch>> {
        let alive_since = now_ms().saturating_sub(self.alive_window_ms());
        let ttl = self.config.lease_ttl;
        let lease_id = new_lease_id()?;
        // One store call checks the worker (registered, alive, not
        // quarantined) and leases with its cache and environment.
        let granted = self
            .store
            .lease_worker(
                worker,
                &lease_id,
                now_ms(),
                ttl.as_millis() as u64,
                alive_since,
            )
            .await?;
        let lease = match granted {
            LeaseGrant::Granted(lease) => lease,
            LeaseGrant::Empty => return Ok(None),
            LeaseGrant::Unregistered => {
                return Err(CoordinatorError::UnregisteredWorker(worker.to_owned()));
            }
            LeaseGrant::Quarantined => {
                return Err(CoordinatorError::Quarantined(worker.to_owned()));
            }
        };
        let span = tracing::Span::current();
        span.record("match_id", lease.match_id.as_str());
        span.record("lease_id", lease.lease_id.as_str());
        span.record("attempt", lease.attempt);
        if lease.expires_at_ms < self.expiry_wake_ms.load(Ordering::SeqCst) {
            self.lease_granted.notify_one();
        }
        let known = self.known(&lease.tournament).await?;
        let seats = lease
            .pairing
            .seats
            .iter()
            .map(|seat| match baseline_name(seat) {
                Some(baseline) => LeasedSeat {
                    submission: String::new(),
                    name: seat.clone(),
                    baseline: Some(baseline.to_owned()),
                },
                None => LeasedSeat {
                    submission: seat.clone(),
                    name: known
                        .names
                        .get(seat)
                        .cloned()
                        .unwrap_or_else(|| seat.clone()),
                    baseline: None,
                },
            })
            .collect();
        Ok(Some(LeasedMatch {
            lease,
            game: known.spec.game.clone(),
            rules: known.spec.rules.clone(),
            limits: known.spec.limits,
            seats,
            ttl,
        }))
    }

    /// Extends the listed leases; returns those that are no longer current.
    /// Refused whole ([`StoreError::NotLeaseHolder`]) if any of them is
    /// current but was granted to another worker, and
    /// [`CoordinatorError::UnregisteredWorker`] if `worker` never registered.
    pub async fn heartbeat(
        &self,
        worker: &str,
        lease_ids: &[String],
        cached: Vec<String>,
    ) -> Result<Vec<String>> {
        // One store call records the worker alive and extends its leases.
        self.store
            .heartbeat_leases(
                worker,
                now_ms(),
                self.config.lease_ttl.as_millis() as u64,
                cached,
                lease_ids,
            )
            .await?
            .ok_or_else(|| CoordinatorError::UnregisteredWorker(worker.to_owned()))
    }

    /// Records a result; the first valid one for a match wins. A result
    /// that does not fit its match (see [`report::check`]) is refused with
    /// [`CoordinatorError::InvalidResult`] and changes nothing; one for a
    /// match that was never scheduled with [`CoordinatorError::UnknownMatch`].
    ///
    /// An accepted result costs one store call. What `report::check` needs
    /// of the pairing is only who sits where, and the store compares that
    /// itself before it writes ([`Store::report`]); so the rest of the
    /// check runs here on the record's own seats, and the pairing is read
    /// only to say what is wrong with a result that does not fit.
    #[tracing::instrument(
        name = "report",
        skip_all,
        fields(match_id = %record.match_id, lease_id = %lease_id, outcome = Empty)
    )]
    pub async fn report(
        &self,
        worker: &str,
        lease_id: &str,
        mut record: MatchRecord,
        replay: Option<Vec<u8>>,
        logs: Vec<Vec<u8>>,
        duration_s: f64,
    ) -> Result<CompleteOutcome> {
        record.worker = worker.to_owned();
        let tournament = match_tournament(&record.match_id)
            .map(str::to_owned)
            .unwrap_or_default();
        let counted = match self.check_own_seats(&tournament, &record).await? {
            Some(counted) => counted,
            None => self.check_against_pairing(&tournament, &record).await?,
        };
        let match_id = record.match_id.clone();
        // The blobs go first: the store's slot only names them.
        let slot = self.attachments.store(replay.as_deref(), &logs).await?;
        let reported = self
            .store
            .report(
                worker,
                &match_id,
                lease_id,
                record.clone(),
                slot,
                self.quarantine_rule(),
            )
            .await?;
        let outcome = match reported {
            Reported::Checked(CompleteOutcome::Unknown) => {
                return Err(CoordinatorError::UnknownMatch(match_id));
            }
            Reported::Checked(outcome) => outcome,
            // The record's seats are not the match's: the pairing says how.
            Reported::WrongSeats => {
                self.check_against_pairing(&tournament, &record).await?;
                // Seats and pairing are written together at scheduling.
                return Err(StoreError::Corrupt(format!(
                    "match {match_id}: its stored seats and pairing disagree"
                ))
                .into());
            }
        };
        tracing::Span::current().record(
            "outcome",
            match outcome {
                CompleteOutcome::Accepted => "accepted",
                CompleteOutcome::Duplicate => "duplicate",
                CompleteOutcome::StaleLease => "stale_lease",
                CompleteOutcome::Unknown => "unknown",
            },
        );
        if outcome == CompleteOutcome::Accepted {
            self.forget_progress(&match_id);
            // The store counted the lease as one that ended with a result.
            self.metrics.result_accepted(&counted, duration_s);
            // The result is stored whatever happens next: a failure to
            // schedule now is left to the periodic recovery step, not
            // reported as a failed report (which the worker would retry).
            // A round robin seen fully queued has nothing to schedule.
            let queued_whole = self
                .known
                .get(&tournament)
                .is_some_and(|known| known.all_scheduled());
            if !tournament.is_empty()
                && !queued_whole
                && let Err(e) = self.advance(&tournament).await
            {
                tracing::warn!(
                    tournament = %tournament,
                    error = %chain(&e),
                    "advancing after a result failed; the recovery step retries"
                );
            }
        }
        Ok(outcome)
    }

    /// [`report::check`] of `record` against a pairing that seats exactly
    /// the record's own entrants, the seat count taken from the tournament:
    /// everything but who sits where. `Some(record as the metrics count
    /// it)` if that passes; `None` if it does not, or the tournament is not
    /// known, for [`Self::check_against_pairing`] to give the answer.
    async fn check_own_seats(
        &self,
        tournament: &str,
        record: &MatchRecord,
    ) -> Result<Option<MatchRecord>> {
        let known = match self.known(tournament).await {
            Ok(known) => known,
            Err(CoordinatorError::UnknownTournament(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if record.seats.len() != known.spec.seats {
            return Ok(None);
        }
        let claimed = crate::model::Pairing {
            seats: record.seats.iter().map(|s| s.entrant.clone()).collect(),
            seed: 0,
        };
        if report::check(record, &claimed, &known.sides).is_err() {
            return Ok(None);
        }
        // The metrics count matches by side: a 2v2 one side won is a win,
        // not a draw of its two seats.
        Ok(known.sides.collapse(record).ok())
    }

    /// [`report::check`] of `record` against its match's stored pairing,
    /// as the store has it: the record as the metrics count it, or why it
    /// is refused.
    async fn check_against_pairing(
        &self,
        tournament: &str,
        record: &MatchRecord,
    ) -> Result<MatchRecord> {
        match self.store.pairing(&record.match_id).await? {
            Some(pairing) => {
                // A scheduled match's tournament exists: its spec has the teams.
                let known = self.known(tournament).await?;
                let sides = &known.sides;
                report::check(record, &pairing, sides)?;
                Ok(sides.collapse(record).map_err(ResultError::from)?)
            }
            // Every scheduled match has its pairing stored: a report for
            // any other id names no match at all.
            None => Err(CoordinatorError::UnknownMatch(record.match_id.clone())),
        }
    }

    /// The quarantine policy as the store counts it; `None` when it can
    /// never quarantine anyone, and then no lease end is counted.
    fn quarantine_rule(&self) -> Option<QuarantineRule> {
        let policy = self.config.quarantine;
        (policy.failures > 0).then_some(QuarantineRule {
            window: policy.window,
            failures: policy.failures,
        })
    }

    /// An infrastructure failure: the match goes back to the queue, or is
    /// set aside as stuck after [`CoordinatorConfig::max_attempts`] failed
    /// attempts in a row. `None` if the lease was not current. The lease
    /// is counted against the worker's quarantine window in the same store
    /// call.
    #[tracing::instrument(name = "fail", skip_all, fields(match_id = %match_id, lease_id = %lease_id))]
    pub async fn fail(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
    ) -> Result<Option<AttemptEnd>> {
        let reason = bounded_reason(reason);
        let failed = self
            .store
            .fail_counted(
                worker,
                match_id,
                lease_id,
                &reason,
                self.config.max_attempts,
                self.quarantine_rule(),
            )
            .await?;
        let Some(failed) = failed else {
            return Ok(None);
        };
        self.attempt_ended(match_id, failed.end);
        if failed.quarantined {
            self.worker_quarantined(worker);
        }
        Ok(Some(failed.end))
    }

    /// Puts a stuck match back in the queue (an organiser's decision, after
    /// fixing whatever made its attempts fail).
    pub async fn requeue(&self, match_id: &str) -> Result<()> {
        match self.store.requeue(match_id).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(CoordinatorError::NotStuck(match_id.to_owned())),
            Err(StoreError::UnknownMatch(id)) => Err(CoordinatorError::UnknownMatch(id)),
            Err(StoreError::Cancelled(id)) => Err(CoordinatorError::Cancelled(id)),
            Err(e) => Err(e.into()),
        }
    }

    /// Lifts a worker's quarantine; it starts afresh.
    pub async fn release_worker(&self, worker: &str) -> Result<()> {
        if self.store.worker(worker).await?.is_none() {
            return Err(CoordinatorError::UnregisteredWorker(worker.to_owned()));
        }
        self.store.set_quarantined(worker, false).await?;
        tracing::info!(worker, "worker released from quarantine");
        Ok(())
    }

    /// Every registered worker, sorted by id, with whether it is alive and
    /// whether it is quarantined.
    pub async fn workers(&self) -> Result<Vec<WorkerState>> {
        let now = now_ms();
        let alive: std::collections::BTreeSet<String> = self
            .store
            .workers(now, self.alive_window_ms())
            .await?
            .into_iter()
            .map(|w| w.id)
            .collect();
        let quarantined = self.store.quarantined().await?;
        Ok(self
            .store
            .workers(now, u64::MAX)
            .await?
            .into_iter()
            .map(|info| WorkerState {
                alive: alive.contains(&info.id),
                quarantined: quarantined.contains(&info.id),
                info,
            })
            .collect())
    }

    /// Logs and counts what became of a match whose attempt failed.
    fn attempt_ended(&self, match_id: &str, end: AttemptEnd) {
        self.forget_progress(match_id);
        if end == AttemptEnd::Stuck {
            self.metrics.match_stuck();
            tracing::warn!(
                match_id,
                attempts = self.config.max_attempts,
                "match stuck after its last allowed attempt; see `arena tournament status`, \
                 requeue it with `arena tournament requeue`"
            );
        }
    }

    /// Counts one of `worker`'s leases ending and quarantines the worker when
    /// too many of its recent ones failed. Bookkeeping only: a store error
    /// here is logged, never returned, so it cannot undo the result or
    /// failure being recorded.
    async fn lease_ended(&self, worker: &str, failed: bool) {
        let policy = self.config.quarantine;
        if policy.failures == 0 {
            return;
        }
        let counted = self
            .store
            .record_lease_end(worker, failed, policy.window)
            .await;
        let quarantine = match counted {
            Ok(failures) => failed && failures >= policy.failures,
            Err(e) => {
                tracing::error!(worker, error = %chain(&e), "counting the worker's leases");
                false
            }
        };
        if quarantine {
            match self.store.set_quarantined(worker, true).await {
                Ok(()) => self.worker_quarantined(worker),
                Err(e) => tracing::error!(worker, error = %chain(&e), "quarantining the worker"),
            }
        }
    }

    /// Counts and announces a worker the store has just quarantined.
    fn worker_quarantined(&self, worker: &str) {
        let policy = self.config.quarantine;
        self.metrics.worker_quarantined();
        tracing::warn!(
            worker,
            failures = policy.failures,
            window = policy.window,
            "worker quarantined: too many of its last leases ended without a result; \
             it gets no new leases until released"
        );
    }

    /// The recovery step: advances every tournament that is not cancelled,
    /// so scheduling interrupted by a crash (a Swiss round never scheduled
    /// after the last result of the one before, a round robin only partly
    /// queued) is finished. Idempotent; run at start-up and periodically.
    /// Errors are per tournament and logged; the others still advance.
    pub async fn recover(&self) -> Result<()> {
        for id in self.store.tournaments().await? {
            if let Err(e) = self.advance(&id).await {
                tracing::error!(tournament = %id, error = %chain(&e), "recovering the tournament");
            }
        }
        Ok(())
    }

    /// Runs [`Coordinator::recover`] now and then every
    /// [`CoordinatorConfig::recovery_interval`] until `shutdown` resolves.
    pub async fn run_recovery(&self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            if let Err(e) = self.recover().await {
                tracing::error!(error = %chain(&e), "recovery step failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(self.config.recovery_interval) => {}
                _ = &mut shutdown => return,
            }
        }
    }

    /// Requeues expired leases until `shutdown` resolves, sleeping until the
    /// earliest deadline instead of polling.
    pub async fn run_expiry(&self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            // Every lease granted from here until the deadline is stored
            // wakes this task (see `expiry_wake_ms`): none slips in between
            // the read and the sleep.
            self.expiry_wake_ms.store(0, Ordering::SeqCst);
            let (wait, wake_at) = match self.store.next_expiry().await {
                Ok(Some(at)) => (Duration::from_millis(at.saturating_sub(now_ms()) + 1), at),
                Ok(None) => (Duration::from_secs(3600), u64::MAX),
                Err(e) => {
                    tracing::error!(error = %chain(&e), "reading lease deadlines");
                    (Duration::from_secs(1), 0)
                }
            };
            self.expiry_wake_ms.store(wake_at, Ordering::SeqCst);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.lease_granted.notified() => continue,
                _ = &mut shutdown => return,
            }
            let span = tracing::info_span!("expire", count = Empty);
            let expired = self
                .store
                .expire(now_ms(), self.config.max_attempts)
                .instrument(span.clone())
                .await;
            match expired {
                Ok(expired) => {
                    span.record("count", expired.len());
                    self.metrics.leases_expired(expired.len());
                    for lease in expired {
                        let match_id = lease.match_id.as_str();
                        let then = match lease.end {
                            AttemptEnd::Requeued => "requeued",
                            AttemptEnd::Stuck => "the match is stuck",
                            AttemptEnd::Dropped => "dropped (tournament cancelled)",
                        };
                        span.in_scope(|| {
                            tracing::warn!(match_id, worker = %lease.worker, then, "lease expired")
                        });
                        self.attempt_ended(match_id, lease.end);
                        self.lease_ended(&lease.worker, true).await;
                    }
                }
                Err(e) => tracing::error!(error = %chain(&e), "expiring leases"),
            }
        }
    }

    pub async fn status(&self, id: &str) -> Result<(Status, u32)> {
        let spec = self.spec(id).await?;
        Ok((self.store.status(id).await?, Self::rounds_total(&spec)?))
    }

    pub async fn standings(&self, id: &str) -> Result<Standings> {
        let spec = self.spec(id).await?;
        let entrants: Vec<(EntrantId, String)> = spec
            .entrants
            .iter()
            .map(|e| (e.id.clone(), e.name.clone()))
            .collect();
        let results = self.store.results(id).await?;
        let byes = self.store.byes(id).await?;
        Ok(standings::compute_by_side(
            &entrants,
            &results,
            &byes,
            &sides(&spec)?,
        )?)
    }

    pub async fn cancel(&self, id: &str) -> Result<()> {
        self.spec(id).await?;
        self.store.cancel(id).await?;
        Ok(())
    }
}

/// A new lease id: 128 bits from the kernel, as hex. Unguessable, so no
/// worker can act on a lease it was not given by guessing its id.
fn new_lease_id() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(CoordinatorError::Entropy)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The longest failure reason kept per attempt; a worker's reason is its
/// own text and must not grow the store without bound.
const MAX_REASON_BYTES: usize = 2048;

/// `reason`, cut to [`MAX_REASON_BYTES`] at a character boundary.
fn bounded_reason(reason: &str) -> String {
    if reason.len() <= MAX_REASON_BYTES {
        return reason.to_owned();
    }
    let mut end = MAX_REASON_BYTES;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… (cut)", &reason[..end])
}

/// An error and its causes on one line, each said once.
pub use arena_proto::error_chain as chain;

/// The field's entrant ids, in registration order.
fn entrant_ids(spec: &TournamentSpec) -> Vec<EntrantId> {
    spec.entrants.iter().map(|e| e.id.clone()).collect()
}

/// The sides of a tournament's matches, from its stored team layout.
fn sides(spec: &TournamentSpec) -> Result<Sides> {
    Ok(Sides::new(spec.seats, &spec.teams)?)
}

/// The team layout a new tournament is played with: the game's own, read
/// off a match it makes for these seats and rules, or the one `new`
/// declares when the game reports none (see [`NewTournament::teams`]).
fn resolve_teams(entry: &GameEntry, new: &NewTournament) -> Result<Vec<u32>> {
    if let Some(given) = &new.teams {
        Sides::new(new.seats, given)?;
    }
    let game = teams::probe(entry, new.seats, &new.rules)?;
    match &new.teams {
        Some(given) if !game.is_empty() && *given != game => Err(TeamError::NotTheGames {
            game,
            given: given.clone(),
        }
        .into()),
        Some(given) if game.is_empty() => Ok(given.clone()),
        _ => Ok(game),
    }
}

/// The baseline that fills seats the field leaves empty: the game's first,
/// or `None` for a game without baselines (whose fields must fill every seat).
/// Runs a pure scheduling computation on tokio's blocking pool: pairing a
/// large Swiss field or laying out a large round robin takes long enough to
/// stall every lease, heartbeat and report an async thread would serve.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(CoordinatorError::SchedulingTask)
}

fn fill_baseline(entry: &GameEntry) -> Option<&'static str> {
    entry.baselines.first().copied()
}
