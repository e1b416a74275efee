//! Runner limits: what a game asks for by default, and what a tournament
//! file or a command line may override.

use serde::{Deserialize, Serialize};

/// The limits one match is played under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Limits {
    /// Deadline for the reply to a seat's first frame, in milliseconds (bots may warm up).
    pub first_move_ms: u64,
    /// Deadline for every later reply, in milliseconds.
    pub move_ms: u64,
    /// Faults (late, missing, malformed or invalid replies) that forfeit the seat.
    pub fault_limit: u32,
    /// The longest reply line accepted, in bytes, without its newline.
    pub reply_cap: u32,
    /// The instruction budget of WebAssembly seats; `None` for a game that
    /// runs no WebAssembly bots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<FuelLimits>,
    /// What a model graph may be, for a game with model-graph seats; `None`
    /// for every other game. Their per-turn deadline is `move_ms` and their
    /// strike limit `fault_limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelLimits>,
}

/// The size and cost a model graph may have, checked when it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelLimits {
    /// The largest `model.onnx`, in bytes.
    pub max_bytes: u64,
    /// The most multiply-accumulates one turn's evaluation may cost, as the
    /// model host estimates them for the largest board the game allows.
    pub max_macs: u64,
}

/// What a WebAssembly seat may execute, in fuel (WebAssembly instructions,
/// as the pinned wasmtime counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FuelLimits {
    /// Added to the bank before each turn.
    pub per_turn: u64,
    /// The most the bank holds after the allowance is added.
    pub bank: u64,
    /// Added once, to the first turn, for instantiation and start-up (not
    /// banked); the first turn's wall limit is `first_move_ms`.
    pub init: u64,
    /// The wall-clock backstop of every later turn, in milliseconds: a
    /// breach forfeits the seat.
    pub wall_ms: u64,
}

impl FuelLimits {
    /// What a turn may spend: the bank plus the allowance, capped, plus the
    /// start-up allowance on the first turn.
    pub fn available(&self, bank: u64, first: bool) -> u64 {
        let regular = bank.saturating_add(self.per_turn).min(self.bank);
        if first {
            regular.saturating_add(self.init)
        } else {
            regular
        }
    }

    /// The bank after a turn that had `available` and spent `spent`:
    /// the rest, but never more than the regular part (start-up fuel is
    /// not banked).
    pub fn bank_after(&self, bank: u64, first: bool, spent: u64) -> u64 {
        let regular = bank.saturating_add(self.per_turn).min(self.bank);
        self.available(bank, first)
            .saturating_sub(spent)
            .min(regular)
    }

    /// The budget after a turn that ran dry (the bank is empty).
    pub fn refill(&self) -> u64 {
        self.available(0, false)
    }
}

/// Overrides of a game's [`Limits`]; absent fields keep the game's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_move_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_cap: Option<u32>,
    /// Fuel keys, for games with WebAssembly seats ([`FuelLimits`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_per_turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_bank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_fuel: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
    /// Model keys, for games with model-graph seats ([`ModelLimits`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_macs: Option<u64>,
}

/// An override that cannot be played under.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("limits.{key} {problem}")]
pub struct LimitError {
    pub key: &'static str,
    pub problem: &'static str,
}

const AT_LEAST_ONE: &str = "must be at least 1";

/// The longest deadline a tournament may set, in milliseconds: an hour. A
/// larger one would hold a worker's core for good on one silent bot.
pub const MAX_DEADLINE_MS: u64 = 3_600_000;
const AT_MOST_AN_HOUR: &str = "must be at most 3600000 (one hour)";

/// The longest reply line a tournament may allow: 16 MiB. The referee
/// buffers a whole line per seat.
pub const MAX_REPLY_CAP: u32 = 16 << 20;

impl Limits {
    /// These limits with `overrides` applied, each checked: the model keys,
    /// then the fuel keys, then the runner's own limits.
    pub fn with(self, overrides: &LimitOverrides) -> Result<Limits, LimitError> {
        let limits = self.overridden(overrides);
        check_model(limits.model, overrides)?;
        check_fuel(limits.fuel, overrides)?;
        limits.check_runner()?;
        Ok(limits)
    }

    /// These limits with `overrides` applied, unchecked. Model and fuel
    /// keys only apply to a game that has such limits.
    fn overridden(self, overrides: &LimitOverrides) -> Limits {
        Limits {
            first_move_ms: overrides.first_move_ms.unwrap_or(self.first_move_ms),
            move_ms: overrides.move_ms.unwrap_or(self.move_ms),
            fault_limit: overrides.fault_limit.unwrap_or(self.fault_limit),
            reply_cap: overrides.reply_cap.unwrap_or(self.reply_cap),
            fuel: self.fuel.map(|fuel| FuelLimits {
                per_turn: overrides.fuel_per_turn.unwrap_or(fuel.per_turn),
                bank: overrides.fuel_bank.unwrap_or(fuel.bank),
                init: overrides.init_fuel.unwrap_or(fuel.init),
                wall_ms: overrides.wall_ms.unwrap_or(fuel.wall_ms),
            }),
            model: self.model.map(|model| ModelLimits {
                max_bytes: overrides.model_bytes.unwrap_or(model.max_bytes),
                max_macs: overrides.model_macs.unwrap_or(model.max_macs),
            }),
        }
    }

    /// The limits every game has: each at least 1, the deadlines (the fuel
    /// wall limit too) at most an hour, the reply cap at most 16 MiB.
    fn check_runner(&self) -> Result<(), LimitError> {
        for (key, value) in [
            ("first_move_ms", self.first_move_ms),
            ("move_ms", self.move_ms),
            ("fault_limit", u64::from(self.fault_limit)),
            ("reply_cap", u64::from(self.reply_cap)),
        ] {
            if value == 0 {
                return Err(LimitError {
                    key,
                    problem: AT_LEAST_ONE,
                });
            }
        }
        let wall_ms = self.fuel.map(|f| ("wall_ms", f.wall_ms));
        for (key, value) in [
            ("first_move_ms", self.first_move_ms),
            ("move_ms", self.move_ms),
        ]
        .into_iter()
        .chain(wall_ms)
        {
            if value > MAX_DEADLINE_MS {
                return Err(LimitError {
                    key,
                    problem: AT_MOST_AN_HOUR,
                });
            }
        }
        if self.reply_cap > MAX_REPLY_CAP {
            return Err(LimitError {
                key: "reply_cap",
                problem: "must be at most 16777216 (16 MiB)",
            });
        }
        Ok(())
    }
}

/// The model keys: set only for a game with model-graph seats, and then
/// (overridden or not) each at least 1.
fn check_model(model: Option<ModelLimits>, overrides: &LimitOverrides) -> Result<(), LimitError> {
    let Some(model) = model else {
        for (key, set) in [
            ("model_bytes", overrides.model_bytes.is_some()),
            ("model_macs", overrides.model_macs.is_some()),
        ] {
            if set {
                return Err(LimitError {
                    key,
                    problem: "is for games with model-graph seats; this game has none",
                });
            }
        }
        return Ok(());
    };
    for (key, value) in [
        ("model_bytes", model.max_bytes),
        ("model_macs", model.max_macs),
    ] {
        if value == 0 {
            return Err(LimitError {
                key,
                problem: AT_LEAST_ONE,
            });
        }
    }
    Ok(())
}

/// The fuel keys: set only for a game with WebAssembly seats, and then
/// each at least 1, with a bank that holds at least one turn's allowance.
fn check_fuel(fuel: Option<FuelLimits>, overrides: &LimitOverrides) -> Result<(), LimitError> {
    let Some(fuel) = fuel else {
        for (key, set) in [
            ("fuel_per_turn", overrides.fuel_per_turn.is_some()),
            ("fuel_bank", overrides.fuel_bank.is_some()),
            ("init_fuel", overrides.init_fuel.is_some()),
            ("wall_ms", overrides.wall_ms.is_some()),
        ] {
            if set {
                return Err(LimitError {
                    key,
                    problem: "is for games with WebAssembly seats; this game has none",
                });
            }
        }
        return Ok(());
    };
    for (key, value) in [
        ("fuel_per_turn", fuel.per_turn),
        ("fuel_bank", fuel.bank),
        ("wall_ms", fuel.wall_ms),
    ] {
        if value == 0 {
            return Err(LimitError {
                key,
                problem: AT_LEAST_ONE,
            });
        }
    }
    if fuel.bank < fuel.per_turn {
        return Err(LimitError {
            key: "fuel_bank",
            problem: "must be at least limits.fuel_per_turn",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Limits = Limits {
        first_move_ms: 10_000,
        move_ms: 150,
        fault_limit: 50,
        reply_cap: 4096,
        fuel: None,
        model: None,
    };

    const METERED: Limits = Limits {
        fuel: Some(FuelLimits {
            per_turn: 5_000_000,
            bank: 20_000_000,
            init: 50_000_000,
            wall_ms: 2_000,
        }),
        ..BASE
    };

    #[test]
    fn fuel_keys_override_a_metered_game_and_are_refused_elsewhere() {
        let over = LimitOverrides {
            fuel_per_turn: Some(1_000),
            wall_ms: Some(500),
            ..LimitOverrides::default()
        };
        let fuel = METERED.with(&over).unwrap().fuel.unwrap();
        assert_eq!(
            (fuel.per_turn, fuel.bank, fuel.wall_ms),
            (1_000, 20_000_000, 500)
        );
        let refused = BASE.with(&over).unwrap_err();
        assert_eq!(refused.key, "fuel_per_turn");
        let small_bank = LimitOverrides {
            fuel_bank: Some(10),
            ..LimitOverrides::default()
        };
        assert_eq!(METERED.with(&small_bank).unwrap_err().key, "fuel_bank");
    }

    #[test]
    fn the_bank_fills_to_its_cap_and_start_up_fuel_is_not_banked() {
        let fuel = METERED.fuel.unwrap();
        assert_eq!(fuel.available(0, true), 55_000_000);
        assert_eq!(fuel.bank_after(0, true, 1_000), 5_000_000);
        assert_eq!(fuel.bank_after(0, true, 53_000_000), 2_000_000);
        assert_eq!(fuel.available(18_000_000, false), 20_000_000);
        assert_eq!(fuel.bank_after(18_000_000, false, 100), 19_999_900);
        assert_eq!(fuel.bank_after(3, false, 9_000_000), 0);
        assert_eq!(fuel.refill(), 5_000_000);
    }

    #[test]
    fn model_keys_override_a_model_game_and_are_refused_elsewhere() {
        let with_models = Limits {
            model: Some(ModelLimits {
                max_bytes: 1 << 20,
                max_macs: 1_000_000,
            }),
            ..BASE
        };
        let over = LimitOverrides {
            model_macs: Some(5),
            ..LimitOverrides::default()
        };
        let model = with_models.with(&over).unwrap().model.unwrap();
        assert_eq!((model.max_bytes, model.max_macs), (1 << 20, 5));
        assert_eq!(BASE.with(&over).unwrap_err().key, "model_macs");
        let zero = LimitOverrides {
            model_bytes: Some(0),
            ..LimitOverrides::default()
        };
        assert_eq!(with_models.with(&zero).unwrap_err().key, "model_bytes");
    }

    #[test]
    fn overrides_replace_only_what_they_name() {
        let over = LimitOverrides {
            move_ms: Some(20),
            ..LimitOverrides::default()
        };
        let got = BASE.with(&over).unwrap();
        assert_eq!(got.move_ms, 20);
        assert_eq!(got.first_move_ms, 10_000);
        assert_eq!(BASE.with(&LimitOverrides::default()).unwrap(), BASE);
    }

    #[test]
    fn zero_is_refused_by_name() {
        let over = LimitOverrides {
            fault_limit: Some(0),
            ..LimitOverrides::default()
        };
        assert_eq!(BASE.with(&over).unwrap_err().key, "fault_limit");
    }

    #[test]
    fn deadlines_and_reply_caps_beyond_reason_are_refused_by_name() {
        let refused = |over: LimitOverrides, base: Limits| base.with(&over).unwrap_err();
        for (over, key) in [
            (
                LimitOverrides {
                    move_ms: Some(u64::MAX),
                    ..LimitOverrides::default()
                },
                "move_ms",
            ),
            (
                LimitOverrides {
                    first_move_ms: Some(MAX_DEADLINE_MS + 1),
                    ..LimitOverrides::default()
                },
                "first_move_ms",
            ),
            (
                LimitOverrides {
                    reply_cap: Some(u32::MAX),
                    ..LimitOverrides::default()
                },
                "reply_cap",
            ),
        ] {
            let err = refused(over, BASE);
            assert_eq!(err.key, key);
            assert!(err.problem.contains("at most"), "{}", err.problem);
        }
        let wall = LimitOverrides {
            wall_ms: Some(MAX_DEADLINE_MS + 1),
            ..LimitOverrides::default()
        };
        assert_eq!(refused(wall, METERED).key, "wall_ms");
        // The bounds themselves are accepted.
        let edge = LimitOverrides {
            move_ms: Some(MAX_DEADLINE_MS),
            first_move_ms: Some(MAX_DEADLINE_MS),
            reply_cap: Some(MAX_REPLY_CAP),
            ..LimitOverrides::default()
        };
        assert_eq!(BASE.with(&edge).unwrap().move_ms, MAX_DEADLINE_MS);
    }
}
