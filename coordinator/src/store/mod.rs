//! Where the coordinator keeps everything it must not forget: tournaments,
//! the schedule, the match queue and its leases, results and replays,
//! submissions, and which workers are alive.
//!
//! Layout: [`Store`] is the interface the rest of the coordinator uses. It is
//! an enum over the three backends rather than a trait object, because async
//! methods in a `dyn` trait would need boxing or a macro crate, and the
//! backends are few and fixed:
//!
//! - [`MemoryStore`] (in `memory`) keeps state in process memory behind a
//!   `std` mutex and loses everything on exit; tests use it, and
//!   `arena run --state none`.
//! - [`DiskStore`] (in `disk`) is the memory store with every change
//!   written to a redb file before the operation returns; `arena run`
//!   uses it by default, so a local tournament can be resumed.
//! - [`RedisStore`] (in `redis_store`) keeps every piece of state in Redis,
//!   so a coordinator can restart and carry on. Its [`keys`] module names
//!   every key, and Lua scripts hold the invariants.
//!
//! [`types`] has the values both speak, [`error`] the one error enum.
//! `tests/store.rs` runs one conformance suite against every backend.
//!
//! # The match life cycle
//!
//! `schedule_round` queues a round's matches at the back. `lease_worker`
//! hands the front one (or, among the first [`LEASE_PREFERENCE_WINDOW`], the
//! first one whose entrants the worker has already built) to a registered,
//! live worker until a deadline. The worker's `heartbeat_leases` extends its
//! leases while it plays, and then it either `report`s the match's result or
//! reports an infrastructure failure with `fail_counted`. A lease that is
//! neither extended nor ended runs out, and `expire` puts its match back at
//! the front of the queue; so does a failure. Each return to the queue adds
//! one to the match's attempt number; after too many failed attempts in a
//! row the match is set aside as stuck until an organiser `requeue`s it. The
//! first result reported under the current lease wins; anything after it is
//! acknowledged and dropped. Only the worker a lease was granted to may
//! extend, report on or fail it.
//!
//! Time is always a parameter (`now_ms`, on whatever millisecond clock the
//! caller uses, below 2^53), never read inside the store, so tests control it
//! and the Redis backend never depends on its own clock. A lease is live
//! while `now_ms < expires_at_ms`.

mod disk;
pub mod error;
mod memory;
mod redis_store;
pub mod types;

pub use self::disk::{DiskStore, FILE_NAME as DISK_FILE_NAME};
pub use self::error::{Result, StoreError};
pub use self::memory::MemoryStore;
pub use self::redis_store::{RedisStore, SUBMISSION_CHUNK, keys};
pub use self::types::{
    AttemptEnd, AttemptFailure, CompleteOutcome, DEFAULT_MAX_ATTEMPTS, Entrant, ExpiredLease,
    FailedLease, LEASE_EXPIRED, LEASE_PREFERENCE_WINDOW, Lease, LiveBoard, MatchInfo, MatchState,
    QuarantineRule, Reported, ScheduledMatch, Status, TournamentSpec, WorkerInfo,
};
use crate::domain::{EntrantId, MatchRecord, Pairing};

/// The coordinator's store: one of the backends, with identical
/// behaviour (the conformance suite in `tests/store.rs` checks that). Clones
/// share state.
#[derive(Clone, Debug)]
pub enum Store {
    /// In-process state, gone when the process exits.
    Memory(MemoryStore),
    /// In-process state kept in a file, read back when opened again.
    Disk(DiskStore),
    /// State in Redis, which survives restarts of the coordinator.
    Redis(RedisStore),
}

/// Calls the same method on whichever backend `self` holds.
macro_rules! dispatch {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            Store::Memory(store) => store.$method($($arg),*).await,
            Store::Disk(store) => store.$method($($arg),*).await,
            Store::Redis(store) => store.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// A fresh in-memory store.
    pub fn memory() -> Self {
        Store::Memory(MemoryStore::new())
    }

    /// The on-disk store in `dir`, created if missing (see [`DiskStore::open`]).
    pub fn open_dir(dir: &std::path::Path) -> Result<Self> {
        Ok(Store::Disk(DiskStore::open(dir)?))
    }

    /// A store in the Redis at `url` (`redis://…` or `unix:///…`).
    pub async fn redis(url: &str) -> Result<Self> {
        Ok(Store::Redis(RedisStore::connect(url).await?))
    }

    // Tournaments.

    /// Creates a tournament. Fails with [`StoreError::AlreadyExists`] if the
    /// id is taken, whatever the other fields say.
    pub async fn create_tournament(&self, spec: TournamentSpec) -> Result<()> {
        dispatch!(self.create_tournament(spec))
    }

    /// A tournament's spec, with `cancelled` as it is now; `None` if unknown.
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentSpec>> {
        dispatch!(self.tournament(id))
    }

    /// Every tournament id, sorted.
    pub async fn tournaments(&self) -> Result<Vec<String>> {
        dispatch!(self.tournaments())
    }

    /// Cancels a tournament and returns how many queued matches it dropped.
    /// Queued matches become [`MatchState::Dropped`]; leased ones keep their
    /// leases, which can no longer be extended (a result reported before the
    /// lease runs out is still accepted; a lease that runs out or fails
    /// drops its match instead of requeueing it). Results already recorded
    /// stay. Repeating a cancel is harmless.
    pub async fn cancel(&self, id: &str) -> Result<usize> {
        dispatch!(self.cancel(id))
    }

    // Schedule.

    /// Schedules round `round` (0-based) of `tournament`: records its byes
    /// and queues its matches at the back, in the given order. Returns
    /// `false` and changes nothing if that round is already scheduled, so a
    /// restarted coordinator can repeat its scheduling step. Rounds go in
    /// order ([`StoreError::RoundOutOfOrder`] otherwise), match ids must be
    /// new ([`StoreError::DuplicateMatch`]), and a cancelled tournament
    /// takes no new rounds ([`StoreError::Cancelled`]).
    pub async fn schedule_round(
        &self,
        tournament: &str,
        round: u32,
        matches: Vec<ScheduledMatch>,
        byes: Vec<EntrantId>,
    ) -> Result<bool> {
        dispatch!(self.schedule_round(tournament, round, matches, byes))
    }

    /// How many rounds are scheduled, which is also the next round's number.
    pub async fn rounds_scheduled(&self, tournament: &str) -> Result<u32> {
        dispatch!(self.rounds_scheduled(tournament))
    }

    /// Every bye as (round, entrant), in schedule order.
    pub async fn byes(&self, tournament: &str) -> Result<Vec<(u32, EntrantId)>> {
        dispatch!(self.byes(tournament))
    }

    // Queue and leases.

    /// The Lease call: leases a queued match to `worker` under `lease_id`
    /// (the caller makes it unique and unguessable;
    /// [`StoreError::DuplicateLease`] if a current lease has it) until
    /// `now_ms + ttl_ms`, but only if the worker is registered, was heard
    /// from at or after `alive_since_ms`, and is not quarantined
    /// ([`LeaseGrant`] says which refusal, and nothing is written then).
    /// Only matches of tournaments that name no environment, or the
    /// worker's registered one, are eligible. Takes the oldest eligible
    /// match, except that among the first [`LEASE_PREFERENCE_WINDOW`] it
    /// prefers the first one whose entrants are all in the worker's build
    /// cache (as registered or last heartbeat), sparing it a build. The
    /// Redis backend does it all in one script.
    pub async fn lease_worker(
        &self,
        worker: &str,
        lease_id: &str,
        now_ms: u64,
        ttl_ms: u64,
        alive_since_ms: u64,
    ) -> Result<LeaseGrant> {
        dispatch!(self.lease_worker(worker, lease_id, now_ms, ttl_ms, alive_since_ms))
    }

    /// Ends every lease with `expires_at_ms <= now_ms`, earliest expiry
    /// first, as [`Store::fail_counted`] ends an attempt (with the reason
    /// [`LEASE_EXPIRED`]): requeued at the front, set aside as stuck after
    /// `max_attempts` failures in a row, or dropped if the tournament was
    /// cancelled. Returns every lease it ended, in that order.
    pub async fn expire(&self, now_ms: u64, max_attempts: u32) -> Result<Vec<ExpiredLease>> {
        dispatch!(self.expire(now_ms, max_attempts))
    }

    /// Who plays a match, in seat order, on which map; `None` for an
    /// unknown match. A match's pairing never changes once scheduled, so a
    /// reported result can be checked against it under any lease.
    pub async fn pairing(&self, match_id: &str) -> Result<Option<Pairing>> {
        dispatch!(self.pairing(match_id))
    }

    /// How many matches, of all tournaments, wait in the queue.
    pub async fn queue_len(&self) -> Result<usize> {
        dispatch!(self.queue_len())
    }

    /// The earliest expiry among current leases, for the coordinator to sleep
    /// until; `None` when nothing is leased.
    pub async fn next_expiry(&self) -> Result<Option<u64>> {
        dispatch!(self.next_expiry())
    }

    /// The ReportResult call: reports a match's result under `lease_id`.
    ///
    /// First the record's seats are compared with the match's pairing
    /// (entrant ids in seat order): a record that seats anyone else is
    /// [`Reported::WrongSeats`] and changes nothing, before the match's
    /// state is looked at (an unknown match is still `Checked(Unknown)`).
    /// Otherwise the first valid report wins: it is
    /// [`CompleteOutcome::Accepted`] only if the match has no result yet and
    /// `lease_id` is its current lease; then the record (and replay, if any)
    /// is stored, the match is done and the lease ends. A report for a
    /// finished match is a `Duplicate`, one under an outdated lease a
    /// `StaleLease`; both change nothing. `record.match_id` must be
    /// `match_id` ([`StoreError::MismatchedRecord`]), and a current lease
    /// may only be reported on by its own worker
    /// ([`StoreError::NotLeaseHolder`]). If the result is accepted and
    /// `quarantine` is given, the lease's end is counted for `worker` as
    /// [`Store::record_lease_end`] counts a lease that ended with a result.
    ///
    /// The Redis backend does it all in one script, so the caller need not
    /// read the pairing to check a result against it: everything else a
    /// result is checked for follows from its own seats.
    pub async fn report(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Reported> {
        dispatch!(self.report(worker, match_id, lease_id, record, replay, quarantine))
    }

    /// The ReportFailure call: ends the current lease after an
    /// infrastructure failure (not the bots' fault), recording `reason`
    /// among the match's failures. The match goes back to the front of the
    /// queue with the next attempt number, unless this was its
    /// `max_attempts`-th failure in a row (then it is [`MatchState::Stuck`])
    /// or its tournament was cancelled (dropped). If it ended the attempt
    /// and `quarantine` is given, the lease's end is also counted for
    /// `worker` as a failure (as [`Store::record_lease_end`] does) and the
    /// worker quarantined (as [`Store::set_quarantined`]) when that leaves
    /// `quarantine.failures` or more failures in its window. `None` (and no
    /// change) if `lease_id` is not the match's current lease;
    /// [`StoreError::NotLeaseHolder`] if it is but `worker` does not hold
    /// it. The Redis backend does it in one script.
    pub async fn fail_counted(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
        max_attempts: u32,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Option<FailedLease>> {
        dispatch!(self.fail_counted(worker, match_id, lease_id, reason, max_attempts, quarantine))
    }

    /// Takes back every lease of `tournament`'s matches because whatever
    /// held them is gone for good (the workers of an `arena run` that was
    /// interrupted): each gets a failure on record with `reason` but no
    /// strike, and goes back to the front of the queue with the next
    /// attempt number, in schedule order (dropped if the tournament is
    /// cancelled). A result reported later under a taken-back lease is
    /// stale. Returns how many leases it took back.
    pub async fn release_leases(&self, tournament: &str, reason: &str) -> Result<usize> {
        dispatch!(self.release_leases(tournament, reason))
    }

    /// Puts a stuck match back at the front of the queue with the next
    /// attempt number and a fresh allowance of attempts; its failures stay
    /// on record. `false` (and no change) if the match is not stuck;
    /// [`StoreError::UnknownMatch`] if there is no such match and
    /// [`StoreError::Cancelled`] if its tournament was cancelled (its stuck
    /// matches stay stuck).
    pub async fn requeue(&self, match_id: &str) -> Result<bool> {
        dispatch!(self.requeue(match_id))
    }

    /// Puts a finished match back at the front of the queue with the next
    /// attempt number: an organiser's rejudge, when a result is in doubt.
    /// Its result and replay stay, and [`Store::results`] keeps returning
    /// the result, until the new result replaces them; rounds already
    /// scheduled from the old one stay.
    /// `false` (and no change) if the match is not done;
    /// [`StoreError::UnknownMatch`] if there is no such match and
    /// [`StoreError::Cancelled`] if its tournament was cancelled.
    pub async fn rejudge(&self, match_id: &str) -> Result<bool> {
        dispatch!(self.rejudge(match_id))
    }

    // Results.

    /// Every accepted result of a tournament, in schedule order.
    pub async fn results(&self, tournament: &str) -> Result<Vec<MatchRecord>> {
        dispatch!(self.results(tournament))
    }

    /// The replay stored with a match's accepted result.
    pub async fn replay(&self, match_id: &str) -> Result<Option<Vec<u8>>> {
        dispatch!(self.replay(match_id))
    }

    /// Match counts by state.
    pub async fn status(&self, tournament: &str) -> Result<Status> {
        dispatch!(self.status(tournament))
    }

    /// Every match of a tournament, in schedule order.
    pub async fn matches(&self, tournament: &str) -> Result<Vec<MatchInfo>> {
        dispatch!(self.matches(tournament))
    }

    // Entrant tokens.

    /// Records that the token with this digest (the caller hashes tokens,
    /// so the store never holds one) unlocks `submission`'s own logs.
    pub async fn put_entrant_token(&self, digest: &str, submission: &str) -> Result<()> {
        dispatch!(self.put_entrant_token(digest, submission))
    }

    /// The submission an entrant token's digest unlocks.
    pub async fn entrant_token(&self, digest: &str) -> Result<Option<String>> {
        dispatch!(self.entrant_token(digest))
    }

    // Workers.

    /// Records a worker (replacing an earlier registration under the same
    /// id) as alive at `now_ms`.
    pub async fn register_worker(&self, info: WorkerInfo, now_ms: u64) -> Result<()> {
        dispatch!(self.register_worker(info, now_ms))
    }

    /// The Heartbeat call: records that `worker` is alive at `now_ms` and
    /// has built `cached`, then moves the expiry of each of `lease_ids` to
    /// `now_ms + ttl_ms`. `None` if the worker never registered (nothing
    /// written; it should register again, e.g. after the memory store
    /// restarted). Otherwise the listed leases that were not extended: not
    /// their match's current lease, the match done, the tournament
    /// cancelled, or the lease already run out. If any listed lease is
    /// current but held by another worker, [`StoreError::NotLeaseHolder`]
    /// and no lease is extended (the heartbeat itself is recorded). The
    /// Redis backend does it in one script.
    pub async fn heartbeat_leases(
        &self,
        worker: &str,
        now_ms: u64,
        ttl_ms: u64,
        cached: Vec<EntrantId>,
        lease_ids: &[String],
    ) -> Result<Option<Vec<String>>> {
        dispatch!(self.heartbeat_leases(worker, now_ms, ttl_ms, cached, lease_ids))
    }

    /// One registered worker, alive or not.
    pub async fn worker(&self, id: &str) -> Result<Option<WorkerInfo>> {
        dispatch!(self.worker(id))
    }

    /// When a registered worker was last heard from; `None` if it never
    /// registered.
    pub async fn worker_seen(&self, id: &str) -> Result<Option<u64>> {
        dispatch!(self.worker_seen(id))
    }

    /// Workers heard from within `alive_within_ms` before `now_ms`
    /// (inclusive), sorted by id.
    pub async fn workers(&self, now_ms: u64, alive_within_ms: u64) -> Result<Vec<WorkerInfo>> {
        dispatch!(self.workers(now_ms, alive_within_ms))
    }

    /// Records how one of a worker's leases ended (`failed`: without a
    /// result, by failure or expiry) and returns how many of its last
    /// `window` leases failed, this one included.
    pub async fn record_lease_end(&self, worker: &str, failed: bool, window: u32) -> Result<u32> {
        dispatch!(self.record_lease_end(worker, failed, window))
    }

    /// Quarantines a worker (it gets no new leases) or releases it, which
    /// also forgets its recent lease endings so it starts afresh.
    pub async fn set_quarantined(&self, worker: &str, quarantined: bool) -> Result<()> {
        dispatch!(self.set_quarantined(worker, quarantined))
    }

    /// Every quarantined worker id, sorted.
    pub async fn quarantined(&self) -> Result<Vec<String>> {
        dispatch!(self.quarantined())
    }

    /// Whether `worker` is quarantined (one lookup, for every lease).
    pub async fn is_quarantined(&self, worker: &str) -> Result<bool> {
        dispatch!(self.is_quarantined(worker))
    }

    // Submissions.

    /// Stores a submission archive under its sha256 (lowercase hex), which
    /// is checked ([`StoreError::HashMismatch`]). Storing it again is a no-op.
    pub async fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> Result<()> {
        dispatch!(self.put_submission(hash, bytes))
    }

    /// A submission archive by hash.
    pub async fn get_submission(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        dispatch!(self.get_submission(hash))
    }

    /// Whether a submission archive is stored.
    pub async fn has_submission(&self, hash: &str) -> Result<bool> {
        dispatch!(self.has_submission(hash))
    }
}

/// What [`Store::lease_worker`] came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseGrant {
    /// A match, leased.
    Granted(Lease),
    /// Nothing this worker may play is queued.
    Empty,
    /// The worker never registered, or has not been heard from recently enough.
    Unregistered,
    /// The worker is quarantined.
    Quarantined,
}

/// A lease's expiry; saturates rather than wrapping on absurd inputs.
fn expiry(now_ms: u64, ttl_ms: u64) -> u64 {
    now_ms.saturating_add(ttl_ms)
}

/// The record must describe the match it is reported for.
fn check_record(match_id: &str, record: &MatchRecord) -> Result<()> {
    if record.match_id == match_id {
        Ok(())
    } else {
        Err(StoreError::MismatchedRecord {
            match_id: match_id.to_owned(),
            record: record.match_id.clone(),
        })
    }
}

/// Submissions are content-addressed: the name must be the bytes' sha256.
fn check_submission_hash(hash: &str, bytes: &[u8]) -> Result<()> {
    let actual = crate::submission_id(bytes);
    if actual == hash {
        Ok(())
    } else {
        Err(StoreError::HashMismatch {
            expected: hash.to_owned(),
            actual,
        })
    }
}
