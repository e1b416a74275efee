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
//!
//! The free-for-all (2..=8 seats) and 2v2 formats are played by a separate
//! engine, [`GeneralsClassicMulti`], under the same name and entry (option
//! `mode`): [`multi`] holds its state, validation and rules version,
//! [`multi::rules`] the move order, step, captures and placements,
//! [`multi::frame`] the N-seat handshake and frame, [`multi::game`] the
//! [`Game`] impl and a random legal player. The rules are in
//! `docs/games/generals-classic.md`, "Free-for-all and 2v2".

pub mod mapgen;
pub mod multi;
pub mod setup;
pub mod start;
#[cfg(test)]
mod tests;

pub use multi::game::random_legal_action;
pub use multi::rules::MovePriority;
pub use multi::{
    GeneralsClassicMulti, Mode, MultiState, MultiStateError, ROTATION_RULES_VERSION, RULES_VERSION,
    SeatState,
};
pub use setup::SetupError;
pub use start::StartError;

use serde::{Deserialize, Serialize};

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::generals::{self, Action, Generals, Ruleset, state::MAX_TURNS_LIMIT};
use crate::registry::{
    self, FrameFormat, GameEntry, OptionKind, OptionSpec, RuntimeKind, TeamLayout,
};
use crate::replay::{AnyReplay, ReplayError};
use crate::session::{Match, Session};

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
const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "max_turns",
        help: "turn limit (the reference's is 500)",
        kind: OptionKind::Int {
            default: 500,
            min: 1,
            max: MAX_TURNS_LIMIT as i64,
        },
    },
    OptionSpec {
        name: "mode",
        help: "format: 1v1 (2 seats), 2v2 (4 seats), ffa (2..=8); auto is 1v1 for 2 seats, else ffa",
        kind: OptionKind::Choice {
            default: "auto",
            choices: &["auto", "1v1", "2v2", "ffa"],
        },
    },
    OptionSpec {
        name: "players",
        help: "expected seat count, as a check (0 accepts any)",
        kind: OptionKind::Int {
            default: 0,
            min: 0,
            max: multi::MAX_SEATS as i64,
        },
    },
];

/// The parameters resolved rules describe.
pub fn params_of(rules: &registry::Rules) -> Params {
    let mut params = Params::default();
    if let Some(turns) = rules.int("max_turns") {
        params.max_turns = u32::try_from(turns).unwrap_or(MAX_TURNS_LIMIT);
    }
    params
}

/// Which engine plays a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The exact 1v1 engine ([`GeneralsClassic`]).
    Duel,
    /// The multi-player engine ([`GeneralsClassicMulti`]).
    Multi(Mode),
}

/// The format resolved rules ask for with `seats` seats: `auto` (and an
/// absent `mode`) is 1v1 for two seats and ffa for more; an explicit mode
/// must fit the seat count, and so must a non-zero `players`.
pub fn format_of(rules: &registry::Rules, seats: usize) -> Result<Format, String> {
    // The option is named `players` (a rules key, so it stays); its value
    // is the seat count the match expects.
    if let Some(expected) = rules.int("players")
        && expected != 0
        && expected != seats as i64
    {
        return Err(format!(
            "players is {expected}, but the match has {seats} seats"
        ));
    }
    let word = rules.word("mode").unwrap_or("auto");
    let (format, accepted) = match word {
        "auto" if seats == 2 => (Format::Duel, "2"),
        "auto" | "ffa" => (Format::Multi(Mode::Ffa), "2..=8"),
        "1v1" => (Format::Duel, "2"),
        "2v2" => (Format::Multi(Mode::Teams), "4"),
        other => return Err(format!("unknown mode {other:?}")),
    };
    let fits = match format {
        Format::Duel => seats == 2,
        Format::Multi(mode) => mode.accepts(seats),
    };
    if fits {
        Ok(format)
    } else {
        Err(format!(
            "mode {word} is played by {accepted} seats, not {seats}"
        ))
    }
}

/// A new match of any format (the entry's `new_match`).
fn new_match(setup: &registry::MatchSetup<'_>) -> Result<Box<dyn Match>, registry::SetupError> {
    let invalid = |reason: String| registry::SetupError::Invalid {
        game: "generals-classic",
        reason,
    };
    let params = params_of(setup.rules);
    match format_of(setup.rules, setup.seats).map_err(invalid)? {
        Format::Duel => GeneralsClassic::from_seed(setup.seed, params)
            .map(Session::boxed)
            .map_err(|e| invalid(e.to_string())),
        Format::Multi(mode) => {
            let options = mapgen::MapOptions {
                players: setup.seats,
                ..mapgen::MapOptions::default()
            };
            let map = mapgen::generate(setup.seed, &options);
            GeneralsClassicMulti::from_map(map, mode, params.max_turns)
                .map(Session::boxed)
                .map_err(|e| invalid(e.to_string()))
        }
    }
}

/// Opens a replay of any format: a multi-player state carries a `mode`
/// field, a 1v1 state (the shared engine's JSON) has none, so the 1v1
/// replay format is unchanged. A multi-player replay recorded under other
/// rules than this engine plays (an absent `rules_version` is the old
/// rotating order) is refused before it is read, by version.
fn open_replay(bytes: &[u8]) -> Result<Box<dyn AnyReplay>, ReplayError> {
    #[derive(Deserialize)]
    struct Header {
        initial: Initial,
    }
    #[derive(Deserialize)]
    struct Initial {
        mode: Option<serde::de::IgnoredAny>,
        rules_version: Option<u32>,
    }
    let header: Header = serde_json::from_slice(bytes).map_err(ReplayError::Parse)?;
    if header.initial.mode.is_none() {
        return crate::replay::open::<GeneralsClassic>(bytes);
    }
    let found = header
        .initial
        .rules_version
        .unwrap_or(multi::ROTATION_RULES_VERSION);
    if found != multi::RULES_VERSION {
        let reason = MultiStateError::RulesVersion { found }.to_string();
        return Err(ReplayError::Game(registry::SetupError::Invalid {
            game: ENTRY.name,
            reason: format!("this replay cannot be re-simulated: {reason}"),
        }));
    }
    crate::replay::open::<GeneralsClassicMulti>(bytes)
}

/// The registry entry: 1v1 on two seats (the competition's engine), 2v2 on
/// four, free-for-all on 2..=8; the competition's limits and protocol.
pub static ENTRY: GameEntry = GameEntry {
    name: "generals-classic",
    summary: "Classic generals.io: neutral castles, no building, fog of war, text protocol; 1v1, 2v2 or free-for-all",
    seats: &[2, 3, 4, 5, 6, 7, 8],
    teams: &[TeamLayout {
        seats: 4,
        teams: &[&[0, 2], &[1, 3]],
    }],
    options: OPTIONS,
    // The competition's deadlines and fault budget: the same protocol.
    limits: generals::LIMITS,
    frames: FrameFormat::Text,
    runtimes: &[RuntimeKind::Process, RuntimeKind::Model],
    baselines: &[],
    model: Some(&generals::observe::adapters::CLASSIC),
    new_match,
    open_replay,
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

    /// The rows changed since the last call (see
    /// [`Generals::take_changed_rows`]).
    pub fn take_changed_rows(&mut self) -> u64 {
        self.0.take_changed_rows()
    }

    /// What changed since the changes were last cleared (see
    /// [`Generals::changes`]).
    pub fn changes(&self) -> crate::generals::observe::compact::Changes<'_> {
        self.0.changes()
    }

    /// Starts the count of changes again.
    pub fn clear_changes(&mut self) {
        self.0.clear_changes();
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
