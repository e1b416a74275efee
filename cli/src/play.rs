//! `arena play`: one match between two bot directories.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use arena_engine::generals::{Generals, Params};
use arena_worker::{BotSpec, MatchReport, RunnerConfig, play_match};

use crate::cli::{GameName, PlayArgs};
use crate::launch;

pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let bots = [
        BotSpec::from_dir(&args.bot_a),
        BotSpec::from_dir(&args.bot_b),
    ];
    for bot in &bots {
        bot.validate()?;
    }
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let config = RunnerConfig {
        first_move: Duration::from_millis(args.first_move_ms),
        per_move: Duration::from_millis(args.move_ms),
        fault_limit: args.fault_limit,
        build_limit: Duration::from_secs(args.build_timeout),
        ..RunnerConfig::default()
    };
    let game = match args.game {
        GameName::Generals => Generals::from_seed(seed, Params::default()),
    };
    let launcher = launch::launcher(&args.sandbox, bots.len())?;
    let played = play_match(game, seed, &bots, launcher.as_launcher(), &config);
    launcher.finish();
    let output = played.context("the match could not be played")?;

    if let Some(path) = &args.replay {
        output.replay.save(path)?;
    }
    if let Some(dir) = &args.logs {
        write_logs(dir, &output.logs)?;
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut stdout, &output.report)?;
        writeln!(stdout)?;
    } else {
        write_summary(&mut stdout, &output.report)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_logs(dir: &Path, logs: &[Vec<u8>]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (seat, log) in logs.iter().enumerate() {
        let path = dir.join(format!("seat-{seat}.log"));
        std::fs::write(&path, log).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn write_summary(out: &mut impl Write, report: &MatchReport) -> std::io::Result<()> {
    let verdict = match report.winner {
        Some(seat) => format!(
            "{} (seat {seat}) wins by {}",
            report.players[seat].bot, report.reason
        ),
        None => format!("draw ({})", report.reason),
    };
    writeln!(
        out,
        "{} seed {}: {verdict} after {} turns",
        report.game, report.seed, report.turns
    )?;
    for p in &report.players {
        let forfeit = p
            .forfeit
            .map(|f| format!(", forfeit: {}", serde_json::to_value(f).unwrap_or_default()))
            .unwrap_or_default();
        writeln!(
            out,
            "  seat {} {:<20} moves {:>4}  faults {} timeout / {} malformed  latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms{forfeit}",
            p.seat,
            p.bot,
            p.moves,
            p.faults.timeout,
            p.faults.malformed,
            p.latency_ms.p50,
            p.latency_ms.p99,
            p.latency_ms.max,
        )?;
    }
    Ok(())
}

/// A seed for when the user gave none: fresh per run, printed in the result.
fn fresh_seed() -> u64 {
    if let Ok(bytes) = crate::entropy::random_bytes::<8>() {
        return u64::from_le_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}
