//! The coordinator's web pages in headless Chromium, and a check of the
//! browser driver itself against a static page served from the test.
//!
//! The pages test runs a coordinator with `--http` holding two
//! tournaments: one played to the end by a real worker, one whose only
//! match a simulated worker (raw gRPC) leases and keeps heartbeating
//! without reporting, so it stays running. Chromium then opens every page,
//! follows links to a match, plays, pauses and steps the replay viewer, and
//! checks what changed; every page must leave the console free of errors.
//! Live updates are checked in the same document (a marker set on
//! `window` survives): the held match's turn moves when the holder reports
//! a new one, and the list shows the running tournament cancelled. The
//! tournament and match pages are also opened on a phone-sized screen and
//! must not scroll sideways.
//! Screenshots land in `web-screenshots/` of the Cargo target directory.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use arena_proto::v1::{
    HeartbeatRequest, LeaseProgress, LeaseRequest, LeasedMatch, MatchSummary, ProgressRequest,
};

use crate::support::arena::{self, Coordinator, Worker};
use crate::support::bots::Fixture;
use crate::support::browser::page::Page;
use crate::support::browser::page::js_string;
use crate::support::browser::page::media::ColourScheme;
use crate::support::browser::{Browser, BrowserError, screenshot_dir};
use crate::support::redis::RedisServer;
use crate::support::static_site::{StaticFile, StaticSite};
use crate::support::tournament::{assert_all_done_once, matches, wait_finished};
use crate::support::wait::poll_until;

/// Pages name an empty icon: Chromium would otherwise fetch
/// `/favicon.ico` and log its 404 as a console error.
///
/// A page with something to click, a key listener and a canvas that the
/// key redraws; the click handler tells a real (trusted) click from a
/// scripted one.
const DRIVER_PAGE: &str = r##"<!doctype html>
<html><head><meta charset="utf-8"><title>driver check</title>
<link rel="icon" href="data:,"></head>
<body>
<button id="press" style="width: 160px; height: 40px">press me</button>
<p id="clicked">not clicked</p>
<p id="key">no key</p>
<input id="name" value="">
<canvas id="board" width="40" height="30"></canvas>
<script>
  const board = document.getElementById("board").getContext("2d");
  function draw(x) {
    board.fillStyle = "#ffffff";
    board.fillRect(0, 0, 40, 30);
    board.fillStyle = "#cc0000";
    board.fillRect(x, 5, 10, 10);
  }
  draw(0);
  document.getElementById("press").addEventListener("click", (event) => {
    document.getElementById("clicked").textContent =
      event.isTrusted ? "clicked for real" : "clicked by a script";
  });
  document.addEventListener("keydown", (event) => {
    document.getElementById("key").textContent = event.key === " " ? "Space" : event.key;
    if (event.key === "ArrowRight") draw(20);
  });
</script>
</body></html>
"##;

/// A page that logs an error at once and throws an uncaught exception later.
const ERRORS_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>errors</title>
<link rel="icon" href="data:,"></head>
<body><script>
  console.error("deliberate console error", 42);
  setTimeout(() => { throw new Error("deliberate uncaught throw"); }, 0);
</script></body></html>
"#;

/// Processes of group `group` that are not zombies. Chromium's helpers,
/// orphaned when it exits, are reaped by init in its own time; a zombie is
/// dead already.
fn live_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.get(2) == Some(&group.to_string().as_str()) && fields.first() != Some(&"Z")
        })
        .collect()
}

#[test]
fn browser_driver_works() {
    let site = StaticSite::serve(vec![
        StaticFile::html("/", DRIVER_PAGE),
        StaticFile::html("/errors", ERRORS_PAGE),
    ]);
    let browser = Browser::launch().expect("launching Chromium");
    let group = browser.pid();
    let profile = browser.profile_dir().to_owned();
    assert!(profile.is_dir());
    let version = browser.version().expect("Browser.getVersion");
    assert!(version.contains("Chrome"), "{version}");
    eprintln!("web_pages: driving {version}");

    let page = browser.new_page().expect("a new page");
    assert_eq!(page.goto(&site.url("/")).expect("goto /"), Some(200));
    assert_eq!(
        page.eval("document.title").expect("eval"),
        serde_json::json!("driver check")
    );
    assert_eq!(
        page.eval("Promise.resolve(6 * 7)").expect("a promise"),
        serde_json::json!(42)
    );

    page.click("#press").expect("click");
    page.wait_for(
        "document.getElementById('clicked').textContent === 'clicked for real'",
        Duration::from_secs(5),
    )
    .expect("a trusted click");
    assert!(matches!(
        page.click("#nothing-here"),
        Err(BrowserError::NoElement(_))
    ));

    let before = page
        .canvas_snapshot("#board")
        .expect("canvas pixels")
        .expect("a canvas");
    assert_eq!((before.width, before.height, before.colours), (40, 30, 2));
    page.press_key("ArrowRight").expect("ArrowRight");
    page.wait_for(
        "document.getElementById('key').textContent === 'ArrowRight'",
        Duration::from_secs(5),
    )
    .expect("the key listener saw ArrowRight");
    let after = page
        .canvas_snapshot("#board")
        .expect("canvas pixels")
        .expect("a canvas");
    assert_ne!(before.hash, after.hash, "the canvas was redrawn");
    page.press_key(" ").expect("Space");
    assert_eq!(
        page.wait_for(
            "document.getElementById('key').textContent === 'Space' && 'Space'",
            Duration::from_secs(5)
        )
        .expect("the key listener saw Space"),
        serde_json::json!("Space")
    );
    assert_eq!(
        page.text("#clicked").expect("text"),
        Some("clicked for real".to_owned())
    );

    page.click("#name").expect("focusing the input");
    page.type_text("arena-e2e: 1").expect("typing");
    assert_eq!(
        page.eval("document.getElementById('name').value")
            .expect("the input's value"),
        serde_json::json!("arena-e2e: 1")
    );

    // A condition that never holds times out with its last value.
    match page.wait_for("document.title === 'never'", Duration::from_millis(200)) {
        Err(BrowserError::WaitTimeout { last, .. }) => assert_eq!(last, serde_json::json!(false)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(matches!(
        page.eval("(() => { throw new Error('from eval'); })()"),
        Err(BrowserError::Script(message)) if message.contains("from eval")
    ));

    let shot = screenshot_dir().join("driver-check.png");
    page.screenshot(&shot).expect("screenshot");
    let png = std::fs::read(&shot).expect("reading the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 1000, "{} bytes", png.len());
    eprintln!("web_pages: screenshot {}", shot.display());
    assert_eq!(page.console_errors(), Vec::<String>::new());

    assert_eq!(page.goto(&site.url("/missing")).expect("goto"), Some(404));

    let errors = browser.new_page().expect("a second page");
    assert_eq!(errors.goto(&site.url("/errors")).expect("goto"), Some(200));
    // The exception comes from a timer: poll for both reports.
    let deadline = Instant::now() + Duration::from_secs(10);
    let reported = loop {
        let reported = errors.console_errors();
        let has = |kind: &str, text: &str| {
            reported
                .iter()
                .any(|e| e.starts_with(kind) && e.contains(text))
        };
        if has("console.error:", "deliberate console error 42")
            && has("exception:", "deliberate uncaught throw")
        {
            break reported;
        }
        assert!(Instant::now() < deadline, "{reported:#?}");
        std::thread::sleep(Duration::from_millis(25));
    };
    assert_eq!(reported.len(), 2, "{reported:#?}");
    // Errors belong to the page they happened in.
    assert!(
        page.console_errors()
            .iter()
            .all(|e| !e.contains("deliberate")),
        "{:#?}",
        page.console_errors()
    );

    drop((page, errors));
    drop(browser);
    // Killed, but a process takes a moment to finish exiting.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut alive = live_members(group);
    while !alive.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        alive = live_members(group);
    }
    assert!(
        alive.is_empty(),
        "Chromium's processes {alive:?} outlived the browser by 5 s"
    );
    assert!(!profile.exists(), "{} was left behind", profile.display());
}

/// The simulated worker's id: it holds the running tournament's match.
const HOLDER: &str = "web-holder";
/// The turn the holder says its match has reached.
const HELD_TURN: u32 = 17;
/// The real worker's id: it plays the finished tournament.
const PLAYER: &str = "web-player";
/// The entrant whose standings row is checked.
const KNOWN_ENTRANT: &str = "starter-1";
/// How long the viewer may take to fetch, parse and draw a replay.
const VIEWER_READY: Duration = Duration::from_secs(60);
/// How long anything else on a page may take to show.
const SHOWN: Duration = Duration::from_secs(15);
/// The turn the holder reports once the running tournament's page is open.
const BUMPED_TURN: u32 = 42;
/// The turns it reports once the public, then the organiser, watch the
/// held match's page.
const PUBLIC_TURN: u32 = 50;
const ORGANISER_TURN: u32 = 61;
/// How long a change in the store may take to reach an open page: a
/// heartbeat, the stream's poll (half a second) and the script.
const LIVE: Duration = Duration::from_secs(15);
/// Marks the document shown, so a reload (a new document) shows.
const SET_MARKER: &str = "window.arenaE2eMarker = 'still here'; true";
const STILL_MARKED: &str = "(window.arenaE2eMarker === 'still here')";

/// A lease held by a simulated worker: registered, leased, heartbeating
/// (with a turn as its progress, [`HELD_TURN`] until [`HeldLease::report_turn`]
/// moves it, and after each heartbeat a progress report with the board a
/// real worker would send at that turn) and never reporting, so its match
/// stays running. The heartbeats stop when this is dropped.
struct HeldLease {
    match_id: String,
    /// Set if a heartbeat answer said the lease is lost.
    lost: Arc<AtomicBool>,
    /// The turn the next heartbeat reports.
    turn: Arc<AtomicU32>,
    /// Wakes the heartbeat loop, so a new turn goes out without waiting an interval.
    wake: Arc<tokio::sync::Notify>,
    heartbeats: tokio::task::JoinHandle<()>,
}

impl HeldLease {
    async fn take(coordinator_url: &str) -> HeldLease {
        let mut rpc = arena::worker_rpc(coordinator_url, Some(arena::WORKER_TOKEN)).await;
        let registered = rpc
            .register(arena::register_request(HOLDER))
            .await
            .expect("Register")
            .into_inner();
        let leased = poll_until("a match to lease", Duration::from_secs(30), async || {
            rpc.lease(LeaseRequest {
                worker_id: HOLDER.to_owned(),
            })
            .await
            .expect("Lease")
            .into_inner()
            .r#match
        })
        .await;
        let interval = Duration::from_millis(registered.heartbeat_interval_ms.max(50));
        let lost = Arc::new(AtomicBool::new(false));
        let turn = Arc::new(AtomicU32::new(HELD_TURN));
        let wake = Arc::new(tokio::sync::Notify::new());
        let (lost_flag, reported_turn, woken) =
            (Arc::clone(&lost), Arc::clone(&turn), Arc::clone(&wake));
        let lease_id = leased.lease_id.clone();
        let match_id = leased.match_id.clone();
        let boards = Boards::of(&leased);
        let heartbeats = tokio::spawn(async move {
            loop {
                let turn = reported_turn.load(Ordering::SeqCst);
                let answer = rpc
                    .heartbeat(HeartbeatRequest {
                        worker_id: HOLDER.to_owned(),
                        lease_ids: vec![lease_id.clone()],
                        progress: vec![LeaseProgress {
                            lease_id: lease_id.clone(),
                            match_id: match_id.clone(),
                            turn,
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                    .await;
                if answer.is_ok_and(|a| a.into_inner().lost_lease_ids.contains(&lease_id)) {
                    lost_flag.store(true, Ordering::SeqCst);
                }
                let report = ProgressRequest {
                    worker_id: HOLDER.to_owned(),
                    progress: vec![LeaseProgress {
                        lease_id: lease_id.clone(),
                        match_id: match_id.clone(),
                        turn,
                        board: boards.at(turn),
                    }],
                };
                rpc.report_progress(report).await.expect("ReportProgress");
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = woken.notified() => {}
                }
            }
        });
        HeldLease {
            match_id: leased.match_id,
            lost,
            turn,
            wake,
            heartbeats,
        }
    }

    /// A handle that moves the reported turn from another thread.
    fn progress(&self) -> HeldProgress {
        HeldProgress {
            turn: Arc::clone(&self.turn),
            wake: Arc::clone(&self.wake),
            lost: Arc::clone(&self.lost),
        }
    }
}

/// The boards of a leased match as a worker reports them: the engine's
/// live view after `turn` steps in which every seat passes.
struct Boards {
    game: &'static arena_engine::registry::GameEntry,
    seed: u64,
    seats: usize,
    rules: arena_engine::Rules,
}

impl Boards {
    fn of(leased: &LeasedMatch) -> Boards {
        Boards {
            game: arena_engine::registry::find(&leased.game).expect("a registered game"),
            seed: leased.seed,
            seats: leased.seats.len(),
            rules: serde_json::from_str(&leased.rules_json).expect("the lease's rules"),
        }
    }

    fn at(&self, turn: u32) -> Vec<u8> {
        let mut game = self
            .game
            .create(self.seed, self.seats, &self.rules)
            .expect("the leased match");
        for _ in 0..turn {
            for seat in 0..self.seats {
                if game.is_due(seat) {
                    game.offer_fallback(seat, None);
                }
            }
            assert!(game.step().is_none(), "the held match ended by itself");
        }
        serde_json::to_vec(&game.live_json()).expect("the board as JSON")
    }
}

/// Moves a [`HeldLease`]'s reported turn and tells whether it was lost.
struct HeldProgress {
    turn: Arc<AtomicU32>,
    wake: Arc<tokio::sync::Notify>,
    lost: Arc<AtomicBool>,
}

impl HeldProgress {
    /// Reports `turn` with the next heartbeat, sent at once.
    fn report_turn(&self, turn: u32) {
        self.turn.store(turn, Ordering::SeqCst);
        // A stored permit: the loop wakes even if it is mid-heartbeat now.
        self.wake.notify_one();
    }

    fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.heartbeats.abort();
    }
}

/// Wins, draws and losses of `entrant` (an entrant id) in `matches`, from
/// the recorded ranks: a lower rank than the other seat's wins.
fn record_of(entrant: &str, matches: &[MatchSummary]) -> (u32, u32, u32) {
    let mut record = (0, 0, 0);
    for m in matches {
        let Some(seat) = m.seats.iter().position(|s| s == entrant) else {
            continue;
        };
        let mine = m.ranks[seat];
        let best_other = m
            .ranks
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != seat)
            .map(|(_, r)| *r)
            .min()
            .expect("two seats");
        match mine.cmp(&best_other) {
            std::cmp::Ordering::Less => record.0 += 1,
            std::cmp::Ordering::Equal => record.1 += 1,
            std::cmp::Ordering::Greater => record.2 += 1,
        }
    }
    record
}

/// Counts the organiser's rejudge forms on a tournament page.
const REJUDGE_BUTTONS: &str = "document.querySelectorAll('form[action$=\"/rejudge\"]').length";

/// What the pages are expected to show.
struct Expected {
    web: String,
    finished: String,
    running: String,
    /// A match of the finished tournament, clicked through to.
    played_match: String,
    /// The running tournament's match, held by [`HOLDER`].
    held_match: String,
    /// `W/D/L` and points of [`KNOWN_ENTRANT`].
    known_wdl: String,
    known_points: f64,
    /// The coordinator's gRPC address, for `arena tournament`.
    coordinator: String,
    /// Moves the held match's reported turn.
    held: HeldProgress,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_pages_in_headless_chromium() {
    let started = Instant::now();
    // Two bots, two games (seats swapped): a finished tournament of two
    // matches; the running one has a single match, which the holder takes.
    let finished_fixture = Fixture::ungated("web-done", 2, "E2E web finished", 23, 2);
    let running_fixture = Fixture::ungated("web-running", 2, "E2E web running", 29, 1);
    let redis = RedisServer::start();
    let coordinator =
        Coordinator::start_with(&redis, "127.0.0.1:0", 30, &["--http", "127.0.0.1:0"]);
    let url = coordinator.url();
    let web = format!("http://{}", coordinator.web_address());

    // The running tournament goes first, so its match is the one queued
    // when the holder leases; the real worker starts only after that.
    let running = arena::create_tournament(&url, running_fixture.file());
    let held = HeldLease::take(&url).await;
    let finished = arena::create_tournament(&url, finished_fixture.file());
    let _player = Worker::start(PLAYER, &url, false);
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    wait_finished(&mut admin, &finished).await;
    let played = matches(&mut admin, &finished).await;
    assert_all_done_once(&played, 2);
    let held_now = matches(&mut admin, &running).await;
    assert_eq!(held_now.len(), 1, "{held_now:#?}");
    assert_eq!(held_now[0].match_id, held.match_id, "{held_now:#?}");
    assert_eq!(
        (held_now[0].state.as_str(), held_now[0].worker.as_str()),
        ("leased", HOLDER),
        "{held_now:#?}"
    );

    let standings: serde_json::Value = serde_json::from_str(&arena::tournament(
        &url,
        &["standings", &finished, "--json"],
    ))
    .expect("standings JSON");
    let row = standings["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == KNOWN_ENTRANT))
        .unwrap_or_else(|| panic!("no {KNOWN_ENTRANT} in {standings}"))
        .clone();
    let entrant = row["entrant"]
        .as_str()
        .unwrap_or_else(|| panic!("no entrant id in {row}"));
    let (wins, draws, losses) = record_of(entrant, &played);
    assert_eq!(wins + draws + losses, 2, "{entrant} in {played:#?}");
    // The coordinator's own count agrees with the recorded ranks.
    assert_eq!(
        (
            row["wins"].as_u64(),
            row["draws"].as_u64(),
            row["losses"].as_u64()
        ),
        (Some(wins.into()), Some(draws.into()), Some(losses.into())),
        "{row}"
    );
    let expected = Expected {
        web,
        finished,
        running,
        played_match: played[0].match_id.clone(),
        held_match: held.match_id.clone(),
        known_wdl: format!("{wins}/{draws}/{losses}"),
        known_points: f64::from(wins) + f64::from(draws) / 2.0,
        coordinator: url.clone(),
        held: held.progress(),
    };
    eprintln!(
        "web_pages: tournaments ready after {:.1?}",
        started.elapsed()
    );

    // The driver blocks; the holder's heartbeats run on the other threads.
    let browsing = Instant::now();
    tokio::task::block_in_place(|| browse(&expected));
    eprintln!(
        "web_pages: browsing took {:.1?}, {:.1?} in all",
        browsing.elapsed(),
        started.elapsed()
    );
    // Whether the holder kept its lease is checked in `browse`, before it
    // cancels the running tournament.
    drop(held);
}

/// Opens every page in Chromium and checks what it shows; writes a
/// screenshot of each.
fn browse(expected: &Expected) {
    let Expected {
        web,
        finished,
        running,
        ..
    } = expected;
    let shots = screenshot_dir();
    let browser = Browser::launch().expect("launching Chromium");
    let page = browser.new_page().expect("a new page");
    let mut errors_seen = 0;
    // Fails on any console error since the last check, but `allowed` ones.
    let mut no_new_errors = |step: &str, allowed: &dyn Fn(&str) -> bool| {
        let errors = page.console_errors();
        let new: Vec<&String> = errors[errors_seen..]
            .iter()
            .filter(|e| !allowed(e))
            .collect();
        assert!(new.is_empty(), "console errors on {step}: {new:#?}");
        errors_seen = errors.len();
    };
    let shoot = |name: &str| {
        let path = shots.join(format!("{name}.png"));
        page.screenshot(&path).expect("a screenshot");
        eprintln!("web_pages: screenshot {}", path.display());
    };
    // The same in the dark theme too (`NAME-dark.png`).
    let shoot_both = |name: &str| {
        shoot(name);
        page.emulate_colour_scheme(ColourScheme::Dark)
            .expect("the dark theme");
        shoot(&format!("{name}-dark"));
        page.emulate_colour_scheme(ColourScheme::Light)
            .expect("back to light");
    };
    let field = |row: &str, name: &str| {
        format!(
            "document.querySelector({})?.textContent ?? null",
            js_string(&format!("{row} [data-field=\"{name}\"]"))
        )
    };
    let wait_text = |js: &str, wanted: &str| {
        page.wait_for(&format!("({js}) === {}", js_string(wanted)), SHOWN)
            .unwrap_or_else(|e| panic!("waiting for {wanted:?}: {e}"));
    };

    // The list: both tournaments, one finished and one running.
    assert_eq!(page.goto(&format!("{web}/")).expect("goto /"), Some(200));
    wait_text(
        &field(&format!("tr[data-tournament=\"{finished}\"]"), "state"),
        "finished",
    );
    wait_text(
        &field(&format!("tr[data-tournament=\"{running}\"]"), "state"),
        "running",
    );
    wait_text(
        &field(&format!("tr[data-tournament=\"{finished}\"]"), "matches"),
        "2/2",
    );
    shoot("tournaments");
    no_new_errors("/", &|_| false);

    // The finished tournament, reached by its link.
    let status = page
        .click_to_navigate(&format!("tr[data-tournament=\"{finished}\"] a"))
        .expect("following the tournament link");
    assert_eq!(status, Some(200));
    assert_eq!(
        page.eval("location.pathname").expect("the path"),
        serde_json::json!(format!("/tournaments/{finished}"))
    );
    let known = format!("tr[data-entrant=\"{KNOWN_ENTRANT}\"]");
    wait_text(&field(&known, "wdl"), &expected.known_wdl);
    wait_text(&field(&known, "games"), "2");
    let points = page
        .eval(&field(&known, "points"))
        .expect("the points cell");
    let points: f64 = points
        .as_str()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("points cell {points}"));
    assert_eq!(points, expected.known_points);
    let played_row = format!("tr[data-match=\"{}\"]", expected.played_match);
    wait_text(&field(&played_row, "state"), "done");
    assert_eq!(
        page.eval(REJUDGE_BUTTONS)
            .expect("counting rejudge buttons"),
        serde_json::json!(0),
        "the public gets no organiser buttons"
    );
    shoot("tournament-finished");
    no_new_errors("the finished tournament", &|_| false);

    // Through to a match, and its replay viewer.
    let status = page
        .click_to_navigate(&format!("{played_row} a[href^=\"/matches/\"]"))
        .expect("following the match link");
    assert_eq!(status, Some(200));
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.ready === 'true'",
        VIEWER_READY,
    )
    .expect("the viewer to draw its first frame");
    let turn = || -> u64 {
        page.eval("Number(document.querySelector('#viewer').dataset.turn)")
            .expect("data-turn")
            .as_u64()
            .expect("a turn number")
    };
    assert_eq!(turn(), 0, "the viewer opens at the start");
    let canvas = "#viewer canvas";
    let first = page
        .canvas_snapshot(canvas)
        .expect("canvas pixels")
        .expect("a canvas in the viewer");
    assert!(first.colours > 1, "the first frame is drawn: {first:?}");
    shoot("match");

    // Play a few turns, then pause with Space.
    page.click("#viewer .viewer-play").expect("clicking play");
    page.wait_for(
        "Number(document.querySelector('#viewer').dataset.turn) >= 3",
        SHOWN,
    )
    .expect("playing to advance the turn");
    page.press_key(" ").expect("Space");
    page.wait_for(
        "!document.querySelector('#viewer .viewer-play').textContent.includes('pause')",
        SHOWN,
    )
    .expect("Space to pause");
    let paused_at = turn();
    let paused = page
        .canvas_snapshot(canvas)
        .expect("canvas pixels")
        .expect("a canvas");

    // One step forward: exactly one turn, and a different picture.
    page.press_key("ArrowRight").expect("ArrowRight");
    page.wait_for(
        &format!("Number(document.querySelector('#viewer').dataset.turn) !== {paused_at}"),
        SHOWN,
    )
    .expect("ArrowRight to step");
    // Two animation frames later nothing else has moved it (paused).
    page.eval("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        .expect("two animation frames");
    assert_eq!(turn(), paused_at + 1, "ArrowRight steps one turn");
    let counter = page
        .text("#viewer .viewer-turn")
        .expect("the turn counter")
        .unwrap_or_default();
    assert!(
        counter.starts_with(&format!("turn {} ", paused_at + 1)),
        "{counter:?}"
    );
    let stepped = page
        .canvas_snapshot(canvas)
        .expect("canvas pixels")
        .expect("a canvas");
    assert_ne!(stepped.hash, paused.hash, "the step redrew the canvas");
    shoot("match-stepped");
    no_new_errors("the match page", &|_| false);

    // The running tournament: its match held by the simulated worker.
    assert_eq!(
        page.goto(&format!("{web}/tournaments/{running}"))
            .expect("goto"),
        Some(200)
    );
    let held_row = format!("tr[data-match=\"{}\"]", expected.held_match);
    wait_text(&field(&held_row, "state"), "running");
    wait_text(&field(&held_row, "worker"), HOLDER);
    wait_text(&field(&held_row, "turn"), &format!("turn {HELD_TURN}"));
    shoot("tournament-running");

    // The held match moves on: its turn cell follows without a reload. A
    // reload would start a new document without the marker.
    page.eval(SET_MARKER).expect("marking the document");
    expected.held.report_turn(BUMPED_TURN);
    page.wait_for(
        &format!(
            "({}) === {} && {STILL_MARKED}",
            field(&held_row, "turn"),
            js_string(&format!("turn {BUMPED_TURN}"))
        ),
        LIVE,
    )
    .expect("the turn cell to follow the heartbeat in the same document");
    assert_eq!(
        page.eval(STILL_MARKED).expect("the marker"),
        serde_json::json!(true),
        "the page was reloaded"
    );
    shoot("tournament-running-live");
    no_new_errors("the running tournament", &|_| false);

    // The held match's own page, for the public: the turn follows the
    // match, the board is the organisers' while it runs.
    let held_page = format!("{web}/matches/{}", expected.held_match);
    assert_eq!(page.goto(&held_page).expect("goto"), Some(200));
    wait_text(
        "document.querySelector('[data-live-turn]')?.textContent ?? null",
        &BUMPED_TURN.to_string(),
    );
    assert_eq!(
        page.eval("[document.querySelector('[data-live-board=\"hidden\"]') !== null, document.querySelector('#viewer') === null]")
            .expect("what the public sees"),
        serde_json::json!([true, true]),
        "the public sees no running board"
    );
    page.eval(SET_MARKER).expect("marking the document");
    expected.held.report_turn(PUBLIC_TURN);
    page.wait_for(
        &format!(
            "document.querySelector('[data-live-turn]')?.textContent === '{PUBLIC_TURN}' && {STILL_MARKED}"
        ),
        LIVE,
    )
    .expect("the turn to follow the match on its page");
    shoot_both("match-running-public");
    no_new_errors("the running match, public", &|_| false);

    // The workers: the real one and the simulated one.
    assert_eq!(
        page.goto(&format!("{web}/workers")).expect("goto"),
        Some(200)
    );
    for worker in [PLAYER, HOLDER] {
        page.wait_for(
            &format!(
                "document.querySelector({}) !== null",
                js_string(&format!("tr[data-worker=\"{worker}\"]"))
            ),
            SHOWN,
        )
        .unwrap_or_else(|e| panic!("{worker} on /workers: {e}"));
    }
    wait_text(
        &field(&format!("tr[data-worker=\"{PLAYER}\"]"), "played"),
        "2",
    );
    shoot("workers");
    no_new_errors("/workers", &|_| false);

    // The login form: an admin token typed in sets the cookie, and the
    // organiser's buttons appear (the public saw none above).
    assert_eq!(page.goto(&format!("{web}/login")).expect("goto"), Some(200));
    let token_field = "form[action=\"/login\"] input[name=\"token\"]";
    page.wait_for(
        &format!(
            "document.querySelector({}) !== null",
            js_string(token_field)
        ),
        SHOWN,
    )
    .expect("the token field");
    shoot("login");
    page.click(token_field).expect("focusing the token field");
    page.type_text(arena::ADMIN_TOKEN)
        .expect("typing the token");
    let status = page
        .click_to_navigate("form[action=\"/login\"] button[type=\"submit\"]")
        .expect("submitting the login form");
    assert_eq!(status, Some(200));
    no_new_errors("/login", &|_| false);
    assert_eq!(
        page.goto(&format!("{web}/tournaments/{finished}"))
            .expect("goto"),
        Some(200)
    );
    assert_eq!(
        page.eval(REJUDGE_BUTTONS)
            .expect("counting rejudge buttons"),
        serde_json::json!(2),
        "an admin may rejudge both finished matches"
    );
    shoot("tournament-finished-admin");

    // The organiser watches the held match live: the board the worker
    // reports, drawn by the viewer with its panel, moving with the match.
    assert_eq!(page.goto(&held_page).expect("goto"), Some(200));
    let live_turn = "document.querySelector('#viewer[data-state=\"live\"]')?.dataset.turn ?? null";
    wait_text(live_turn, &PUBLIC_TURN.to_string());
    let live_canvas = "#viewer canvas.viewer-canvas";
    let before = page
        .canvas_snapshot(live_canvas)
        .expect("canvas pixels")
        .expect("a live board");
    assert!(before.colours > 1, "the board is drawn: {before:?}");
    assert_eq!(
        page.eval("document.querySelectorAll('#viewer .viewer-panel li[data-seat]').length")
            .expect("the panel"),
        serde_json::json!(2),
        "a panel entry per seat"
    );
    let caption = page
        .text("#viewer .viewer-live-turn")
        .expect("the live caption")
        .unwrap_or_default();
    assert_eq!(caption, format!("turn {PUBLIC_TURN} · live"));
    shoot_both("match-live");
    page.eval(SET_MARKER).expect("marking the document");
    expected.held.report_turn(ORGANISER_TURN);
    page.wait_for(
        &format!(
            "({live_turn}) === '{ORGANISER_TURN}' && document.querySelector('[data-live-turn]')?.textContent === '{ORGANISER_TURN}' && {STILL_MARKED}"
        ),
        LIVE,
    )
    .expect("the live board to follow the match in the same document");
    let after = page
        .canvas_snapshot(live_canvas)
        .expect("canvas pixels")
        .expect("a live board");
    assert_ne!(after.hash, before.hash, "the new board was drawn");
    shoot("match-live-moved");
    no_new_errors("the live match", &|_| false);
    page.click_to_navigate("form[action=\"/logout\"] button")
        .expect("logging out");
    assert_eq!(
        page.goto(&format!("{web}/tournaments/{finished}"))
            .expect("goto"),
        Some(200)
    );
    assert_eq!(
        page.eval(REJUDGE_BUTTONS).expect("counting"),
        serde_json::json!(0)
    );
    no_new_errors("the admin's tournament page", &|_| false);

    // A match that does not exist: the 404 page. Chromium logs the
    // document's own 404 as a failed load; nothing else may appear.
    let missing = format!("{web}/matches/{finished}:0:99");
    assert_eq!(page.goto(&missing).expect("goto"), Some(404));
    page.wait_for(
        "document.querySelector('h1')?.textContent.includes('404') ?? false",
        SHOWN,
    )
    .expect("a 404 heading");
    shoot("match-missing");
    no_new_errors("the missing match", &|e| {
        e.contains("status of 404") && e.ends_with(&format!("[{missing}]"))
    });
    // A tournament id of the right shape that names nothing: 404 too.
    let missing = format!("{web}/tournaments/t-000000000000");
    assert_eq!(page.goto(&missing).expect("goto"), Some(404));
    no_new_errors("the missing tournament", &|e| {
        e.contains("status of 404") && e.ends_with(&format!("[{missing}]"))
    });

    on_a_phone(&browser, expected);
    list_follows_cancel(&page, expected);
    no_new_errors("the list after the cancel", &|_| false);
}

/// A phone's screen: 390 × 844 CSS pixels at 3 device pixels each.
const PHONE: (u32, u32, f64) = (390, 844, 3.0);

/// Whether the document is wider than the window (a page that scrolls
/// sideways as a whole); wide tables may scroll inside their own box.
const PAGE_OVERFLOW: &str = "({ scrollWidth: document.documentElement.scrollWidth, \
     innerWidth: window.innerWidth, \
     overflows: document.documentElement.scrollWidth > window.innerWidth + 1 })";

/// The tournament and match pages at phone width: nothing wider than the
/// screen, the viewer's canvas within it; a screenshot of each.
fn on_a_phone(browser: &Browser, expected: &Expected) {
    let Expected { web, finished, .. } = expected;
    let (width, height, scale) = PHONE;
    let page = browser.new_page().expect("a page for the phone");
    page.emulate_screen(width, height, scale, true)
        .expect("emulating a phone");
    let fits = |what: &str| {
        let layout = page.eval(PAGE_OVERFLOW).expect("measuring the page");
        // The viewport meta tag is honoured: the layout is the phone's width.
        assert_eq!(
            layout["innerWidth"],
            serde_json::json!(width),
            "{what}: {layout}"
        );
        assert_eq!(
            layout["overflows"],
            serde_json::json!(false),
            "{what} scrolls sideways: {layout}"
        );
    };

    assert_eq!(
        page.goto(&format!("{web}/tournaments/{finished}"))
            .expect("goto"),
        Some(200)
    );
    let known = format!("tr[data-entrant=\"{KNOWN_ENTRANT}\"]");
    page.wait_for(
        &format!("document.querySelector({}) !== null", js_string(&known)),
        SHOWN,
    )
    .expect("the standings on a phone");
    fits("the tournament page");
    shoot_page(&page, "phone-tournament");

    let status = page
        .click_to_navigate(&format!(
            "tr[data-match=\"{}\"] a[href^=\"/matches/\"]",
            expected.played_match
        ))
        .expect("following the match link");
    assert_eq!(status, Some(200));
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.ready === 'true'",
        VIEWER_READY,
    )
    .expect("the viewer on a phone");
    fits("the match page");
    let canvas = page
        .eval(
            "(() => { const r = document.querySelector('#viewer canvas').getBoundingClientRect(); \
             return { left: r.left, right: r.right, width: r.width }; })()",
        )
        .expect("the canvas box");
    let (left, right, drawn) = (
        canvas["left"].as_f64().unwrap_or(-1.0),
        canvas["right"].as_f64().unwrap_or(f64::MAX),
        canvas["width"].as_f64().unwrap_or(0.0),
    );
    assert!(
        left >= 0.0 && right <= f64::from(width) + 0.5 && drawn > f64::from(width) / 2.0,
        "the canvas does not fit the phone's width: {canvas}"
    );
    shoot_page(&page, "phone-match");
    assert_eq!(page.console_errors(), Vec::<String>::new());
}

/// The list page follows a state change without a reload: the running
/// tournament, cancelled while the page is open, shows as cancelled.
fn list_follows_cancel(page: &Page<'_>, expected: &Expected) {
    let Expected { web, running, .. } = expected;
    assert!(!expected.held.lost(), "the holder lost its lease");
    assert_eq!(page.goto(&format!("{web}/")).expect("goto /"), Some(200));
    let state = format!(
        "document.querySelector({})?.textContent ?? null",
        js_string(&format!(
            "tr[data-tournament=\"{running}\"] [data-field=\"state\"]"
        ))
    );
    page.wait_for(&format!("({state}) === 'running'"), SHOWN)
        .expect("the running tournament on /");
    page.eval(SET_MARKER).expect("marking the document");
    arena::tournament(&expected.coordinator, &["cancel", running]);
    page.wait_for(
        &format!("({state}) === 'cancelled' && {STILL_MARKED}"),
        LIVE,
    )
    .expect("the list to show the cancel in the same document");
    shoot_page(page, "tournaments-live");
}

fn shoot_page(page: &Page<'_>, name: &str) {
    let path = screenshot_dir().join(format!("{name}.png"));
    page.screenshot(&path).expect("a screenshot");
    eprintln!("web_pages: screenshot {}", path.display());
}
