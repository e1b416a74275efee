//! Leases and how they end: a worker leases a match, keeps its lease alive
//! with heartbeats, and reports a result (checked against the match first)
//! or an infrastructure failure; an organiser puts a stuck match back in
//! the queue.

use std::sync::atomic::Ordering;
use std::time::Duration;

use arena_engine::Rules;
use arena_engine::registry::Limits;
use tracing::field::Empty;

use super::ids::match_tournament;
use super::{Coordinator, CoordinatorError, Result, chain, now_ms};
use crate::domain::{MatchRecord, baseline_name};
use crate::report::{self, ResultError};
use crate::store::{AttemptEnd, CompleteOutcome, Lease, LeaseGrant, Reported, StoreError};

/// A lease with what a worker needs to play it.
#[derive(Clone, Debug)]
pub struct LeasedMatch {
    pub lease: Lease,
    pub game: String,
    /// The tournament's resolved rules (every option present).
    pub rules: Rules,
    /// The tournament's resolved limits.
    pub limits: Limits,
    /// Who plays, in seat order.
    pub seats: Vec<LeasedSeat>,
    pub ttl: Duration,
}

/// One seat of a leased match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedSeat {
    /// The submission's content hash; empty for a baseline seat.
    pub submission: String,
    /// The entrant's display name, or `baseline:NAME` for a baseline seat.
    pub name: String,
    /// The in-engine baseline that plays this seat, if one does.
    pub baseline: Option<String>,
}

impl Coordinator {
    /// Leases the next match for `worker`, preferring matches whose
    /// submissions it has already built.
    #[tracing::instrument(
        name = "lease",
        skip_all,
        fields(worker = %worker, match_id = Empty, lease_id = Empty, attempt = Empty)
    )]
    pub async fn lease(&self, worker: &str) -> Result<Option<LeasedMatch>> {
        let alive_since = now_ms().saturating_sub(self.alive_window_ms());
        let ttl = self.config.lease_ttl;
        let lease_id = new_lease_id()?;
        // One store call checks the worker (registered, alive, not
        // quarantined) and leases with its cache and environment.
        let granted = self
            .store
            .lease_worker(
                worker,
                &lease_id,
                now_ms(),
                ttl.as_millis() as u64,
                alive_since,
            )
            .await?;
        let lease = match granted {
            LeaseGrant::Granted(lease) => lease,
            LeaseGrant::Empty => return Ok(None),
            LeaseGrant::Unregistered => {
                return Err(CoordinatorError::UnregisteredWorker(worker.to_owned()));
            }
            LeaseGrant::Quarantined => {
                return Err(CoordinatorError::Quarantined(worker.to_owned()));
            }
        };
        let span = tracing::Span::current();
        span.record("match_id", lease.match_id.as_str());
        span.record("lease_id", lease.lease_id.as_str());
        span.record("attempt", lease.attempt);
        if lease.expires_at_ms < self.expiry_wake_ms.load(Ordering::SeqCst) {
            self.lease_granted.notify_one();
        }
        let known = self.known(&lease.tournament).await?;
        let seats = lease
            .pairing
            .seats
            .iter()
            .map(|seat| match baseline_name(seat) {
                Some(baseline) => LeasedSeat {
                    submission: String::new(),
                    name: seat.clone(),
                    baseline: Some(baseline.to_owned()),
                },
                None => LeasedSeat {
                    submission: seat.clone(),
                    name: known
                        .names
                        .get(seat)
                        .cloned()
                        .unwrap_or_else(|| seat.clone()),
                    baseline: None,
                },
            })
            .collect();
        Ok(Some(LeasedMatch {
            lease,
            game: known.spec.game.clone(),
            rules: known.spec.rules.clone(),
            limits: known.spec.limits,
            seats,
            ttl,
        }))
    }

    /// Extends the listed leases; returns those that are no longer current.
    /// Refused whole ([`StoreError::NotLeaseHolder`]) if any of them is
    /// current but was granted to another worker, and
    /// [`CoordinatorError::UnregisteredWorker`] if `worker` never registered.
    pub async fn heartbeat(
        &self,
        worker: &str,
        lease_ids: &[String],
        cached: Vec<String>,
    ) -> Result<Vec<String>> {
        // One store call records the worker alive and extends its leases.
        self.store
            .heartbeat_leases(
                worker,
                now_ms(),
                self.config.lease_ttl.as_millis() as u64,
                cached,
                lease_ids,
            )
            .await?
            .ok_or_else(|| CoordinatorError::UnregisteredWorker(worker.to_owned()))
    }

    /// Records a result; the first valid one for a match wins. A result
    /// that does not fit its match (see [`report::check`]) is refused with
    /// [`CoordinatorError::InvalidResult`] and changes nothing; one for a
    /// match that was never scheduled with [`CoordinatorError::UnknownMatch`].
    ///
    /// An accepted result costs one store call. What `report::check` needs
    /// of the pairing is only who sits where, and the store compares that
    /// itself before it writes ([`Store::report`](crate::store::Store::report)); so the rest of the
    /// check runs here on the record's own seats, and the pairing is read
    /// only to say what is wrong with a result that does not fit.
    #[tracing::instrument(
        name = "report",
        skip_all,
        fields(match_id = %record.match_id, lease_id = %lease_id, outcome = Empty)
    )]
    pub async fn report(
        &self,
        worker: &str,
        lease_id: &str,
        mut record: MatchRecord,
        replay: Option<Vec<u8>>,
        logs: Vec<Vec<u8>>,
        duration_s: f64,
    ) -> Result<CompleteOutcome> {
        record.worker = worker.to_owned();
        let tournament = match_tournament(&record.match_id)
            .map(str::to_owned)
            .unwrap_or_default();
        let counted = match self.check_own_seats(&tournament, &record).await? {
            Some(counted) => counted,
            None => self.check_against_pairing(&tournament, &record).await?,
        };
        let match_id = record.match_id.clone();
        // The blobs go first: the store's slot only names them.
        let slot = self.attachments.store(replay.as_deref(), &logs).await?;
        let reported = self
            .store
            .report(
                worker,
                &match_id,
                lease_id,
                record.clone(),
                slot,
                self.quarantine_rule(),
            )
            .await?;
        let outcome = match reported {
            Reported::Checked(CompleteOutcome::Unknown) => {
                return Err(CoordinatorError::UnknownMatch(match_id));
            }
            Reported::Checked(outcome) => outcome,
            // The record's seats are not the match's: the pairing says how.
            Reported::WrongSeats => {
                self.check_against_pairing(&tournament, &record).await?;
                // Seats and pairing are written together at scheduling.
                return Err(StoreError::Corrupt(format!(
                    "match {match_id}: its stored seats and pairing disagree"
                ))
                .into());
            }
        };
        tracing::Span::current().record(
            "outcome",
            match outcome {
                CompleteOutcome::Accepted => "accepted",
                CompleteOutcome::Duplicate => "duplicate",
                CompleteOutcome::StaleLease => "stale_lease",
                CompleteOutcome::Unknown => "unknown",
            },
        );
        if outcome == CompleteOutcome::Accepted {
            self.forget_progress(&match_id);
            // The store counted the lease as one that ended with a result.
            self.metrics.result_accepted(&counted, duration_s);
            // The result is stored whatever happens next: a failure to
            // schedule now is left to the periodic recovery step, not
            // reported as a failed report (which the worker would retry).
            // A round robin seen fully queued has nothing to schedule.
            let queued_whole = self
                .known
                .get(&tournament)
                .is_some_and(|known| known.all_scheduled());
            if !tournament.is_empty()
                && !queued_whole
                && let Err(e) = self.advance(&tournament).await
            {
                tracing::warn!(
                    tournament = %tournament,
                    error = %chain(&e),
                    "advancing after a result failed; the recovery step retries"
                );
            }
        }
        Ok(outcome)
    }

    /// [`report::check`] of `record` against a pairing that seats exactly
    /// the record's own entrants, the seat count taken from the tournament:
    /// everything but who sits where. `Some(record as the metrics count
    /// it)` if that passes; `None` if it does not, or the tournament is not
    /// known, for [`Self::check_against_pairing`] to give the answer.
    async fn check_own_seats(
        &self,
        tournament: &str,
        record: &MatchRecord,
    ) -> Result<Option<MatchRecord>> {
        let known = match self.known(tournament).await {
            Ok(known) => known,
            Err(CoordinatorError::UnknownTournament(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if record.seats.len() != known.spec.seats {
            return Ok(None);
        }
        let claimed = crate::domain::Pairing {
            seats: record.seats.iter().map(|s| s.entrant.clone()).collect(),
            seed: 0,
        };
        if report::check(record, &claimed, &known.sides).is_err() {
            return Ok(None);
        }
        // The metrics count matches by side: a 2v2 one side won is a win,
        // not a draw of its two seats.
        Ok(known.sides.collapse(record).ok())
    }

    /// [`report::check`] of `record` against its match's stored pairing,
    /// as the store has it: the record as the metrics count it, or why it
    /// is refused.
    async fn check_against_pairing(
        &self,
        tournament: &str,
        record: &MatchRecord,
    ) -> Result<MatchRecord> {
        match self.store.pairing(&record.match_id).await? {
            Some(pairing) => {
                // A scheduled match's tournament exists: its spec has the teams.
                let known = self.known(tournament).await?;
                let sides = &known.sides;
                report::check(record, &pairing, sides)?;
                Ok(sides.collapse(record).map_err(ResultError::from)?)
            }
            // Every scheduled match has its pairing stored: a report for
            // any other id names no match at all.
            None => Err(CoordinatorError::UnknownMatch(record.match_id.clone())),
        }
    }

    /// An infrastructure failure: the match goes back to the queue, or is
    /// set aside as stuck after [`CoordinatorConfig::max_attempts`](super::CoordinatorConfig::max_attempts) failed
    /// attempts in a row. `None` if the lease was not current. The lease
    /// is counted against the worker's quarantine window in the same store
    /// call.
    #[tracing::instrument(name = "fail", skip_all, fields(match_id = %match_id, lease_id = %lease_id))]
    pub async fn fail(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
    ) -> Result<Option<AttemptEnd>> {
        let reason = bounded_reason(reason);
        let failed = self
            .store
            .fail_counted(
                worker,
                match_id,
                lease_id,
                &reason,
                self.config.max_attempts,
                self.quarantine_rule(),
            )
            .await?;
        let Some(failed) = failed else {
            return Ok(None);
        };
        self.attempt_ended(match_id, failed.end);
        if failed.quarantined {
            self.worker_quarantined(worker);
        }
        Ok(Some(failed.end))
    }

    /// Puts a stuck match back in the queue (an organiser's decision, after
    /// fixing whatever made its attempts fail).
    pub async fn requeue(&self, match_id: &str) -> Result<()> {
        match self.store.requeue(match_id).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(CoordinatorError::NotStuck(match_id.to_owned())),
            Err(StoreError::UnknownMatch(id)) => Err(CoordinatorError::UnknownMatch(id)),
            Err(StoreError::Cancelled(id)) => Err(CoordinatorError::Cancelled(id)),
            Err(e) => Err(e.into()),
        }
    }

    /// Logs and counts what became of a match whose attempt failed.
    pub(super) fn attempt_ended(&self, match_id: &str, end: AttemptEnd) {
        self.forget_progress(match_id);
        if end == AttemptEnd::Stuck {
            self.metrics.match_stuck();
            tracing::warn!(
                match_id,
                attempts = self.config.max_attempts,
                "match stuck after its last allowed attempt; see `arena tournament status`, \
                 requeue it with `arena tournament requeue`"
            );
        }
    }
}

/// A new lease id: 128 bits from the kernel, as hex. Unguessable, so no
/// worker can act on a lease it was not given by guessing its id.
fn new_lease_id() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(CoordinatorError::Entropy)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The longest failure reason kept per attempt; a worker's reason is its
/// own text and must not grow the store without bound.
const MAX_REASON_BYTES: usize = 2048;

/// `reason`, cut to [`MAX_REASON_BYTES`] at a character boundary.
fn bounded_reason(reason: &str) -> String {
    if reason.len() <= MAX_REASON_BYTES {
        return reason.to_owned();
    }
    let mut end = MAX_REASON_BYTES;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… (cut)", &reason[..end])
}
