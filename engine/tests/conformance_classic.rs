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

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use arena_engine::Game;
use arena_engine::generals::Kind;
use arena_engine::generals_classic::mapgen::ClassicMap;
use arena_engine::generals_classic::{GeneralsClassic, Params};
use serde::Deserialize;

/// The reference games in the default directory.
const REFERENCE_GAMES: usize = 40;

#[derive(Deserialize)]
struct Fixture {
    #[serde(default)]
    ruleset: Option<String>,
    seed: u64,
    height: usize,
    width: usize,
    max_turns: u32,
    deathtouch_turn: Option<u32>,
    initial: Initial,
    handshake: Vec<String>,
    turns: Vec<Turn>,
    observations: BTreeMap<String, Vec<String>>,
    result: FixtureResult,
}

#[derive(Deserialize)]
struct Initial {
    kind: Vec<Vec<u8>>,
    owner: Vec<Vec<u8>>,
    army: Vec<Vec<u32>>,
    generals: [[usize; 2]; 2],
}

#[derive(Deserialize)]
struct Turn {
    t: u32,
    actions: [[i64; 5]; 2],
    changes: Vec<[u64; 5]>,
    totals: [[u64; 2]; 2],
}

#[derive(Deserialize)]
struct FixtureResult {
    winner: Option<usize>,
    reason: String,
    final_t: u32,
}

/// What one replayed game covered.
#[derive(Default)]
struct Counts {
    steps: usize,
    frames: usize,
}

/// The directory, and whether it is the default (which must be complete).
fn fixture_dir() -> (PathBuf, bool) {
    match std::env::var_os("ARENA_GENERALS_CLASSIC_FIXTURES") {
        Some(dir) => (PathBuf::from(dir), false),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/generals-classic"),
            true,
        ),
    }
}

fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read fixture directory {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json.gz") || name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

fn load(path: &Path) -> Result<Fixture, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("read: {e}"))?;
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .map_err(|e| format!("gunzip: {e}"))?;
        text
    } else {
        String::from_utf8(bytes).map_err(|e| format!("utf-8: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("json: {e}"))
}

/// (kind, owner, army) of every cell, row-major.
fn snapshot(game: &GeneralsClassic) -> Vec<(u8, u8, u32)> {
    let mut cells = Vec::with_capacity(game.height() * game.width());
    for row in 0..game.height() {
        for col in 0..game.width() {
            cells.push((
                game.kind_at(row, col) as u8,
                game.owner_at(row, col),
                game.army_at(row, col),
            ));
        }
    }
    cells
}

/// The fixture's start board as the map the engine starts from.
fn start_map(fx: &Fixture) -> Result<ClassicMap, String> {
    let cells = fx.height * fx.width;
    let kind = fx
        .initial
        .kind
        .iter()
        .flatten()
        .map(|&k| Kind::from_code(k).ok_or(format!("initial kind {k} unknown")))
        .collect::<Result<Vec<_>, _>>()?;
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
    if let Some(ruleset) = fx.ruleset.as_deref().filter(|r| *r != "classic") {
        return Err(format!("ruleset {ruleset:?}, not classic"));
    }
    if let Some(turn) = fx.deathtouch_turn {
        return Err(format!("deathtouch_turn {turn}: classic has no deathtouch"));
    }
    let params = Params {
        max_turns: fx.max_turns,
    };
    let mut game =
        GeneralsClassic::from_map(start_map(fx)?, params).map_err(|e| format!("setup: {e}"))?;
    let mut counts = Counts::default();

    let expected_start: Vec<(u8, u8, u32)> = (0..fx.height * fx.width)
        .map(|i| {
            let (r, c) = (i / fx.width, i % fx.width);
            (
                fx.initial.kind[r][c],
                fx.initial.owner[r][c],
                fx.initial.army[r][c],
            )
        })
        .collect();
    let start = snapshot(&game);
    if let Some(i) = (0..start.len()).find(|&i| start[i] != expected_start[i]) {
        return Err(format!(
            "initial cell ({},{}): engine {:?}, fixture {:?}",
            i / fx.width,
            i % fx.width,
            start[i],
            expected_start[i]
        ));
    }

    for seat in 0..2 {
        let mut line = Vec::new();
        game.write_handshake(seat, &mut line);
        let expected = fx.handshake.get(seat).map(String::as_bytes);
        if expected != Some(&line[..]) {
            return Err(format!(
                "handshake of seat {seat}: engine {:?}, fixture {:?}",
                String::from_utf8_lossy(&line),
                fx.handshake.get(seat)
            ));
        }
    }

    let mut outcome = None;
    for (i, turn) in fx.turns.iter().enumerate() {
        if turn.t as usize != i || game.turn() != turn.t {
            return Err(format!(
                "turn {i}: fixture t={}, engine time {}",
                turn.t,
                game.turn()
            ));
        }
        if outcome.is_some() {
            return Err(format!("turn {i}: engine already ended the game"));
        }
        if let Some(frames) = fx.observations.get(&i.to_string()) {
            if frames.len() != 2 {
                return Err(format!("turn {i}: {} frames, expected 2", frames.len()));
            }
            for (seat, expected) in frames.iter().enumerate() {
                let mut frame = Vec::new();
                game.write_frame(seat, &mut frame);
                if frame != expected.as_bytes() {
                    return Err(frame_difference(i, seat, &frame, expected, fx.height));
                }
                counts.frames += 1;
            }
        }

        let mut actions = Vec::with_capacity(2);
        for (seat, fields) in turn.actions.iter().enumerate() {
            let line = fields.map(|f| f.to_string()).join(" ");
            let action = game
                .parse_action(seat, line.as_bytes())
                .map_err(|e| format!("turn {i}, seat {seat}: {line:?} refused: {e}"))?;
            actions.push(Some(action));
        }
        let before = snapshot(&game);
        outcome = game.step(&actions);
        let after = snapshot(&game);
        counts.steps += 1;

        let mut changes = Vec::new();
        for (cell, (old, new)) in before.iter().zip(&after).enumerate() {
            if old != new {
                changes.push([
                    (cell / fx.width) as u64,
                    (cell % fx.width) as u64,
                    u64::from(new.0),
                    u64::from(new.1),
                    u64::from(new.2),
                ]);
            }
        }
        if changes != turn.changes {
            let engine: BTreeMap<_, _> = changes.iter().map(|c| ((c[0], c[1]), *c)).collect();
            let fixture: BTreeMap<_, _> = turn.changes.iter().map(|c| ((c[0], c[1]), *c)).collect();
            let cell = engine
                .keys()
                .chain(fixture.keys())
                .find(|k| engine.get(k) != fixture.get(k))
                .copied();
            return Err(format!(
                "turn {i}, actions {:?}: cell {:?}: engine {:?}, fixture {:?}",
                turn.actions,
                cell,
                cell.and_then(|k| engine.get(&k)),
                cell.and_then(|k| fixture.get(&k)),
            ));
        }
        let totals = [game.totals(0), game.totals(1)].map(|(l, a)| [u64::from(l), a]);
        if totals != turn.totals {
            return Err(format!(
                "turn {i}: totals engine {totals:?}, fixture {:?}",
                turn.totals
            ));
        }
    }

    if game.turn() != fx.result.final_t {
        return Err(format!(
            "final time: engine {}, fixture {}",
            game.turn(),
            fx.result.final_t
        ));
    }
    let Some(outcome) = outcome else {
        return Err("the fixture's last turn did not end the game".into());
    };
    if outcome.winner() != fx.result.winner || outcome.reason != fx.result.reason {
        return Err(format!(
            "result: engine winner {:?} reason {}, fixture winner {:?} reason {}",
            outcome.winner(),
            outcome.reason,
            fx.result.winner,
            fx.result.reason
        ));
    }
    Ok(counts)
}

/// The first differing line of a frame, named by its plane, row and cell.
fn frame_difference(turn: usize, seat: usize, got: &[u8], expected: &str, h: usize) -> String {
    let got = String::from_utf8_lossy(got);
    for (line_no, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
        if g != e {
            let place = match line_no {
                0 => "header".to_owned(),
                n => {
                    let plane = ["type", "owner", "army"]
                        .get((n - 1) / h)
                        .unwrap_or(&"extra");
                    let col = g.split(' ').zip(e.split(' ')).position(|(a, b)| a != b);
                    format!("{plane} plane, row {}, col {col:?}", (n - 1) % h)
                }
            };
            return format!(
                "turn {turn}, frame of seat {seat}, line {line_no} ({place}): engine {g:?}, fixture {e:?}"
            );
        }
    }
    format!(
        "turn {turn}, frame of seat {seat}: lengths differ (engine {} bytes, fixture {})",
        got.len(),
        expected.len()
    )
}

#[test]
fn every_classic_fixture_replays_exactly() {
    let (dir, default) = fixture_dir();
    let files = fixture_files(&dir);
    let least = if default { REFERENCE_GAMES } else { 1 };
    assert!(
        files.len() >= least,
        "{} fixtures (*.json.gz, *.json) in {}, expected at least {least}",
        files.len(),
        dir.display()
    );
    let mut failures = Vec::new();
    let mut total = Counts::default();
    let mut expected_frames = 0;
    for path in &files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match load(path) {
            Err(e) => failures.push(format!("{name:?}: cannot load: {e}")),
            Ok(fx) => {
                expected_frames += fx.observations.len() * 2;
                match replay(&fx) {
                    Ok(counts) => {
                        total.steps += counts.steps;
                        total.frames += counts.frames;
                    }
                    Err(e) => failures.push(format!("{name:?} (seed {}): {e}", fx.seed)),
                }
            }
        }
    }
    eprintln!(
        "conformance (classic): {} games, {} steps, {} frames compared, {} mismatching",
        files.len(),
        total.steps,
        total.frames,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} games differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    // Every observation key names a turn that was replayed, so every
    // recorded frame was compared.
    assert_eq!(total.frames, expected_frames, "frames compared vs recorded");
    assert!(total.frames > 0, "no frames compared");
}
