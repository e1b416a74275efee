//! `bot.toml`: which adapter set a model was made for, which adapter feeds
//! each graph input (with its parameters), and which output is the head.
//!
//! ```toml
//! adapters = "ants/1"
//!
//! [inputs.window]          # a graph input's name
//! adapter = "local_window"
//! radius = 6               # the adapter's integer parameters
//!
//! [head]
//! output = "scores"        # optional when the graph has one output
//! ```
//!
//! [`BotToml`] is the file as written; [`ModelConfig`] is the same checked
//! against a game's [`ModelInterface`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arena_engine::registry::model::{AdapterSpec, ModelInterface};
use serde::Deserialize;

/// The file a model bot's directory describes itself in.
pub const BOT_TOML: &str = "bot.toml";
/// The graph, next to it.
pub const MODEL_FILE: &str = "model.onnx";
/// The largest `bot.toml` read, in bytes.
const MAX_TOML_BYTES: u64 = 64 << 10;

/// `bot.toml` as written, before it is checked against an interface.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotToml {
    /// The adapter set, with its version (`ants/1`).
    pub adapters: String,
    /// Free text for people; the platform ignores it.
    #[serde(default)]
    pub description: Option<String>,
    /// Graph input name to its adapter table.
    pub inputs: BTreeMap<String, RawInput>,
    #[serde(default)]
    pub head: RawHead,
}

/// One `[inputs.NAME]` table: `adapter` and the adapter's parameters.
#[derive(Debug, Deserialize)]
pub struct RawInput {
    pub adapter: String,
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

/// The `[head]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHead {
    /// The graph output holding the scores; the graph's only output when
    /// absent.
    #[serde(default)]
    pub output: Option<String>,
}

/// A `bot.toml` that fits the game's interface.
#[derive(Debug)]
pub struct ModelConfig {
    pub inputs: Vec<InputConfig>,
    pub head_output: Option<String>,
}

/// One graph input and the adapter that feeds it.
#[derive(Debug)]
pub struct InputConfig {
    /// The graph input's name.
    pub name: String,
    pub adapter: &'static AdapterSpec,
    /// Only the parameters `bot.toml` sets; the graph's shape or the
    /// defaults fill the rest.
    pub params: BTreeMap<String, i64>,
}

/// A `bot.toml` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{BOT_TOML} is larger than {MAX_TOML_BYTES} bytes")]
    TooLong,
    #[error("{BOT_TOML} is not valid: {0}")]
    Syntax(String),
    #[error("{BOT_TOML} names adapter set {given:?}; this game provides {provided:?}")]
    AdapterSet {
        given: String,
        provided: &'static str,
    },
    #[error("{BOT_TOML} declares no [inputs]")]
    NoInputs,
    #[error("input {input:?}: no adapter named {adapter:?} (the set has: {known})")]
    UnknownAdapter {
        input: String,
        adapter: String,
        known: String,
    },
    #[error("input {input:?}: adapter {adapter} has no parameter {param:?} (it has: {known})")]
    UnknownParam {
        input: String,
        adapter: &'static str,
        param: String,
        known: String,
    },
    #[error("input {input:?}: {param} must be an integer")]
    NotAnInteger { input: String, param: String },
    #[error("input {input:?}: {param} = {value} is outside {min}..={max}")]
    OutOfBounds {
        input: String,
        param: String,
        value: i64,
        min: i64,
        max: i64,
    },
}

impl BotToml {
    /// Parses the text of a `bot.toml`.
    pub fn parse(text: &str) -> Result<BotToml, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Syntax(e.message().to_owned()))
    }

    /// Reads `dir/bot.toml`.
    pub fn read(dir: &Path) -> Result<BotToml, ConfigError> {
        use std::io::Read;
        let path = dir.join(BOT_TOML);
        let read = |source| ConfigError::Read {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(read)?;
        let mut text = String::new();
        file.take(MAX_TOML_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        if text.len() as u64 > MAX_TOML_BYTES {
            return Err(ConfigError::TooLong);
        }
        BotToml::parse(&text)
    }

    /// Checks the file against `interface`.
    pub fn resolve(self, interface: &ModelInterface) -> Result<ModelConfig, ConfigError> {
        if self.adapters != interface.adapter_set {
            return Err(ConfigError::AdapterSet {
                given: self.adapters,
                provided: interface.adapter_set,
            });
        }
        if self.inputs.is_empty() {
            return Err(ConfigError::NoInputs);
        }
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for (name, raw) in self.inputs {
            let Some(adapter) = interface.adapter(&raw.adapter) else {
                return Err(ConfigError::UnknownAdapter {
                    input: name,
                    adapter: raw.adapter,
                    known: join(interface.adapters.iter().map(|a| a.name)),
                });
            };
            let mut params = BTreeMap::new();
            for (param, value) in raw.params {
                let Some(spec) = adapter.params.iter().find(|p| p.name == param) else {
                    return Err(ConfigError::UnknownParam {
                        input: name,
                        adapter: adapter.name,
                        param,
                        known: join(adapter.params.iter().map(|p| p.name)),
                    });
                };
                let Some(value) = value.as_integer() else {
                    return Err(ConfigError::NotAnInteger { input: name, param });
                };
                if !(spec.min..=spec.max).contains(&value) {
                    return Err(ConfigError::OutOfBounds {
                        input: name,
                        param,
                        value,
                        min: spec.min,
                        max: spec.max,
                    });
                }
                params.insert(param, value);
            }
            inputs.push(InputConfig {
                name,
                adapter,
                params,
            });
        }
        Ok(ModelConfig {
            inputs,
            head_output: self.head.output,
        })
    }
}

pub(crate) fn join<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    let list: Vec<String> = items.map(|i| i.to_string()).collect();
    if list.is_empty() {
        "none".to_owned()
    } else {
        list.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_engine::ants::adapters::INTERFACE;

    fn resolve(text: &str) -> Result<ModelConfig, ConfigError> {
        BotToml::parse(text)?.resolve(&INTERFACE)
    }

    #[test]
    fn a_complete_file_resolves() {
        let config = resolve(
            "adapters = \"ants/1\"\ndescription = \"x\"\n\
             [inputs.window]\nadapter = \"local_window\"\nradius = 3\n\
             [inputs.board]\nadapter = \"whole_map\"\n\
             [head]\noutput = \"scores\"\n",
        )
        .unwrap();
        let names: Vec<&str> = config.inputs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["board", "window"]);
        assert_eq!(config.inputs[1].params.get("radius"), Some(&3));
        assert_eq!(config.head_output.as_deref(), Some("scores"));
    }

    #[test]
    fn every_mistake_is_named() {
        let cases = [
            ("adapters = \"ants/1\"\n[inputs]\n", "declares no [inputs]"),
            (
                "adapters = \"ants/2\"\n[inputs.a]\nadapter = \"whole_map\"\n",
                "\"ants/2\"",
            ),
            (
                "[inputs.a]\nadapter = \"whole_map\"\n",
                "missing field `adapters`",
            ),
            (
                "adapters = \"ants/1\"\n[inputs.a]\nadapter = \"sonar\"\n",
                "no adapter named \"sonar\" (the set has: local_window, whole_map)",
            ),
            (
                "adapters = \"ants/1\"\n[inputs.a]\nadapter = \"whole_map\"\nradius = 2\n",
                "has no parameter \"radius\"",
            ),
            (
                "adapters = \"ants/1\"\n[inputs.a]\nadapter = \"local_window\"\nradius = \"2\"\n",
                "radius must be an integer",
            ),
            (
                "adapters = \"ants/1\"\n[inputs.a]\nadapter = \"local_window\"\nradius = 40\n",
                "radius = 40 is outside 0..=12",
            ),
            (
                "adapters = \"ants/1\"\nhead = 3\n[inputs.a]\nadapter = \"whole_map\"\n",
                "not valid",
            ),
            (
                "adapters = \"ants/1\"\nmodle = 1\n[inputs.a]\nadapter = \"whole_map\"\n",
                "unknown field `modle`",
            ),
            ("adapters = [\n", "not valid"),
        ];
        for (text, want) in cases {
            let err = resolve(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
