//! `arena replay verify`: re-simulate a replay and compare.

use std::process::ExitCode;

use arena_engine::generals::Generals;
use arena_worker::Replay;

use crate::EXIT_REPLAY_MISMATCH;
use crate::cli::{ReplayArgs, ReplayCommand};

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ReplayCommand::Verify { path } => {
            let replay = Replay::<Generals>::load(&path)?;
            match replay.verify() {
                Ok(()) => {
                    println!(
                        "{}: ok ({} turns, {})",
                        path.display(),
                        replay.result.turns,
                        replay.result.reason
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(difference) => {
                    eprintln!("{}: {difference}", path.display());
                    Ok(ExitCode::from(EXIT_REPLAY_MISMATCH))
                }
            }
        }
    }
}
