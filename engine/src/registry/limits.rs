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
}

/// An override that cannot be played under.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("limits.{key} must be at least 1")]
pub struct LimitError {
    pub key: &'static str,
}

impl Limits {
    /// These limits with `overrides` applied, each checked.
    pub fn with(self, overrides: &LimitOverrides) -> Result<Limits, LimitError> {
        let limits = Limits {
            first_move_ms: overrides.first_move_ms.unwrap_or(self.first_move_ms),
            move_ms: overrides.move_ms.unwrap_or(self.move_ms),
            fault_limit: overrides.fault_limit.unwrap_or(self.fault_limit),
            reply_cap: overrides.reply_cap.unwrap_or(self.reply_cap),
        };
        for (key, value) in [
            ("first_move_ms", limits.first_move_ms),
            ("move_ms", limits.move_ms),
            ("fault_limit", u64::from(limits.fault_limit)),
            ("reply_cap", u64::from(limits.reply_cap)),
        ] {
            if value == 0 {
                return Err(LimitError { key });
            }
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Limits = Limits {
        first_move_ms: 10_000,
        move_ms: 150,
        fault_limit: 50,
        reply_cap: 4096,
    };

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
}
