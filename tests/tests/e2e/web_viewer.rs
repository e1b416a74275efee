//! The replay viewer on a real match page, in headless Chromium.
//!
//! A coordinator with `--http` and a real (unsandboxed) worker play a
//! four-seat generals-ffa match: one plan bot and three bots that crash on
//! their first frame, so three seats forfeit on turn 1 and the `sprawl`
//! baseline plays them on to the end, as the game has it. The test fetches
//! the match's `frames.json` itself and works out, on its own, each seat's
//! land and army at a turn, the forfeits and the placements; then Chromium
//! checks that the viewer's panel and graph show those numbers, that a
//! click on the graph shows another turn, that the forfeits are marked in
//! the panel, on the timeline and in the final placements (a forfeiter
//! never looks like the winner), that reasons are words, that the keys
//! still step after a click on a control, that "hide result" hides what has
//! not happened yet and is remembered, that every text of the viewer reads
//! at 4.5:1 or better in light and in dark mode, that seats take their
//! entrants' colours, and that the controls are in view on a 1366 × 768
//! screen. A second tournament's 1v1 match ends before its first turn
//! when one bot crashes: the frames never name that forfeit, the page's
//! `data-forfeits` does, and the viewer shows it (`ended_by_forfeit`).
//! The viewer's table of reasons in words covers every code the engine
//! defines (`words`). Screenshots land in `web-screenshots/` of the Cargo
//! target directory.
//!
//! Layout: this file plays the matches and checks the panel, the graph,
//! the forfeits, the placements and the colours; `frames` works out the
//! expected numbers from `frames.json`; `controls` the graph click, the
//! keys and "hide result"; `screens` light, dark and the laptop screen,
//! with the colour maths in `contrast`; `ended_by_forfeit` and `words` as
//! above.

mod contrast;
mod controls;
mod ended_by_forfeit;
mod frames;
mod screens;
mod words;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::arena::{self, Coordinator, Worker, workspace};
use crate::support::bots::write_bot;
use crate::support::browser::page::Page;
use crate::support::browser::{Browser, screenshot_dir};
use crate::support::redis::RedisServer;
use crate::support::tournament::{matches, wait_finished};

use frames::Frames;

/// How long the viewer may take to fetch, parse and draw a replay.
const VIEWER_READY: Duration = Duration::from_secs(60);
/// How long anything else may take to show.
const SHOWN: Duration = Duration::from_secs(15);
/// The entrants, in the tournament file's order (their colour indices).
const PLANNER: &str = "planner";
const CRASHERS: [&str; 3] = ["crasher-a", "crasher-b", "crasher-c"];
/// A bot's `run.sh` that reads two lines (its handshake and first frame,
/// or their start) and dies of a segfault before it replies.
const CRASHER_RUN: &str = "#!/bin/sh\nexec python3 -c 'import sys, ctypes; sys.stdin.readline(); \
     sys.stdin.readline(); ctypes.string_at(0)'\n";
/// Turns the match lasts (blitz board).
const MAX_TURNS: u32 = 48;
/// The turn the numbers are checked at.
const CHECKED_TURN: usize = 20;
/// The laptop screen the controls must fit without scrolling.
const LAPTOP: (u32, u32) = (1366, 768);

/// Writes the four entrants and the tournament file; returns its path.
fn write_tournament(root: &Path) -> String {
    let plan_bot = std::fs::read(workspace().join("bots/ffa-plan-python/bot.py")).expect("bot.py");
    write_bot(
        root,
        PLANNER,
        "#!/bin/sh\nexec python3 -B -u bot.py\n",
        &[("bot.py", &plan_bot)],
    );
    for name in CRASHERS {
        write_bot(root, name, CRASHER_RUN, &[]);
    }
    let mut text = format!(
        "name = \"E2E viewer\"\ngame = \"generals-ffa\"\nseats = 4\nseed = 5\n\n\
         [format]\nkind = \"swiss\"\nrounds = 1\n\n\
         [rules]\nblitz = true\nmax_turns = {MAX_TURNS}\n\n\
         [limits]\nfirst_move_ms = 60000\nmove_ms = 60000\nfault_limit = 3\n"
    );
    for name in std::iter::once(PLANNER).chain(CRASHERS) {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let file = root.join("viewer.toml");
    std::fs::write(&file, text).expect("tournament file");
    file.display().to_string()
}

/// What the test expects, from the frames and the tournament.
struct Expected {
    /// `http://host:port`.
    web: String,
    match_id: String,
    frames: Frames,
    /// The seats' names, in seat order (from the page, checked against the entrants).
    names: Vec<String>,
    /// The 1v1 match a crash ended before its first turn.
    ended_by_forfeit: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_viewer_on_a_match_page() {
    let started = Instant::now();
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-viewer-")
        .tempdir()
        .expect("temp dir");
    let file = write_tournament(root.path());
    let redis = RedisServer::start();
    let coordinator =
        Coordinator::start_with(&redis, "127.0.0.1:0", 30, &["--http", "127.0.0.1:0"]);
    let url = coordinator.url();
    let address = coordinator.web_address();
    let tournament = arena::create_tournament(&url, &file);
    let one_v_one =
        arena::create_tournament(&url, &ended_by_forfeit::write_tournament(root.path()));
    let _worker = Worker::start("viewer-player", &url, false);
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    wait_finished(&mut admin, &tournament).await;
    wait_finished(&mut admin, &one_v_one).await;
    let short = matches(&mut admin, &one_v_one).await;
    assert_eq!(short.len(), 1, "{short:#?}");
    assert_eq!(short[0].state, "done", "{short:#?}");
    let played = matches(&mut admin, &tournament).await;
    assert_eq!(played.len(), 1, "{played:#?}");
    assert_eq!(
        (played[0].state.as_str(), played[0].seats.len()),
        ("done", 4),
        "{played:#?}"
    );
    let match_id = played[0].match_id.clone();
    let frames = Frames::fetch(
        &address.to_string(),
        &format!("/matches/{match_id}/frames.json"),
    );
    eprintln!(
        "web_viewer: match {match_id} played in {:.1?}, {} turns",
        started.elapsed(),
        frames.last()
    );
    let expected = Expected {
        web: format!("http://{address}"),
        match_id,
        frames,
        names: Vec::new(),
        ended_by_forfeit: short[0].match_id.clone(),
    };
    tokio::task::block_in_place(|| browse(expected));
    eprintln!("web_viewer: {:.1?} in all", started.elapsed());
}

/// Evaluates `js` and panics with `what` on a script error.
fn eval(page: &Page<'_>, js: &str, what: &str) -> Value {
    page.eval(js).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The turn the viewer shows.
fn turn(page: &Page<'_>) -> u64 {
    eval(
        page,
        "Number(document.querySelector('#viewer').dataset.turn)",
        "data-turn",
    )
    .as_u64()
    .expect("a turn number")
}

/// Waits for the viewer to show turn `wanted`.
fn wait_turn(page: &Page<'_>, wanted: u64, why: &str) {
    page.wait_for(
        &format!("document.querySelector('#viewer')?.dataset.turn === '{wanted}'"),
        SHOWN,
    )
    .unwrap_or_else(|e| panic!("{why}: turn {wanted} never showed: {e}"));
}

/// Opens the match page at `#turn=N` and waits for the viewer.
fn open(page: &Page<'_>, expected: &Expected, turn_shown: usize) {
    open_match(page, &expected.web, &expected.match_id, turn_shown);
}

/// Opens match `match_id`'s page on `web` at `#turn=N` and waits for the viewer.
fn open_match(page: &Page<'_>, web: &str, match_id: &str, turn_shown: usize) {
    let url = format!("{web}/matches/{match_id}#turn={turn_shown}");
    assert_eq!(page.goto(&url).expect("goto the match"), Some(200));
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.ready === 'true'",
        VIEWER_READY,
    )
    .expect("the viewer to draw its first frame");
    wait_turn(page, turn_shown as u64, "#turn=N");
}

/// Shows turn `n` through the page's hash, as a link to it would.
fn show_turn(page: &Page<'_>, n: usize) {
    eval(page, &format!("location.hash = '#turn={n}'; true"), "hash");
    wait_turn(page, n as u64, "a hash change");
}

fn shoot(page: &Page<'_>, name: &str) {
    let path = screenshot_dir().join(format!("{name}.png"));
    page.screenshot(&path).expect("a screenshot");
    eprintln!("web_viewer: screenshot {}", path.display());
}

/// Per seat: `{fate, fateText, place, winner, out, stats: {key: value}}`.
const PANEL_JS: &str = r#"[...document.querySelectorAll('#viewer .viewer-legend li[data-seat]')].map((li) => ({
  seat: Number(li.dataset.seat),
  name: li.querySelector('.viewer-name')?.textContent ?? null,
  fate: li.dataset.fate ?? null,
  fateText: li.querySelector('.viewer-fate')?.textContent ?? '',
  place: li.dataset.place ?? null,
  winner: li.classList.contains('winner'),
  out: li.classList.contains('out'),
  swatch: getComputedStyle(li.querySelector('.viewer-swatch')).backgroundColor,
  stats: Object.fromEntries([...li.querySelectorAll('.viewer-stat')].map((s) => [s.dataset.stat, s.dataset.value === '' ? null : Number(s.dataset.value)])),
}))"#;

fn browse(mut expected: Expected) {
    let browser = Browser::launch().expect("launching Chromium");
    // A fresh profile: nothing is remembered (the result is shown).
    let page = browser.new_page().expect("a page");
    let last = expected.frames.last();
    assert!(last > CHECKED_TURN + 7, "{last} turns");
    open(&page, &expected, CHECKED_TURN);
    expected.names = serde_json::from_value(eval(
        &page,
        "JSON.parse(document.querySelector('#viewer').dataset.seats)",
        "data-seats",
    ))
    .expect("seat names");

    panel_and_graph(&page, &expected);
    forfeits_and_placements(&page, &expected);
    colours(&page, &expected);
    controls::graph_click_and_keys(&page, &expected);
    controls::hide_result(&page, &expected);
    words::every_code_has_words(&page);
    ants_surfaces(&page);
    ended_by_forfeit::check(&page, &expected.web, &expected.ended_by_forfeit);
    assert_eq!(page.console_errors(), Vec::<String>::new());
    drop(page);

    screens::themes(&browser, &expected);
    screens::laptop_screen(&browser, &expected);
}

/// The panel and the graph at [`CHECKED_TURN`] against the frames.
fn panel_and_graph(page: &Page<'_>, expected: &Expected) {
    let figures = expected.frames.ffa_figures(CHECKED_TURN);
    let panel = eval(page, PANEL_JS, "the panel");
    let seats = panel.as_array().expect("panel entries");
    assert_eq!(seats.len(), 4, "{panel}");
    for (seat, want) in figures.iter().enumerate() {
        let stats = &seats[seat]["stats"];
        assert_eq!(
            (stats["land"].as_u64(), stats["army"].as_u64()),
            (Some(want.land), Some(want.army)),
            "seat {seat} at turn {CHECKED_TURN}: {panel}"
        );
        assert_eq!(stats["faults"].as_u64(), Some(0), "seat {seat}: {panel}");
        assert_eq!(
            seats[seat]["name"].as_str(),
            Some(expected.names[seat].as_str())
        );
    }
    let graph = eval(
        page,
        "(() => { const g = document.querySelector('#viewer canvas.viewer-graph'); \
         return { turn: g.dataset.turn, values: JSON.parse(g.dataset.values) }; })()",
        "the graph",
    );
    assert_eq!(graph["turn"], json!(CHECKED_TURN.to_string()), "{graph}");
    let lands: Vec<u64> = figures.iter().map(|f| f.land).collect();
    let armies: Vec<u64> = figures.iter().map(|f| f.army).collect();
    assert_eq!(graph["values"]["land"], json!(lands), "{graph}");
    assert_eq!(graph["values"]["army"], json!(armies), "{graph}");
    // A later turn moves both.
    let later = CHECKED_TURN + 7;
    show_turn(page, later);
    let figures = expected.frames.ffa_figures(later);
    let panel = eval(page, PANEL_JS, "the panel");
    for (seat, want) in figures.iter().enumerate() {
        assert_eq!(
            panel[seat]["stats"]["land"].as_u64(),
            Some(want.land),
            "turn {later}"
        );
        assert_eq!(
            panel[seat]["stats"]["army"].as_u64(),
            Some(want.army),
            "turn {later}"
        );
    }
}

/// The seats that forfeited (in seat order) and the planner's seat.
fn seats_of(expected: &Expected) -> (Vec<usize>, usize) {
    let crashers: Vec<usize> = (0..4)
        .filter(|&s| CRASHERS.contains(&expected.names[s].as_str()))
        .collect();
    let planner = (0..4)
        .find(|&s| expected.names[s] == PLANNER)
        .unwrap_or_else(|| panic!("no {PLANNER} in {:?}", expected.names));
    (crashers, planner)
}

/// Forfeits in the frames, the panel, the timeline, the events and the
/// status line; the final placements on the last turn.
fn forfeits_and_placements(page: &Page<'_>, expected: &Expected) {
    let (crashers, planner) = seats_of(expected);
    assert_eq!(crashers.len(), 3, "{:?}", expected.names);
    let mut forfeits = expected.frames.forfeits();
    forfeits.sort();
    let wanted: Vec<(usize, usize, String)> = crashers
        .iter()
        .map(|&s| (1, s, "crash".to_owned()))
        .collect();
    assert_eq!(forfeits, wanted, "the frames' forfeits");

    // Turn 0: nothing has happened yet, but the result is shown, so the
    // panel says what is to come.
    show_turn(page, 0);
    let panel = eval(page, PANEL_JS, "the panel");
    for &seat in &crashers {
        assert_eq!(panel[seat]["fate"], Value::Null, "turn 0: {panel}");
        assert_eq!(panel[seat]["out"], json!(false), "turn 0: {panel}");
        assert_eq!(
            panel[seat]["fateText"],
            json!("later forfeited on turn 1 (crashed)"),
            "{panel}"
        );
    }
    // Turn 1: three seats forfeited, in words.
    show_turn(page, 1);
    let panel = eval(page, PANEL_JS, "the panel");
    for &seat in &crashers {
        assert_eq!(panel[seat]["fate"], json!("forfeited"), "{panel}");
        assert_eq!(panel[seat]["out"], json!(true), "{panel}");
        assert_eq!(
            panel[seat]["fateText"],
            json!("forfeited on turn 1 (crashed)"),
            "{panel}"
        );
    }
    assert_eq!(panel[planner]["fate"], Value::Null, "{panel}");
    let status = page
        .text("#viewer .viewer-status")
        .expect("the status")
        .unwrap_or_default();
    for &seat in &crashers {
        let said = format!("{} forfeited: crashed", expected.names[seat]);
        assert!(status.contains(&said), "{status:?} lacks {said:?}");
    }
    let marks = eval(
        page,
        "[...document.querySelectorAll('#viewer .viewer-mark[data-kind=\"forfeit\"]')]\
         .map((m) => [Number(m.dataset.index), Number(m.dataset.seat), m.title])",
        "the timeline marks",
    );
    let mut marked: Vec<(u64, u64)> = marks
        .as_array()
        .expect("marks")
        .iter()
        .map(|m| (m[0].as_u64().unwrap_or(99), m[1].as_u64().unwrap_or(99)))
        .collect();
    marked.sort();
    let want: Vec<(u64, u64)> = crashers.iter().map(|&s| (1, s as u64)).collect();
    assert_eq!(marked, want, "forfeit marks: {marks}");
    let events = page
        .text("#viewer .viewer-events")
        .expect("the events")
        .unwrap_or_default();
    for &seat in &crashers {
        let said = format!("turn 1: {} forfeited (crashed)", expected.names[seat]);
        assert!(events.contains(&said), "{events:?} lacks {said:?}");
    }

    // The last turn: the final placements, the planner first and every
    // forfeiter below it, marked.
    let last = expected.frames.last();
    show_turn(page, last);
    let (ranks, reason) = expected.frames.result();
    assert_eq!(ranks[planner], 0, "the planner won: {ranks:?}");
    let panel = eval(page, PANEL_JS, "the panel");
    assert_eq!(panel[planner]["place"], json!("1"), "{panel}");
    assert_eq!(panel[planner]["winner"], json!(true), "{panel}");
    for &seat in &crashers {
        assert_eq!(
            panel[seat]["place"],
            json!((ranks[seat] + 1).to_string()),
            "{panel}"
        );
        assert_ne!(panel[seat]["place"], json!("1"), "{panel}");
        assert_eq!(panel[seat]["winner"], json!(false), "{panel}");
        assert_eq!(panel[seat]["fate"], json!("forfeited"), "{panel}");
    }
    let result = page
        .text("#viewer .viewer-result")
        .expect("the result")
        .unwrap_or_default();
    let head = format!("{PLANNER} wins (");
    assert!(result.starts_with(&head), "{result:?}");
    assert!(result.contains(&format!("1st {PLANNER}")), "{result:?}");
    for &seat in &crashers {
        let said = format!("{}, forfeited on turn 1 (crashed)", expected.names[seat]);
        assert!(result.contains(&said), "{result:?} lacks {said:?}");
    }
    // Reasons in words: the result's reason, and no code anywhere.
    assert!(
        !result.contains(&reason),
        "{result:?} shows {reason:?} as a code"
    );
    let codes = eval(
        page,
        "[...document.querySelectorAll('#viewer .viewer-status, #viewer .viewer-legend, #viewer .viewer-events')]\
         .map((e) => e.textContent).join(' ').match(/\\b[a-z]+_[a-z_]+\\b/g)",
        "codes in the text",
    );
    assert_eq!(codes, Value::Null, "reason codes shown as codes: {codes}");
    shoot(page, "viewer-forfeits-final");
}

/// Each seat's colour is the palette entry of its entrant's index.
fn colours(page: &Page<'_>, expected: &Expected) {
    let order: Vec<&str> = std::iter::once(PLANNER).chain(CRASHERS).collect();
    let indices: Vec<usize> = expected
        .names
        .iter()
        .map(|n| {
            order
                .iter()
                .position(|o| o == n)
                .unwrap_or_else(|| panic!("{n}"))
        })
        .collect();
    let colors = eval(
        page,
        "JSON.parse(document.querySelector('#viewer').dataset.colors)",
        "data-colors",
    );
    assert_eq!(colors, json!(indices), "each seat's entrant index");
    // The palette as the viewer's module has it, turned into computed colours.
    let palette = eval(
        page,
        "import('/assets/viewer/games/shared.js').then((m) => m.PALETTE.map((hex) => { \
           const probe = document.createElement('i'); probe.style.color = hex; document.body.append(probe); \
           const rgb = getComputedStyle(probe).color; probe.remove(); return rgb; }))",
        "the palette",
    );
    let panel = eval(page, PANEL_JS, "the panel");
    for (seat, index) in indices.iter().enumerate() {
        assert_eq!(
            panel[seat]["swatch"], palette[*index],
            "seat {seat} (entrant {index}): {panel} {palette}"
        );
    }
}

/// Ants: water and food are not the colour of any seat (food used to be
/// seat 2's green, water seat 1's blue).
fn ants_surfaces(page: &Page<'_>) {
    let colours = eval(
        page,
        "Promise.all([import('/assets/viewer/games/ants.js'), import('/assets/viewer/games/shared.js')])\
         .then(([ants, shared]) => ({ surfaces: ants.SURFACES, palette: shared.PALETTE }))",
        "the ants colours",
    );
    let palette: Vec<String> =
        serde_json::from_value(colours["palette"].clone()).expect("the palette");
    assert_eq!(palette.len(), 8, "{colours}");
    for surface in ["water", "food"] {
        let own = contrast::hex(colours["surfaces"][surface].as_str().unwrap_or_default());
        for (index, seat) in palette.iter().enumerate() {
            let difference = contrast::delta_e(own, contrast::hex(seat));
            assert!(
                difference > 30.0,
                "ants {surface} looks like palette entry {index} {seat}: ΔE {difference:.1}"
            );
        }
    }
}
