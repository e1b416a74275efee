//! The plan a seat installs every [`PLAN_EVERY`] turns: an ordered list of
//! `when → do` rules plus three knobs, as one JSON line.
//!
//! ```json
//! {"rules":[{"when":"crown_threatened","do":"defend"},
//!           {"when":{"land_below":25},"do":"expand"},
//!           {"when":"always","do":"attack_nearest"}],
//!  "reserve":0,"cities":"cheap","scouts":1}
//! ```
//!
//! Layout: this file holds the validated [`Plan`] and its parts, the
//! [`validate`] range checks and the two baselines; `schema` reads a JSON
//! value into a `Plan`, naming the path of whatever is wrong. [`parse`] is
//! the one entry point for reply lines: bytes → UTF-8 → JSON → schema →
//! [`validate`]. The captain (`super::captain`) says what each condition and
//! intent means on the board.
//!
//! Every number is an integer (`land_below` is a percentage), so the engine
//! stays integer and `Plan` derives `Eq`.

mod schema;

use serde::{Deserialize, Serialize};

use crate::game::Malformed;

/// How many turns one installed plan drives before the next install.
pub const PLAN_EVERY: u32 = 8;
/// The longest reply line read; the runner already cuts lines at this cap.
pub const MAX_LINE: usize = 65_536;
/// The fewest rules a plan may have.
pub const MIN_RULES: usize = 1;
/// The most rules a plan may have.
pub const MAX_RULES: usize = 16;
/// The largest `reserve`.
pub const MAX_RESERVE: u32 = 1_000;
/// The largest `scouts`: at most half of a plan window scouts.
pub const MAX_SCOUTS: u32 = 4;
/// The largest `land_below` percentage.
pub const MAX_LAND_PERCENT: u32 = 100;

/// A validated plan: what [`parse`] returns and what the captain compiles.
///
/// Build one in code only through [`validate`] (the baselines are tested to
/// pass it); the captain still never panics on an unvalidated one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Tried in order every turn: the first rule whose condition holds and
    /// whose intent finds a move decides the turn.
    pub rules: Vec<Rule>,
    /// Armies every source cell keeps beyond the one it must keep: a move
    /// sends `army - 1 - reserve`, and a cell with no more than that stays.
    #[serde(default)]
    pub reserve: u32,
    /// Whether `expand` takes neutral cities.
    #[serde(default)]
    pub cities: Cities,
    /// On the first `scouts` turns of each plan window, `expand` prefers a
    /// minimal capture that uncovers never-seen cells.
    #[serde(default)]
    pub scouts: u32,
}

/// One `when → do` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// When the rule applies.
    pub when: Condition,
    /// What the captain tries when it applies.
    #[serde(rename = "do")]
    pub intent: Intent,
}

/// A test on the seat's own view. Unit variants are JSON strings
/// (`"always"`), the others one-key objects (`{"land_below":25}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Always holds.
    Always,
    /// A visible enemy cell holding 2 or more armies lies within
    /// [`THREAT_RADIUS`] steps of our crown.
    CrownThreatened,
    /// Some enemy cell is visible now.
    EnemyVisible,
    /// We remember an enemy crown whose owner is still alive.
    CrownKnown,
    /// Our land is under this percentage of the board's cells
    /// (`width × height`, mountains included): `0..=100`.
    LandBelow(u32),
    /// The view's turn is at least this.
    TurnAtLeast(u32),
}

/// How far (in orthogonal steps over non-mountain cells) an enemy army may
/// stand from our crown before `crown_threatened` holds.
pub const THREAT_RADIUS: u16 = 3;

/// What the captain tries to do this turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Take an enemy cell near the crown, or else pull the largest army one
    /// step home.
    Defend,
    /// Take a neutral plain (or a city, per [`Cities`]) next to our land, or
    /// else walk the largest army towards one.
    Expand,
    /// Step the largest army towards the nearest visible enemy cell.
    AttackNearest,
    /// Step the largest army towards the nearest remembered enemy crown.
    RaidCrown,
    /// Pull the largest army other than the crown's one step home.
    Gather,
}

/// Whether `expand` takes neutral cities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cities {
    /// Never: neutral cities are walls.
    Never,
    /// Only when the garrison is at most half of all the armies we own, and
    /// the move sends more than the garrison.
    #[default]
    Cheap,
    /// Whenever the move sends more than the garrison.
    Always,
}

/// Why a reply line is not a plan. Every variant past the first three
/// names the JSON path it is about (`rules[2].do`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The line is longer than [`MAX_LINE`].
    #[error("the line is {len} bytes, over the {MAX_LINE}-byte cap")]
    TooLong { len: usize },
    /// The line is not UTF-8; `at` is the first bad byte.
    #[error("not UTF-8 (bad byte at {at})")]
    NotUtf8 { at: usize },
    /// The text is not one JSON value (syntax, trailing input, nesting).
    #[error("not JSON: {reason}")]
    NotJson { reason: String },
    /// An object has a key the schema does not know.
    #[error("{path}: unknown key")]
    UnknownKey { path: String },
    /// A required key is absent.
    #[error("{path}: missing")]
    MissingKey { path: String },
    /// A value has the wrong JSON type.
    #[error("{path}: expected {expected}")]
    WrongType {
        path: String,
        expected: &'static str,
    },
    /// A string names no known condition, intent or city policy.
    #[error("{path}: unknown {what} \"{name}\"")]
    UnknownName {
        path: String,
        what: &'static str,
        name: String,
    },
    /// An integer lies outside its range.
    #[error("{path}: {value} is out of range {min}..={max}")]
    OutOfRange {
        path: String,
        value: String,
        min: u64,
        max: u64,
    },
}

impl PlanError {
    /// The JSON path the error is about; empty for the whole line.
    pub fn path(&self) -> &str {
        match self {
            PlanError::TooLong { .. } | PlanError::NotUtf8 { .. } | PlanError::NotJson { .. } => "",
            PlanError::UnknownKey { path }
            | PlanError::MissingKey { path }
            | PlanError::WrongType { path, .. }
            | PlanError::UnknownName { path, .. }
            | PlanError::OutOfRange { path, .. } => path,
        }
    }
}

impl From<PlanError> for Malformed {
    fn from(error: PlanError) -> Self {
        Malformed::new(error.to_string())
    }
}

/// Parses and validates one reply line (without its `\n`; a trailing `\r`
/// and surrounding whitespace are tolerated). Never panics.
pub fn parse(line: &[u8]) -> Result<Plan, Malformed> {
    parse_plan(line).map_err(Malformed::from)
}

/// [`parse`] with the typed error, for callers and tests that look at the
/// path.
pub fn parse_plan(line: &[u8]) -> Result<Plan, PlanError> {
    if line.len() > MAX_LINE {
        return Err(PlanError::TooLong { len: line.len() });
    }
    let text = std::str::from_utf8(line).map_err(|e| PlanError::NotUtf8 {
        at: e.valid_up_to(),
    })?;
    // serde_json rejects trailing input itself and stops at 128 levels of
    // nesting, so a hostile line costs at most one bounded pass.
    let value: serde_json::Value =
        serde_json::from_str(text.trim()).map_err(|e| PlanError::NotJson {
            reason: e.to_string(),
        })?;
    let plan = schema::plan_from_value(&value)?;
    validate(&plan)?;
    Ok(plan)
}

/// Checks every range of a plan built in code or read by the schema.
pub fn validate(plan: &Plan) -> Result<(), PlanError> {
    let count = plan.rules.len();
    if !(MIN_RULES..=MAX_RULES).contains(&count) {
        return Err(PlanError::OutOfRange {
            path: "rules".into(),
            value: format!("{count} rules"),
            min: MIN_RULES as u64,
            max: MAX_RULES as u64,
        });
    }
    for (k, rule) in plan.rules.iter().enumerate() {
        if let Condition::LandBelow(percent) = rule.when {
            in_range(
                || format!("rules[{k}].when.land_below"),
                percent,
                MAX_LAND_PERCENT,
            )?;
        }
    }
    in_range(|| "reserve".into(), plan.reserve, MAX_RESERVE)?;
    in_range(|| "scouts".into(), plan.scouts, MAX_SCOUTS)?;
    Ok(())
}

fn in_range(path: impl FnOnce() -> String, value: u32, max: u32) -> Result<(), PlanError> {
    if value <= max {
        return Ok(());
    }
    Err(PlanError::OutOfRange {
        path: path(),
        value: value.to_string(),
        min: 0,
        max: u64::from(max),
    })
}

/// The `sprawl` baseline: defend a threatened crown, expand while our land
/// is under a quarter of the board, otherwise attack the nearest visible
/// enemy cell. The last rule keeps it expanding when no enemy is in sight,
/// so the fallback never idles.
pub fn sprawl() -> Plan {
    Plan {
        rules: vec![
            rule(Condition::CrownThreatened, Intent::Defend),
            rule(Condition::LandBelow(25), Intent::Expand),
            rule(Condition::Always, Intent::AttackNearest),
            rule(Condition::Always, Intent::Expand),
        ],
        reserve: 0,
        cities: Cities::Cheap,
        scouts: 1,
    }
}

/// The `crown` baseline: defend a threatened crown, raid the nearest known
/// crown, expand otherwise; the last rule fights whatever it sees once
/// nothing is left to take.
pub fn crown() -> Plan {
    Plan {
        rules: vec![
            rule(Condition::CrownThreatened, Intent::Defend),
            rule(Condition::CrownKnown, Intent::RaidCrown),
            rule(Condition::Always, Intent::Expand),
            rule(Condition::Always, Intent::AttackNearest),
        ],
        reserve: 20,
        cities: Cities::Never,
        scouts: 2,
    }
}

fn rule(when: Condition, intent: Intent) -> Rule {
    Rule { when, intent }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(line: &str) -> PlanError {
        match parse_plan(line.as_bytes()) {
            Err(e) => e,
            Ok(plan) => panic!("{line} parsed as {plan:?}"),
        }
    }

    #[test]
    fn baselines_validate_and_round_trip() {
        for plan in [sprawl(), crown()] {
            assert_eq!(validate(&plan), Ok(()));
            let bytes = serde_json::to_vec(&plan).expect("a plan serialises");
            assert_eq!(parse(&bytes), Ok(plan));
        }
    }

    #[test]
    fn the_documented_example_parses() {
        let line = br#" {"rules":[{"when":"crown_threatened","do":"defend"},{"when":{"land_below":25},"do":"expand"},{"when":"always","do":"attack_nearest"}],"reserve":0,"cities":"cheap","scouts":1} "#;
        let mut crlf = line.to_vec();
        crlf.push(b'\r');
        let plan = parse(&crlf).expect("the example is a plan");
        assert_eq!(plan.rules[1].when, Condition::LandBelow(25));
        assert_eq!(plan.scouts, 1);
    }

    #[test]
    fn knobs_default_to_zero_cheap_zero() {
        let plan = parse(br#"{"rules":[{"when":"always","do":"gather"}]}"#).expect("minimal plan");
        assert_eq!(
            (plan.reserve, plan.cities, plan.scouts),
            (0, Cities::Cheap, 0)
        );
    }

    #[test]
    fn validate_catches_code_built_plans() {
        let mut plan = sprawl();
        plan.rules[1].when = Condition::LandBelow(101);
        assert_eq!(
            validate(&plan).map_err(|e| e.path().to_owned()),
            Err("rules[1].when.land_below".into())
        );
        let mut plan = crown();
        plan.scouts = 5;
        assert_eq!(
            validate(&plan).map_err(|e| e.path().to_owned()),
            Err("scouts".into())
        );
    }

    #[test]
    fn errors_name_the_path() {
        let e = err(
            r#"{"rules":[{"when":"always","do":"expand"},{"when":"always","do":"expand"},{"when":"always","do":"fly"}]}"#,
        );
        assert_eq!(e.to_string(), "rules[2].do: unknown intent \"fly\"");
        let e = err(r#"{"rules":[{"when":"always","do":"expand"}],"reserv":3}"#);
        assert_eq!(e.path(), "reserv");
        assert!(matches!(e, PlanError::UnknownKey { .. }));
        let e = err(r#"{"rules":[{"when":"always","do":"expand"}],"reserve":1001}"#);
        assert_eq!(e.to_string(), "reserve: 1001 is out of range 0..=1000");
        let e = err(r#"{"rules":[]}"#);
        assert_eq!(e.path(), "rules");
        assert!(matches!(e, PlanError::OutOfRange { .. }));
        assert!(matches!(err("not json"), PlanError::NotJson { .. }));
        assert!(matches!(
            err(r#"{"rules":[{"when":"always","do":"expand"}]} x"#),
            PlanError::NotJson { .. }
        ));
    }
}
