//! `arena play`: one match of a registered game between bots or baselines.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use arena_engine::Rules;
use arena_engine::registry::{self, LimitOverrides};
use arena_worker::report::PlayerReport;
use arena_worker::{BotSpec, MatchReport, RunnerConfig, SeatSpec, play_match};

use crate::cli::PlayArgs;
use crate::launch;
use crate::terminal::shown;

pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let entry = registry::find(&args.game)?;
    entry.check_seats(args.bots.len())?;
    let rules = Rules::parse_pairs(&args.rules)?;
    let seats: Vec<SeatSpec> = args.bots.iter().map(|b| SeatSpec::parse(b)).collect();
    for seat in &seats {
        match seat {
            SeatSpec::Bot(bot) => bot.validate()?,
            SeatSpec::Baseline(name) if !entry.has_baseline(name) => bail!(
                "{} has no baseline {name:?} (baselines: {})",
                entry.name,
                if entry.baselines.is_empty() {
                    "none".to_owned()
                } else {
                    entry.baselines.join(", ")
                }
            ),
            SeatSpec::Baseline(_) => {}
        }
    }
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let game = entry.create(seed, seats.len(), &rules)?;
    let limits = entry.limits.with(&LimitOverrides {
        first_move_ms: args.first_move_ms,
        move_ms: args.move_ms,
        fault_limit: args.fault_limit,
        fuel_per_turn: args.fuel_per_turn,
        fuel_bank: args.fuel_bank,
        init_fuel: args.init_fuel,
        wall_ms: args.wall_ms,
        reply_cap: None,
        model_bytes: args.model_bytes,
        model_macs: args.model_macs,
    })?;
    let config = RunnerConfig {
        build_limit: Duration::from_secs(args.build_timeout),
        ..RunnerConfig::for_limits(&limits)
    }
    // Only a game with fuel runs WebAssembly seats: no engine otherwise.
    .with_wasm(
        limits
            .fuel
            .map(|_| launch::wasm_support(&args.sandbox))
            .transpose()?,
    )
    // Only a game with model limits runs model-graph seats.
    .with_models(limits.model.map(|_| launch::model_support()).transpose()?);
    let processes = seats
        .iter()
        .filter(|s| matches!(s, SeatSpec::Bot(_)))
        .count();
    let launcher = launch::launcher(&args.sandbox, processes)?;
    for (seat, spec) in seats.iter().enumerate() {
        if let SeatSpec::Bot(bot) = spec {
            for program in missing_programs(bot, &launcher) {
                crate::messages::say!(
                    "arena: warning: seat {seat} ({}): run.sh starts `{program}`, which the \
                     environment lacks (not on its PATH); the bot will likely forfeit `exit`",
                    bot.name
                );
            }
        }
    }
    let played = play_match(game, seed, &seats, launcher.as_launcher(), &config);
    launcher.finish();
    let output = played.context("the match could not be played")?;

    if let Some(path) = &args.replay {
        arena_worker::replay::save(path, &output.replay)?;
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

/// The programs `bot`'s run.sh names as commands that the environment it
/// will run in does not provide: the sandbox's search path (with its
/// stand-ins, see `RuntimeEnv::find_program`), or this process's `PATH`
/// when bots run unconfined. A static scan (`arena_worker::programs`), so
/// this warns; it never refuses a bot.
fn missing_programs(bot: &BotSpec, launcher: &launch::CommandLauncher) -> Vec<String> {
    let Ok(script) = std::fs::read_to_string(bot.dir.join(arena_worker::launcher::RUN_SCRIPT))
    else {
        return Vec::new();
    };
    let found = |program: &str| match launcher {
        launch::CommandLauncher::Sandboxed(l) => {
            l.sandbox().config().env.find_program(program).is_some()
        }
        launch::CommandLauncher::Plain(_) => std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| {
                std::fs::metadata(dir.join(program))
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
        }),
    };
    arena_worker::programs::programs_started(&script)
        .into_iter()
        .filter(|program| !found(program))
        .collect()
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
    let firsts: Vec<&PlayerReport> = report.players.iter().filter(|p| p.rank == 0).collect();
    let team = firsts.first().and_then(|p| p.team);
    let verdict = match report.winner {
        Some(seat) => format!(
            "{} (seat {seat}) wins by {}",
            shown(&report.players[seat].bot),
            report.reason
        ),
        // One team holds every first place: that team won.
        None if team.is_some() && firsts.iter().all(|p| p.team == team) => format!(
            "team {} ({}) wins by {}",
            team.unwrap_or_default(),
            firsts
                .iter()
                .map(|p| shown(&p.bot))
                .collect::<Vec<_>>()
                .join(", "),
            report.reason
        ),
        None => format!("first place shared ({})", report.reason),
    };
    writeln!(
        out,
        "{} seed {}: {verdict} after {} turns",
        report.game, report.seed, report.turns
    )?;
    for p in &report.players {
        let forfeit = p
            .forfeit
            .map(|f| format!(", forfeit: {}", f.as_str()))
            .unwrap_or_default();
        let stats: String = p.stats.iter().map(|(k, v)| format!("  {k} {v}")).collect();
        // Model-graph seats: strikes and the platform's evaluation time.
        let model = p
            .evaluation_ms
            .map(|e| {
                format!(
                    "  strikes {}, evaluation p50 {:.3} ms, p99 {:.3} ms",
                    p.faults.strike, e.p50, e.p99
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  seat {} {:<20} place {} score {:.3}  moves {:>4}  faults {} timeout / {} malformed  latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms{model}{stats}{forfeit}",
            p.seat,
            shown(&p.bot),
            p.rank + 1,
            p.score,
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
