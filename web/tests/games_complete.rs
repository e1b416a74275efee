//! Every registered game is complete beyond the engine, in the three places
//! a participant or an organiser looks for it:
//!
//! - **a viewer drawer**: a key of the `DRAWERS` table in
//!   `web/assets/viewer/viewer.js`, whose value is imported from a file that
//!   exists (without one, the match page only says there is no viewer);
//! - **a page** `docs/games/<name>.md` whose title names the game;
//! - **a starter bot**: the games table of `docs/games/README.md` names, in
//!   its "starter bots" column, one or more directories under `bots/` (not
//!   `bots/test/`), each a bot of a runtime the game accepts, told apart as
//!   the coordinator tells submissions apart: `model.onnx` with a `bot.toml`
//!   naming the game's adapter set is a model-graph bot, a `bot.wasm` (or a
//!   `build.sh` and no `run.sh`) a WebAssembly bot, a `run.sh` a process bot.
//!
//! The files are read as they are on disk. Each failure names the game and
//! what it lacks; "Adding a game" in `docs/games/README.md` lists every place
//! a new game touches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arena_engine::registry::{self, GameEntry, RuntimeKind};

/// The viewer's entry module, relative to the workspace.
const VIEWER: &str = "web/assets/viewer/viewer.js";
/// The games table, relative to the workspace.
const GAMES_README: &str = "docs/games/README.md";
/// The column of that table naming each game's starter bots.
const STARTER_COLUMN: &str = "starter bots";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the web crate sits in the workspace")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    let path = workspace().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Fails with every problem found, one per line.
fn assert_none(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}:\n  {}\n(see \"Adding a game\" in {GAMES_README})",
        problems.join("\n  ")
    );
}

/// The `DRAWERS` table of viewer.js: game name → the identifier drawing it.
fn drawer_table(viewer: &str) -> BTreeMap<String, String> {
    let start = viewer
        .find("const DRAWERS = {")
        .unwrap_or_else(|| panic!("{VIEWER} has no `const DRAWERS = {{` table"));
    let body = &viewer[start + "const DRAWERS = {".len()..];
    let body = &body[..body
        .find('}')
        .unwrap_or_else(|| panic!("{VIEWER}: the DRAWERS table never closes"))];
    body.split([',', '\n'])
        .map(str::trim)
        .filter(|entry| !entry.is_empty() && !entry.starts_with("//"))
        .map(|entry| {
            let (key, value) = entry.split_once(':').unwrap_or_else(|| {
                panic!("{VIEWER}: DRAWERS entry {entry:?} is not `key: drawer`")
            });
            let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
            (key.to_owned(), value.trim().to_owned())
        })
        .collect()
}

/// The default imports of viewer.js: identifier → the path imported.
fn default_imports(viewer: &str) -> BTreeMap<String, String> {
    viewer
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("import ")?;
            let (name, from) = rest.split_once(" from ")?;
            let name = name.trim();
            if name.starts_with('{') || name.starts_with('*') {
                return None;
            }
            let path = from.trim().trim_end_matches(';').trim_matches(['"', '\'']);
            Some((name.to_owned(), path.to_owned()))
        })
        .collect()
}

#[test]
fn every_game_has_a_viewer_drawer() {
    let viewer = read(VIEWER);
    let drawers = drawer_table(&viewer);
    let imports = default_imports(&viewer);
    let dir = workspace().join("web/assets/viewer");
    let mut problems = Vec::new();
    for game in registry::games() {
        let Some(drawer) = drawers.get(game.name) else {
            problems.push(format!(
                "{}: no drawer in the DRAWERS table of {VIEWER}",
                game.name
            ));
            continue;
        };
        match imports.get(drawer) {
            None => problems.push(format!(
                "{}: its drawer `{drawer}` is not imported in {VIEWER}",
                game.name
            )),
            Some(path) if !dir.join(path).is_file() => problems.push(format!(
                "{}: its drawer `{drawer}` is imported from {path}, which does not exist",
                game.name
            )),
            Some(_) => {}
        }
    }
    assert_none("games the replay viewer cannot draw", &problems);
}

#[test]
fn every_game_has_a_docs_page() {
    let mut problems = Vec::new();
    for game in registry::games() {
        let page = format!("docs/games/{}.md", game.name);
        let path = workspace().join(&page);
        let Ok(text) = std::fs::read_to_string(&path) else {
            problems.push(format!("{}: no page {page}", game.name));
            continue;
        };
        let title = text.lines().next().unwrap_or_default();
        let named = title
            .strip_prefix("# ")
            .and_then(|t| t.strip_prefix(game.name))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'));
        if !named {
            problems.push(format!(
                "{}: {page} does not open with `# {}: ...` (it opens with {title:?})",
                game.name, game.name
            ));
        }
    }
    assert_none("games without their page", &problems);
}

/// The games table of docs/games/README.md: game name → the `bots/...`
/// directories its starter column names.
fn starter_table(readme: &str) -> BTreeMap<String, Vec<String>> {
    let cells = |line: &str| -> Vec<String> {
        let line = line.trim().trim_start_matches('|').trim_end_matches('|');
        line.split('|').map(|c| c.trim().to_owned()).collect()
    };
    let mut lines = readme.lines().skip_while(|l| !l.starts_with("| name |"));
    let header = cells(
        lines
            .next()
            .unwrap_or_else(|| panic!("{GAMES_README} has no games table (`| name | ...`)")),
    );
    let column = header
        .iter()
        .position(|h| h == STARTER_COLUMN)
        .unwrap_or_else(|| {
            panic!("the games table of {GAMES_README} has no {STARTER_COLUMN:?} column")
        });
    lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let row = cells(row);
            let name = row[0].trim_matches('`').to_owned();
            let starters = row
                .get(column)
                .map(|cell| {
                    cell.split('`')
                        .skip(1)
                        .step_by(2)
                        .filter(|span| span.starts_with("bots/"))
                        .map(|span| span.trim_end_matches('/').to_owned())
                        .collect()
                })
                .unwrap_or_default();
            (name, starters)
        })
        .collect()
}

/// What is wrong with `dir` as a starter of `game`, if anything.
fn starter_problem(game: &GameEntry, dir: &str) -> Option<String> {
    if dir.starts_with("bots/test/") || dir.contains("..") {
        return Some(format!("{dir} is not a starter (test bots are not)"));
    }
    let path = workspace().join(dir);
    if !path.is_dir() {
        return Some(format!("{dir} does not exist"));
    }
    let has = |file: &str| path.join(file).is_file();
    let kind = if has("model.onnx") && has("bot.toml") {
        RuntimeKind::Model
    } else if has("bot.wasm") || (has("build.sh") && !has("run.sh")) {
        RuntimeKind::Wasm
    } else if has("run.sh") {
        RuntimeKind::Process
    } else {
        return Some(format!(
            "{dir} is no bot: it has no run.sh, no bot.wasm or build.sh, and no model.onnx with a bot.toml"
        ));
    };
    if !game.runtimes.contains(&kind) {
        let kind = match kind {
            RuntimeKind::Model => "model-graph",
            RuntimeKind::Wasm => "WebAssembly",
            _ => "process",
        };
        return Some(format!(
            "{dir} is a {kind} bot, and {} has no {kind} seats",
            game.name
        ));
    }
    if kind == RuntimeKind::Model {
        let wanted = game.model.map(|m| m.adapter_set).unwrap_or_default();
        let manifest = std::fs::read_to_string(path.join("bot.toml")).unwrap_or_default();
        // The top-level `adapters = "SET"` line, before any table.
        let named = manifest
            .lines()
            .take_while(|l| !l.trim_start().starts_with('['))
            .filter_map(|l| l.split_once('='))
            .find(|(key, _)| key.trim() == "adapters")
            .map(|(_, value)| value.trim().trim_matches('"').to_owned());
        if named.as_deref() != Some(wanted) {
            return Some(format!(
                "{dir}/bot.toml names the adapter set {}, and {} plays {wanted:?}",
                named.map_or("none".to_owned(), |n| format!("{n:?}")),
                game.name
            ));
        }
    }
    None
}

#[test]
fn every_game_has_a_starter_bot() {
    let table = starter_table(&read(GAMES_README));
    let mut problems = Vec::new();
    for game in registry::games() {
        let Some(starters) = table.get(game.name) else {
            problems.push(format!(
                "{}: no row in the games table of {GAMES_README}",
                game.name
            ));
            continue;
        };
        if starters.is_empty() {
            problems.push(format!(
                "{}: its {STARTER_COLUMN:?} cell in {GAMES_README} names no `bots/...` directory",
                game.name
            ));
        }
        for dir in starters {
            if let Some(problem) = starter_problem(game, dir) {
                problems.push(format!("{}: {problem}", game.name));
            }
        }
    }
    assert_none("games without a starter bot", &problems);
}
