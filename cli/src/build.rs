//! `arena build`: build one bot the way a match would, and print its artifact.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use arena_worker::BotSpec;

use crate::cli::BuildArgs;
use crate::launch;

pub fn run(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let bot = BotSpec::from_dir(&args.bot);
    bot.validate()?;
    let launcher = launch::launcher(&args.sandbox, 1)?;
    let built = launcher
        .as_launcher()
        .build(&bot, Duration::from_secs(args.build_timeout));
    launcher.finish();
    let report = built?;
    std::io::stderr().write_all(&report.log)?;
    match (&report.failure, &report.artifact) {
        (Some(reason), _) => {
            crate::messages::say!("arena: build failed: {reason}");
            Ok(ExitCode::FAILURE)
        }
        (None, Some(artifact)) => {
            let id = artifact
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            println!("{id}");
            crate::messages::say!(
                "arena: built in {:.1?}; artifact at {}",
                report.duration,
                artifact.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        (None, None) => {
            println!("{}", bot.dir.display());
            crate::messages::say!("arena: built in place (unconfined)");
            Ok(ExitCode::SUCCESS)
        }
    }
}
