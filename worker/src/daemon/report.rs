//! Sending a played match's result, or the reason it could not be played,
//! back to the coordinator; resent on transient errors while the lease
//! stands (see [`crate::delivery`]).

use arena_engine::Forfeit;
use arena_proto::v1::{
    Forfeit as WireForfeit, LeasedMatch, ReportFailureRequest, ReportOutcome, ReportResultRequest,
    SeatResult,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::client::Client;
use super::job::{Job, Played};
use super::lock;
use crate::delivery::{self, Delivery};
use crate::report::MatchReport;

impl Job {
    /// Hands a match the worker could not play back to the coordinator.
    pub(super) async fn report_failure(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
        reason: String,
    ) {
        tracing::error!(match_id = %leased.match_id, %reason, "match failed");
        lock(&self.summary).failed += 1;
        let span = tracing::info_span!(
            "report",
            match_id = %leased.match_id,
            failure = %reason,
            outcome = tracing::field::Empty,
        );
        let request = ReportFailureRequest {
            worker_id: self.options.worker_id.clone(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            reason,
        };
        let answered = self
            .deliver(
                leased,
                lost,
                &span,
                "ReportFailure",
                request,
                |mut client, request| async move { client.report_failure(request).await },
            )
            .await;
        if answered.is_some() {
            span.record("outcome", "requeued");
        }
    }

    pub(super) async fn report(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
        Played {
            report,
            replay,
            logs,
            duration_s,
        }: Played,
    ) {
        let seats = seat_results(&report, leased);
        let request = ReportResultRequest {
            worker_id: self.options.worker_id.clone(),
            lease_id: leased.lease_id.clone(),
            match_id: leased.match_id.clone(),
            seats,
            reason: report.reason.clone(),
            turns: report.turns,
            replay,
            duration_s,
            seat_logs: logs,
        };
        let span = tracing::info_span!(
            "report",
            match_id = %leased.match_id,
            lease_id = %leased.lease_id,
            outcome = tracing::field::Empty,
        );
        // Resent on transient errors: the coordinator keeps the first valid
        // result of a match and acknowledges repeats, so a resend is safe.
        let answered = self
            .deliver(
                leased,
                lost,
                &span,
                "ReportResult",
                request,
                |mut client, request| async move { client.report_result(request).await },
            )
            .await;
        let accepted = answered.is_some_and(|response| {
            let outcome = response.outcome();
            span.record(
                "outcome",
                match outcome {
                    ReportOutcome::Accepted => "accepted",
                    ReportOutcome::Duplicate => "duplicate",
                    ReportOutcome::StaleLease => "stale_lease",
                    ReportOutcome::Unspecified => "unspecified",
                },
            );
            outcome == ReportOutcome::Accepted
        });
        let mut summary = lock(&self.summary);
        summary.played += 1;
        if accepted {
            summary.accepted += 1;
        } else {
            summary.dropped += 1;
        }
    }

    /// Sends `request` for this match by `send` (the call `call`), resent
    /// on transient errors while the lease stands. `None` when it could not
    /// be delivered: the coordinator refused it or the lease went; that is
    /// logged and recorded as the span's outcome.
    async fn deliver<R, T, F, Fut>(
        &self,
        leased: &LeasedMatch,
        lost: &CancellationToken,
        span: &tracing::Span,
        call: &'static str,
        request: R,
        send: F,
    ) -> Option<T>
    where
        R: Clone,
        F: Fn(Client, R) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let sent = delivery::deliver(
            &self.watch(leased, lost),
            || send(self.client.clone(), request.clone()),
            Self::retrying(format!("{call} for match {}", leased.match_id)),
        )
        .instrument(span.clone())
        .await;
        let undelivered = match sent {
            Delivery::Answered(response) => return Some(response.into_inner()),
            Delivery::Refused(status) => format!("the coordinator refused it: {status}"),
            Delivery::LeaseGone { why, last } => format!(
                "its lease is gone ({why}){}",
                last.map(|s| format!("; last error: {s}"))
                    .unwrap_or_default()
            ),
        };
        span.record("outcome", "error");
        tracing::error!(match_id = %leased.match_id, call, %undelivered, "report not delivered");
        None
    }
}

/// The wire's forfeit enum for the engine's.
fn wire_forfeit(forfeit: Option<Forfeit>) -> WireForfeit {
    match forfeit {
        None => WireForfeit::None,
        Some(Forfeit::Crash) => WireForfeit::Crash,
        Some(Forfeit::Exit) => WireForfeit::Exit,
        Some(Forfeit::Memory) => WireForfeit::Memory,
        Some(Forfeit::Faults) => WireForfeit::Faults,
        Some(Forfeit::BuildFailed) => WireForfeit::BuildFailed,
        Some(Forfeit::Trap) => WireForfeit::Trap,
        Some(Forfeit::WallBackstop) => WireForfeit::WallBackstop,
    }
}

/// Each seat's line of the result, as the wire carries it.
fn seat_results(report: &MatchReport, leased: &LeasedMatch) -> Vec<SeatResult> {
    report
        .players
        .iter()
        .zip(&leased.seats)
        .map(|(p, seat)| SeatResult {
            submission: seat.submission.clone(),
            baseline: seat.baseline.clone(),
            rank: p.rank,
            score: p.score,
            team: p.team.unwrap_or(0),
            forfeit_kind: wire_forfeit(p.forfeit) as i32,
            timeouts: p.faults.timeout,
            malformed: p.faults.malformed,
            moves: p.moves,
            latency_p50_ms: p.latency_ms.p50,
            latency_p99_ms: p.latency_ms.p99,
            illegal: p.faults.illegal,
            fuel_exhausted: p.faults.fuel_exhausted,
            fuel_p50: p.fuel.map_or(0, |f| f.p50),
            fuel_max: p.fuel.map_or(0, |f| f.max),
            strike: p.faults.strike,
            // Refused replies also travel with the game's counters, as
            // before the wire had their field, for older coordinators.
            stats: p
                .stats
                .clone()
                .into_iter()
                .chain(
                    (p.faults.illegal > 0)
                        .then(|| ("illegal_replies".to_owned(), u64::from(p.faults.illegal))),
                )
                .collect(),
        })
        .collect()
}
