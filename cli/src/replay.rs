//! `arena replay verify|dump`: re-simulate a replay of any registered game
//! (the game is read from the file) and compare, or print it turn by turn.

use std::io::Write;
use std::process::ExitCode;

use crate::EXIT_REPLAY_MISMATCH;
use crate::cli::{ReplayArgs, ReplayCommand};

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ReplayCommand::Verify { path } => {
            let replay = arena_worker::replay::load(&path)?;
            match replay.verify() {
                Ok(()) => {
                    let (turns, reason) = replay
                        .result()
                        .map(|r| (r.turns, r.reason.as_str()))
                        .unwrap_or((0, "unfinished"));
                    println!(
                        "{}: ok ({} {turns} turns, {reason})",
                        path.display(),
                        replay.game()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(difference) => {
                    crate::messages::say!("{}: {difference}", path.display());
                    Ok(ExitCode::from(EXIT_REPLAY_MISMATCH))
                }
            }
        }
        ReplayCommand::Dump { path } => {
            let replay = arena_worker::replay::load(&path)?;
            let lines = match replay.dump() {
                Ok(lines) => lines,
                Err(difference) => {
                    crate::messages::say!("{}: {difference}", path.display());
                    return Ok(ExitCode::from(EXIT_REPLAY_MISMATCH));
                }
            };
            let mut out = std::io::stdout().lock();
            for line in lines {
                serde_json::to_writer(&mut out, &line)?;
                writeln!(out)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
