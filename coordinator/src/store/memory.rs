//! The embedded store: all state in one struct behind a `std` mutex, for
//! `arena run` and for tests of everything above the store.
//!
//! Each method takes the lock once, validates, mutates and returns, so every
//! operation is one critical section: that is the in-process counterpart of
//! a Redis script. The lock is never held across an `.await` (the methods
//! contain none), which is why a `std` mutex is the right tool here and a
//! tokio one would only add overhead. Nothing survives the process.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::error::{Result, StoreError};
use super::types::{
    AttemptEnd, AttemptFailure, CompleteOutcome, ExpiredLease, FailedLease, LEASE_EXPIRED,
    LEASE_PREFERENCE_WINDOW, Lease, MatchInfo, MatchState, QuarantineRule, Reported,
    ScheduledMatch, Status, TournamentSpec, WorkerInfo,
};
use super::{LeaseGrant, check_record, check_submission_hash, expiry};
use crate::model::{EntrantId, MatchRecord, Pairing, baseline_name};

/// The embedded backend. Clones share one state.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    /// Everything, behind one lock so each operation is atomic.
    state: Arc<Mutex<State>>,
}

/// The whole store, mirroring the Redis layout in `docs/redis-keys.md`.
#[derive(Debug, Default)]
struct State {
    /// By id; `BTreeMap` so `tournaments()` comes out sorted.
    tournaments: BTreeMap<String, Tournament>,
    /// Every scheduled match of every tournament, by match id.
    matches: HashMap<String, MatchEntry>,
    /// Queued match ids, next to lease at the front.
    queue: VecDeque<String>,
    /// Current lease id → its match.
    lease_match: HashMap<String, String>,
    /// Current leases ordered by (expiry, lease id), the same order Redis
    /// gives a sorted set, so both backends requeue in the same order.
    expiries: BTreeSet<(u64, String)>,
    /// Replays of accepted results, by match id.
    replays: HashMap<String, Vec<u8>>,
    /// Submission archives by content hash.
    submissions: HashMap<String, Vec<u8>>,
    /// Registered workers with the time they were last heard from.
    workers: BTreeMap<String, (WorkerInfo, u64)>,
    /// Each worker's recent lease endings, newest last (`true`: failed).
    lease_ends: HashMap<String, VecDeque<bool>>,
    /// Workers that get no new leases.
    quarantined: BTreeSet<String>,
    /// Entrant token digests → the submission each unlocks.
    entrant_tokens: HashMap<String, String>,
}

/// One tournament's own data.
#[derive(Debug)]
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
#[derive(Debug)]
struct MatchEntry {
    /// Owning tournament.
    tournament: String,
    /// Round it was scheduled in.
    round: u32,
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
#[derive(Debug)]
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

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the lock. A panic while it was held can only have happened
    /// before any mutation (every method validates first), so the state is
    /// still consistent and poisoning is ignored.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// See [`Store::create_tournament`](crate::store::Store::create_tournament).
    pub async fn create_tournament(&self, spec: TournamentSpec) -> Result<()> {
        let mut state = self.lock();
        if state.tournaments.contains_key(&spec.id) {
            return Err(StoreError::AlreadyExists(spec.id));
        }
        let tournament = Tournament {
            spec: spec.clone(),
            rounds: 0,
            matches: Vec::new(),
            byes: Vec::new(),
        };
        state.tournaments.insert(spec.id, tournament);
        Ok(())
    }

    /// See [`Store::tournament`](crate::store::Store::tournament).
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentSpec>> {
        Ok(self.lock().tournaments.get(id).map(|t| t.spec.clone()))
    }

    /// See [`Store::tournaments`](crate::store::Store::tournaments).
    pub async fn tournaments(&self) -> Result<Vec<String>> {
        Ok(self.lock().tournaments.keys().cloned().collect())
    }

    /// See [`Store::cancel`](crate::store::Store::cancel).
    pub async fn cancel(&self, id: &str) -> Result<usize> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let tournament = state
            .tournaments
            .get_mut(id)
            .ok_or_else(|| StoreError::UnknownTournament(id.to_owned()))?;
        tournament.spec.cancelled = true;
        let matches = &mut state.matches;
        let mut dropped = 0;
        state
            .queue
            .retain(|match_id| match matches.get_mut(match_id) {
                Some(entry) if entry.tournament == id => {
                    entry.slot = Slot::Dropped;
                    dropped += 1;
                    false
                }
                _ => true,
            });
        Ok(dropped)
    }

    /// See [`Store::schedule_round`](crate::store::Store::schedule_round).
    pub async fn schedule_round(
        &self,
        tournament: &str,
        round: u32,
        matches: Vec<ScheduledMatch>,
        byes: Vec<EntrantId>,
    ) -> Result<bool> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let t = state
            .tournaments
            .get_mut(tournament)
            .ok_or_else(|| StoreError::UnknownTournament(tournament.to_owned()))?;
        if round < t.rounds {
            return Ok(false);
        }
        if t.spec.cancelled {
            return Err(StoreError::Cancelled(tournament.to_owned()));
        }
        if round > t.rounds {
            return Err(StoreError::RoundOutOfOrder {
                tournament: tournament.to_owned(),
                expected: t.rounds,
                got: round,
            });
        }
        let mut fresh = HashSet::new();
        for m in &matches {
            if state.matches.contains_key(&m.match_id) || !fresh.insert(m.match_id.as_str()) {
                return Err(StoreError::DuplicateMatch(m.match_id.clone()));
            }
        }
        t.rounds = round + 1;
        t.byes.extend(byes.into_iter().map(|e| (round, e)));
        for m in matches {
            t.matches.push(m.match_id.clone());
            state.queue.push_back(m.match_id.clone());
            let entry = MatchEntry {
                tournament: tournament.to_owned(),
                round,
                pairing: m.pairing,
                attempt: 1,
                slot: Slot::Queued,
                failures: Vec::new(),
                strikes: 0,
                kept: None,
            };
            state.matches.insert(m.match_id, entry);
        }
        Ok(true)
    }

    /// See [`Store::rounds_scheduled`](crate::store::Store::rounds_scheduled).
    pub async fn rounds_scheduled(&self, tournament: &str) -> Result<u32> {
        let state = self.lock();
        Ok(state.get_tournament(tournament)?.rounds)
    }

    /// See [`Store::byes`](crate::store::Store::byes).
    pub async fn byes(&self, tournament: &str) -> Result<Vec<(u32, EntrantId)>> {
        let state = self.lock();
        Ok(state.get_tournament(tournament)?.byes.clone())
    }

    /// See [`Store::expire`](crate::store::Store::expire).
    pub async fn expire(&self, now_ms: u64, max_attempts: u32) -> Result<Vec<ExpiredLease>> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let due: Vec<(u64, String)> = state
            .expiries
            .iter()
            .take_while(|(at, _)| *at <= now_ms)
            .cloned()
            .collect();
        let mut ended = Vec::new();
        for (at, lease_id) in &due {
            state.expiries.remove(&(*at, lease_id.clone()));
            if let Some(match_id) = state.lease_match.remove(lease_id)
                && let Some((worker, end)) =
                    state.end_attempt(&match_id, LEASE_EXPIRED, max_attempts)
            {
                ended.push(ExpiredLease {
                    match_id,
                    worker,
                    end,
                });
            }
        }
        // Front of the queue in expiry order: push the latest expiry first.
        for lease in ended.iter().rev() {
            if lease.end == AttemptEnd::Requeued {
                state.queue.push_front(lease.match_id.clone());
            }
        }
        Ok(ended)
    }

    /// See [`Store::pairing`](crate::store::Store::pairing).
    pub async fn pairing(&self, match_id: &str) -> Result<Option<Pairing>> {
        Ok(self.lock().matches.get(match_id).map(|m| m.pairing.clone()))
    }

    /// See [`Store::queue_len`](crate::store::Store::queue_len).
    pub async fn queue_len(&self) -> Result<usize> {
        Ok(self.lock().queue.len())
    }

    /// See [`Store::next_expiry`](crate::store::Store::next_expiry).
    pub async fn next_expiry(&self) -> Result<Option<u64>> {
        Ok(self.lock().expiries.first().map(|(at, _)| *at))
    }

    /// See [`Store::report`](crate::store::Store::report): the seat check,
    /// the completion and the count under one lock.
    pub async fn report(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Reported> {
        check_record(match_id, &record)?;
        let mut state = self.lock();
        if let Some(entry) = state.matches.get(match_id) {
            let seated = record.seats.iter().map(|s| &s.entrant);
            if !seated.eq(entry.pairing.seats.iter()) {
                return Ok(Reported::WrongSeats);
            }
        }
        let outcome = state.complete(worker, match_id, lease_id, record, replay)?;
        if outcome == CompleteOutcome::Accepted
            && let Some(rule) = quarantine
        {
            state.record_lease_end(worker, false, rule.window);
        }
        Ok(Reported::Checked(outcome))
    }

    /// See [`Store::fail_counted`](crate::store::Store::fail_counted): the
    /// failure, the count and the quarantine under one lock.
    pub async fn fail_counted(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
        max_attempts: u32,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Option<FailedLease>> {
        let mut state = self.lock();
        let Some(end) = state.fail(worker, match_id, lease_id, reason, max_attempts)? else {
            return Ok(None);
        };
        let quarantined = match quarantine {
            Some(rule) => {
                let failures = state.record_lease_end(worker, true, rule.window);
                let reached = failures >= rule.failures;
                if reached {
                    state.quarantined.insert(worker.to_owned());
                }
                reached
            }
            None => false,
        };
        Ok(Some(FailedLease { end, quarantined }))
    }

    /// See [`Store::requeue`](crate::store::Store::requeue).
    pub async fn requeue(&self, match_id: &str) -> Result<bool> {
        self.back_to_queue(match_id, |slot| matches!(slot, Slot::Stuck))
    }

    /// See [`Store::rejudge`](crate::store::Store::rejudge).
    pub async fn rejudge(&self, match_id: &str) -> Result<bool> {
        self.back_to_queue(match_id, |slot| matches!(slot, Slot::Done(_)))
    }

    /// Puts a match whose slot is as `from` says at the front of the queue
    /// with the next attempt number and a fresh allowance of attempts;
    /// `false` if its slot is otherwise.
    fn back_to_queue(&self, match_id: &str, from: impl Fn(&Slot) -> bool) -> Result<bool> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let entry = state
            .matches
            .get_mut(match_id)
            .ok_or_else(|| StoreError::UnknownMatch(match_id.to_owned()))?;
        if !from(&entry.slot) {
            return Ok(false);
        }
        if state
            .tournaments
            .get(&entry.tournament)
            .is_none_or(|t| t.spec.cancelled)
        {
            return Err(StoreError::Cancelled(entry.tournament.clone()));
        }
        // A rejudged match keeps its result and replay until the new
        // result replaces them.
        if let Slot::Done(record) = std::mem::replace(&mut entry.slot, Slot::Queued) {
            entry.kept = Some(record);
        }
        entry.attempt += 1;
        entry.strikes = 0;
        state.queue.push_front(match_id.to_owned());
        Ok(true)
    }

    /// See [`Store::put_entrant_token`](crate::store::Store::put_entrant_token).
    pub async fn put_entrant_token(&self, digest: &str, submission: &str) -> Result<()> {
        self.lock()
            .entrant_tokens
            .insert(digest.to_owned(), submission.to_owned());
        Ok(())
    }

    /// See [`Store::entrant_token`](crate::store::Store::entrant_token).
    pub async fn entrant_token(&self, digest: &str) -> Result<Option<String>> {
        Ok(self.lock().entrant_tokens.get(digest).cloned())
    }

    /// See [`Store::results`](crate::store::Store::results).
    pub async fn results(&self, tournament: &str) -> Result<Vec<MatchRecord>> {
        let state = self.lock();
        let t = state.get_tournament(tournament)?;
        Ok(t.matches
            .iter()
            .filter_map(|id| {
                let m = state.matches.get(id)?;
                match &m.slot {
                    Slot::Done(record) => Some(record.clone()),
                    // Rejudged and not yet replayed: the old result counts.
                    _ => m.kept.clone(),
                }
            })
            .collect())
    }

    /// See [`Store::replay`](crate::store::Store::replay).
    pub async fn replay(&self, match_id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.lock().replays.get(match_id).cloned())
    }

    /// See [`Store::status`](crate::store::Store::status).
    pub async fn status(&self, tournament: &str) -> Result<Status> {
        let state = self.lock();
        let t = state.get_tournament(tournament)?;
        let mut status = Status {
            total: t.matches.len(),
            rounds_scheduled: t.rounds,
            cancelled: t.spec.cancelled,
            ..Status::default()
        };
        for id in &t.matches {
            match state.matches.get(id).map(|m| &m.slot) {
                Some(Slot::Queued) => status.queued += 1,
                Some(Slot::Leased { .. }) => status.leased += 1,
                Some(Slot::Done(_)) => status.done += 1,
                Some(Slot::Dropped) => status.dropped += 1,
                Some(Slot::Stuck) => status.stuck += 1,
                None => return Err(StoreError::Corrupt(format!("match {id} has no entry"))),
            }
        }
        Ok(status)
    }

    /// See [`Store::matches`](crate::store::Store::matches).
    pub async fn matches(&self, tournament: &str) -> Result<Vec<MatchInfo>> {
        let state = self.lock();
        let t = state.get_tournament(tournament)?;
        t.matches
            .iter()
            .map(|id| {
                let m = state
                    .matches
                    .get(id)
                    .ok_or_else(|| StoreError::Corrupt(format!("match {id} has no entry")))?;
                let match_state = match &m.slot {
                    Slot::Queued => MatchState::Queued,
                    Slot::Leased { worker, .. } => MatchState::Leased {
                        worker: worker.clone(),
                        attempt: m.attempt,
                    },
                    Slot::Done(record) => MatchState::Done {
                        reason: record.reason.clone(),
                        ranks: record.seats.iter().map(|s| s.rank).collect(),
                    },
                    Slot::Dropped => MatchState::Dropped,
                    Slot::Stuck => MatchState::Stuck,
                };
                Ok(MatchInfo {
                    match_id: id.clone(),
                    round: m.round,
                    pairing: m.pairing.clone(),
                    state: match_state,
                    attempt: m.attempt,
                    last_error: m.failures.last().map(|f| f.reason.clone()),
                    failures: m.failures.clone(),
                })
            })
            .collect()
    }

    /// See [`Store::register_worker`](crate::store::Store::register_worker).
    pub async fn register_worker(&self, info: WorkerInfo, now_ms: u64) -> Result<()> {
        self.lock().workers.insert(info.id.clone(), (info, now_ms));
        Ok(())
    }

    /// See [`Store::worker`](crate::store::Store::worker).
    pub async fn worker(&self, id: &str) -> Result<Option<WorkerInfo>> {
        Ok(self.lock().workers.get(id).map(|(info, _)| info.clone()))
    }

    /// See [`Store::workers`](crate::store::Store::workers).
    pub async fn workers(&self, now_ms: u64, alive_within_ms: u64) -> Result<Vec<WorkerInfo>> {
        let oldest = now_ms.saturating_sub(alive_within_ms);
        Ok(self
            .lock()
            .workers
            .values()
            .filter(|(_, seen)| *seen >= oldest)
            .map(|(info, _)| info.clone())
            .collect())
    }

    /// See [`Store::heartbeat_leases`](crate::store::Store::heartbeat_leases):
    /// the heartbeat and every extension under one lock, each lease checked
    /// before any is extended.
    pub async fn heartbeat_leases(
        &self,
        worker: &str,
        now_ms: u64,
        ttl_ms: u64,
        cached: Vec<EntrantId>,
        lease_ids: &[String],
    ) -> Result<Option<Vec<String>>> {
        let mut state = self.lock();
        let Some((info, seen)) = state.workers.get_mut(worker) else {
            return Ok(None);
        };
        info.cached = cached;
        *seen = now_ms;
        for lease_id in lease_ids {
            if state
                .lease_holder(lease_id)
                .is_some_and(|holder| holder != worker)
            {
                return Err(not_holder(lease_id, worker));
            }
        }
        let mut lost = Vec::new();
        for lease_id in lease_ids {
            if !state.extend(worker, lease_id, now_ms, ttl_ms)? {
                lost.push(lease_id.clone());
            }
        }
        Ok(Some(lost))
    }

    /// See [`Store::lease_worker`](crate::store::Store::lease_worker): the
    /// checks and the lease under one lock, so nothing changes in between.
    pub async fn lease_worker(
        &self,
        worker: &str,
        lease_id: &str,
        now_ms: u64,
        ttl_ms: u64,
        alive_since_ms: u64,
    ) -> Result<LeaseGrant> {
        let mut state = self.lock();
        let Some((info, seen)) = state.workers.get(worker) else {
            return Ok(LeaseGrant::Unregistered);
        };
        if *seen < alive_since_ms {
            return Ok(LeaseGrant::Unregistered);
        }
        if state.quarantined.contains(worker) {
            return Ok(LeaseGrant::Quarantined);
        }
        let info = info.clone();
        Ok(
            match state.lease(worker, lease_id, now_ms, ttl_ms, &info)? {
                Some(lease) => LeaseGrant::Granted(lease),
                None => LeaseGrant::Empty,
            },
        )
    }

    /// See [`Store::worker_seen`](crate::store::Store::worker_seen).
    pub async fn worker_seen(&self, id: &str) -> Result<Option<u64>> {
        Ok(self.lock().workers.get(id).map(|(_, seen)| *seen))
    }

    /// See [`Store::record_lease_end`](crate::store::Store::record_lease_end).
    pub async fn record_lease_end(&self, worker: &str, failed: bool, window: u32) -> Result<u32> {
        Ok(self.lock().record_lease_end(worker, failed, window))
    }

    /// See [`Store::set_quarantined`](crate::store::Store::set_quarantined).
    pub async fn set_quarantined(&self, worker: &str, quarantined: bool) -> Result<()> {
        let mut state = self.lock();
        if quarantined {
            state.quarantined.insert(worker.to_owned());
        } else {
            state.quarantined.remove(worker);
            state.lease_ends.remove(worker);
        }
        Ok(())
    }

    /// See [`Store::quarantined`](crate::store::Store::quarantined).
    pub async fn quarantined(&self) -> Result<Vec<String>> {
        Ok(self.lock().quarantined.iter().cloned().collect())
    }

    /// See [`Store::is_quarantined`](crate::store::Store::is_quarantined).
    pub async fn is_quarantined(&self, worker: &str) -> Result<bool> {
        Ok(self.lock().quarantined.contains(worker))
    }

    /// See [`Store::put_submission`](crate::store::Store::put_submission).
    pub async fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> Result<()> {
        check_submission_hash(hash, &bytes)?;
        self.lock()
            .submissions
            .entry(hash.to_owned())
            .or_insert(bytes);
        Ok(())
    }

    /// See [`Store::get_submission`](crate::store::Store::get_submission).
    pub async fn get_submission(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.lock().submissions.get(hash).cloned())
    }

    /// See [`Store::has_submission`](crate::store::Store::has_submission).
    pub async fn has_submission(&self, hash: &str) -> Result<bool> {
        Ok(self.lock().submissions.contains_key(hash))
    }
}

impl State {
    /// Leases a queued match to `worker`, whose registration (build cache,
    /// environment, wasm and model runtimes) the caller read, under `lease_id` until `now_ms + ttl_ms`; `None` if
    /// nothing it may play is queued. Takes the oldest eligible match,
    /// except that among the first [`LEASE_PREFERENCE_WINDOW`] it prefers
    /// the first one whose entrants are all in `cached`, sparing the worker
    /// a build.
    fn lease(
        &mut self,
        worker: &str,
        lease_id: &str,
        now_ms: u64,
        ttl_ms: u64,
        info: &WorkerInfo,
    ) -> Result<Option<Lease>> {
        let (cached, environment) = (&info.cached, info.environment_id.as_str());
        let state = self;
        if state.lease_match.contains_key(lease_id) {
            return Err(StoreError::DuplicateLease(lease_id.to_owned()));
        }
        // Queue positions of the matches this worker may play: their
        // tournament names no environment, or names the worker's, and a
        // match with a WebAssembly seat needs the tournament's wasm runtime,
        // one with a model-graph seat its model runtime.
        let eligible: Vec<usize> = state
            .queue
            .iter()
            .enumerate()
            .filter(|(_, id)| {
                let Some(m) = state.matches.get(*id) else {
                    return true;
                };
                let Some(spec) = state.tournaments.get(&m.tournament).map(|t| &t.spec) else {
                    return true;
                };
                spec.environment
                    .as_deref()
                    .is_none_or(|needs| needs == environment)
                    && spec.may_play(info, &m.pairing.seats)
            })
            .map(|(position, _)| position)
            .take(LEASE_PREFERENCE_WINDOW)
            .collect();
        let all_cached = |position: &usize| {
            state
                .queue
                .get(*position)
                .and_then(|id| state.matches.get(id))
                .is_some_and(|m| {
                    // A baseline plays inside the engine: nothing to build.
                    m.pairing
                        .seats
                        .iter()
                        .all(|seat| baseline_name(seat).is_some() || cached.contains(seat))
                })
        };
        let cached_position = if cached.is_empty() {
            None
        } else {
            eligible.iter().copied().find(all_cached)
        };
        let Some(position) = cached_position.or_else(|| eligible.first().copied()) else {
            return Ok(None);
        };
        let Some(match_id) = state.queue.get(position).cloned() else {
            return Ok(None);
        };
        let entry = state
            .matches
            .get_mut(&match_id)
            .filter(|m| matches!(m.slot, Slot::Queued))
            .ok_or_else(|| StoreError::Corrupt(format!("queued match {match_id} is not queued")))?;
        state.queue.remove(position);
        let lease_id = lease_id.to_owned();
        let expires_at_ms = expiry(now_ms, ttl_ms);
        entry.slot = Slot::Leased {
            lease_id: lease_id.clone(),
            worker: worker.to_owned(),
            expires_at_ms,
        };
        state.lease_match.insert(lease_id.clone(), match_id.clone());
        state.expiries.insert((expires_at_ms, lease_id.clone()));
        Ok(Some(Lease {
            lease_id,
            worker: worker.to_owned(),
            match_id,
            tournament: entry.tournament.clone(),
            round: entry.round,
            pairing: entry.pairing.clone(),
            attempt: entry.attempt,
            expires_at_ms,
        }))
    }

    /// Moves a lease's expiry to `now_ms + ttl_ms`, as the Heartbeat call
    /// does for each lease it lists. `false` (and no change) if the lease
    /// is not its match's current one, the tournament is cancelled, or the
    /// lease has already run out; [`StoreError::NotLeaseHolder`] if it is
    /// current but `worker` is not the one it was granted to.
    fn extend(&mut self, worker: &str, lease_id: &str, now_ms: u64, ttl_ms: u64) -> Result<bool> {
        let Some(entry) = self
            .lease_match
            .get(lease_id)
            .and_then(|m| self.matches.get_mut(m))
        else {
            return Ok(false);
        };
        let cancelled = self
            .tournaments
            .get(&entry.tournament)
            .is_none_or(|t| t.spec.cancelled);
        let Slot::Leased {
            lease_id: current,
            worker: holder,
            expires_at_ms,
        } = &mut entry.slot
        else {
            return Ok(false);
        };
        if current != lease_id {
            return Ok(false);
        }
        if holder != worker {
            return Err(not_holder(lease_id, worker));
        }
        if cancelled || *expires_at_ms <= now_ms {
            return Ok(false);
        }
        let renewed = expiry(now_ms, ttl_ms);
        self.expiries.remove(&(*expires_at_ms, lease_id.to_owned()));
        self.expiries.insert((renewed, lease_id.to_owned()));
        *expires_at_ms = renewed;
        Ok(true)
    }

    /// The worker holding `lease_id`, if it is its match's current lease.
    fn lease_holder(&self, lease_id: &str) -> Option<&str> {
        let entry = self.matches.get(self.lease_match.get(lease_id)?)?;
        match &entry.slot {
            Slot::Leased {
                lease_id: current,
                worker,
                ..
            } if current == lease_id => Some(worker),
            _ => None,
        }
    }

    /// The ReportResult call's completion on the locked state, the record
    /// already checked against `match_id`: the first valid report wins, as
    /// [`Store::report`](crate::store::Store::report) says.
    fn complete(
        &mut self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
    ) -> Result<CompleteOutcome> {
        let Some(entry) = self.matches.get_mut(match_id) else {
            return Ok(CompleteOutcome::Unknown);
        };
        let expires_at_ms = match &entry.slot {
            Slot::Done(_) => return Ok(CompleteOutcome::Duplicate),
            Slot::Leased {
                lease_id: current,
                worker: holder,
                expires_at_ms,
            } if current == lease_id => {
                if holder != worker {
                    return Err(not_holder(lease_id, worker));
                }
                *expires_at_ms
            }
            _ => return Ok(CompleteOutcome::StaleLease),
        };
        entry.slot = Slot::Done(record);
        entry.kept = None;
        self.lease_match.remove(lease_id);
        self.expiries.remove(&(expires_at_ms, lease_id.to_owned()));
        match replay {
            Some(replay) => {
                self.replays.insert(match_id.to_owned(), replay);
            }
            // A rejudged match's old replay must not stand for the new one.
            None => {
                self.replays.remove(match_id);
            }
        }
        Ok(CompleteOutcome::Accepted)
    }

    /// The ReportFailure call's failure on the locked state, as
    /// [`Store::fail_counted`](crate::store::Store::fail_counted) says
    /// before it counts.
    fn fail(
        &mut self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
        max_attempts: u32,
    ) -> Result<Option<AttemptEnd>> {
        let expires_at_ms = match self.matches.get(match_id).map(|m| &m.slot) {
            Some(Slot::Leased {
                lease_id: current,
                worker: holder,
                expires_at_ms,
            }) if current == lease_id => {
                if holder != worker {
                    return Err(not_holder(lease_id, worker));
                }
                *expires_at_ms
            }
            _ => return Ok(None),
        };
        self.lease_match.remove(lease_id);
        self.expiries.remove(&(expires_at_ms, lease_id.to_owned()));
        let end = self
            .end_attempt(match_id, reason, max_attempts)
            .map(|(_, end)| end);
        if end == Some(AttemptEnd::Requeued) {
            self.queue.push_front(match_id.to_owned());
        }
        Ok(end)
    }

    /// [`Store::record_lease_end`](crate::store::Store::record_lease_end)
    /// on the locked state.
    fn record_lease_end(&mut self, worker: &str, failed: bool, window: u32) -> u32 {
        let ends = self.lease_ends.entry(worker.to_owned()).or_default();
        ends.push_back(failed);
        while ends.len() > window.max(1) as usize {
            ends.pop_front();
        }
        ends.iter().filter(|failed| **failed).count() as u32
    }

    fn get_tournament(&self, id: &str) -> Result<&Tournament> {
        self.tournaments
            .get(id)
            .ok_or_else(|| StoreError::UnknownTournament(id.to_owned()))
    }

    /// Ends a leased match's current attempt without a result (its lease
    /// index entries are already gone), recording the failure: back to
    /// queued with the next attempt number, stuck if that was the
    /// `max_attempts`-th failure in a row, or dropped (attempt unchanged) if
    /// its tournament was cancelled meanwhile. Returns the worker that held
    /// it and what became of it; only a `Requeued` match must be put back in
    /// the queue, by the caller.
    fn end_attempt(
        &mut self,
        match_id: &str,
        reason: &str,
        max_attempts: u32,
    ) -> Option<(String, AttemptEnd)> {
        let entry = self.matches.get_mut(match_id)?;
        let Slot::Leased { worker, .. } = &entry.slot else {
            return None;
        };
        let worker = worker.clone();
        entry.failures.push(AttemptFailure {
            attempt: entry.attempt,
            worker: worker.clone(),
            reason: reason.to_owned(),
        });
        let cancelled = self
            .tournaments
            .get(&entry.tournament)
            .is_none_or(|t| t.spec.cancelled);
        let end = if cancelled {
            entry.slot = Slot::Dropped;
            AttemptEnd::Dropped
        } else {
            entry.strikes += 1;
            if entry.strikes >= max_attempts.max(1) {
                entry.slot = Slot::Stuck;
                AttemptEnd::Stuck
            } else {
                entry.attempt += 1;
                entry.slot = Slot::Queued;
                AttemptEnd::Requeued
            }
        };
        Some((worker, end))
    }
}

/// The refusal of a lease call from a worker the lease was not granted to.
fn not_holder(lease_id: &str, worker: &str) -> StoreError {
    StoreError::NotLeaseHolder {
        lease_id: lease_id.to_owned(),
        worker: worker.to_owned(),
    }
}
