//! Reading a tournament's progress over the Admin service.

use std::collections::BTreeSet;
use std::time::Duration;

use arena_proto::v1::{MatchSummary, MatchesRequest, StatusRequest, StatusResponse};

use super::arena::{self, Admin, Coordinator, Summary, Worker};
use super::redis::RedisServer;
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
        async || (worker.running_bots() == 2).then_some(()),
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

/// What [`play_on_two_workers`] saw: every match, the standings rows and
/// each worker's summary.
pub struct Played {
    pub matches: Vec<MatchSummary>,
    pub rows: Vec<serde_json::Value>,
    pub summaries: [Summary; 2],
}

/// Plays the tournament in `file` on a fresh Redis, coordinator and two
/// sandboxed workers (`<tag>-a`, `<tag>-b`) until `arena tournament status`
/// says all `total` matches are done, then drains the workers. Checks that
/// every match was recorded once, is done, and was accepted once.
pub async fn play_on_two_workers(tag: &str, file: &str, total: usize) -> Played {
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    let mut workers = [
        Worker::start(&format!("{tag}-a"), &url, true),
        Worker::start(&format!("{tag}-b"), &url, true),
    ];
    let created = arena::tournament(&url, &["create", file]);
    let id = created.trim().to_owned();
    assert!(id.starts_with("t-"), "create printed {created:?}");
    let status = poll_until("the tournament to finish", TOURNAMENT, async || {
        let line = arena::tournament(&url, &["status", &id]);
        line.contains(", finished").then_some(line)
    })
    .await;
    assert!(
        status.contains(&format!("{total}/{total} matches done")),
        "{status}"
    );
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let all = matches(&mut admin, &id).await;
    assert_eq!(all.len(), total, "{all:#?}");
    let mut ids = BTreeSet::new();
    for m in &all {
        assert!(ids.insert(m.match_id.clone()), "recorded twice: {m:#?}");
        assert_eq!(m.state, "done", "{m:#?}");
    }
    let json = arena::tournament(&url, &["standings", &id, "--json"]);
    let standings: serde_json::Value = serde_json::from_str(&json).expect("standings JSON");
    let rows = standings["rows"].as_array().expect("rows").clone();
    let summaries = workers.each_mut().map(|w| w.drain());
    let accepted: u64 = summaries.iter().map(|s| s.accepted).sum();
    assert_eq!(accepted, total as u64, "{summaries:?}");
    for summary in &summaries {
        assert_eq!(summary.failed, 0, "{summaries:?}");
    }
    Played {
        matches: all,
        rows,
        summaries,
    }
}
