//! Workers: registration, when each was last heard from, how its recent
//! leases ended, and the quarantine.

use std::collections::VecDeque;

use super::{MemoryStore, State};
use crate::store::error::Result;
use crate::store::types::WorkerInfo;

impl MemoryStore {
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
            state.quarantined.insert(worker.to_owned(), ());
        } else {
            state.quarantined.remove(worker);
            state.lease_ends.remove(worker);
        }
        Ok(())
    }

    /// See [`Store::quarantined`](crate::store::Store::quarantined).
    pub async fn quarantined(&self) -> Result<Vec<String>> {
        Ok(self.lock().quarantined.keys().cloned().collect())
    }

    /// See [`Store::is_quarantined`](crate::store::Store::is_quarantined).
    pub async fn is_quarantined(&self, worker: &str) -> Result<bool> {
        Ok(self.lock().quarantined.contains_key(worker))
    }
}

impl State {
    /// [`Store::record_lease_end`](crate::store::Store::record_lease_end)
    /// on the locked state.
    pub(super) fn record_lease_end(&mut self, worker: &str, failed: bool, window: u32) -> u32 {
        let ends = self.lease_ends.get_or_insert_with(worker, VecDeque::new);
        ends.push_back(failed);
        while ends.len() > window.max(1) as usize {
            ends.pop_front();
        }
        ends.iter().filter(|failed| **failed).count() as u32
    }
}
