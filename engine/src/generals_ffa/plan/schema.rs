//! Reads a JSON value into a [`Plan`], key by key, so that every error names
//! the path it is about. serde's derive would report only a line and column,
//! which a participant cannot map back to `rules[2].do`.
//!
//! Ranges are [`super::validate`]'s job; this module only checks shape, names
//! and that each integer is a non-negative integer that fits a `u32`.

use serde_json::{Map, Value};

use super::{Cities, Condition, Intent, Plan, PlanError, Rule};

/// Longest piece of a bot's text echoed back in an error, so an error stays
/// small whatever the bot sent.
const ECHO_MAX: usize = 40;

/// The keys of a plan object.
const PLAN_KEYS: [&str; 4] = ["rules", "reserve", "cities", "scouts"];
/// The keys of a rule object.
const RULE_KEYS: [&str; 2] = ["when", "do"];

/// Reads a whole plan.
pub(super) fn plan_from_value(value: &Value) -> Result<Plan, PlanError> {
    let object = as_object(value, String::new())?;
    known_keys(object, &PLAN_KEYS, "")?;
    let rules = match object.get("rules") {
        None => return Err(missing("rules".into())),
        Some(Value::Array(items)) => {
            // Reject a long list before reading it: validate would anyway,
            // and this keeps the work bounded by the cap, not the line.
            if items.len() > super::MAX_RULES {
                return Err(PlanError::OutOfRange {
                    path: "rules".into(),
                    value: format!("{} rules", items.len()),
                    min: super::MIN_RULES as u64,
                    max: super::MAX_RULES as u64,
                });
            }
            items
                .iter()
                .enumerate()
                .map(|(k, item)| rule_from_value(item, k))
                .collect::<Result<Vec<_>, _>>()?
        }
        Some(_) => return Err(wrong("rules".into(), "an array of rules")),
    };
    let reserve = match object.get("reserve") {
        None => 0,
        Some(v) => integer(v, "reserve".into())?,
    };
    let cities = match object.get("cities") {
        None => Cities::default(),
        Some(v) => cities_from_value(v)?,
    };
    let scouts = match object.get("scouts") {
        None => 0,
        Some(v) => integer(v, "scouts".into())?,
    };
    Ok(Plan {
        rules,
        reserve,
        cities,
        scouts,
    })
}

fn rule_from_value(value: &Value, k: usize) -> Result<Rule, PlanError> {
    let path = format!("rules[{k}]");
    let object = as_object(value, path.clone())?;
    known_keys(object, &RULE_KEYS, &path)?;
    let when = match object.get("when") {
        None => return Err(missing(format!("{path}.when"))),
        Some(v) => condition_from_value(v, format!("{path}.when"))?,
    };
    let intent = match object.get("do") {
        None => return Err(missing(format!("{path}.do"))),
        Some(v) => intent_from_value(v, format!("{path}.do"))?,
    };
    Ok(Rule { when, intent })
}

fn condition_from_value(value: &Value, path: String) -> Result<Condition, PlanError> {
    const EXPECTED: &str = "a condition: \"always\", \"crown_threatened\", \"enemy_visible\", \
                            \"crown_known\", {\"land_below\": percent} or {\"turn_at_least\": turn}";
    match value {
        Value::String(name) => match name.as_str() {
            "always" => Ok(Condition::Always),
            "crown_threatened" => Ok(Condition::CrownThreatened),
            "enemy_visible" => Ok(Condition::EnemyVisible),
            "crown_known" => Ok(Condition::CrownKnown),
            // A parameterised condition written bare: say what it lacks.
            "land_below" | "turn_at_least" => {
                Err(wrong(path, "an object such as {\"land_below\": 25}"))
            }
            _ => Err(unknown(path, "condition", name)),
        },
        Value::Object(object) => {
            let mut entries = object.iter();
            let (Some((key, arg)), None) = (entries.next(), entries.next()) else {
                return Err(wrong(path, "an object with exactly one key"));
            };
            let arg_path = format!("{path}.{}", echo(key));
            match key.as_str() {
                "land_below" => Ok(Condition::LandBelow(integer(arg, arg_path)?)),
                "turn_at_least" => Ok(Condition::TurnAtLeast(integer(arg, arg_path)?)),
                _ => Err(unknown(path, "condition", key)),
            }
        }
        _ => Err(wrong(path, EXPECTED)),
    }
}

fn intent_from_value(value: &Value, path: String) -> Result<Intent, PlanError> {
    let Value::String(name) = value else {
        return Err(wrong(path, "an intent name (a string)"));
    };
    match name.as_str() {
        "defend" => Ok(Intent::Defend),
        "expand" => Ok(Intent::Expand),
        "attack_nearest" => Ok(Intent::AttackNearest),
        "raid_crown" => Ok(Intent::RaidCrown),
        "gather" => Ok(Intent::Gather),
        _ => Err(unknown(path, "intent", name)),
    }
}

fn cities_from_value(value: &Value) -> Result<Cities, PlanError> {
    let path = String::from("cities");
    let Value::String(name) = value else {
        return Err(wrong(path, "\"never\", \"cheap\" or \"always\""));
    };
    match name.as_str() {
        "never" => Ok(Cities::Never),
        "cheap" => Ok(Cities::Cheap),
        "always" => Ok(Cities::Always),
        _ => Err(unknown(path, "city policy", name)),
    }
}

/// A non-negative JSON integer that fits a `u32`; `25.0` is not one.
fn integer(value: &Value, path: String) -> Result<u32, PlanError> {
    let Value::Number(number) = value else {
        return Err(wrong(path, "an integer"));
    };
    if let Some(n) = number.as_u64() {
        return u32::try_from(n).map_err(|_| PlanError::OutOfRange {
            path,
            value: n.to_string(),
            min: 0,
            max: u64::from(u32::MAX),
        });
    }
    if number.is_i64() {
        return Err(PlanError::OutOfRange {
            path,
            value: echo(&number.to_string()),
            min: 0,
            max: u64::from(u32::MAX),
        });
    }
    Err(wrong(path, "an integer"))
}

fn as_object(value: &Value, path: String) -> Result<&Map<String, Value>, PlanError> {
    match value {
        Value::Object(object) => Ok(object),
        _ => Err(wrong(
            if path.is_empty() {
                "(plan)".into()
            } else {
                path
            },
            "an object",
        )),
    }
}

/// The first key (in the map's sorted order, so the error is deterministic)
/// that `allowed` does not list.
fn known_keys(
    object: &Map<String, Value>,
    allowed: &[&str],
    parent: &str,
) -> Result<(), PlanError> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(PlanError::UnknownKey {
            path: if parent.is_empty() {
                echo(key)
            } else {
                format!("{parent}.{}", echo(key))
            },
        }),
    }
}

fn missing(path: String) -> PlanError {
    PlanError::MissingKey { path }
}

fn wrong(path: String, expected: &'static str) -> PlanError {
    PlanError::WrongType { path, expected }
}

fn unknown(path: String, what: &'static str, name: &str) -> PlanError {
    PlanError::UnknownName {
        path,
        what,
        name: echo(name),
    }
}

/// At most [`ECHO_MAX`] characters of a bot's text.
fn echo(text: &str) -> String {
    match text.char_indices().nth(ECHO_MAX) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_plan;
    use super::*;

    fn path_of(line: &str) -> String {
        match parse_plan(line.as_bytes()) {
            Err(e) => e.path().to_owned(),
            Ok(plan) => panic!("{line} parsed as {plan:?}"),
        }
    }

    #[test]
    fn every_name_reads() {
        let line = r#"{"rules":[{"when":"always","do":"defend"},{"when":"crown_threatened","do":"expand"},
            {"when":"enemy_visible","do":"attack_nearest"},{"when":"crown_known","do":"raid_crown"},
            {"when":{"land_below":0},"do":"gather"},{"when":{"turn_at_least":4294967295},"do":"expand"}],
            "reserve":1000,"cities":"always","scouts":4}"#;
        let plan = parse_plan(line.as_bytes()).expect("every name is known");
        assert_eq!(plan.rules.len(), 6);
        assert_eq!(plan.rules[5].when, Condition::TurnAtLeast(u32::MAX));
        assert_eq!(plan.cities, Cities::Always);
    }

    #[test]
    fn shape_errors_name_their_path() {
        let r = r#"{"when":"always","do":"expand"}"#;
        for (line, path) in [
            ("[]".to_owned(), "(plan)"),
            (r#"{"reserve":0}"#.to_owned(), "rules"),
            (r#"{"rules":{}}"#.to_owned(), "rules"),
            (format!(r#"{{"rules":[{r},3]}}"#), "rules[1]"),
            (r#"{"rules":[{"do":"expand"}]}"#.to_owned(), "rules[0].when"),
            (r#"{"rules":[{"when":"always"}]}"#.to_owned(), "rules[0].do"),
            (
                r#"{"rules":[{"when":"always","do":"expand","why":1}]}"#.to_owned(),
                "rules[0].why",
            ),
            (
                r#"{"rules":[{"when":"sometimes","do":"expand"}]}"#.to_owned(),
                "rules[0].when",
            ),
            (
                r#"{"rules":[{"when":"land_below","do":"expand"}]}"#.to_owned(),
                "rules[0].when",
            ),
            (
                r#"{"rules":[{"when":{"land_below":25,"x":1},"do":"expand"}]}"#.to_owned(),
                "rules[0].when",
            ),
            (
                r#"{"rules":[{"when":{"land_below":25.5},"do":"expand"}]}"#.to_owned(),
                "rules[0].when.land_below",
            ),
            (
                r#"{"rules":[{"when":{"land_below":-1},"do":"expand"}]}"#.to_owned(),
                "rules[0].when.land_below",
            ),
            (
                r#"{"rules":[{"when":{"land_below":101},"do":"expand"}]}"#.to_owned(),
                "rules[0].when.land_below",
            ),
            (
                r#"{"rules":[{"when":{"turn_at_least":4294967296},"do":"expand"}]}"#.to_owned(),
                "rules[0].when.turn_at_least",
            ),
            (
                r#"{"rules":[{"when":"always","do":7}]}"#.to_owned(),
                "rules[0].do",
            ),
            (
                format!(r#"{{"rules":[{r}],"cities":"sometimes"}}"#),
                "cities",
            ),
            (format!(r#"{{"rules":[{r}],"scouts":5}}"#), "scouts"),
            (format!(r#"{{"rules":[{r}],"scouts":"1"}}"#), "scouts"),
            (
                format!(r#"{{"rules":[{}]}}"#, vec![r; 17].join(",")),
                "rules",
            ),
        ] {
            assert_eq!(path_of(&line), path, "{line}");
        }
    }

    #[test]
    fn echoes_are_capped() {
        let long = "x".repeat(500);
        let line = format!(r#"{{"rules":[{{"when":"always","do":"{long}"}}]}}"#);
        let message = parse_plan(line.as_bytes()).map_err(|e| e.to_string());
        let message = message.expect_err("an unknown intent");
        assert!(message.len() < 100, "{message}");
    }
}
