//! Golden fixture games of the two-player generals rulesets (competition and
//! classic share one file format): the fixture structs, the loader, and a
//! replay that checks an engine against one game turn by turn: the start
//! board, handshakes, every sampled frame byte for byte, the changed cells
//! and totals of every step, and the result.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use arena_engine::Game;
use arena_engine::generals::{Action, Generals, Kind};
use arena_engine::generals_classic::GeneralsClassic;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Fixture {
    #[serde(default)]
    pub ruleset: Option<String>,
    pub seed: u64,
    pub height: usize,
    pub width: usize,
    pub max_turns: u32,
    pub deathtouch_turn: Option<u32>,
    pub initial: Initial,
    pub handshake: Vec<String>,
    pub turns: Vec<Turn>,
    pub observations: BTreeMap<String, Vec<String>>,
    pub result: FixtureResult,
}

#[derive(Deserialize)]
pub struct Initial {
    pub kind: Vec<Vec<u8>>,
    pub owner: Vec<Vec<u8>>,
    pub army: Vec<Vec<u32>>,
    pub generals: [[usize; 2]; 2],
}

#[derive(Deserialize)]
pub struct Turn {
    pub t: u32,
    pub actions: [[i64; 5]; 2],
    pub changes: Vec<[u64; 5]>,
    pub totals: [[u64; 2]; 2],
}

#[derive(Deserialize)]
pub struct FixtureResult {
    pub winner: Option<usize>,
    pub reason: String,
    pub final_t: u32,
}

impl Fixture {
    /// The `kind` plane of `initial`, row-major.
    pub fn initial_kinds(&self) -> Result<Vec<Kind>, String> {
        self.initial
            .kind
            .iter()
            .flatten()
            .map(|&k| Kind::from_code(k).ok_or(format!("initial kind {k} unknown")))
            .collect()
    }

    /// Errors unless the fixture's `ruleset` (when present) is `expected`.
    pub fn check_ruleset(&self, expected: &str) -> Result<(), String> {
        match self.ruleset.as_deref() {
            Some(ruleset) if ruleset != expected => {
                Err(format!("ruleset {ruleset:?}, not {expected}"))
            }
            _ => Ok(()),
        }
    }
}

/// A two-player generals game whose board is a [`Generals`].
pub trait GeneralsGame: Game<Action = Action> {
    fn board(&self) -> &Generals;
}

impl GeneralsGame for Generals {
    fn board(&self) -> &Generals {
        self
    }
}

impl GeneralsGame for GeneralsClassic {
    fn board(&self) -> &Generals {
        self
    }
}

/// What one replay covered.
#[derive(Default)]
pub struct Counts {
    pub steps: usize,
    pub frames: usize,
}

/// The directory named by `env_var`, else `default` (relative to the crate),
/// and whether it is the default.
pub fn fixture_dir(env_var: &str, default: &str) -> (PathBuf, bool) {
    match std::env::var_os(env_var) {
        Some(dir) => (PathBuf::from(dir), false),
        None => (Path::new(env!("CARGO_MANIFEST_DIR")).join(default), true),
    }
}

/// The `*.json.gz` and `*.json` files of `dir`, sorted by name.
pub fn fixture_files(dir: &Path) -> Vec<PathBuf> {
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

/// One fixture, gzip-compressed or plain JSON.
pub fn load(path: &Path) -> Result<Fixture, String> {
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

/// What replaying a directory covered.
pub struct Summary {
    pub games: usize,
    pub steps: usize,
    /// Frames compared.
    pub frames: usize,
    /// Frames recorded in the loaded fixtures.
    pub recorded_frames: usize,
    pub failures: Vec<String>,
}

/// Loads and replays every fixture in `dir` (at least `least` of them) with
/// `replay`.
pub fn replay_all(
    dir: &Path,
    least: usize,
    replay: impl Fn(&Fixture) -> Result<Counts, String>,
) -> Summary {
    let files = fixture_files(dir);
    assert!(
        files.len() >= least,
        "{} fixtures (*.json.gz, *.json) in {}, expected at least {least}",
        files.len(),
        dir.display()
    );
    let mut summary = Summary {
        games: files.len(),
        steps: 0,
        frames: 0,
        recorded_frames: 0,
        failures: Vec::new(),
    };
    for path in &files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match load(path) {
            Err(e) => summary.failures.push(format!("{name:?}: cannot load: {e}")),
            Ok(fx) => {
                summary.recorded_frames += fx.observations.values().map(Vec::len).sum::<usize>();
                match replay(&fx) {
                    Ok(counts) => {
                        summary.steps += counts.steps;
                        summary.frames += counts.frames;
                    }
                    Err(e) => summary
                        .failures
                        .push(format!("{name:?} (seed {}): {e}", fx.seed)),
                }
            }
        }
    }
    summary
}

impl Summary {
    /// Fails on any mismatch, or when a recorded frame was not compared.
    pub fn assert_clean(&self) {
        assert!(
            self.failures.is_empty(),
            "{} of {} games differ:\n{}",
            self.failures.len(),
            self.games,
            self.failures.join("\n")
        );
        // Every observation key names a turn that was replayed, so every
        // recorded frame was compared.
        assert_eq!(
            self.frames, self.recorded_frames,
            "frames compared vs recorded"
        );
        assert!(self.frames > 0, "no frames compared");
    }
}

/// (kind, owner, army) of every cell, row-major.
pub fn snapshot(game: &Generals) -> Vec<(u8, u8, u32)> {
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

/// Replays `fx` on `game`, freshly set up from its `initial`; the first
/// difference, naming turn and cell. Recorded actions go through the engine's
/// own reply parser, so an action the parser refuses is a failure.
pub fn replay<G: GeneralsGame>(fx: &Fixture, mut game: G) -> Result<Counts, String> {
    let mut counts = Counts::default();
    check_start(fx, game.board())?;
    check_handshakes(fx, &game)?;

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
        counts.frames += check_frames(fx, i, &game)?;

        let mut actions = Vec::with_capacity(2);
        for (seat, fields) in turn.actions.iter().enumerate() {
            let line = fields.map(|f| f.to_string()).join(" ");
            let action = game
                .parse_action(seat, line.as_bytes())
                .map_err(|e| format!("turn {i}, seat {seat}: {line:?} refused: {e}"))?;
            actions.push(Some(action));
        }
        let before = snapshot(game.board());
        outcome = game.step(&actions);
        counts.steps += 1;
        check_step(fx, i, &before, game.board())?;
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

/// The engine's start board against `initial`.
fn check_start(fx: &Fixture, game: &Generals) -> Result<(), String> {
    let expected: Vec<(u8, u8, u32)> = (0..fx.height * fx.width)
        .map(|i| {
            let (r, c) = (i / fx.width, i % fx.width);
            (
                fx.initial.kind[r][c],
                fx.initial.owner[r][c],
                fx.initial.army[r][c],
            )
        })
        .collect();
    let start = snapshot(game);
    if start.len() != expected.len() {
        return Err(format!(
            "initial board: engine {} cells, fixture {}",
            start.len(),
            expected.len()
        ));
    }
    if let Some(i) = (0..start.len()).find(|&i| start[i] != expected[i]) {
        return Err(format!(
            "initial cell ({},{}): engine {:?}, fixture {:?}",
            i / fx.width,
            i % fx.width,
            start[i],
            expected[i]
        ));
    }
    Ok(())
}

fn check_handshakes(fx: &Fixture, game: &impl Game) -> Result<(), String> {
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
    Ok(())
}

/// The frames recorded before turn `i`, if any; how many were compared.
fn check_frames(fx: &Fixture, i: usize, game: &impl Game) -> Result<usize, String> {
    let Some(frames) = fx.observations.get(&i.to_string()) else {
        return Ok(0);
    };
    if frames.len() != 2 {
        return Err(format!("turn {i}: {} frames, expected 2", frames.len()));
    }
    for (seat, expected) in frames.iter().enumerate() {
        let mut frame = Vec::new();
        game.write_frame(seat, &mut frame);
        if frame != expected.as_bytes() {
            return Err(frame_difference(i, seat, &frame, expected, fx.height));
        }
    }
    Ok(frames.len())
}

/// The cells step `i` changed (from `before`) and the totals after it.
pub fn check_step(
    fx: &Fixture,
    i: usize,
    before: &[(u8, u8, u32)],
    game: &Generals,
) -> Result<(), String> {
    let turn = &fx.turns[i];
    let after = snapshot(game);
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
    Ok(())
}

/// The first differing line of a frame, named by its plane, row and cell.
pub fn frame_difference(turn: usize, seat: usize, got: &[u8], expected: &str, h: usize) -> String {
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
