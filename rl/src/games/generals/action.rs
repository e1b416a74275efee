//! The caller's actions: one seat's read from the arrays, and checked.

use arena_engine::generals::Action;
use arena_engine::generals::observe::actions::ActionSpace;

use super::ACTION_FIELDS;
use crate::vec_env::Actions;

impl Actions<'_> {
    /// Seat `seat`'s action in environment `env`, already checked by
    /// [`crate::VecEnv::step`]; anything unreadable passes.
    pub(super) fn get(&self, env: usize, seat: usize, space: &ActionSpace) -> Action {
        match *self {
            Actions::Fields { values, seats } => {
                let at = (env * seats + seat) * ACTION_FIELDS;
                values
                    .get(at..at + ACTION_FIELDS)
                    .and_then(|f| <[i64; 5]>::try_from(f).ok())
                    .and_then(|f| Action::try_from(f).ok())
                    .unwrap_or(Action::PASS)
            }
            Actions::Flat { values, seats } => values
                .get(env * seats + seat)
                .and_then(|&v| usize::try_from(v).ok())
                .and_then(|v| space.decode(v))
                .unwrap_or(Action::PASS),
        }
    }
}

/// Checks one seat's action in the form the caller sent; `Err` names what
/// is wrong.
pub(super) fn check_action(
    actions: &Actions<'_>,
    env: usize,
    seat: usize,
    head_len: usize,
) -> Result<(), String> {
    match *actions {
        Actions::Fields { values, seats } => {
            let at = (env * seats + seat) * ACTION_FIELDS;
            let fields = values
                .get(at..at + ACTION_FIELDS)
                .and_then(|f| <[i64; 5]>::try_from(f).ok())
                .ok_or("missing")?;
            Action::try_from(fields).map(|_| ()).map_err(|e| e.reason)
        }
        Actions::Flat { values, seats } => {
            let v = *values.get(env * seats + seat).ok_or("missing")?;
            if (0..head_len as i64).contains(&v) {
                Ok(())
            } else {
                Err(format!("flat index {v} is outside 0..{head_len}"))
            }
        }
    }
}
