//! Replays every golden game recorded from the competition's reference engine
//! and checks the engine against it turn by turn: changed cells, totals,
//! handshakes, every sampled frame byte for byte, and the result.
//!
//! The directory is `$ARENA_GENERALS_FIXTURES`, or `../shared/fixtures/generals`
//! beside the repository (which must hold all 40 reference games). Any
//! directory of `*.json.gz` (or plain `*.json`) files in the same format
//! works. Actions go through the engine's own reply parser, so a fixture
//! action the parser refuses is a failure.

mod support;

use arena_engine::generals::{Generals, Params, Setup};
use support::fixtures::{self, Counts, Fixture};

/// The reference games in the default directory.
const REFERENCE_GAMES: usize = 40;

/// Replays one fixture; the first difference, naming turn and cell.
fn replay(fx: &Fixture) -> Result<Counts, String> {
    fx.check_ruleset("competition")?;
    let Some(deathtouch_turn) = fx.deathtouch_turn else {
        return Err("deathtouch_turn is null: the competition has deathtouch".into());
    };
    let setup = Setup {
        height: fx.height,
        width: fx.width,
        kind: fx.initial_kinds()?,
        generals: fx.initial.generals,
        params: Params {
            max_turns: fx.max_turns,
            deathtouch_turn,
            ..Params::default()
        },
    };
    let game = Generals::new(setup).map_err(|e| format!("setup: {e}"))?;
    fixtures::replay(fx, game)
}

#[test]
fn every_fixture_replays_exactly() {
    let (dir, default) =
        fixtures::fixture_dir("ARENA_GENERALS_FIXTURES", "../../shared/fixtures/generals");
    let least = if default { REFERENCE_GAMES } else { 1 };
    let summary = fixtures::replay_all(&dir, least, replay);
    eprintln!(
        "conformance: {} games, {} turns, {} frames checked, {} mismatching",
        summary.games,
        summary.steps,
        summary.frames,
        summary.failures.len()
    );
    summary.assert_clean();
}
