//! Which generals ruleset a board plays: the few switches that separate the
//! Generals Competition from classic generals.io 1v1.
//!
//! Everything else (combat, the half / all-but-one amounts, move validity,
//! move priority, growth timing, fog and the frame text) is one set of rules
//! for both, in [`super::rules`] and [`super::frame`]. The switches are read
//! once per step, outside the per-cell loops, and never change during a game,
//! so each one is a perfectly predicted branch.

use serde::{Deserialize, Serialize};

/// The ruleset a [`super::Generals`] plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ruleset {
    /// The Generals Competition: player-built castles (`pass == 2` builds),
    /// deathtouch from [`super::Params::deathtouch_turn`], a double capture
    /// is a draw.
    #[default]
    Competition,
    /// Classic generals.io: neutral castles with garrisons from the start, no
    /// building (`pass == 2` is an ordinary move, yet still enters the move
    /// order's bitwise term with its value 2), no deathtouch, and a double
    /// capture is a win for the second mover.
    Classic,
}

impl Ruleset {
    /// The registry name of a game played under this ruleset.
    pub fn game_name(self) -> &'static str {
        match self {
            Ruleset::Competition => "generals",
            Ruleset::Classic => "generals-classic",
        }
    }

    /// Whether `pass == 2` builds a castle (else it is a move).
    #[inline]
    pub fn builds(self) -> bool {
        self == Ruleset::Competition
    }

    /// Whether a move onto the enemy general wins from the deathtouch turn.
    #[inline]
    pub fn has_deathtouch(self) -> bool {
        self == Ruleset::Competition
    }

    /// Whether a double capture is a win for the second mover (else a draw).
    #[inline]
    pub fn double_capture_wins(self) -> bool {
        self == Ruleset::Classic
    }

    /// Serde's `skip_serializing_if`: a competition state's JSON stays
    /// byte-identical to what it was before rulesets existed, so the digests
    /// recorded in older replays still match their re-simulation.
    pub(crate) fn is_competition(&self) -> bool {
        *self == Ruleset::Competition
    }
}
