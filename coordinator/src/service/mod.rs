//! The coordinator's logic, independent of the wire: tournaments are created
//! and scheduled, matches leased to workers, results recorded (first valid
//! result wins), rounds advanced, expired leases requeued, standings computed.
//! Everything it knows lives in the [`Store`], so a restarted coordinator
//! carries on where the last one stopped.
//!
//! # Layout
//!
//! This module holds the [`Coordinator`], its configuration and the helpers
//! its parts share; each part adds its operations in an `impl Coordinator`
//! of its own:
//!
//! * `tournaments`: creating, advancing (scheduling rounds as they fall
//!   due), status, standings and cancelling.
//! * `leases`: leasing a match, heartbeats, results and failures, and
//!   requeueing a stuck match.
//! * `workers`: registering, the live and all workers, and the quarantine's
//!   bookkeeping.
//! * `background`: the recovery step and lease expiry, run as tasks.
//! * `attached`: what the web pages read besides the store (replays, logs,
//!   entrant tokens) and the organiser's rejudge.
//! * `live`: running matches' turns and boards, as their workers report
//!   them.
//! * `error`: [`CoordinatorError`].
//! * `ids` derives tournament and match ids; `known` keeps what never
//!   changes about each tournament, so leases and reports need not re-read
//!   it.

mod attached;
mod background;
mod error;
mod ids;
mod known;
mod leases;
mod live;
mod tournaments;
mod workers;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;

pub use self::error::CoordinatorError;
pub(crate) use self::ids::match_round;
pub use self::ids::tournament_id;
use self::known::{Known, KnownTournaments};
pub use self::leases::{LeasedMatch, LeasedSeat};
use self::live::LiveMatches;
pub use self::live::{LiveMatch, MAX_BOARD_BYTES};
pub use self::tournaments::{NewTournament, is_finished};
pub use self::workers::WorkerState;
use crate::attachments::Attachments;
use crate::domain::EntrantId;
use crate::metrics::CoordinatorMetrics;
use crate::store::{DEFAULT_MAX_ATTEMPTS, Store, TournamentSpec};
use crate::teams::Sides;

/// How often workers report running matches' boards, by default: a live
/// page's board lags its match by one to two of these.
pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Timing and fault policy.
#[derive(Clone, Debug)]
pub struct CoordinatorConfig {
    /// How long a lease lives without a heartbeat.
    pub lease_ttl: Duration,
    /// How often workers are asked to heartbeat (well under the TTL).
    pub heartbeat_interval: Duration,
    /// How often workers are asked to report their running matches'
    /// boards for the live pages; zero: never.
    pub progress_interval: Duration,
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
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
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

type Result<T> = std::result::Result<T, CoordinatorError>;

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
    /// Running matches as their workers last reported them.
    live: LiveMatches,
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
            live: LiveMatches::default(),
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
