//! Leases: granting a worker the match it should play next, and the
//! heartbeats that keep its leases alive.

use super::{MemoryStore, Slot, State, not_holder};
use crate::domain::{EntrantId, baseline_name};
use crate::store::error::{Result, StoreError};
use crate::store::types::{LEASE_PREFERENCE_WINDOW, Lease, WorkerInfo};
use crate::store::{LeaseGrant, expiry};

impl MemoryStore {
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
        if state.quarantined.contains_key(worker) {
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

    /// See [`Store::next_expiry`](crate::store::Store::next_expiry).
    pub async fn next_expiry(&self) -> Result<Option<u64>> {
        Ok(self.lock().expiries.first().map(|(at, _)| *at))
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
}
