//! A 1v1 generals match that a crash ends before its first turn: the
//! competition game ends at once on a forfeit, so no turn is stepped and
//! the frames never name the forfeit (it took effect after the last step).
//! The match page passes the stored result's forfeit in `data-forfeits`;
//! the viewer must show it, and the survivor as the winner.

use std::path::Path;

use serde_json::json;

use super::frames::Frames;
use super::{CRASHER_RUN, PANEL_JS, eval, open_match, shoot};
use crate::support::arena::workspace;
use crate::support::bots::write_bot;
use crate::support::browser::page::Page;

const STARTER: &str = "starter";
const CRASHER: &str = "crasher";

/// Writes the two entrants and their tournament file under `root/1v1`;
/// returns the file's path.
pub fn write_tournament(root: &Path) -> String {
    let root = root.join("1v1");
    let starter = std::fs::read(workspace().join("bots/starter-python/bot.py")).expect("bot.py");
    write_bot(
        &root,
        STARTER,
        "#!/bin/sh\nexec python3 -u bot.py\n",
        &[("bot.py", &starter)],
    );
    write_bot(&root, CRASHER, CRASHER_RUN, &[]);
    let mut text = String::from(
        "name = \"E2E viewer 1v1\"\ngame = \"generals\"\nseed = 7\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
         [limits]\nfirst_move_ms = 60000\nmove_ms = 60000\n",
    );
    for name in [STARTER, CRASHER] {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            root.join(name).display()
        ));
    }
    let file = root.join("1v1.toml");
    std::fs::write(&file, text).expect("tournament file");
    file.display().to_string()
}

/// The match page of `match_id` shows the forfeit the frames do not name.
pub fn check(page: &Page<'_>, web: &str, match_id: &str) {
    let address = web.trim_start_matches("http://");
    let frames = Frames::fetch(address, &format!("/matches/{match_id}/frames.json"));
    assert_eq!(frames.forfeits(), Vec::new(), "the frames name no forfeit");
    let last = frames.last();
    let (ranks, reason) = frames.result();
    assert_eq!(reason, "forfeit");
    open_match(page, web, match_id, last);
    let names: Vec<String> = serde_json::from_value(eval(
        page,
        "JSON.parse(document.querySelector('#viewer').dataset.seats)",
        "data-seats",
    ))
    .expect("seat names");
    let crasher = names
        .iter()
        .position(|n| n == CRASHER)
        .unwrap_or_else(|| panic!("no {CRASHER} in {names:?}"));
    let starter = 1 - crasher;
    assert_eq!((ranks[starter], ranks[crasher]), (0, 1), "{ranks:?}");
    let mut forfeits = json!([null, null]);
    forfeits[crasher] = json!("crash");
    assert_eq!(
        eval(
            page,
            "JSON.parse(document.querySelector('#viewer').dataset.forfeits)",
            "data-forfeits"
        ),
        forfeits
    );
    let panel = eval(page, PANEL_JS, "the panel");
    let said = format!("forfeited on turn {} (crashed)", last + 1);
    assert_eq!(panel[crasher]["fate"], json!("forfeited"), "{panel}");
    assert_eq!(panel[crasher]["fateText"], json!(said), "{panel}");
    assert_eq!(panel[crasher]["place"], json!("2"), "{panel}");
    assert_eq!(panel[starter]["place"], json!("1"), "{panel}");
    assert_eq!(panel[starter]["winner"], json!(true), "{panel}");
    assert_eq!(panel[starter]["fate"], json!(null), "{panel}");
    let result = page
        .text("#viewer .viewer-result")
        .expect("the result")
        .unwrap_or_default();
    assert_eq!(
        result,
        format!("{STARTER} wins (ended by forfeits) · 1st {STARTER} · 2nd {CRASHER}, {said}")
    );
    let marks = eval(
        page,
        "[...document.querySelectorAll('#viewer .viewer-mark[data-kind=\"forfeit\"]')]\
         .map((m) => Number(m.dataset.seat))",
        "the forfeit marks",
    );
    assert_eq!(marks, json!([crasher]), "a mark for the forfeit");
    let events = page
        .text("#viewer .viewer-events")
        .expect("the events")
        .unwrap_or_default();
    assert_eq!(events, format!("turn {last}: {CRASHER} {said}"));
    shoot(page, "viewer-ended-by-forfeit");
}
