//! Workers: registering, who is alive, and the quarantine that stops
//! leasing to a worker whose recent leases ended without a result until an
//! organiser releases it.

use super::{Coordinator, CoordinatorError, Result, chain, now_ms};
use crate::store::{QuarantineRule, WorkerInfo};

/// A registered worker as operators see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerState {
    pub info: WorkerInfo,
    /// Heard from within three heartbeat intervals.
    pub alive: bool,
    /// Gets no new leases until an organiser releases it.
    pub quarantined: bool,
}

impl Coordinator {
    /// Workers heard from within three heartbeat intervals, so a worker
    /// that misses a heartbeat or two still counts as connected.
    pub async fn live_workers(&self) -> Result<Vec<WorkerInfo>> {
        Ok(self.store.workers(now_ms(), self.alive_window_ms()).await?)
    }

    /// How recently a worker must have been heard from to count as alive.
    pub(super) fn alive_window_ms(&self) -> u64 {
        3 * self.config.heartbeat_interval.as_millis() as u64
    }

    pub async fn register_worker(&self, info: WorkerInfo) -> Result<()> {
        self.store.register_worker(info, now_ms()).await?;
        Ok(())
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

    /// The quarantine policy as the store counts it; `None` when it can
    /// never quarantine anyone, and then no lease end is counted.
    pub(super) fn quarantine_rule(&self) -> Option<QuarantineRule> {
        let policy = self.config.quarantine;
        (policy.failures > 0).then_some(QuarantineRule {
            window: policy.window,
            failures: policy.failures,
        })
    }

    /// Counts one of `worker`'s leases ending and quarantines the worker when
    /// too many of its recent ones failed. Bookkeeping only: a store error
    /// here is logged, never returned, so it cannot undo the result or
    /// failure being recorded.
    pub(super) async fn lease_ended(&self, worker: &str, failed: bool) {
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
    pub(super) fn worker_quarantined(&self, worker: &str) {
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
}
