//! Ruleset options: each game declares its options once; the values a user
//! gives (a `[rules]` table, `--rules K=V,...`) are checked against that
//! declaration and completed with the defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A declared option's type, default and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OptionKind {
    Bool {
        default: bool,
    },
    Int {
        default: i64,
        min: i64,
        max: i64,
    },
    /// One word out of `choices` (e.g. a game's mode).
    Choice {
        default: &'static str,
        choices: &'static [&'static str],
    },
}

/// One declared option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OptionSpec {
    pub name: &'static str,
    pub help: &'static str,
    #[serde(flatten)]
    pub kind: OptionKind,
}

impl OptionSpec {
    pub fn default_value(&self) -> RuleValue {
        match self.kind {
            OptionKind::Bool { default } => RuleValue::Bool(default),
            OptionKind::Int { default, .. } => RuleValue::Int(default),
            OptionKind::Choice { default, .. } => RuleValue::Word(default.to_owned()),
        }
    }
}

/// One option's value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RuleValue {
    Bool(bool),
    Int(i64),
    /// A word, for [`OptionKind::Choice`].
    Word(String),
}

impl std::fmt::Display for RuleValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleValue::Bool(b) => write!(f, "{b}"),
            RuleValue::Int(i) => write!(f, "{i}"),
            RuleValue::Word(w) => write!(f, "{w:?}"),
        }
    }
}

/// Option values by name. As given by a user it may be partial; once
/// [`resolve`]d it holds every declared option.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Rules(pub BTreeMap<String, RuleValue>);

/// Why given options do not fit a game's declaration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("rules.{key}: no such option (options: {known})")]
    Unknown { key: String, known: String },
    #[error("rules.{key}: expected {expected}, got {got}")]
    Type {
        key: String,
        expected: &'static str,
        got: String,
    },
    #[error("rules.{key}: {value:?} is not one of {choices}")]
    Choice {
        key: String,
        value: String,
        choices: String,
    },
    #[error("rules.{key}: {value} is outside {min}..={max}")]
    Range {
        key: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("rules: {0:?} is not KEY=VALUE")]
    Syntax(String),
}

impl Rules {
    /// Parses `K=V,K=V` (values `true`, `false`, integers or words), as
    /// `--rules` takes them. Names and types are checked later, against a game.
    pub fn parse_pairs(text: &str) -> Result<Rules, RulesError> {
        let mut rules = BTreeMap::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| RulesError::Syntax(pair.to_owned()))?;
            let value = match value.trim() {
                "true" => RuleValue::Bool(true),
                "false" => RuleValue::Bool(false),
                v => match v.parse::<i64>() {
                    Ok(i) => RuleValue::Int(i),
                    // A word such as `ffa` or `2v2`, for choice options.
                    Err(_)
                        if !v.is_empty()
                            && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                    {
                        RuleValue::Word(v.to_owned())
                    }
                    Err(_) => return Err(RulesError::Syntax(pair.to_owned())),
                },
            };
            rules.insert(key.trim().to_owned(), value);
        }
        Ok(Rules(rules))
    }

    /// A boolean option of resolved rules; `false` when absent.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(RuleValue::Bool(true)))
    }

    /// A choice option of resolved rules.
    pub fn word(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(RuleValue::Word(w)) => Some(w),
            _ => None,
        }
    }

    /// An integer option of resolved rules.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.0.get(name) {
            Some(RuleValue::Int(i)) => Some(*i),
            _ => None,
        }
    }
}

/// Checks `given` against `options`, naming the first bad key, and fills in
/// every default.
pub fn resolve(options: &[OptionSpec], given: &Rules) -> Result<Rules, RulesError> {
    for key in given.0.keys() {
        if !options.iter().any(|o| o.name == key) {
            let known = options.iter().map(|o| o.name).collect::<Vec<_>>();
            return Err(RulesError::Unknown {
                key: key.clone(),
                known: if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    let mut resolved = BTreeMap::new();
    for option in options {
        let value = match (option.kind, given.0.get(option.name)) {
            (_, None) => option.default_value(),
            (OptionKind::Bool { .. }, Some(v @ RuleValue::Bool(_))) => v.clone(),
            (OptionKind::Choice { choices, .. }, Some(RuleValue::Word(w))) => {
                if !choices.contains(&w.as_str()) {
                    return Err(RulesError::Choice {
                        key: option.name.to_owned(),
                        value: w.clone(),
                        choices: choices.join(", "),
                    });
                }
                RuleValue::Word(w.clone())
            }
            (OptionKind::Int { min, max, .. }, Some(RuleValue::Int(v))) => {
                if *v < min || *v > max {
                    return Err(RulesError::Range {
                        key: option.name.to_owned(),
                        value: *v,
                        min,
                        max,
                    });
                }
                RuleValue::Int(*v)
            }
            (kind, Some(v)) => {
                return Err(RulesError::Type {
                    key: option.name.to_owned(),
                    expected: match kind {
                        OptionKind::Bool { .. } => "true or false",
                        OptionKind::Int { .. } => "an integer",
                        OptionKind::Choice { .. } => "a word",
                    },
                    got: v.to_string(),
                });
            }
        };
        resolved.insert(option.name.to_owned(), value);
    }
    Ok(Rules(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: &[OptionSpec] = &[
        OptionSpec {
            name: "mode",
            help: "format",
            kind: OptionKind::Choice {
                default: "duel",
                choices: &["duel", "ffa"],
            },
        },
        OptionSpec {
            name: "blitz",
            help: "small board",
            kind: OptionKind::Bool { default: false },
        },
        OptionSpec {
            name: "turns",
            help: "turn limit",
            kind: OptionKind::Int {
                default: 240,
                min: 1,
                max: 1000,
            },
        },
    ];

    #[test]
    fn defaults_fill_what_is_not_given() {
        let given = Rules::parse_pairs("blitz=true").unwrap();
        let rules = resolve(OPTIONS, &given).unwrap();
        assert!(rules.flag("blitz"));
        assert_eq!(rules.int("turns"), Some(240));
        assert_eq!(rules.word("mode"), Some("duel"));
        let ffa = resolve(
            OPTIONS,
            &Rules::parse_pairs("mode=ffa,turns=-0").unwrap_or_default(),
        );
        assert!(ffa.is_err(), "-0 is out of range");
        let ffa = resolve(OPTIONS, &Rules::parse_pairs("mode=ffa").unwrap()).unwrap();
        assert_eq!(ffa.word("mode"), Some("ffa"));
    }

    #[test]
    fn errors_name_the_key() {
        for (text, needle) in [
            ("speed=3", "rules.speed: no such option"),
            ("blitz=3", "rules.blitz: expected true or false"),
            ("turns=true", "rules.turns: expected an integer"),
            ("turns=0", "rules.turns: 0 is outside 1..=1000"),
            (
                "mode=teams",
                "rules.mode: \"teams\" is not one of duel, ffa",
            ),
            ("mode=3", "rules.mode: expected a word"),
            ("blitz=yes", "rules.blitz: expected true or false"),
        ] {
            let given = Rules::parse_pairs(text).unwrap();
            let err = resolve(OPTIONS, &given).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
        assert!(Rules::parse_pairs("blitz").is_err());
        let ten = Rules::parse_pairs("turns=ten").unwrap();
        let err = resolve(OPTIONS, &ten).unwrap_err().to_string();
        assert!(err.contains("rules.turns: expected an integer"), "{err}");
        assert_eq!(
            Rules::parse_pairs("mode=2v2").unwrap().0["mode"],
            RuleValue::Word("2v2".to_owned())
        );
        assert!(Rules::parse_pairs("turns=1.5").is_err());
        assert!(Rules::parse_pairs("mode=a b").is_err());
    }

    #[test]
    fn toml_and_json_tables_read_as_rules() {
        let rules: Rules = serde_json::from_str(r#"{"blitz": true, "turns": 9}"#).unwrap();
        assert_eq!(resolve(OPTIONS, &rules).unwrap().int("turns"), Some(9));
    }
}
