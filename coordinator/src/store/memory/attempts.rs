//! How an attempt ends: a result (the first valid one wins), a failure,
//! or an expired lease; and an organiser putting a stuck match back in
//! the queue or a finished one up for rejudging.

use super::{MemoryStore, Slot, State, not_holder};
use crate::domain::MatchRecord;
use crate::store::check_record;
use crate::store::error::{Result, StoreError};
use crate::store::types::{
    AttemptEnd, AttemptFailure, CompleteOutcome, ExpiredLease, FailedLease, LEASE_EXPIRED,
    QuarantineRule, Reported,
};

impl MemoryStore {
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
                    state.quarantined.insert(worker.to_owned(), ());
                }
                reached
            }
            None => false,
        };
        Ok(Some(FailedLease { end, quarantined }))
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

    /// See [`Store::release_leases`](crate::store::Store::release_leases).
    pub async fn release_leases(&self, tournament: &str, reason: &str) -> Result<usize> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let t = state.get_tournament(tournament)?;
        // A cancelled tournament's released matches are dropped, as its
        // expired ones are.
        let cancelled = t.spec.cancelled;
        let leased: Vec<String> = t
            .matches
            .iter()
            .filter(|id| {
                state
                    .matches
                    .get(*id)
                    .is_some_and(|m| matches!(m.slot, Slot::Leased { .. }))
            })
            .cloned()
            .collect();
        // Front of the queue in schedule order: push the last one first.
        for match_id in leased.iter().rev() {
            let Some(entry) = state.matches.get_mut(match_id) else {
                continue;
            };
            let Slot::Leased {
                lease_id,
                worker,
                expires_at_ms,
            } = std::mem::replace(&mut entry.slot, Slot::Dropped)
            else {
                continue;
            };
            entry.failures.push(AttemptFailure {
                attempt: entry.attempt,
                worker,
                reason: reason.to_owned(),
            });
            state.lease_match.remove(&lease_id);
            state.expiries.remove(&(expires_at_ms, lease_id));
            if !cancelled {
                entry.slot = Slot::Queued;
                entry.attempt += 1;
                state.queue.push_front(match_id.clone());
            }
        }
        Ok(leased.len())
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
}

impl State {
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
