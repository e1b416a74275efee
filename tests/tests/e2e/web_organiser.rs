//! The tournament pages as an organiser uses them, in headless Chromium:
//! the standings re-sort themselves, round headers and buttons follow as
//! results arrive (in the same document, no reload); Rejudge and Cancel ask
//! before acting, act once confirmed, and say why when they cannot; an
//! entrant's page and the downloads are reachable from the standings.
//!
//! Results come from a simulated worker over raw gRPC, so the test decides
//! who wins each match and when. Screenshots of each page, light and dark,
//! land in `web-screenshots/` of the Cargo target directory.

use std::time::Duration;

use arena_proto::v1::{
    HeartbeatRequest, LeaseRequest, LeasedMatch, ReportOutcome, ReportResultRequest, SeatResult,
};

use crate::support::arena::{self, Coordinator, WorkerRpc};
use crate::support::bots::Fixture;
use crate::support::browser::page::Page;
use crate::support::browser::page::js_string;
use crate::support::browser::page::media::ColourScheme;
use crate::support::browser::{Browser, screenshot_dir};
use crate::support::redis::RedisServer;
use crate::support::tournament::matches;
use crate::support::wait::poll_until;

/// The simulated worker's id.
const SIM: &str = "web-organiser-sim";
/// How long a change in the store may take to reach an open page.
const LIVE: Duration = Duration::from_secs(15);
/// Marks the document shown, so a reload (a new document) shows.
const SET_MARKER: &str = "window.arenaE2eMarker = 'still here'; true";
const STILL_MARKED: &str = "(window.arenaE2eMarker === 'still here')";
/// The order of the standings rows on the page, by entrant name.
const ROW_ORDER: &str = "JSON.stringify(Array.from(document.querySelectorAll('table.standings tbody tr')).map(r => r.dataset.entrant))";

/// A worker the test plays: it leases the next match and reports whoever
/// the test says won; its heartbeats (keeping it alive for rejudges) run
/// until [`SimWorker::go_silent`].
struct SimWorker {
    rpc: WorkerRpc,
    heartbeats: Option<tokio::task::JoinHandle<()>>,
}

impl SimWorker {
    async fn register(url: &str) -> SimWorker {
        let mut rpc = arena::worker_rpc(url, Some(arena::WORKER_TOKEN)).await;
        let registered = rpc
            .register(arena::register_request(SIM))
            .await
            .expect("Register")
            .into_inner();
        let interval = Duration::from_millis(registered.heartbeat_interval_ms.max(50));
        let mut beat = rpc.clone();
        let heartbeats = tokio::spawn(async move {
            loop {
                let _ = beat
                    .heartbeat(HeartbeatRequest {
                        worker_id: SIM.to_owned(),
                        ..Default::default()
                    })
                    .await;
                tokio::time::sleep(interval).await;
            }
        });
        SimWorker {
            rpc,
            heartbeats: Some(heartbeats),
        }
    }

    async fn lease(&mut self) -> LeasedMatch {
        let rpc = &mut self.rpc;
        poll_until("a match to lease", Duration::from_secs(30), async || {
            rpc.lease(LeaseRequest {
                worker_id: SIM.to_owned(),
            })
            .await
            .expect("Lease")
            .into_inner()
            .r#match
        })
        .await
    }

    /// Reports `leased` with `winner` (a seat) first and the other second.
    async fn report(&mut self, leased: &LeasedMatch, winner: usize) {
        let seats = leased
            .seats
            .iter()
            .enumerate()
            .map(|(seat, s)| SeatResult {
                submission: s.submission.clone(),
                baseline: s.baseline.clone(),
                rank: u32::from(seat != winner),
                score: if seat == winner { 1.0 } else { 0.0 },
                moves: 1,
                ..Default::default()
            })
            .collect();
        let outcome = self
            .rpc
            .report_result(ReportResultRequest {
                worker_id: SIM.to_owned(),
                lease_id: leased.lease_id.clone(),
                match_id: leased.match_id.clone(),
                seats,
                reason: "general_captured".into(),
                turns: 50,
                replay: Vec::new(),
                duration_s: 0.0,
                seat_logs: Vec::new(),
            })
            .await
            .expect("ReportResult")
            .into_inner()
            .outcome;
        assert_eq!(outcome, ReportOutcome::Accepted as i32);
    }

    fn go_silent(&mut self) {
        if let Some(task) = self.heartbeats.take() {
            task.abort();
        }
    }
}

impl Drop for SimWorker {
    fn drop(&mut self) {
        self.go_silent();
    }
}

/// Entrant names in standings order, as the coordinator ranks them.
fn standings_order(url: &str, id: &str) -> Vec<String> {
    let json: serde_json::Value =
        serde_json::from_str(&arena::tournament(url, &["standings", id, "--json"]))
            .expect("standings JSON");
    json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// The name of the entrant with submission `id`, from the standings.
fn name_of(url: &str, tournament: &str, id: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(&arena::tournament(
        url,
        &["standings", tournament, "--json"],
    ))
    .expect("standings JSON");
    json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["entrant"] == id)
        .and_then(|r| r["name"].as_str())
        .unwrap_or_else(|| panic!("no entrant {id} in {json}"))
        .to_owned()
}

fn shoot(page: &Page<'_>, name: &str) {
    for (scheme, suffix) in [(ColourScheme::Light, "light"), (ColourScheme::Dark, "dark")] {
        page.emulate_colour_scheme(scheme)
            .expect("emulating the colour scheme");
        let path = screenshot_dir().join(format!("{name}-{suffix}.png"));
        page.screenshot(&path).expect("a screenshot");
        eprintln!("web_organiser: screenshot {}", path.display());
    }
    page.emulate_colour_scheme(ColourScheme::Light)
        .expect("back to light");
}

fn eval_string(page: &Page<'_>, js: &str) -> String {
    page.eval(js)
        .unwrap_or_else(|e| panic!("{js}: {e}"))
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn organiser_pages_follow_results_and_ask_before_acting() {
    // Four entrants, one game per pairing: a round robin of three rounds
    // of two matches.
    let fixture = Fixture::ungated("web-organiser", 4, "E2E organiser", 41, 1);
    let redis = RedisServer::start();
    // A short lease, so a silent worker soon counts as gone.
    let coordinator = Coordinator::start_with(&redis, "127.0.0.1:0", 3, &["--http", "127.0.0.1:0"]);
    let url = coordinator.url();
    let web = format!("http://{}", coordinator.web_address());
    let id = arena::create_tournament(&url, fixture.file());
    let tournament_page = format!("{web}/tournaments/{id}");
    let mut worker = SimWorker::register(&url).await;
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;

    // The first match: seat 0 wins.
    let first = worker.lease().await;
    worker.report(&first, 0).await;

    let browser = Browser::launch().expect("launching Chromium");
    let page = browser.new_page().expect("a new page");
    tokio::task::block_in_place(|| {
        page.goto(&format!("{web}/login")).expect("the login page");
        page.eval(&format!(
            "document.querySelector('#token').value = {}; true",
            js_string(arena::ADMIN_TOKEN)
        ))
        .expect("typing the token");
        page.click_to_navigate("form button[type=submit]")
            .expect("logging in");
        assert_eq!(
            page.goto(&tournament_page).expect("the tournament page"),
            Some(200)
        );
        page.eval(SET_MARKER).expect("marking the document");
    });
    let before: Vec<String> = tokio::task::block_in_place(|| {
        serde_json::from_str(&eval_string(&page, ROW_ORDER)).expect("row order")
    });
    assert_eq!(
        before,
        standings_order(&url, &id),
        "the page opens in rank order"
    );

    // The next match: whichever of its two entrants stands lower wins, so
    // it climbs and the rows must move.
    let second = worker.lease().await;
    let names: Vec<String> = second
        .seats
        .iter()
        .map(|s| name_of(&url, &id, &s.submission))
        .collect();
    let place = |name: &str| before.iter().position(|n| n == name).expect("a row");
    let winner = usize::from(place(&names[1]) > place(&names[0]));
    worker.report(&second, winner).await;
    let after = standings_order(&url, &id);
    assert_ne!(after, before, "the result moves the standings");
    // Match ids are TOURNAMENT:ROUND:INDEX.
    let round = second
        .match_id
        .rsplit(':')
        .nth(1)
        .expect("a round in the match id")
        .to_owned();
    tokio::task::block_in_place(|| {
        page.wait_for(
            &format!(
                "({ROW_ORDER}) === {} && {STILL_MARKED}",
                js_string(&serde_json::to_string(&after).unwrap())
            ),
            LIVE,
        )
        .expect("the rows to re-sort in the same document");
        let in_round = format!("[data-round=\"{round}\"] [data-field=\"progress\"]");
        page.wait_for(
            &format!(
                "document.querySelector({})?.textContent === '2/2 done'",
                js_string(&in_round)
            ),
            LIVE,
        )
        .expect("the round header to count both results");
        let rejudge = format!(
            "tr[data-match=\"{}\"] form[data-show=\"rejudge\"]",
            second.match_id
        );
        page.wait_for(
            &format!(
                "document.querySelector({})?.hidden === false && {STILL_MARKED}",
                js_string(&rejudge)
            ),
            LIVE,
        )
        .expect("the finished match's Rejudge button to show");
        assert!(
            page.console_errors().is_empty(),
            "{:?}",
            page.console_errors()
        );
        shoot(&page, "organiser-tournament");

        // The downloads are the standings the page shows.
        let csv = eval_string(
            &page,
            "fetch(document.querySelector('a[href$=\"/standings.csv\"]').href).then(r => r.text())",
        );
        assert!(csv.starts_with("rank,entrant,name,points"), "{csv}");
        for (row, name) in csv.lines().skip(1).zip(&after) {
            assert!(row.contains(&format!(",{name},")), "{row} is not {name}");
        }

        // Rejudge asks first; confirmed, the match goes back to the queue.
        page.click_to_navigate(&format!("{rejudge} button"))
            .expect("clicking Rejudge");
        let asked = eval_string(&page, "document.querySelector('main').textContent");
        assert!(asked.contains("Rejudge match"), "{asked}");
        assert!(asked.contains("current result and replay stand"), "{asked}");
        shoot(&page, "organiser-confirm-rejudge");
        page.click_to_navigate("form.confirm button[type=submit]")
            .expect("confirming the rejudge");
        assert_eq!(
            page.eval("location.pathname").expect("the path"),
            serde_json::json!(format!("/matches/{}", second.match_id))
        );
    });
    let now = matches(&mut admin, &id).await;
    let requeued = now
        .iter()
        .find(|m| m.match_id == second.match_id)
        .expect("the match");
    assert_eq!(requeued.state, "queued", "{requeued:#?}");

    // Cancel asks first; going back leaves the tournament running.
    tokio::task::block_in_place(|| {
        page.goto(&tournament_page).expect("the tournament page");
        page.click_to_navigate("form[data-show=\"cancel\"] button")
            .expect("clicking Cancel");
        let asked = eval_string(&page, "document.querySelector('main').textContent");
        assert!(asked.contains("matches are recorded; they stay"), "{asked}");
        shoot(&page, "organiser-confirm-cancel");
        page.click_to_navigate("form.confirm a.back")
            .expect("going back");
    });
    let status = arena::tournament(&url, &["status", &id]);
    assert!(!status.contains("cancelled"), "{status}");

    // With its only worker gone silent, a rejudge is refused with the
    // reason, and nothing changes.
    worker.go_silent();
    let refused = tokio::task::block_in_place(|| {
        let button = format!(
            "tr[data-match=\"{}\"] form[data-show=\"rejudge\"] button",
            first.match_id
        );
        page.goto(&tournament_page).expect("the tournament page");
        // The form's own post, from the page (its cookie and origin): the
        // answer is the confirmation page while the worker still counts as
        // alive, then the refusal.
        let post = format!(
            "(() => {{ const form = document.querySelector({}).closest('form');
               return fetch(form.action, {{ method: 'POST', body: new URLSearchParams() }})
                 .then(async r => [r.status, await r.text()]); }})()",
            js_string(&button)
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let answer = page.eval(&post).expect("posting the rejudge form");
            let (status, text) = (answer[0].as_u64(), answer[1].as_str().unwrap_or_default());
            if status == Some(409) {
                break text.to_owned();
            }
            assert_eq!(status, Some(200), "{text}");
            assert!(text.contains("form method=\"post\""), "{text}");
            assert!(
                std::time::Instant::now() < deadline,
                "the silent worker never counted as gone"
            );
        }
    });
    assert!(refused.contains("no live worker"), "{refused}");
    // The refused post is logged by the browser; nothing else may be.
    let errors_seen = page.console_errors().len();
    let now = matches(&mut admin, &id).await;
    let kept = now
        .iter()
        .find(|m| m.match_id == first.match_id)
        .expect("the match");
    assert_eq!(kept.state, "done", "{kept:#?}");

    // An entrant's page, from its name in the standings.
    let leader = after[0].clone();
    tokio::task::block_in_place(|| {
        page.goto(&tournament_page).expect("the tournament page");
        let link = eval_string(
            &page,
            &format!(
                "document.querySelector({})?.href ?? ''",
                js_string(&format!("tr[data-entrant=\"{leader}\"] th a"))
            ),
        );
        assert!(link.contains("/entrants/"), "{link}");
        assert_eq!(page.goto(&link).expect("the entrant page"), Some(200));
        assert_eq!(page.text("h1").expect("the heading"), Some(leader.clone()));
        let opponents = page
            .eval("document.querySelectorAll('table.head-to-head tbody tr').length")
            .expect("head-to-head rows");
        assert_eq!(opponents, serde_json::json!(1), "one match played");
        let rounds = page
            .eval("document.querySelectorAll('table.by-round tbody tr').length")
            .expect("by-round rows");
        assert_eq!(rounds, serde_json::json!(1), "results in one round");
        let errors = page.console_errors();
        assert!(
            errors[errors_seen..].is_empty(),
            "{:?}",
            &errors[errors_seen..]
        );
        shoot(&page, "organiser-entrant");
        page.goto(&format!("{tournament_page}/crosstable"))
            .expect("the crosstable");
        assert_eq!(
            page.eval("document.querySelectorAll('table.crosstable tbody tr').length")
                .expect("crosstable rows"),
            serde_json::json!(4)
        );
        shoot(&page, "organiser-crosstable");
    });
}
