//! The embedded store: all state in one struct behind a `std` mutex, for
//! `arena run` and for tests of everything above the store.
//!
//! Each method takes the lock once, validates, mutates and returns, so every
//! operation is one critical section: that is the in-process counterpart of
//! a Redis script. The lock is never held across an `.await` (the methods
//! contain none), which is why a `std` mutex is the right tool here and a
//! tokio one would only add overhead. Nothing survives the process.
//!
//! # Layout
//!
//! This module holds the state (laid out like the Redis keys) and the lock;
//! the operations are grouped as the Redis store's scripts are:
//!
//! * `tournaments`: creating, cancelling and scheduling rounds.
//! * `leases`: leasing a match to a worker and extending its leases.
//! * `attempts`: how an attempt ends (a result, a failure, an expired
//!   lease) and putting a stuck or finished match back in the queue.
//! * `workers`: registration, liveness, lease endings and the quarantine.
//! * `reads`: what only reads (status, matches, results, replays).
//! * `submissions`: submission archives and entrant tokens.
//! * `tracked`: the collections that note what each operation changed, and
//!   `rows`: those changes (and a whole state) as rows for the on-disk
//!   store, which wraps this one (see `store::disk`).

mod attempts;
mod leases;
mod reads;
mod rows;
mod submissions;
mod tournaments;
mod tracked;
mod workers;

pub(crate) use self::rows::{Changes, Table};

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use self::tracked::{Queue, Tracked};
use super::error::{Result, StoreError};
use super::types::{AttemptFailure, TournamentSpec, WorkerInfo};
use crate::domain::{EntrantId, MatchRecord, Pairing};

/// The embedded backend. Clones share one state.
#[derive(Clone, Debug)]
pub struct MemoryStore {
    /// Everything, behind one lock so each operation is atomic.
    state: Arc<Mutex<State>>,
}

/// The whole store, mirroring the Redis layout in `docs/redis-keys.md`.
/// `lease_match` and `expiries` are indexes of the leased slots in
/// `matches`; everything else is written to disk by the on-disk store.
#[derive(Debug, PartialEq)]
struct State {
    /// By id, sorted, so `tournaments()` comes out sorted.
    tournaments: Tracked<Tournament>,
    /// Every scheduled match of every tournament, by match id.
    matches: Tracked<MatchEntry>,
    /// Queued match ids, next to lease at the front.
    queue: Queue,
    /// Current lease id → its match.
    lease_match: HashMap<String, String>,
    /// Current leases ordered by (expiry, lease id), the same order Redis
    /// gives a sorted set, so both backends requeue in the same order.
    expiries: BTreeSet<(u64, String)>,
    /// Replays of accepted results, by match id.
    replays: Tracked<Vec<u8>>,
    /// Submission archives by content hash.
    submissions: Tracked<Vec<u8>>,
    /// Registered workers with the time they were last heard from.
    workers: Tracked<(WorkerInfo, u64)>,
    /// Each worker's recent lease endings, newest last (`true`: failed).
    lease_ends: Tracked<VecDeque<bool>>,
    /// Workers that get no new leases.
    quarantined: Tracked<()>,
    /// Entrant token digests → the submission each unlocks.
    entrant_tokens: Tracked<String>,
}

/// One tournament's own data.
#[derive(Debug, PartialEq)]
struct Tournament {
    /// As created, with `cancelled` kept current.
    spec: TournamentSpec,
    /// Rounds scheduled so far.
    rounds: u32,
    /// Match ids in schedule order (round, then position in the round).
    matches: Vec<String>,
    /// (round, entrant) for every bye, in schedule order.
    byes: Vec<(u32, EntrantId)>,
}

/// One match: immutable scheduling data plus where it stands.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct MatchEntry {
    /// Owning tournament.
    tournament: String,
    /// Round it was scheduled in.
    round: u32,
    /// Its place in its tournament's schedule (`Tournament::matches`).
    index: usize,
    /// Seats and seed.
    pairing: Pairing,
    /// Attempt number of the current or next lease.
    attempt: u32,
    /// Where it stands.
    slot: Slot,
    /// Every attempt that ended without a result, oldest first.
    failures: Vec<AttemptFailure>,
    /// Attempts failed in a row since it was scheduled or last requeued by
    /// an organiser.
    strikes: u32,
    /// The result of a rejudged match, which stays (and counts) until a new
    /// one replaces it.
    kept: Option<MatchRecord>,
}

/// A match's state; the lease fields live here so "is this lease current"
/// is a single comparison.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Slot {
    /// In `State::queue`.
    Queued,
    /// Held under a lease that is also in `lease_match` and `expiries`.
    Leased {
        /// The current lease; any other lease id is stale.
        lease_id: String,
        /// Who holds it.
        worker: String,
        /// Its key in `State::expiries`, needed to remove it from there.
        expires_at_ms: u64,
    },
    /// Finished; the first accepted record, never replaced.
    Done(MatchRecord),
    /// Cancelled before it could be played.
    Dropped,
    /// Set aside after too many failed attempts.
    Stuck,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::with_state(State::new(false))
    }

    fn with_state(state: State) -> Self {
        MemoryStore {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// Takes the lock. A panic while it was held can only have happened
    /// before any mutation (every method validates first), so the state is
    /// still consistent and poisoning is ignored.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn new(track: bool) -> Self {
        State {
            tournaments: Tracked::new(track),
            matches: Tracked::new(track),
            queue: Queue::new(track),
            lease_match: HashMap::new(),
            expiries: BTreeSet::new(),
            replays: Tracked::new(track),
            submissions: Tracked::new(track),
            workers: Tracked::new(track),
            lease_ends: Tracked::new(track),
            quarantined: Tracked::new(track),
            entrant_tokens: Tracked::new(track),
        }
    }

    fn get_tournament(&self, id: &str) -> Result<&Tournament> {
        self.tournaments
            .get(id)
            .ok_or_else(|| StoreError::UnknownTournament(id.to_owned()))
    }
}

/// The refusal of a lease call from a worker the lease was not granted to.
fn not_holder(lease_id: &str, worker: &str) -> StoreError {
    StoreError::NotLeaseHolder {
        lease_id: lease_id.to_owned(),
        worker: worker.to_owned(),
    }
}
