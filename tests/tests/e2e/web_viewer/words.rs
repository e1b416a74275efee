//! The viewer's one table of codes in words (`reasons.js`) covers every
//! code a replay can carry: each forfeit and fault word of the engine's
//! verdicts, and each way a game ends.

use arena_engine::{FaultKind, Forfeit};

use super::eval;
use crate::support::browser::page::Page;
use crate::support::browser::page::js_string;

/// The engine's fault kinds. The match below stops compiling when one is
/// added, so this list is updated with it.
const FAULTS: [FaultKind; 5] = [
    FaultKind::Timeout,
    FaultKind::Malformed,
    FaultKind::Illegal,
    FaultKind::FuelExhausted,
    FaultKind::Strike,
];

fn _every_fault_is_listed(kind: FaultKind) {
    match kind {
        FaultKind::Timeout
        | FaultKind::Malformed
        | FaultKind::Illegal
        | FaultKind::FuelExhausted
        | FaultKind::Strike => {}
    }
}

/// Every `Outcome::reason` the games and the referee write (the `reason`
/// modules of `engine/src/*/`, the competition game's `win`/`draw` calls,
/// and the referee's fallback `forfeit`).
const ENDINGS: &[&str] = &[
    "general_captured",
    "deathtouch",
    "double_deathtouch_draw",
    "double_capture",
    "double_capture_draw",
    "turn_cap_draw",
    "last_crown_standing",
    "turn_limit",
    "all_forfeited",
    "last_general_standing",
    "last_team_standing",
    "last_standing",
    "forfeit",
    "extermination",
    "lone_survivor",
    "rank_stabilized",
];

/// Each code has words of its own in `reasons.js`, with no code left in them.
pub fn every_code_has_words(page: &Page<'_>) {
    let codes: Vec<&str> = Forfeit::ALL
        .iter()
        .map(|f| f.as_str())
        .chain(FAULTS.iter().map(|f| f.as_str()))
        .chain(ENDINGS.iter().copied())
        .collect();
    let listed = serde_json::Value::from(codes.clone()).to_string();
    let words = eval(
        page,
        &format!(
            "import('/assets/viewer/reasons.js').then((m) => {listed}.map((code) => \
             [code, Object.prototype.hasOwnProperty.call(m.REASONS, code) ? m.REASONS[code] : null, m.inWords(code)]))"
        ),
        "the reasons table",
    );
    for entry in words.as_array().expect("a list") {
        let code = entry[0].as_str().unwrap_or_default();
        let own = entry[1].as_str();
        assert!(
            own.is_some_and(|w| w != code && !w.contains('_')),
            "reasons.js has no words for {code}: {entry}"
        );
        assert_eq!(entry[2], entry[1], "inWords({})", js_string(code));
    }
    assert_eq!(words.as_array().map(Vec::len), Some(codes.len()), "{words}");
}
