//! Reading a tournament's progress over the Admin service.

use std::collections::BTreeSet;
use std::time::Duration;

use arena_proto::v1::{MatchSummary, MatchesRequest, StatusRequest, StatusResponse};

use super::arena::{Admin, Worker};
use super::wait::poll_until;

/// How long a whole tournament may take here (2 cores, debug build, tests
/// running side by side).
pub const TOURNAMENT: Duration = Duration::from_secs(240);

pub async fn matches(admin: &mut Admin, id: &str) -> Vec<MatchSummary> {
    admin
        .matches(MatchesRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .expect("Admin.Matches")
        .into_inner()
        .matches
}

pub async fn status(admin: &mut Admin, id: &str) -> StatusResponse {
    admin
        .status(StatusRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .expect("Admin.Status")
        .into_inner()
}

pub async fn wait_finished(admin: &mut Admin, id: &str) -> StatusResponse {
    poll_until("the tournament to finish", TOURNAMENT, async || {
        let s = status(admin, id).await;
        s.finished.then_some(s)
    })
    .await
}

/// Waits for `worker` to lease a match of tournament `id` and for both of
/// that match's bots to start (a closed gate then holds it in flight);
/// returns the match as it was leased.
pub async fn wait_in_flight(admin: &mut Admin, id: &str, worker: &Worker) -> MatchSummary {
    let label = worker.process.label();
    let leased = poll_until(
        &format!("{label} to lease a match"),
        Duration::from_secs(60),
        async || first_in_state(&matches(admin, id).await, "leased").cloned(),
    )
    .await;
    poll_until(
        &format!("the two bots of {label} to start"),
        Duration::from_secs(60),
        async || (worker.bot_processes().len() == 2).then_some(()),
    )
    .await;
    leased
}

/// Waits for match `match_id`, whose worker stopped heartbeating, to lose
/// its lease and be queued again; returns it as requeued.
pub async fn wait_requeued(admin: &mut Admin, id: &str, match_id: &str) -> MatchSummary {
    poll_until(
        &format!("the lease on {match_id} to expire"),
        Duration::from_secs(30),
        async || {
            let all = matches(admin, id).await;
            let m = find(&all, match_id);
            (m.state == "queued").then(|| m.clone())
        },
    )
    .await
}

/// The first match in state `state`, if any.
pub fn first_in_state<'a>(matches: &'a [MatchSummary], state: &str) -> Option<&'a MatchSummary> {
    matches.iter().find(|m| m.state == state)
}

pub fn find<'a>(matches: &'a [MatchSummary], match_id: &str) -> &'a MatchSummary {
    matches
        .iter()
        .find(|m| m.match_id == match_id)
        .unwrap_or_else(|| panic!("no match {match_id} in {matches:#?}"))
}

/// `expected` distinct matches, every one done with one result (a rank per seat).
pub fn assert_all_done_once(matches: &[MatchSummary], expected: usize) {
    assert_eq!(matches.len(), expected, "{matches:#?}");
    let ids: BTreeSet<&str> = matches.iter().map(|m| m.match_id.as_str()).collect();
    assert_eq!(ids.len(), expected, "match ids repeat: {matches:#?}");
    for m in matches {
        assert_eq!(m.state, "done", "{m:#?}");
        assert_eq!(m.seats.len(), 2, "{m:#?}");
        assert_eq!(m.ranks.len(), 2, "one result, a rank per seat: {m:#?}");
        assert!(!m.reason.is_empty(), "{m:#?}");
        assert!(m.attempt >= 1, "{m:#?}");
    }
}
