//! The leases in flight and the heartbeat task that extends them; a lease
//! the coordinator says is lost has its match stopped. The progress task
//! reports running matches' boards for the live pages.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arena_proto::v1::{HeartbeatRequest, LeaseProgress, ProgressRequest};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::client::Client;
use super::{lock, snapshot};
use crate::delivery::{self, LeaseWatch};
use crate::progress::Progress;

/// What the worker knows of one lease in flight.
pub(super) struct LeaseState {
    /// Cancelled when a heartbeat answer lists the lease as lost.
    pub(super) lost: CancellationToken,
    /// When the last heartbeat that extended the lease was sent (or the
    /// lease was granted): the lease lives at least `ttl` from then.
    pub(super) renewed: Instant,
    /// How long the lease lives without a heartbeat.
    pub(super) ttl: Duration,
    /// Its match, and the turns it has played, sent with heartbeats for
    /// live pages.
    pub(super) match_id: String,
    pub(super) progress: Arc<Progress>,
}

/// The leases in flight, by lease id; the heartbeat task renews them.
pub(super) type InFlight = Arc<Mutex<BTreeMap<String, LeaseState>>>;

/// One lease as a report's delivery sees it.
pub(super) struct Watch<'a> {
    pub(super) in_flight: &'a InFlight,
    pub(super) lease_id: &'a str,
    pub(super) lost: CancellationToken,
}

impl LeaseWatch for Watch<'_> {
    fn gone(&self) -> Option<&'static str> {
        if self.lost.is_cancelled() {
            return Some("the coordinator says it is lost");
        }
        let in_flight = lock(self.in_flight);
        let state = in_flight.get(self.lease_id)?;
        (state.renewed.elapsed() > state.ttl)
            .then_some("its TTL has passed since the last heartbeat that extended it")
    }

    async fn lost(&self) {
        self.lost.cancelled().await
    }
}

pub(super) async fn heartbeat_loop(
    mut client: Client,
    worker_id: String,
    interval: Duration,
    in_flight: InFlight,
    cached: Arc<Mutex<BTreeSet<String>>>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.cancelled() => return,
        }
        let (lease_ids, progress): (Vec<String>, Vec<LeaseProgress>) = lock(&in_flight)
            .iter()
            .map(|(id, state)| {
                let progress = LeaseProgress {
                    lease_id: id.clone(),
                    match_id: state.match_id.clone(),
                    turn: state.progress.turn(),
                    board: Vec::new(),
                };
                (id.clone(), progress)
            })
            .unzip();
        let request = HeartbeatRequest {
            worker_id: worker_id.clone(),
            lease_ids: lease_ids.clone(),
            cached_builds: snapshot(&cached),
            progress,
        };
        // Taken before sending: the coordinator extends from a later time.
        let sent = Instant::now();
        let answer = tokio::time::timeout(delivery::ATTEMPT_TIMEOUT, client.heartbeat(request))
            .await
            .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("no answer")));
        match answer {
            Ok(response) => {
                let lost: BTreeSet<String> =
                    response.into_inner().lost_lease_ids.into_iter().collect();
                let mut in_flight = lock(&in_flight);
                for id in &lease_ids {
                    let Some(state) = in_flight.get_mut(id) else {
                        continue;
                    };
                    if lost.contains(id) {
                        if !state.lost.is_cancelled() {
                            tracing::warn!(
                                lease = %id,
                                "the lease is no longer ours; its match stops unreported"
                            );
                        }
                        state.lost.cancel();
                    } else {
                        state.renewed = sent;
                    }
                }
            }
            Err(status) => tracing::warn!(%status, "heartbeat failed"),
        }
    }
}

/// Every `interval` while a match runs, sends the boards its matches have
/// written since the last report (asking each for a fresh one). A failed
/// report is only logged: the next one carries newer boards anyway.
pub(super) async fn progress_loop(
    mut client: Client,
    worker_id: String,
    interval: Duration,
    in_flight: InFlight,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.cancelled() => return,
        }
        let progress: Vec<LeaseProgress> = lock(&in_flight)
            .iter()
            .filter_map(|(id, state)| {
                let (turn, board) = state.progress.take_board()?;
                Some(LeaseProgress {
                    lease_id: id.clone(),
                    match_id: state.match_id.clone(),
                    turn,
                    board,
                })
            })
            .collect();
        if progress.is_empty() {
            continue;
        }
        let request = ProgressRequest {
            worker_id: worker_id.clone(),
            progress,
        };
        let sent = tokio::time::timeout(delivery::ATTEMPT_TIMEOUT, client.report_progress(request));
        match sent.await {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => tracing::debug!(%status, "progress report failed"),
            Err(_) => tracing::debug!("progress report got no answer"),
        }
    }
}
