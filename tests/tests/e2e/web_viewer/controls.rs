//! The controls: a click on the graph, the keys after a click on any
//! control, and "hide result".

use serde_json::json;

use super::{
    Expected, PANEL_JS, SHOWN, VIEWER_READY, eval, seats_of, shoot, show_turn, turn, wait_turn,
};
use crate::support::browser::page::Page;

/// A click on the graph shows the turn under it; the keys step after a
/// click on any control.
pub fn graph_click_and_keys(page: &Page<'_>, expected: &Expected) {
    let last = expected.frames.last() as u64;
    show_turn(page, 3);
    page.click("#viewer canvas.viewer-graph")
        .expect("clicking the graph");
    // The centre of the graph is the middle of the match.
    page.wait_for(
        "document.querySelector('#viewer').dataset.turn !== '3'",
        SHOWN,
    )
    .expect("the graph click to show another turn");
    let clicked = turn(page);
    assert!(clicked.abs_diff(last / 2) <= 1, "{clicked} of {last}");

    // A button, then an arrow.
    page.click("#viewer .viewer-forward").expect("forward");
    wait_turn(page, clicked + 1, "the forward button");
    page.press_key("ArrowRight").expect("ArrowRight");
    wait_turn(page, clicked + 2, "ArrowRight after a button click");
    page.press_key("ArrowLeft").expect("ArrowLeft");
    wait_turn(page, clicked + 1, "ArrowLeft after a button click");

    // The scrubber: a click jumps, then each arrow steps exactly one turn
    // (the slider does not also move by itself).
    page.click("#viewer .viewer-scrubber")
        .expect("clicking the scrubber");
    let scrubbed = turn(page);
    page.press_key("ArrowRight").expect("ArrowRight");
    wait_turn(page, scrubbed + 1, "ArrowRight on the scrubber");
    settle(page);
    assert_eq!(turn(page), scrubbed + 1, "one step, not two");
    page.press_key(" ").expect("Space");
    page.wait_for(
        "document.querySelector('#viewer .viewer-play').textContent.includes('pause')",
        SHOWN,
    )
    .expect("Space on the scrubber to play");
    page.press_key(" ").expect("Space");
    page.wait_for(
        "document.querySelector('#viewer .viewer-play').textContent.includes('play')",
        SHOWN,
    )
    .expect("Space on the scrubber to pause");

    // A choice: a click opens it, Escape closes it, the arrows step turns
    // and leave the speed alone.
    let now = turn(page);
    page.click("#viewer select.viewer-speed")
        .expect("clicking the speed");
    page.press_key("Escape").expect("Escape");
    page.press_key("ArrowLeft").expect("ArrowLeft");
    wait_turn(page, now - 1, "ArrowLeft on the speed choice");
    settle(page);
    assert_eq!(
        eval(
            page,
            "document.querySelector('#viewer select.viewer-speed').value",
            "speed"
        ),
        json!("8"),
        "the arrow changed the speed"
    );
    assert_eq!(
        eval(
            page,
            "document.activeElement?.classList.contains('viewer-speed') ?? false",
            "focus"
        ),
        json!(true),
        "the focus stayed on the choice"
    );
}

/// Two animation frames: whatever a key would still do has happened.
fn settle(page: &Page<'_>) {
    eval(
        page,
        "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))",
        "two animation frames",
    );
}

/// "Hide result": what has not happened by the turn shown is hidden, the
/// page's own result too, and the choice outlives a reload.
pub fn hide_result(page: &Page<'_>, expected: &Expected) {
    let (crashers, _) = seats_of(expected);
    let last = expected.frames.last();
    show_turn(page, 0);
    page.click("#viewer .viewer-hide-result")
        .expect("clicking hide result");
    page.wait_for(
        "document.querySelector('#viewer').dataset.hideResult === 'true'",
        SHOWN,
    )
    .expect("the result to hide");
    // The keys still step after that click.
    page.press_key("ArrowRight").expect("ArrowRight");
    wait_turn(page, 1, "ArrowRight after hide result");
    page.press_key("ArrowLeft").expect("ArrowLeft");
    wait_turn(page, 0, "ArrowLeft after hide result");

    let hidden_now = |what: &str| {
        let state = eval(
            page,
            "(() => { const v = document.querySelector('#viewer'); return { \
               marks: [...v.querySelectorAll('.viewer-mark')].filter((m) => !m.hidden).length, \
               events: [...v.querySelectorAll('.viewer-events li')].filter((m) => !m.hidden).length, \
               fates: [...v.querySelectorAll('.viewer-fate')].map((f) => f.textContent).join(''), \
               places: v.querySelectorAll('li[data-place]').length, \
               spoilers: [...document.querySelectorAll('[data-spoiler]')].map((s) => s.hidden), \
               stored: localStorage.getItem('arena-viewer-hide-result') }; })()",
            "what is hidden",
        );
        assert_eq!(state["marks"], json!(0), "{what}: {state}");
        assert_eq!(state["events"], json!(0), "{what}: {state}");
        assert_eq!(state["fates"], json!(""), "{what}: {state}");
        assert_eq!(state["places"], json!(0), "{what}: {state}");
        assert_eq!(state["spoilers"], json!([true, true]), "{what}: {state}");
        assert_eq!(state["stored"], json!("true"), "{what}: {state}");
    };
    hidden_now("turn 0, hidden");
    // Remembered: a new load of the page hides it too. (The URL without a
    // hash: one that differs only in its hash would not load the page.)
    let url = format!("{}/matches/{}", expected.web, expected.match_id);
    assert_eq!(page.goto(&url).expect("reloading the match"), Some(200));
    page.wait_for(
        "document.querySelector('#viewer')?.dataset.ready === 'true'",
        VIEWER_READY,
    )
    .expect("the viewer after a reload");
    wait_turn(page, 0, "a reload");
    hidden_now("turn 0 after a reload");
    // What has happened by the turn shown is shown.
    show_turn(page, 1);
    let panel = eval(page, PANEL_JS, "the panel");
    for &seat in &crashers {
        assert_eq!(panel[seat]["fate"], json!("forfeited"), "{panel}");
    }
    show_turn(page, last);
    let result = page
        .text("#viewer .viewer-result")
        .expect("the result")
        .unwrap_or_default();
    assert_eq!(result, "last turn (result hidden)");
    assert_eq!(
        eval(
            page,
            "document.querySelectorAll('#viewer li[data-place]').length",
            "places"
        ),
        json!(0)
    );
    shoot(page, "viewer-result-hidden");
    page.click("#viewer .viewer-hide-result")
        .expect("clicking show result");
    page.wait_for(
        "document.querySelector('#viewer').dataset.hideResult === 'false' && \
         document.querySelectorAll('#viewer li[data-place]').length === 4",
        SHOWN,
    )
    .expect("the result to show again");
}
