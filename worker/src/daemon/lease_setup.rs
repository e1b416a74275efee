//! A lease turned into the game, its rules and the runner's limits.

use arena_engine::registry::{self, FuelLimits, Limits};
use arena_engine::{Match, Rules};
use arena_proto::v1::LeasedMatch;

use super::JobError;
use crate::runner::RunnerConfig;

/// The game, its rules and the runner limits a lease asks for; `Err` when
/// this worker cannot play it (an unknown game, rules it does not accept).
pub(super) fn setup_match(
    leased: &LeasedMatch,
) -> Result<(Box<dyn Match>, RunnerConfig), JobError> {
    let entry = registry::find(&leased.game).map_err(|e| JobError::UnknownGame(e.to_string()))?;
    let rules: Rules = if leased.rules_json.is_empty() {
        Rules::default()
    } else {
        serde_json::from_str(&leased.rules_json).map_err(|e| JobError::Rules(e.to_string()))?
    };
    let game = entry
        .create(leased.seed, leased.seats.len(), &rules)
        .map_err(|e| JobError::Setup(e.to_string()))?;
    for seat in &leased.seats {
        if !seat.baseline.is_empty() && !entry.has_baseline(&seat.baseline) {
            return Err(JobError::NoBaseline {
                game: entry.name.to_owned(),
                baseline: seat.baseline.clone(),
            });
        }
    }
    // Absent (zero) fields are the game's defaults: an older coordinator sends none.
    let or = |v: u64, d: u64| if v == 0 { d } else { v };
    let defaults = entry.limits;
    let limits = Limits {
        first_move_ms: or(leased.first_move_ms, defaults.first_move_ms),
        move_ms: or(leased.move_ms, defaults.move_ms),
        fault_limit: u32::try_from(or(
            u64::from(leased.fault_limit),
            u64::from(defaults.fault_limit),
        ))
        .unwrap_or(defaults.fault_limit),
        reply_cap: u32::try_from(or(
            u64::from(leased.reply_cap),
            u64::from(defaults.reply_cap),
        ))
        .unwrap_or(defaults.reply_cap),
        // The lease's fuel keys, field by field (zero: the default); a
        // game without WebAssembly seats has no fuel, whatever the lease says.
        fuel: defaults.fuel.map(|d| FuelLimits {
            per_turn: or(leased.fuel_per_turn, d.per_turn),
            bank: or(leased.fuel_bank, d.bank),
            init: or(leased.init_fuel, d.init),
            wall_ms: or(leased.fuel_wall_ms, d.wall_ms),
        }),
        model: defaults.model.map(|d| arena_engine::registry::ModelLimits {
            max_bytes: or(leased.model_bytes, d.max_bytes),
            max_macs: or(leased.model_macs, d.max_macs),
        }),
    };
    Ok((game, RunnerConfig::for_limits(&limits)))
}
