//! Replays every golden game recorded from the reference engine's classic
//! ruleset and checks the engine against it turn by turn: the start board,
//! changed cells, totals, handshakes, every sampled frame byte for byte, and
//! the result.
//!
//! The directory is `$ARENA_GENERALS_CLASSIC_FIXTURES`, or
//! `../shared/fixtures/generals-classic` beside the repository (which must
//! hold all 40 reference games). Any directory of `*.json.gz` (or plain
//! `*.json`) files in the same format works. Actions go through the engine's
//! own reply parser, so a fixture action the parser refuses is a failure.

mod support;

use arena_engine::generals_classic::mapgen::ClassicMap;
use arena_engine::generals_classic::{GeneralsClassic, Params};
use support::fixtures::{self, Counts, Fixture};

/// The reference games in the default directory.
const REFERENCE_GAMES: usize = 40;

/// The fixture's start board as the map the engine starts from.
fn start_map(fx: &Fixture) -> Result<ClassicMap, String> {
    let cells = fx.height * fx.width;
    let kind = fx.initial_kinds()?;
    let army: Vec<u32> = fx.initial.army.iter().flatten().copied().collect();
    if kind.len() != cells || army.len() != cells {
        return Err(format!("initial planes are not {}x{}", fx.height, fx.width));
    }
    Ok(ClassicMap {
        height: fx.height,
        width: fx.width,
        kind,
        army,
        generals: fx.initial.generals.to_vec(),
    })
}

/// Replays one fixture; the first difference, naming turn and cell.
fn replay(fx: &Fixture) -> Result<Counts, String> {
    fx.check_ruleset("classic")?;
    if let Some(turn) = fx.deathtouch_turn {
        return Err(format!("deathtouch_turn {turn}: classic has no deathtouch"));
    }
    let params = Params {
        max_turns: fx.max_turns,
    };
    let game =
        GeneralsClassic::from_map(start_map(fx)?, params).map_err(|e| format!("setup: {e}"))?;
    fixtures::replay(fx, game)
}

#[test]
fn every_classic_fixture_replays_exactly() {
    let (dir, default) = fixtures::fixture_dir(
        "ARENA_GENERALS_CLASSIC_FIXTURES",
        "../../shared/fixtures/generals-classic",
    );
    let least = if default { REFERENCE_GAMES } else { 1 };
    let summary = fixtures::replay_all(&dir, least, replay);
    eprintln!(
        "conformance (classic): {} games, {} steps, {} frames compared, {} mismatching",
        summary.games,
        summary.steps,
        summary.frames,
        summary.failures.len()
    );
    summary.assert_clean();
}
