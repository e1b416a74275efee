//! The coordinator's background tasks: the recovery step, which finishes
//! scheduling a crash cut short, and lease expiry, which requeues the
//! matches of workers that went silent.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tracing::Instrument;
use tracing::field::Empty;

use super::{Coordinator, Result, chain, now_ms};
use crate::store::AttemptEnd;

impl Coordinator {
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
    /// [`CoordinatorConfig::recovery_interval`](super::CoordinatorConfig::recovery_interval) until `shutdown` resolves.
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
}
