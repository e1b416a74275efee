//! Classic generals.io 1v1: neutral castles with garrisons from the start, no
//! building, no deathtouch, a 500-turn cap; exact to the reference engine's
//! classic fixtures (`fixtures/generals-classic/README.md`).
//!
//! Layout: this is the competition engine ([`crate::generals`]) under
//! [`Ruleset::Classic`], not a copy of it. The board planes, move order and
//! resolution, combat, growth, fog and the frame text are the competition's
//! modules, unchanged; the ruleset switches builds, deathtouch and the
//! double-capture outcome (see [`crate::generals::ruleset`]). Here are only
//! what differs around them: [`GeneralsClassic`], the game type the registry
//! and replays name `generals-classic`; [`setup`], which checks a
//! [`mapgen::ClassicMap`] (neutral castles and all) and starts a game on it;
//! [`mapgen`], which draws such a map from a seed; and [`ENTRY`].

pub mod mapgen;
pub mod setup;
#[cfg(test)]
mod tests;

pub use setup::SetupError;

use serde::{Deserialize, Serialize};

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::generals::{self, Action, Generals, Ruleset, state::MAX_TURNS_LIMIT};
use crate::registry::{self, FrameFormat, GameEntry, Limits, OptionKind, OptionSpec, RuntimeKind};
use crate::session::Session;

/// The classic ruleset's numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The game is a draw when this time is reached undecided.
    pub max_turns: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { max_turns: 500 }
    }
}

impl Params {
    /// The shared engine's params for these. Classic has no deathtouch and
    /// no builds, so those two numbers are never read; the deathtouch turn is
    /// still set to the cap, which no step starts at, so that it could not
    /// fire even under the competition's switch.
    pub(crate) fn competition_form(&self) -> generals::Params {
        generals::Params {
            max_turns: self.max_turns,
            deathtouch_turn: self.max_turns,
            ..generals::Params::default()
        }
    }
}

/// The ruleset options.
const OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "max_turns",
    help: "turn limit (the reference's is 500)",
    kind: OptionKind::Int {
        default: 500,
        min: 1,
        max: MAX_TURNS_LIMIT as i64,
    },
}];

/// The parameters resolved rules describe.
pub fn params_of(rules: &registry::Rules) -> Params {
    let mut params = Params::default();
    if let Some(turns) = rules.int("max_turns") {
        params.max_turns = u32::try_from(turns).unwrap_or(MAX_TURNS_LIMIT);
    }
    params
}

/// The registry entry: two seats, the competition's limits and protocol.
pub static ENTRY: GameEntry = GameEntry {
    name: "generals-classic",
    summary: "Classic generals.io 1v1: neutral castles, no building, fog of war, text protocol",
    seats: &[2],
    teams: &[],
    options: OPTIONS,
    limits: Limits {
        first_move_ms: 10_000,
        move_ms: 150,
        fault_limit: 50,
        reply_cap: 4096,
    },
    frames: FrameFormat::Text,
    runtimes: &[RuntimeKind::Process],
    baselines: &[],
    new_match: |setup| {
        GeneralsClassic::from_seed(setup.seed, params_of(setup.rules))
            .map(Session::boxed)
            .map_err(|e| registry::SetupError::Invalid {
                game: "generals-classic",
                reason: e.to_string(),
            })
    },
    open_replay: crate::replay::open::<GeneralsClassic>,
};

/// A classic game in progress: a [`Generals`] that plays
/// [`Ruleset::Classic`], which only [`GeneralsClassic::from_map`] and the
/// deserialiser (which refuses any other ruleset) construct.
///
/// Its JSON is the shared state's, with `"ruleset": "classic"`. The board is
/// read through [`Deref`](std::ops::Deref); it changes only by stepping.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Generals")]
pub struct GeneralsClassic(Generals);

impl GeneralsClassic {
    /// The game on the board the classic generator draws from `seed`; fails
    /// only on invalid `params`.
    pub fn from_seed(seed: u64, params: Params) -> Result<GeneralsClassic, SetupError> {
        let map = mapgen::generate(seed, &mapgen::MapOptions::default());
        GeneralsClassic::from_map(map, params)
    }

    /// The classic parameters this game was made with.
    pub fn classic_params(&self) -> Params {
        Params {
            max_turns: self.0.params().max_turns,
        }
    }

    /// Applies one action per player; returns the outcome once the game is
    /// over. `pass == 2` is a move here (see [`Ruleset::Classic`]).
    pub fn step_pair(&mut self, actions: [Action; 2]) -> Option<&Outcome> {
        self.0.step_pair(actions)
    }

    /// The shared engine's game, for code written against [`Generals`].
    pub fn into_inner(self) -> Generals {
        self.0
    }
}

impl std::ops::Deref for GeneralsClassic {
    type Target = Generals;

    fn deref(&self) -> &Generals {
        &self.0
    }
}

/// A state whose ruleset is not classic, read as a classic game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the state plays the {found:?} ruleset, not classic")]
pub struct NotClassic {
    pub found: Ruleset,
}

impl TryFrom<Generals> for GeneralsClassic {
    type Error = NotClassic;

    fn try_from(game: Generals) -> Result<GeneralsClassic, NotClassic> {
        match game.ruleset() {
            Ruleset::Classic => Ok(GeneralsClassic(game)),
            found => Err(NotClassic { found }),
        }
    }
}

/// Serialised as the shared state, without a clone (`into` would take one).
impl Serialize for GeneralsClassic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Every method is the shared engine's: the parser (`pass == 2` parses as
/// it does for the competition and then moves), the PASS fallback, the
/// `<seat> <H> <W>` handshake, the frame writer and the forfeit rule.
impl Game for GeneralsClassic {
    type Action = Action;

    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn seats(&self) -> usize {
        self.0.seats()
    }

    fn turn(&self) -> u32 {
        self.0.turn()
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        self.0.write_handshake(seat, out);
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        self.0.write_frame(seat, out);
    }

    fn parse_action(&self, seat: Seat, line: &[u8]) -> Result<Action, Malformed> {
        self.0.parse_action(seat, line)
    }

    fn fallback_action(&self, seat: Seat) -> Action {
        self.0.fallback_action(seat)
    }

    fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        self.0.step(actions)
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        self.0.forfeit(seats)
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.0.outcome()
    }
}
