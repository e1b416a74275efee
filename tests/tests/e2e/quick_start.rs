//! The README's quick start as written: its first command's `arena`
//! invocation, run from the repository root with the `arena` binary these
//! tests already built (no second, release build), plays the whole example
//! tournament sandboxed and prints standings naming every entrant.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::arena::{arena, workspace};
use crate::support::cgroups::dirs_named;
use crate::support::process::Proc;

/// What the README's quick start runs before `arena`'s own arguments.
const CARGO_RUN: &str = "cargo run --release -p arena-cli -- ";

/// Twelve sandboxed matches in a debug build on a loaded 2-core machine.
const TOURNAMENT: Duration = Duration::from_secs(600);

/// The arguments of the quick start's `cargo run` line.
fn quick_start_args() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).expect("README.md");
    let (_, section) = readme
        .split_once("## Quick start")
        .expect("the README has a quick start");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a ```sh block in the quick start");
    let line = block
        .lines()
        .next()
        .expect("the quick start's first command");
    let args = line
        .strip_prefix(CARGO_RUN)
        .unwrap_or_else(|| panic!("the first command is not {CARGO_RUN:?}...: {line:?}"));
    args.split_whitespace().map(str::to_owned).collect()
}

/// Entrant names in a tournament file (`name = "..."` under `[[bots]]`).
fn entrants(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(workspace().join(file)).expect("the tournament file");
    text.split("[[bots]]")
        .skip(1)
        .filter_map(|bot| {
            let line = bot.lines().find(|l| l.trim_start().starts_with("name"))?;
            let (_, value) = line.split_once('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
        .collect()
}

#[test]
fn the_readme_quick_start_plays_the_example_tournament_to_standings() {
    let args = quick_start_args();
    assert_eq!(
        args,
        ["run", "examples/tournament.toml"],
        "the quick start's command changed; update this test with it"
    );
    let names = entrants(&args[1]);
    assert_eq!(names.len(), 4, "{names:?}");

    // The command as written; only the build cache and the state directory
    // are private to the test (the environment, not the command line,
    // points them elsewhere).
    let cache = tempfile::Builder::new()
        .prefix("arena-e2e-quickstart-")
        .tempdir()
        .expect("temp dir");
    let state = cache.path().join("arena-state");
    let quick_start = || {
        let mut command = arena();
        command
            .current_dir(workspace())
            .args(&args)
            .env("XDG_CACHE_HOME", cache.path())
            .env("ARENA_STATE", &state);
        command
    };
    let command = quick_start();
    let mut run = Proc::spawn("arena run (quick start)", command);
    let status = run
        .wait_exit(TOURNAMENT)
        .unwrap_or_else(|| panic!("the quick start did not finish within {TOURNAMENT:?}"));
    let stdout = run.stdout.text();
    let stderr = run.stderr.text();
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");

    // `NAME (ID)`, then one standings row per entrant.
    let mut lines = stdout.lines();
    let title = lines.next().unwrap_or_default();
    assert!(title.starts_with("Example cup (t-"), "{stdout}");
    let header = lines.next().unwrap_or_default();
    assert!(header.contains("W/D/L"), "{stdout}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), names.len(), "{stdout}");
    for name in &names {
        let row = rows
            .iter()
            .find(|cells| cells.get(1) == Some(&name.as_str()))
            .unwrap_or_else(|| panic!("no standings row for {name}:\n{stdout}"));
        // # Name Points Buchholz SB Rating W/D/L Faults: three opponents,
        // two games each, every one counted.
        let games: u32 = row
            .get(6)
            .map(|wdl| wdl.split('/').filter_map(|n| n.parse::<u32>().ok()).sum())
            .unwrap_or_default();
        assert_eq!(games, 6, "{name}:\n{stdout}");
    }

    // Sandboxed under the default parent, shared with other runs: none of
    // this run's leaves (named after its pid) is left.
    let prefix = format!("r{}-", run.pid());
    let leftovers: Vec<PathBuf> = dirs_named("arena")
        .iter()
        .flat_map(|parent| std::fs::read_dir(parent).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    assert_eq!(leftovers, Vec::<PathBuf>::new(), "{stderr}");

    // It left its state behind, and the same command again finds the
    // tournament finished there: the same standings, nothing played.
    assert!(state.join("store.redb").is_file(), "{stderr}");
    let mut again = Proc::spawn("arena run (quick start, again)", quick_start());
    let status = again
        .wait_exit(TOURNAMENT)
        .unwrap_or_else(|| panic!("the second quick start did not finish within {TOURNAMENT:?}"));
    let stderr_again = again.stderr.text();
    assert!(status.success(), "{status}\n{stderr_again}");
    assert!(
        stderr_again.contains("finished tournament t-") && stderr_again.contains("12 of 12"),
        "{stderr_again}"
    );
    assert_eq!(again.stdout.text(), stdout, "{stderr_again}");
}
