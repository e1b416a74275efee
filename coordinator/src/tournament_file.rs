//! The tournament file organisers write (TOML):
//!
//! ```toml
//! name = "Autumn cup"
//! game = "generals"          # the default
//! seats = 2                  # the default
//! seed = 42                  # base of every map seed
//!
//! [format]
//! kind = "round_robin"       # or "swiss", with `rounds = 5`
//! cycles = 1
//! games_per_pairing = 2
//!
//! [limits]                   # optional; the competition's defaults
//! move_ms = 150
//! first_move_ms = 10000
//! fault_limit = 50
//!
//! [[bots]]
//! name = "starter-python"
//! path = "bots/starter-python"   # relative to the file
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{Format, MatchLimits};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentFile {
    pub name: String,
    #[serde(default = "default_game")]
    pub game: String,
    #[serde(default = "default_seats")]
    pub seats: usize,
    #[serde(default)]
    pub seed: u64,
    pub format: Format,
    #[serde(default)]
    pub limits: MatchLimits,
    /// The environment id matches must be played in (see `arena worker`'s
    /// report); absent: any worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    pub bots: Vec<BotEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotEntry {
    pub name: String,
    /// The bot directory; relative paths are relative to the file.
    pub path: PathBuf,
}

fn default_game() -> String {
    "generals".to_owned()
}

fn default_seats() -> usize {
    2
}

#[derive(Debug, thiserror::Error)]
pub enum TournamentFileError {
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
    #[error("invalid tournament: {0}")]
    Invalid(String),
}

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

    /// The file as TOML text.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }

    /// Parses and checks the text of a tournament file.
    pub fn parse(text: &str) -> Result<TournamentFile, TournamentFileError> {
        let file: TournamentFile =
            toml::from_str(text).map_err(|source| TournamentFileError::Parse {
                path: PathBuf::from("<text>"),
                source,
            })?;
        file.validate()?;
        Ok(file)
    }

    fn validate(&self) -> Result<(), TournamentFileError> {
        let invalid = |m: String| Err(TournamentFileError::Invalid(m));
        if self.name.trim().is_empty() {
            return invalid("the name is empty".into());
        }
        if self.game != "generals" {
            return invalid(format!("unknown game {:?} (known: generals)", self.game));
        }
        if self.seats != 2 {
            return invalid(format!("generals is played by 2 seats, not {}", self.seats));
        }
        if self.bots.len() < self.seats {
            return invalid(format!(
                "{} bots cannot fill {} seats",
                self.bots.len(),
                self.seats
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
            Format::Swiss { rounds: 0 } => invalid("a Swiss tournament needs rounds".into()),
            _ if self.limits.move_ms == 0 || self.limits.first_move_ms == 0 => {
                invalid("move deadlines must be positive".into())
            }
            _ => Ok(()),
        }
    }
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
        assert_eq!(file.game, "generals");
        assert_eq!(file.seats, 2);
        assert_eq!(file.limits, MatchLimits::default());
        assert_eq!(
            file.format,
            Format::RoundRobin {
                cycles: 1,
                games_per_pairing: 2
            }
        );
    }

    #[test]
    fn relative_bot_paths_follow_the_file() {
        let dir = std::env::temp_dir().join(format!("arena-tf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.toml");
        std::fs::write(&path, EXAMPLE).unwrap();
        let file = TournamentFile::load(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(file.bots[0].path, dir.join("bots/a"));
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
                "unknown game",
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
