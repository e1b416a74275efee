//! The operations that only read: a tournament's status, matches and
//! results, a match's pairing and replay, the queue's length.

use super::{MemoryStore, Slot};
use crate::domain::{MatchRecord, Pairing};
use crate::store::error::{Result, StoreError};
use crate::store::types::{MatchInfo, MatchState, Status};

impl MemoryStore {
    /// See [`Store::pairing`](crate::store::Store::pairing).
    pub async fn pairing(&self, match_id: &str) -> Result<Option<Pairing>> {
        Ok(self.lock().matches.get(match_id).map(|m| m.pairing.clone()))
    }

    /// See [`Store::queue_len`](crate::store::Store::queue_len).
    pub async fn queue_len(&self) -> Result<usize> {
        Ok(self.lock().queue.len())
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
}
