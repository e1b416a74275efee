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
        crate::messages::say!("[arena: the evaluator panicked: {info}]");
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

/// Set in the child that runs a capped check (see [`check`]).
const CAPPED: &str = "ARENA_MODEL_CHECK_CAPPED";

/// Runs the check in a child process of this program whose data memory is
/// capped at `--memory-mb`, as a seat's is: a graph whose loading needs more
/// (a huge constant folded at load) is refused with that reason here, as
/// it would forfeit its matches for memory, instead of taking the
/// participant's machine's memory.
fn check(args: ModelCheckArgs) -> anyhow::Result<ExitCode> {
    if args.memory_mb == 0 || std::env::var_os(CAPPED).is_some() {
        // tract panics when an allocation past the cap fails; the check
        // turns that into its refusal, so one line says why.
        std::panic::set_hook(Box::new(|info| {
            crate::messages::say!("arena: the check panicked: {info}");
        }));
        return check_here(args);
    }
    let cap = args.memory_mb.saturating_mul(1 << 20);
    let mut child = std::process::Command::new(crate::launch::this_program()?);
    child.args(std::env::args_os().skip(1)).env(CAPPED, "1");
    // SAFETY: between fork and exec the closure calls only setrlimit, which
    // is async-signal-safe, on a struct of its own.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut child, move || {
            let limit = libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let status = child.status().context("starting the capped check")?;
    match status.code() {
        Some(0) => Ok(ExitCode::SUCCESS),
        Some(_) => Ok(ExitCode::FAILURE),
        // Killed (an allocation past the cap aborts): the memory verdict.
        None => {
            crate::messages::say!(
                "arena: {}: refused: loading it needs more than {} MiB of memory, a seat's cap \
                 (in a match it would forfeit for memory)",
                args.dir.display(),
                args.memory_mb
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

fn check_here(args: ModelCheckArgs) -> anyhow::Result<ExitCode> {
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
