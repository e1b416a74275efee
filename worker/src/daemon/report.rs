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
        let sent = delivery::deliver(
            &self.watch(leased, lost),
            || {
                let mut client = self.client.clone();
                let request = request.clone();
                async move { client.report_failure(request).await }
            },
            Self::retrying(format!("ReportFailure for match {}", leased.match_id)),
        )
        .instrument(span.clone())
        .await;
        match sent {
            Delivery::Answered(_) => {
                span.record("outcome", "requeued");
            }
            Delivery::Refused(status) => {
                span.record("outcome", "error");
                tracing::error!(%status, "the coordinator refused the failure report");
            }
            Delivery::LeaseGone { why, last } => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %why,
                    last_error = last.map(|s| s.to_string()),
                    "gave up reporting the match's failure: its lease is gone"
                );
            }
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
        let sent = delivery::deliver(
            &self.watch(leased, lost),
            || {
                let mut client = self.client.clone();
                let request = request.clone();
                async move { client.report_result(request).await }
            },
            Self::retrying(format!("ReportResult for match {}", leased.match_id)),
        )
        .instrument(span.clone())
        .await;
        let accepted = match sent {
            Delivery::Answered(response) => {
                let outcome = response.into_inner().outcome();
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
            }
            Delivery::Refused(status) => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %status,
                    "the coordinator refused the result"
                );
                false
            }
            Delivery::LeaseGone { why, last } => {
                span.record("outcome", "error");
                tracing::error!(
                    match_id = %leased.match_id,
                    %why,
                    last_error = last.map(|s| s.to_string()),
                    "gave up reporting the match: its lease is gone"
                );
                false
            }
        };
        let mut summary = lock(&self.summary);
        summary.played += 1;
        if accepted {
            summary.accepted += 1;
        } else {
            summary.dropped += 1;
        }
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
