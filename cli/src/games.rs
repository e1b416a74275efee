//! `arena games`: the registered games, their seats, options and limits.

use std::io::Write;
use std::process::ExitCode;

use arena_engine::registry::{self, GameEntry, OptionKind};

use crate::cli::GamesArgs;

pub fn run(args: GamesArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let games: Vec<serde_json::Value> = registry::games().iter().map(|g| describe(g)).collect();
        serde_json::to_writer_pretty(&mut out, &games)?;
        writeln!(out)?;
    } else {
        for game in registry::games() {
            write_text(&mut out, game)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One game as JSON: everything `arena games` shows.
pub fn describe(game: &GameEntry) -> serde_json::Value {
    serde_json::json!({
        "name": game.name,
        "summary": game.summary,
        "seats": game.seats,
        "teams": game.teams,
        "options": game.options,
        "limits": game.limits,
        "frames": game.frames,
        "runtimes": game.runtimes,
        "baselines": game.baselines,
    })
}

fn write_text(out: &mut impl Write, game: &GameEntry) -> std::io::Result<()> {
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(", ")
        }
    };
    writeln!(out, "{}  {}", game.name, game.summary)?;
    writeln!(
        out,
        "  seats     {}",
        list(game.seats.iter().map(|s| s.to_string()).collect())
    )?;
    writeln!(
        out,
        "  limits    first move {} ms, move {} ms, fault limit {}, reply cap {} bytes",
        game.limits.first_move_ms,
        game.limits.move_ms,
        game.limits.fault_limit,
        game.limits.reply_cap
    )?;
    let runtimes = game
        .runtimes
        .iter()
        .map(|r| match r {
            registry::RuntimeKind::Process => "process".to_owned(),
            registry::RuntimeKind::Baseline => "baseline".to_owned(),
            registry::RuntimeKind::Wasm => "wasm".to_owned(),
            registry::RuntimeKind::Model => "model".to_owned(),
        })
        .collect();
    writeln!(out, "  runtimes  {}", list(runtimes))?;
    writeln!(
        out,
        "  baselines {}",
        list(
            game.baselines
                .iter()
                .map(|b| format!("{}{b}", registry::BASELINE_PREFIX))
                .collect()
        )
    )?;
    if game.options.is_empty() {
        writeln!(out, "  options   none")?;
    }
    for option in game.options {
        let kind = match option.kind {
            OptionKind::Bool { default } => format!("true|false, default {default}"),
            OptionKind::Int { default, min, max } => {
                format!("{min}..={max}, default {default}")
            }
            OptionKind::Choice { default, choices } => {
                format!("{}, default {default}", choices.join("|"))
            }
        };
        writeln!(out, "  option    {} ({kind}): {}", option.name, option.help)?;
    }
    writeln!(out)
}
