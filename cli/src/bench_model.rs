//! `arena bench model`: what one turn of a model-graph seat costs where it
//! runs, in the seat's sandbox on one core.
//!
//! The model plays whole matches against itself (every seat is a copy),
//! through the referee and the model host, with the deadline lifted so
//! that a slow model is measured rather than struck. Each turn's time is
//! the host's own: reading the frame, the adapters, the evaluation and the
//! choice of the reply. The figures are p50, p99 and max over every turn of
//! every match, beside the game's deadline, and the model's estimated cost
//! beside the game's limit.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use arena_engine::Rules;
use arena_engine::registry::{self, LimitOverrides};
use arena_worker::{BotSpec, RunnerConfig, SeatSpec, play_match};

use crate::cli::SandboxArgs;
use crate::launch;

/// What `arena bench model` measures.
pub struct Plan<'a> {
    pub game: &'a str,
    pub dir: &'a Path,
    pub matches: u32,
    pub rules: &'a str,
}

pub fn run(plan: Plan<'_>, json: bool, sandbox: &SandboxArgs) -> anyhow::Result<ExitCode> {
    let entry = registry::find(plan.game)?;
    let Some(interface) = entry.model else {
        bail!("{} has no model-graph seats", entry.name);
    };
    let Some(game_limits) = entry.limits.model else {
        bail!("{} has no model limits", entry.name);
    };
    // Measured whatever its size and cost: the figures say how it compares.
    let lifted = arena_engine::registry::ModelLimits {
        max_bytes: 1 << 30,
        max_macs: u64::MAX,
    };
    let report = arena_model::check(plan.dir, interface, &lifted)
        .with_context(|| format!("{} cannot be evaluated", plan.dir.display()))?;
    let limits = entry.limits.with(&LimitOverrides {
        first_move_ms: Some(600_000),
        move_ms: Some(600_000),
        fault_limit: Some(1_000_000),
        model_bytes: Some(lifted.max_bytes),
        model_macs: Some(lifted.max_macs),
        ..LimitOverrides::default()
    })?;
    let config = RunnerConfig::for_limits(&limits).with_models(Some(launch::model_support()?));
    let seat_count = entry.seats.first().copied().unwrap_or(2);
    let seats: Vec<SeatSpec> = (0..seat_count)
        .map(|_| BotSpec::from_dir(plan.dir).into())
        .collect();
    let rules = Rules::parse_pairs(plan.rules)?;
    let launcher = launch::launcher(sandbox, seat_count)?;
    let mut turns_ns: Vec<u64> = Vec::new();
    let mut played = Ok(());
    for m in 0..plan.matches {
        let seed = u64::from(m) + 1;
        let game = entry.create(seed, seat_count, &rules)?;
        match play_match(game, seed, &seats, launcher.as_launcher(), &config) {
            Ok(output) => {
                for (seat, p) in output.report.players.iter().enumerate() {
                    if p.forfeit.is_some() || p.faults.strike > 0 {
                        played = Err(anyhow::anyhow!(
                            "seat {seat} did not play every turn ({p:?}); its log:\n{}",
                            String::from_utf8_lossy(&output.logs[seat])
                        ));
                    }
                }
                turns_ns.extend(output.evaluations_ns.into_iter().flatten());
            }
            Err(e) => played = Err(e.into()),
        }
        if played.is_err() {
            break;
        }
    }
    launcher.finish();
    played?;
    if turns_ns.is_empty() {
        bail!("no turn was evaluated");
    }
    turns_ns.sort_unstable();
    let ms = |q: f64| turns_ns[((turns_ns.len() - 1) as f64 * q).round() as usize] as f64 / 1e6;
    let (p50, p99, max) = (ms(0.5), ms(0.99), ms(1.0));
    let deadline = entry.limits.move_ms;
    if json {
        let figures = serde_json::json!({
            "game": entry.name,
            "model": plan.dir.display().to_string(),
            "matches": plan.matches,
            "turns": turns_ns.len(),
            "turn_ms_p50": p50,
            "turn_ms_p99": p99,
            "turn_ms_max": max,
            "deadline_ms": deadline,
            "macs": report.macs,
            "max_macs": game_limits.max_macs,
            "bytes": report.bytes,
            "max_bytes": game_limits.max_bytes,
        });
        println!("{figures}");
    } else {
        println!(
            "{}: {} turns of {} in the sandbox, one core each (frame, adapters, evaluation, reply):\n  \
             p50 {p50:.2} ms   p99 {p99:.2} ms   max {max:.2} ms   (deadline {deadline} ms: p99 {})\n  \
             about {} multiply-accumulates a turn (limit {}), {} bytes (limit {})",
            plan.dir.display(),
            turns_ns.len(),
            entry.name,
            if p99 <= deadline as f64 {
                "within"
            } else {
                "OVER"
            },
            report.macs,
            game_limits.max_macs,
            report.bytes,
            game_limits.max_bytes
        );
    }
    Ok(ExitCode::SUCCESS)
}
