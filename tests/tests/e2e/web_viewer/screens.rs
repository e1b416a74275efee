//! The viewer on other screens: light and dark (text contrast measured),
//! and a laptop's 1366 × 768 (the controls in view without scrolling).

use serde_json::json;

use super::{Expected, LAPTOP, contrast, eval, open, shoot, show_turn};
use crate::support::browser::Browser;
use crate::support::browser::page::media::ColourScheme;

/// Light and dark: every text of the viewer reads at 4.5:1 or better; a
/// screenshot of each.
pub fn themes(browser: &Browser, expected: &Expected) {
    let last = expected.frames.last();
    for (scheme, name) in [(ColourScheme::Light, "light"), (ColourScheme::Dark, "dark")] {
        let page = browser.new_page().expect("a page");
        page.emulate_colour_scheme(scheme)
            .expect("emulating the colour scheme");
        open(&page, expected, 1);
        let dark = eval(
            &page,
            "matchMedia('(prefers-color-scheme: dark)').matches",
            "the scheme",
        );
        assert_eq!(dark, json!(scheme == ColourScheme::Dark), "{name}");
        let background = eval(
            &page,
            "getComputedStyle(document.querySelector('#viewer')).backgroundColor",
            "the viewer's background",
        );
        let luminance = contrast::css_luminance(background.as_str().unwrap_or_default());
        if scheme == ColourScheme::Dark {
            assert!(luminance < 0.05, "{name}: background {background}");
        } else {
            assert!(luminance > 0.8, "{name}: background {background}");
        }
        for shown in [1, last] {
            show_turn(&page, shown);
            let texts = eval(&page, contrast::TEXT_COLOURS_JS, "text colours");
            assert!(
                texts.as_array().is_some_and(|t| t.len() > 20),
                "{name}: {texts}"
            );
            let bad = contrast::below(&texts, 4.5);
            assert!(
                bad.is_empty(),
                "{name} mode, turn {shown}: text below 4.5:1:\n{}",
                bad.join("\n")
            );
        }
        shoot(&page, &format!("viewer-match-{name}"));
        assert_eq!(page.console_errors(), Vec::<String>::new(), "{name}");
    }
}

/// On a 1366 × 768 screen the controls are in view without scrolling.
pub fn laptop_screen(browser: &Browser, expected: &Expected) {
    let (width, height) = LAPTOP;
    let page = browser.new_page().expect("a page");
    page.emulate_screen(width, height, 1.0, false)
        .expect("a laptop's screen");
    open(&page, expected, 0);
    let boxes = eval(
        &page,
        "({ scrollY: window.scrollY, innerWidth, innerHeight, controls: \
           [document.querySelector('#viewer .viewer-controls'), \
            ...document.querySelectorAll('#viewer .viewer-controls > *')].map((e) => { \
              const r = e.getBoundingClientRect(); \
              return { what: e.className, left: r.left, top: r.top, right: r.right, bottom: r.bottom }; }) })",
        "the controls' boxes",
    );
    assert_eq!(boxes["scrollY"], json!(0), "{boxes}");
    assert_eq!(boxes["innerWidth"], json!(width), "{boxes}");
    assert_eq!(boxes["innerHeight"], json!(height), "{boxes}");
    for b in boxes["controls"].as_array().expect("boxes") {
        let edge = |k: &str| b[k].as_f64().unwrap_or(f64::NAN);
        assert!(
            edge("left") >= 0.0
                && edge("top") >= 0.0
                && edge("right") <= f64::from(width)
                && edge("bottom") <= f64::from(height),
            "a control out of view on {width}×{height}: {b}"
        );
    }
    shoot(&page, "viewer-match-1366x768");
    assert_eq!(page.console_errors(), Vec::<String>::new());
}
