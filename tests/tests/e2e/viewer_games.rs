//! The replay viewer for every registered game, in headless Chromium.
//!
//! Each case plays one short real match with `arena play` (baselines and
//! the repo's Python bots, unsandboxed), turns the replay into frames with
//! `arena replay dump`, and serves a page holding the viewer, read from
//! `web/assets/viewer/` as it is on disk, from a loopback server of the
//! test's own. Chromium then checks that the first frame is drawn, that
//! stepping and (for the fogged games) a seat's view redraw the board,
//! that the legend names every seat and that the console stays clean. A
//! page naming a game without a drawer must say so.
//! Screenshots land in `web-screenshots/` of the Cargo target directory.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::arena::{self, workspace};
use crate::support::browser::page::Page;
use crate::support::browser::{Browser, screenshot_dir};
use crate::support::process::output;
use crate::support::static_site::{StaticFile, StaticSite};

/// How long the viewer may take to fetch, parse and draw a replay.
const VIEWER_READY: Duration = Duration::from_secs(60);
/// How long a step or a change of view may take to show.
const SHOWN: Duration = Duration::from_secs(15);
/// Turns stepped with ArrowRight before the pictures are compared.
const STEPS: u32 = 3;

/// One match to play and view.
struct Case {
    /// Names the page and the screenshot (`viewer-NAME.png`).
    name: &'static str,
    game: &'static str,
    /// `--rules`, short turn limits where the game has them.
    rules: &'static str,
    seed: u64,
    /// Bot directories under the workspace, or `baseline:NAME`.
    seats: &'static [&'static str],
    /// Whether the viewer offers each seat's fogged view.
    fog: bool,
}

const STARTER: &str = "bots/starter-python";

const CASES: &[Case] = &[
    Case {
        name: "generals",
        game: "generals",
        // The competition game has no options: a full match, a second or so.
        rules: "",
        seed: 3,
        seats: &[STARTER, STARTER],
        fog: true,
    },
    Case {
        name: "generals-classic",
        game: "generals-classic",
        rules: "max_turns=80",
        seed: 5,
        seats: &[STARTER, STARTER],
        fog: true,
    },
    Case {
        name: "generals-classic-2v2",
        game: "generals-classic",
        rules: "mode=2v2,max_turns=80",
        seed: 5,
        seats: &[STARTER, STARTER, STARTER, STARTER],
        fog: true,
    },
    Case {
        name: "generals-classic-ffa",
        game: "generals-classic",
        rules: "mode=ffa,max_turns=80",
        seed: 5,
        seats: &[STARTER, STARTER, STARTER],
        fog: true,
    },
    Case {
        name: "generals-ffa",
        game: "generals-ffa",
        rules: "blitz=true,max_turns=60",
        seed: 5,
        seats: &[
            "baseline:sprawl",
            "baseline:crown",
            "baseline:sprawl",
            "bots/ffa-plan-python",
        ],
        fog: true,
    },
    Case {
        name: "grid-royale",
        game: "grid-royale",
        rules: "max_turns=60",
        seed: 5,
        seats: &["bots/grid-royale-python", "bots/grid-royale-python"],
        fog: false,
    },
    Case {
        name: "ants",
        game: "ants",
        rules: "map=quartet,max_turns=60",
        seed: 5,
        seats: &[
            "baseline:forage",
            "baseline:hold",
            "bots/ants-python",
            "baseline:forage",
        ],
        fog: false,
    },
];

/// The game without a drawer that the last page names.
const UNKNOWN_GAME: &str = "no-such-game";

impl Case {
    /// The legend's names, one per seat: the bot or baseline and its seat.
    fn seat_names(&self) -> Vec<String> {
        self.seats
            .iter()
            .enumerate()
            .map(|(seat, bot)| {
                let short = bot.rsplit(['/', ':']).next().unwrap_or(bot);
                format!("{short} {seat}")
            })
            .collect()
    }

    /// Plays the match and returns its frames as one JSON array, as the
    /// coordinator's `frames.json` serves them.
    fn frames(&self, scratch: &Path) -> String {
        let replay = scratch.join(format!("{}.replay", self.name));
        let mut play = arena::arena();
        play.current_dir(workspace())
            .args(["play", "--no-sandbox", "--game", self.game])
            .args(["--seed", &self.seed.to_string()])
            .arg("--replay")
            .arg(&replay)
            .arg("--cache-dir")
            .arg(scratch.join("build-cache"));
        if !self.rules.is_empty() {
            play.args(["--rules", self.rules]);
        }
        play.args(self.seats);
        output(play);

        let mut dump = arena::arena();
        dump.args(["replay", "dump"]).arg(&replay);
        let lines: Vec<serde_json::Value> = output(dump)
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!("{}: a dump line is not JSON ({e}): {line}", self.name)
                })
            })
            .collect();
        // The header, at least one turn and the result.
        assert!(
            lines.len() >= 3,
            "{}: {} dump lines",
            self.name,
            lines.len()
        );
        assert_eq!(
            lines[0]["game"],
            serde_json::json!(self.game),
            "{}",
            self.name
        );
        serde_json::Value::from(lines).to_string()
    }
}

/// A page holding only the viewer, as a match page has it.
fn viewer_page(name: &str, game: &str, frames: &str, seats: &[String]) -> String {
    let seats = serde_json::Value::from(seats.to_vec()).to_string();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>viewer {name}</title><link rel=\"icon\" href=\"data:,\"></head>\n\
         <body><h1>{name}</h1>\n\
         <div id=\"viewer\" class=\"viewer\" data-game=\"{game}\" data-frames=\"{frames}\" \
         data-seats='{seats}'></div>\n\
         <script type=\"module\" src=\"/assets/viewer/viewer.js\"></script>\n\
         </body></html>\n"
    )
}

#[test]
fn replay_viewer_draws_every_game() {
    let started = Instant::now();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let mut files = StaticFile::tree(&workspace().join("web/assets/viewer"), "/assets/viewer");
    assert!(
        files.iter().any(|f| f.path == "/assets/viewer/viewer.js"),
        "no viewer.js under web/assets/viewer"
    );
    for case in CASES {
        let frames = format!("/frames/{}.json", case.name);
        files.push(StaticFile::json(&frames, &case.frames(scratch.path())));
        files.push(StaticFile::html(
            &format!("/{}", case.name),
            &viewer_page(case.name, case.game, &frames, &case.seat_names()),
        ));
    }
    // Frames of a real game, so only the unknown name can stop the drawing.
    files.push(StaticFile::html(
        &format!("/{UNKNOWN_GAME}"),
        &viewer_page(UNKNOWN_GAME, UNKNOWN_GAME, "/frames/generals.json", &[]),
    ));
    eprintln!(
        "viewer_games: {} replays made in {:.1?}",
        CASES.len(),
        started.elapsed()
    );

    let site = StaticSite::serve(files);
    let browser = Browser::launch().expect("launching Chromium");
    for case in CASES {
        let page = browser.new_page().expect("a new page");
        let viewing = Instant::now();
        view(&page, &site, case);
        eprintln!(
            "viewer_games: {} checked in {:.1?}",
            case.name,
            viewing.elapsed()
        );
    }

    let page = browser.new_page().expect("a new page");
    assert_eq!(
        page.goto(&site.url(&format!("/{UNKNOWN_GAME}")))
            .expect("goto"),
        Some(200)
    );
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.state === 'unsupported'",
        SHOWN,
    )
    .expect("the viewer to give up on an unknown game");
    let message = page
        .text("#viewer .viewer-message")
        .expect("the message")
        .unwrap_or_default();
    assert!(
        message.contains(&format!("No viewer for game {UNKNOWN_GAME}")),
        "{message:?}"
    );
    assert_eq!(
        page.eval("document.querySelector('#viewer canvas') === null && document.querySelector('#viewer').dataset.ready === undefined")
            .expect("no canvas"),
        serde_json::json!(true),
        "an unknown game draws no board"
    );
    shoot(&page, UNKNOWN_GAME);
    assert_eq!(page.console_errors(), Vec::<String>::new());
    eprintln!("viewer_games: {:.1?} in all", started.elapsed());
}

/// Opens `case`'s page and checks what the viewer does with it.
fn view(page: &Page<'_>, site: &StaticSite, case: &Case) {
    let name = case.name;
    assert_eq!(
        page.goto(&site.url(&format!("/{name}"))).expect("goto"),
        Some(200),
        "{name}"
    );
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.ready === 'true'",
        VIEWER_READY,
    )
    .unwrap_or_else(|e| panic!("{name}: the viewer never drew its first frame: {e}"));
    let turn = || {
        page.eval("document.querySelector('#viewer').dataset.turn")
            .expect("data-turn")
    };
    assert_eq!(turn(), serde_json::json!("0"), "{name} opens at the start");
    let canvas = "#viewer canvas.viewer-canvas";
    let snapshot = || {
        page.canvas_snapshot(canvas)
            .expect("canvas pixels")
            .unwrap_or_else(|| panic!("{name}: no canvas in the viewer"))
    };
    let first = snapshot();
    assert!(
        first.colours >= 3,
        "{name}: the first frame is (nearly) blank: {first:?}"
    );

    // The legend: one entry per seat, in seat order, each with its name.
    let legend = page
        .eval(
            "[...document.querySelectorAll('#viewer .viewer-legend li[data-seat]')]\
             .map((li) => [li.dataset.seat, li.textContent])",
        )
        .expect("the legend");
    let entries = legend.as_array().cloned().unwrap_or_default();
    let names = case.seat_names();
    assert_eq!(entries.len(), names.len(), "{name}: legend {legend}");
    for (seat, (entry, wanted)) in entries.iter().zip(&names).enumerate() {
        assert_eq!(
            entry[0],
            serde_json::json!(seat.to_string()),
            "{name}: {legend}"
        );
        let text = entry[1].as_str().unwrap_or_default();
        assert!(
            text.contains(wanted.as_str()),
            "{name}: seat {seat} is {text:?}, not {wanted:?}"
        );
    }

    // Stepping: one turn per ArrowRight, and a different picture.
    for _ in 0..STEPS {
        page.press_key("ArrowRight").expect("ArrowRight");
    }
    page.wait_for(
        &format!("document.querySelector('#viewer').dataset.turn === '{STEPS}'"),
        SHOWN,
    )
    .unwrap_or_else(|e| panic!("{name}: ArrowRight did not step to turn {STEPS}: {e}"));
    let stepped = snapshot();
    assert_ne!(first.hash, stepped.hash, "{name}: stepping did not redraw");
    assert!(stepped.colours >= 3, "{name}: {stepped:?}");

    // Fog: seat 0's view hides what it cannot see.
    let views = page
        .eval(
            "[...document.querySelectorAll('#viewer select.viewer-view option')].map((o) => o.value)",
        )
        .expect("the view choices");
    if case.fog {
        let expected: Vec<String> = std::iter::once("all".to_owned())
            .chain((0..case.seats.len()).map(|seat| seat.to_string()))
            .collect();
        assert_eq!(views, serde_json::json!(expected), "{name}: views");
        let chosen = page
            .eval(
                "(() => { const select = document.querySelector('#viewer select.viewer-view'); \
                 select.value = '0'; select.dispatchEvent(new Event('change')); \
                 return select.value; })()",
            )
            .expect("choosing seat 0's view");
        assert_eq!(chosen, serde_json::json!("0"), "{name}");
        let fogged = snapshot();
        assert_ne!(
            fogged.hash, stepped.hash,
            "{name}: seat 0's view looks like the whole board"
        );
        assert!(fogged.colours >= 3, "{name}: {fogged:?}");
    } else {
        assert_eq!(views, serde_json::json!([]), "{name} has no fog to choose");
    }
    assert_eq!(turn(), serde_json::json!(STEPS.to_string()), "{name}");
    shoot(page, name);
    assert_eq!(
        page.console_errors(),
        Vec::<String>::new(),
        "{name}: console errors"
    );
}

fn shoot(page: &Page<'_>, name: &str) {
    let path = screenshot_dir().join(format!("viewer-{name}.png"));
    page.screenshot(&path).expect("a screenshot");
    eprintln!("viewer_games: screenshot {}", path.display());
}
