//! The tournament file organisers write (TOML):
//!
//! ```toml
//! name = "Autumn cup"
//! game = "generals"          # the default; see `arena games`
//! seats = 2                  # default: the game's first seat count
//! seed = 42                  # base of every map seed
//! live_board = "organisers"  # or "everyone": who watches a running
//!                            # match's board on the web pages
//!
//! [format]
//! kind = "round_robin"       # or "swiss", with `rounds = 5`
//! cycles = 1
//! games_per_pairing = 2
//!
//! [rules]                    # optional; the game's options (none for generals)
//!
//! # wasm_runtime = "wasmtime-48.0.8-1a2b3c4d5e6f7a8b"  # optional; default:
//! #                          # the creator's own (WebAssembly seats only)
//! # model_runtime = "tract-onnx-0.23.9"  # optional; default: the
//! #                          # creator's own (model-graph seats only)
//!
//! [limits]                   # optional; each key defaults to the game's own
//! move_ms = 150
//! first_move_ms = 10000
//! fault_limit = 50
//! reply_cap = 4096
//!
//! [[bots]]
//! name = "starter-python"
//! path = "bots/starter-python"   # relative to the file
//! ```
//!
//! Parsing reads the text as a [`FileText`] (what was typed, nothing
//! resolved), then resolves it against the game's registry entry into a
//! [`TournamentFile`]: the game found, the seat count checked, the rules
//! complete and checked, the limits complete, and the game's team layout
//! read off a match it makes ([`crate::teams::probe`]). Defaults come from
//! the game's entry and from nowhere else.
//!
//! A team game (generals-classic with `[rules] mode = "2v2"` and
//! `seats = 4`) is written the same way, one `[[bots]]` entry per team: each
//! bot plays every seat of its side.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arena_engine::Rules;
use arena_engine::registry::limits::LimitError;
use arena_engine::registry::{self, LimitOverrides, Limits, RuleValue, RulesError, SetupError};
use serde::{Deserialize, Serialize};

use crate::domain::Format;
use crate::store::LiveBoard;
use crate::teams::{self, Sides, TeamError};

/// A tournament file as written: checked for shape only. Absent keys stay
/// absent, so [`TournamentFile`] can fill them from the game.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileText {
    /// Display name; must not be blank.
    pub name: String,
    /// Absent: [`registry::DEFAULT_GAME`].
    #[serde(default)]
    pub game: Option<String>,
    /// Absent: the game's first accepted seat count.
    #[serde(default)]
    pub seats: Option<usize>,
    /// Base of every map seed; absent: 0.
    #[serde(default)]
    pub seed: u64,
    /// Round robin or Swiss, with that format's parameters.
    pub format: Format,
    /// The game's options as typed; checked against the game on resolve.
    #[serde(default)]
    pub rules: BTreeMap<String, toml::Value>,
    /// Overrides of the game's limits; an unknown key is a parse error.
    #[serde(default)]
    pub limits: LimitOverrides,
    /// The environment id matches must be played in; absent: any worker.
    #[serde(default)]
    pub environment: Option<String>,
    /// The wasm runtime WebAssembly seats must be played with; absent: the
    /// one of whoever creates the tournament (`arena tournament create`).
    #[serde(default)]
    pub wasm_runtime: Option<String>,
    /// The model runtime model-graph seats must be played with; absent: the
    /// one of whoever creates the tournament (`arena tournament create`).
    #[serde(default)]
    pub model_runtime: Option<String>,
    /// Who may watch a running match's board; absent: organisers only.
    #[serde(default)]
    pub live_board: LiveBoard,
    /// The field, in seeding order.
    pub bots: Vec<BotEntry>,
}

/// A checked tournament file: the game exists, the seats fit it, and the
/// rules and limits are complete (the game's defaults filled in). Written
/// back out with [`TournamentFile::to_toml`], it parses to itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TournamentFile {
    /// Display name.
    pub name: String,
    /// A registered game's name.
    pub game: String,
    /// Seats per match, one the game accepts.
    pub seats: usize,
    /// Base of every map seed.
    pub seed: u64,
    /// Round robin or Swiss, with that format's parameters.
    pub format: Format,
    /// The environment id matches must be played in (see `arena worker`'s
    /// report); absent: any worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The wasm runtime (a fingerprint such as
    /// `wasmtime-48.0.8-1a2b3c4d5e6f7a8b`) the tournament's WebAssembly
    /// seats must be played with, if the file names one; `arena tournament
    /// create` and `arena run` fill in their own otherwise. Only workers
    /// running it lease a match with a WebAssembly seat (see
    /// [`crate::wasm`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wasm_runtime: Option<String>,
    /// The model runtime (such as `tract-onnx-0.23.9`) the tournament's
    /// model-graph seats must be played with, if the file names one; `arena
    /// tournament create` and `arena run` fill in their own otherwise. Only
    /// workers running it lease a match with a model-graph seat (see
    /// [`crate::model_graph`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_runtime: Option<String>,
    /// Who may watch a running match's board on the web pages (see
    /// [`LiveBoard`]); written out only when not the default.
    #[serde(skip_serializing_if = "is_default_live_board")]
    pub live_board: LiveBoard,
    /// Every option of the game, resolved.
    pub rules: Rules,
    /// The limits every match is played under, resolved; written out as
    /// the file's `[limits]` keys (the fuel ones flat), so the text parses
    /// back to the same limits.
    #[serde(serialize_with = "limits_as_keys")]
    pub limits: Limits,
    /// The side each seat plays for, as the game reports it for these seats
    /// and rules; empty when every seat plays for itself. Read from the
    /// game, never written in the file.
    #[serde(skip)]
    pub teams: Vec<u32>,
    /// The field, in seeding order; at least one bot, and one per side (per
    /// seat, without teams) unless the game has baselines.
    pub bots: Vec<BotEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotEntry {
    /// Display name, unique in the file.
    pub name: String,
    /// The bot directory; relative paths are relative to the file.
    pub path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum TournamentFileError {
    // Reading and parsing.
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a valid tournament file")]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    // Resolving against the game.
    #[error("invalid tournament")]
    Game(#[from] SetupError),
    #[error("invalid tournament")]
    Rules(#[from] RulesError),
    #[error("invalid tournament")]
    Limits(#[from] LimitError),
    #[error("invalid tournament")]
    Teams(#[from] TeamError),
    #[error("invalid tournament: {0}")]
    Invalid(String),
}

/// The most Swiss rounds a tournament may ask for.
pub const MAX_SWISS_ROUNDS: u32 = 1000;

/// The most round-robin cycles, and games per pairing, a tournament may ask for.
pub const MAX_REPEATS: u32 = 100;

impl TournamentFile {
    /// Reads and checks a tournament file; bot paths come back absolute.
    pub fn load(path: &Path) -> Result<TournamentFile, TournamentFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TournamentFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut file = Self::parse(&text).map_err(|e| match e {
            TournamentFileError::Parse { source, .. } => TournamentFileError::Parse {
                path: path.to_owned(),
                source,
            },
            other => other,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        for bot in &mut file.bots {
            if bot.path.is_relative() {
                bot.path = base.join(&bot.path);
            }
        }
        Ok(file)
    }

    /// The file as TOML text, every default written out.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }

    /// Parses and checks the text of a tournament file.
    pub fn parse(text: &str) -> Result<TournamentFile, TournamentFileError> {
        let file: FileText = toml::from_str(text).map_err(|source| TournamentFileError::Parse {
            path: PathBuf::from("<text>"),
            source,
        })?;
        Self::resolve(file)
    }

    /// Resolves a file's text against its game's registry entry.
    pub fn resolve(text: FileText) -> Result<TournamentFile, TournamentFileError> {
        let game = text.game.as_deref().unwrap_or(registry::DEFAULT_GAME);
        let entry = registry::find(game)?;
        let seats = match text.seats {
            Some(seats) => seats,
            // Every entry declares at least one count; 0 fails the check below.
            None => entry.seats.first().copied().unwrap_or(0),
        };
        entry.check_seats(seats)?;
        let rules = entry.rules(&rule_values(&text.rules)?)?;
        let limits = entry.limits.with(&text.limits)?;
        let teams = teams::probe(entry, seats, &rules)?;
        let sides = Sides::new(seats, &teams)?.count();
        let file = TournamentFile {
            name: text.name,
            game: entry.name.to_owned(),
            seats,
            seed: text.seed,
            format: text.format,
            environment: text.environment,
            wasm_runtime: text.wasm_runtime.filter(|r| !r.is_empty()),
            model_runtime: text.model_runtime.filter(|r| !r.is_empty()),
            live_board: text.live_board,
            rules,
            limits,
            teams,
            bots: text.bots,
        };
        file.validate(sides, !entry.baselines.is_empty())?;
        Ok(file)
    }

    /// `sides`: what a match needs one bot for (its seats, without teams).
    fn validate(&self, sides: usize, has_baselines: bool) -> Result<(), TournamentFileError> {
        let invalid = |m: String| Err(TournamentFileError::Invalid(m));
        if self.name.trim().is_empty() {
            return invalid("the name is empty".into());
        }
        if self.bots.is_empty() {
            return invalid("a tournament needs at least one bot".into());
        }
        // Baselines fill the seats bots leave empty; without them every
        // side (every seat, without teams) needs a bot.
        if self.bots.len() < sides && !has_baselines {
            return invalid(if self.teams.is_empty() {
                format!("{} bots cannot fill {} seats", self.bots.len(), self.seats)
            } else {
                format!(
                    "{} bots cannot fill {} sides (one bot plays every seat of its side)",
                    self.bots.len(),
                    sides
                )
            });
        }
        if let Some(bot) = self.bots.iter().find(|b| b.name.trim().is_empty()) {
            return invalid(format!(
                "the bot at {} has an empty name",
                bot.path.display()
            ));
        }
        if let Some(bot) = self
            .bots
            .iter()
            .find(|b| b.name.starts_with(crate::domain::BASELINE_PREFIX))
        {
            return invalid(format!(
                "bot name {:?}: names starting with {:?} mean baseline seats",
                bot.name,
                crate::domain::BASELINE_PREFIX
            ));
        }
        let mut names: Vec<&str> = self.bots.iter().map(|b| b.name.as_str()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|w| w[0] == w[1]) {
            return invalid(format!("two bots are named {:?}", pair[0]));
        }
        match self.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } if cycles == 0 || games_per_pairing == 0 => {
                invalid("cycles and games_per_pairing must be at least 1".into())
            }
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } if cycles > MAX_REPEATS || games_per_pairing > MAX_REPEATS => invalid(format!(
                "cycles and games_per_pairing are at most {MAX_REPEATS}"
            )),
            Format::Swiss { rounds: 0 } => invalid("a Swiss tournament needs rounds".into()),
            Format::Swiss { rounds } if rounds > MAX_SWISS_ROUNDS => invalid(format!(
                "a Swiss tournament has at most {MAX_SWISS_ROUNDS} rounds, not {rounds}"
            )),
            _ => Ok(()),
        }
    }
}

/// `limits` as every `[limits]` key of the file, set.
fn limits_as_keys<S: serde::Serializer>(limits: &Limits, out: S) -> Result<S::Ok, S::Error> {
    let fuel = limits.fuel;
    LimitOverrides {
        first_move_ms: Some(limits.first_move_ms),
        move_ms: Some(limits.move_ms),
        fault_limit: Some(limits.fault_limit),
        reply_cap: Some(limits.reply_cap),
        fuel_per_turn: fuel.map(|f| f.per_turn),
        fuel_bank: fuel.map(|f| f.bank),
        init_fuel: fuel.map(|f| f.init),
        wall_ms: fuel.map(|f| f.wall_ms),
        model_bytes: limits.model.map(|m| m.max_bytes),
        model_macs: limits.model.map(|m| m.max_macs),
    }
    .serialize(out)
}

/// The `[rules]` table as option values: TOML booleans, integers and
/// strings (for choices); any other type is refused by key.
fn rule_values(table: &BTreeMap<String, toml::Value>) -> Result<Rules, RulesError> {
    let mut rules = BTreeMap::new();
    for (key, value) in table {
        let value = match value {
            toml::Value::Boolean(b) => RuleValue::Bool(*b),
            toml::Value::Integer(i) => RuleValue::Int(*i),
            toml::Value::String(w) => RuleValue::Word(w.clone()),
            other => {
                return Err(RulesError::Type {
                    key: key.clone(),
                    expected: "true, false, an integer or a word",
                    got: other.to_string(),
                });
            }
        };
        rules.insert(key.clone(), value);
    }
    Ok(Rules(rules))
}

fn is_default_live_board(live_board: &LiveBoard) -> bool {
    *live_board == LiveBoard::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
name = "Cup"
seed = 7
[format]
kind = "round_robin"
cycles = 1
games_per_pairing = 2
[[bots]]
name = "a"
path = "bots/a"
[[bots]]
name = "b"
path = "/abs/b"
"#;

    #[test]
    fn parses_the_documented_example() {
        let file = TournamentFile::parse(EXAMPLE).unwrap();
        let entry = registry::find(registry::DEFAULT_GAME).unwrap();
        assert_eq!(file.game, registry::DEFAULT_GAME);
        assert_eq!(file.seats, entry.seats[0]);
        assert_eq!(file.limits, entry.limits);
        assert_eq!(file.rules, entry.rules(&Rules::default()).unwrap());
        assert_eq!(
            file.format,
            Format::RoundRobin {
                cycles: 1,
                games_per_pairing: 2
            }
        );
    }

    #[test]
    fn written_out_it_parses_to_itself() {
        let text = EXAMPLE.replace("seed = 7", "seed = 7\n[limits]\nmove_ms = 20");
        let file = TournamentFile::parse(&text).unwrap();
        assert_eq!(file.limits.move_ms, 20);
        let again = TournamentFile::parse(&file.to_toml().unwrap()).unwrap();
        assert_eq!(again, file);
    }

    #[test]
    fn live_boards_are_for_organisers_unless_the_file_opens_them() {
        let file = TournamentFile::parse(EXAMPLE).unwrap();
        assert_eq!(file.live_board, LiveBoard::Organisers);
        // The default is not written out, so older files keep their text.
        assert!(!file.to_toml().unwrap().contains("live_board"));
        let text = EXAMPLE.replace("seed = 7", "seed = 7\nlive_board = \"everyone\"");
        let file = TournamentFile::parse(&text).unwrap();
        assert_eq!(file.live_board, LiveBoard::Everyone);
        let again = TournamentFile::parse(&file.to_toml().unwrap()).unwrap();
        assert_eq!(again, file);
    }

    #[test]
    fn relative_bot_paths_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, EXAMPLE).unwrap();
        let file = TournamentFile::load(&path).unwrap();
        assert_eq!(file.bots[0].path, dir.path().join("bots/a"));
        assert_eq!(file.bots[1].path, PathBuf::from("/abs/b"));
    }

    #[test]
    fn bad_files_are_clear_errors() {
        for (text, needle) in [
            ("name = 3", "invalid type"),
            (&EXAMPLE.replace("cycles = 1", "cycles = 0"), "cycles"),
            (
                &EXAMPLE.replace("path = \"/abs/b\"", "path = \"/abs/b\"\ncolour = 1"),
                "unknown field",
            ),
            (&EXAMPLE.replace("name = \"b\"", "name = \"a\""), "two bots"),
            (
                &EXAMPLE.replace("seed = 7", "seed = 7\ngame = \"chess\""),
                "unknown game \"chess\" (registered: generals",
            ),
            (
                &EXAMPLE.replace("seed = 7", "seed = 7\nlive_board = \"players\""),
                "unknown variant `players`, expected `organisers` or `everyone`",
            ),
        ] {
            let err = TournamentFile::parse(text).unwrap_err();
            let shown = format!(
                "{err}: {}",
                std::error::Error::source(&err)
                    .map(|s| s.to_string())
                    .unwrap_or_default()
            );
            assert!(shown.contains(needle), "{shown}");
        }
    }
}
