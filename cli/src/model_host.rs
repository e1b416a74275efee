//! `arena model-host`: the model-graph host, as the worker starts it inside
//! a seat's sandbox, and `arena model check`, the same build-time check
//! for participants (see the `arena-model` crate).

use std::io::{BufReader, Write};
use std::process::ExitCode;

use anyhow::Context;
use arena_engine::registry::{self, ModelInterface, ModelLimits};

use crate::cli::{ModelArgs, ModelCheckArgs, ModelCommand, ModelHostArgs};

pub fn run(args: ModelHostArgs) -> anyhow::Result<ExitCode> {
    // tract panics on some hostile graphs; the host turns each into a
    // strike or a refusal, so one line in the bot's log is enough (the
    // default hook would write a backtrace every turn).
    std::panic::set_hook(Box::new(|info| {
        eprintln!("[arena: the evaluator panicked: {info}]");
    }));
    let interface = interface(&args.game)?;
    let limits = ModelLimits {
        max_bytes: args.max_bytes,
        max_macs: args.max_macs,
    };
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    let mut log = std::io::stderr();
    arena_model::host::serve(
        &args.dir,
        interface,
        &limits,
        &mut input,
        &mut output,
        &mut log,
    )
    .context("the model host lost its pipes")?;
    output.flush().context("the model host lost its pipes")?;
    Ok(ExitCode::SUCCESS)
}

pub fn model(args: ModelArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ModelCommand::Check(args) => check(args),
    }
}

fn check(args: ModelCheckArgs) -> anyhow::Result<ExitCode> {
    let game = registry::find(&args.game)?;
    let interface = interface(&args.game)?;
    let defaults = game
        .limits
        .model
        .with_context(|| format!("{} sets no model limits", game.name))?;
    let limits = ModelLimits {
        max_bytes: args.max_bytes.unwrap_or(defaults.max_bytes),
        max_macs: args.max_macs.unwrap_or(defaults.max_macs),
    };
    let report = arena_model::check(&args.dir, interface, &limits)
        .map_err(|refusal| anyhow::anyhow!("{}: refused: {refusal}", args.dir.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: passes ({}, tract {}), {} bytes of {}, about {} multiply-accumulates a turn of {} (at {} head rows on a {}x{} board)",
            args.dir.display(),
            report.adapter_set,
            arena_model::TRACT_VERSION,
            report.bytes,
            limits.max_bytes,
            report.macs,
            limits.max_macs,
            report.reference[0],
            report.reference[1],
            report.reference[2],
        )?;
        for input in &report.inputs {
            writeln!(
                out,
                "  input {:<12} {} [{}] {:?}",
                input.name,
                input.adapter,
                input.shape.join(", "),
                input.params
            )?;
        }
        writeln!(
            out,
            "  head  {:<12} [{}]",
            report.head.output,
            report.head.shape.join(", ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The game's model interface, if it has model-graph seats.
fn interface(game: &str) -> anyhow::Result<&'static ModelInterface> {
    let entry = registry::find(game)?;
    entry
        .model
        .with_context(|| format!("{} has no model-graph seats", entry.name))
}
