//! The one list of games.
//!
//! Layout: [`rules`] holds ruleset options (their declaration, the values a
//! user gives, validation against the declaration); [`limits`] the runner
//! limits a game asks for by default; this module the [`GameEntry`] every
//! game registers and [`games`], the list itself. The CLI, the tournament
//! file, the worker and replays find a game here by name and nowhere else.
//!
//! Adding a game is one engine module with a `pub static ENTRY: GameEntry`
//! and one line in [`games`].

pub mod limits;
pub mod model;
pub mod rules;

pub use limits::{FuelLimits, LimitOverrides, Limits, ModelLimits};
pub use model::ModelInterface;
pub use rules::{OptionKind, OptionSpec, RuleValue, Rules, RulesError};

use crate::replay::{AnyReplay, ReplayError};
use crate::session::Match;

/// How a seat may be played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    /// A submitted program in the sandbox, over pipes.
    Process,
    /// An in-engine baseline (`baseline:NAME`).
    Baseline,
    /// A WebAssembly module (`bot.wasm`) in the wasm host, metered by fuel;
    /// the game's limits then carry [`limits::FuelLimits`].
    Wasm,
    /// A model graph (`model.onnx` with its `bot.toml`) evaluated by the
    /// platform's model host; the game's [`GameEntry::model`] says how frames
    /// become tensors and scores become a reply, and its limits carry
    /// [`limits::ModelLimits`].
    Model,
}

/// What frames and replies look like on the pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameFormat {
    /// Plain text lines.
    Text,
    /// One JSON object per line.
    JsonLines,
}

/// A way of splitting `seats` seats into teams (`teams[t]` lists team `t`'s seats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TeamLayout {
    pub seats: usize,
    pub teams: &'static [&'static [usize]],
}

/// What a new match is made from.
#[derive(Clone, Copy, Debug)]
pub struct MatchSetup<'a> {
    pub seed: u64,
    pub seats: usize,
    /// Complete and validated (see [`GameEntry::rules`]).
    pub rules: &'a Rules,
}

/// A game could not be set up from the options given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("unknown game {name:?} (registered: {known})")]
    UnknownGame { name: String, known: String },
    #[error("{game} is played by {accepted} seats, not {seats}")]
    Seats {
        game: &'static str,
        seats: usize,
        accepted: String,
    },
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error("{game}: {reason}")]
    Invalid { game: &'static str, reason: String },
}

/// One registered game.
pub struct GameEntry {
    /// The name files and command lines use (`generals`).
    pub name: &'static str,
    /// One line for `arena games`.
    pub summary: &'static str,
    /// Seat counts the game accepts.
    pub seats: &'static [usize],
    /// Team layouts, for games played in teams; empty when every seat plays alone.
    pub teams: &'static [TeamLayout],
    /// Ruleset options, with their defaults and ranges.
    pub options: &'static [OptionSpec],
    /// The runner limits a match gets unless a tournament or a flag says otherwise.
    pub limits: Limits,
    pub frames: FrameFormat,
    /// How seats may be played.
    pub runtimes: &'static [RuntimeKind],
    /// The in-engine baselines (`baseline:NAME`), when `runtimes` allows them.
    pub baselines: &'static [&'static str],
    /// How model-graph seats see frames and answer them, for a game whose
    /// `runtimes` include [`RuntimeKind::Model`].
    pub model: Option<&'static ModelInterface>,
    /// A fresh match; `setup` has been checked against `seats` and `options`.
    pub new_match: NewMatch,
    /// A replay file of this game, ready to verify or dump.
    pub open_replay: OpenReplay,
}

/// A registry entry's match constructor.
pub type NewMatch = fn(&MatchSetup<'_>) -> Result<Box<dyn Match>, SetupError>;

/// A registry entry's replay reader.
pub type OpenReplay = fn(&[u8]) -> Result<Box<dyn AnyReplay>, ReplayError>;

impl std::fmt::Debug for GameEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl GameEntry {
    /// Checks `given` against the declared options and fills in defaults.
    pub fn rules(&self, given: &Rules) -> Result<Rules, RulesError> {
        rules::resolve(self.options, given)
    }

    /// Checks a seat count.
    pub fn check_seats(&self, seats: usize) -> Result<(), SetupError> {
        if self.seats.contains(&seats) {
            Ok(())
        } else {
            Err(SetupError::Seats {
                game: self.name,
                seats,
                accepted: join(self.seats.iter()),
            })
        }
    }

    /// Whether `name` is one of this game's baselines.
    pub fn has_baseline(&self, name: &str) -> bool {
        self.runtimes.contains(&RuntimeKind::Baseline) && self.baselines.contains(&name)
    }

    /// Validates seats and rules, then makes the match.
    pub fn create(
        &self,
        seed: u64,
        seats: usize,
        given: &Rules,
    ) -> Result<Box<dyn Match>, SetupError> {
        self.check_seats(seats)?;
        let rules = self.rules(given)?;
        (self.new_match)(&MatchSetup {
            seed,
            seats,
            rules: &rules,
        })
    }
}

/// Every registered game, in the order `arena games` lists them.
pub fn games() -> &'static [&'static GameEntry] {
    static GAMES: [&GameEntry; 5] = [
        &crate::generals::ENTRY,
        &crate::generals_classic::ENTRY,
        &crate::generals_ffa::ENTRY,
        &crate::grid_royale::ENTRY,
        &crate::ants::ENTRY,
    ];
    &GAMES
}

/// The game registered as `name`.
pub fn find(name: &str) -> Result<&'static GameEntry, SetupError> {
    games()
        .iter()
        .copied()
        .find(|g| g.name == name)
        .ok_or_else(|| SetupError::UnknownGame {
            name: name.to_owned(),
            known: join(games().iter().map(|g| g.name)),
        })
}

/// How a seat played by a game's in-engine baseline is written wherever a
/// bot could be named: `baseline:NAME` on the command line, among a
/// pairing's entrant ids, in results.
pub const BASELINE_PREFIX: &str = "baseline:";

/// The game a tournament or a command line means when it names none.
pub const DEFAULT_GAME: &str = "generals";

fn join<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<&str> = games().iter().map(|g| g.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), games().len());
        for g in games() {
            assert_eq!(find(g.name).unwrap().name, g.name);
        }
        assert!(find(DEFAULT_GAME).is_ok());
        let err = find("chess").unwrap_err().to_string();
        assert!(err.contains("chess") && err.contains("generals"), "{err}");
    }

    /// Every entry's defaults make a playable match at every seat count it
    /// declares, and the match reports the entry's own name.
    #[test]
    fn every_entry_creates_matches_with_its_defaults() {
        for g in games() {
            for &seats in g.seats {
                let game = g.create(7, seats, &Rules::default()).unwrap();
                assert_eq!(game.name(), g.name);
                assert_eq!(game.seats(), seats);
                assert!(game.outcome().is_none());
            }
            assert!(g.create(7, 99, &Rules::default()).is_err());
            for b in g.baselines {
                assert!(g.has_baseline(b), "{}: {b}", g.name);
            }
        }
    }
}
