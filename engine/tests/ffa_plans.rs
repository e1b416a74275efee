//! generals-ffa plans and the captain, through the public API: the
//! baselines, the validator's error paths, parse on hostile input, and the
//! captain's moves on random views checked against the move rules.

use arena_engine::generals_ffa::captain::compile;
use arena_engine::generals_ffa::plan::{
    self, Cities, Condition, Intent, MAX_LINE, Plan, PlanError, Rule, parse, parse_plan, validate,
};
use arena_engine::generals_ffa::{CellKind, CellView, Move, View};
use proptest::prelude::*;
use serde_json::{Value, json};

fn error_of(line: &[u8]) -> PlanError {
    match parse_plan(line) {
        Err(e) => e,
        Ok(plan) => panic!("{:?} parsed as {plan:?}", String::from_utf8_lossy(line)),
    }
}

const ONE_RULE: &str = r#"{"when":"always","do":"expand"}"#;

#[test]
fn baselines_validate_and_round_trip_through_the_parser() {
    for plan in [plan::sprawl(), plan::crown()] {
        assert_eq!(validate(&plan), Ok(()));
        let bytes = serde_json::to_vec(&plan).expect("a plan serialises");
        assert_eq!(parse(&bytes), Ok(plan.clone()));
        // serde's own reading agrees with the schema's.
        assert_eq!(serde_json::from_slice::<Plan>(&bytes).ok(), Some(plan));
    }
    assert_ne!(plan::sprawl(), plan::crown());
}

#[test]
fn the_baselines_are_the_documented_ones() {
    let sprawl = serde_json::to_value(plan::sprawl()).expect("serialises");
    assert_eq!(
        sprawl,
        json!({"rules":[{"when":"crown_threatened","do":"defend"},{"when":{"land_below":25},"do":"expand"},
                        {"when":"always","do":"attack_nearest"},{"when":"always","do":"expand"}],
               "reserve":0,"cities":"cheap","scouts":1})
    );
    let crown = serde_json::to_value(plan::crown()).expect("serialises");
    assert_eq!(
        crown,
        json!({"rules":[{"when":"crown_threatened","do":"defend"},{"when":"crown_known","do":"raid_crown"},
                        {"when":"always","do":"expand"},{"when":"always","do":"attack_nearest"}],
               "reserve":20,"cities":"never","scouts":2})
    );
}

#[test]
fn the_validator_names_what_is_wrong() {
    let e = error_of(format!(r#"{{"rules":[{ONE_RULE}],"colour":"red"}}"#).as_bytes());
    assert_eq!(
        e,
        PlanError::UnknownKey {
            path: "colour".into()
        }
    );

    let e = error_of(br#"{"rules":[{"when":"always","do":"expand"},{"when":"always","do":"expand"},{"when":"always","do":"fly"}]}"#);
    assert_eq!(e.path(), "rules[2].do");
    assert_eq!(
        parse(br#"{"rules":[{"when":"always","do":"fly"}]}"#).map_err(|m| m.reason),
        Err("rules[0].do: unknown intent \"fly\"".into())
    );

    let e = error_of(format!(r#"{{"rules":[{ONE_RULE}],"reserve":1001}}"#).as_bytes());
    assert!(
        matches!(&e, PlanError::OutOfRange { path, max: 1000, .. } if path == "reserve"),
        "{e}"
    );

    let e = error_of(br#"{"rules":[]}"#);
    assert!(
        matches!(&e, PlanError::OutOfRange { path, min: 1, max: 16, .. } if path == "rules"),
        "{e}"
    );

    let seventeen = vec![ONE_RULE; 17].join(",");
    let e = error_of(format!(r#"{{"rules":[{seventeen}]}}"#).as_bytes());
    assert!(
        matches!(&e, PlanError::OutOfRange { path, .. } if path == "rules"),
        "{e}"
    );
    let sixteen = vec![ONE_RULE; 16].join(",");
    assert!(parse(format!(r#"{{"rules":[{sixteen}]}}"#).as_bytes()).is_ok());

    assert!(matches!(
        error_of(b"expand please"),
        PlanError::NotJson { .. }
    ));
    assert!(matches!(error_of(b""), PlanError::NotJson { .. }));
    assert!(matches!(
        error_of(b"{\"rules\":[\xff]}"),
        PlanError::NotUtf8 { at: 10 }
    ));
    let garbage = format!(r#"{{"rules":[{ONE_RULE}]}} {{}}"#);
    assert!(matches!(
        error_of(garbage.as_bytes()),
        PlanError::NotJson { .. }
    ));
    assert!(matches!(
        error_of(&vec![b' '; MAX_LINE + 1]),
        PlanError::TooLong { .. }
    ));

    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(matches!(
        error_of(deep.as_bytes()),
        PlanError::NotJson { .. }
    ));
}

#[test]
fn crlf_and_whitespace_are_tolerated() {
    let line = format!("  {{\"rules\":[{ONE_RULE}]}}\t\r");
    assert!(parse(line.as_bytes()).is_ok());
}

/// Any JSON value, a few levels deep, biased towards the schema's words so
/// that the fuzz reaches past the first key check.
fn any_json() -> impl Strategy<Value = Value> {
    let word = prop::sample::select(vec![
        "rules",
        "when",
        "do",
        "reserve",
        "cities",
        "scouts",
        "always",
        "expand",
        "defend",
        "land_below",
        "turn_at_least",
        "cheap",
        "never",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0u64..40).prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        word.clone().prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..20).prop_map(Value::from),
            prop::collection::vec((word.clone(), inner), 0..6).prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

fn any_condition() -> impl Strategy<Value = Condition> {
    prop_oneof![
        Just(Condition::Always),
        Just(Condition::CrownThreatened),
        Just(Condition::EnemyVisible),
        Just(Condition::CrownKnown),
        (0u32..=100).prop_map(Condition::LandBelow),
        (0u32..300).prop_map(Condition::TurnAtLeast),
    ]
}

fn any_intent() -> impl Strategy<Value = Intent> {
    prop::sample::select(vec![
        Intent::Defend,
        Intent::Expand,
        Intent::AttackNearest,
        Intent::RaidCrown,
        Intent::Gather,
    ])
}

fn any_plan() -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec((any_condition(), any_intent()), 1..=16),
        prop_oneof![Just(0u32), 0u32..=1000, 0u32..30],
        prop::sample::select(vec![Cities::Never, Cities::Cheap, Cities::Always]),
        0u32..=4,
    )
        .prop_map(|(rules, reserve, cities, scouts)| Plan {
            rules: rules
                .into_iter()
                .map(|(when, intent)| Rule { when, intent })
                .collect(),
            reserve,
            cities,
            scouts,
        })
}

fn any_cell() -> impl Strategy<Value = CellView> {
    (
        prop::option::weighted(
            0.9,
            prop::sample::select(vec![
                CellKind::Plain,
                CellKind::Plain,
                CellKind::Plain,
                CellKind::Mountain,
                CellKind::City,
                CellKind::Crown,
            ]),
        ),
        prop::option::weighted(0.6, 0usize..5),
        prop::option::weighted(0.8, prop_oneof![0u32..6, 0u32..100, Just(u32::MAX)]),
        prop::option::of(0u32..300),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(kind, owner, army, seen, visible)| CellView {
            kind,
            owner,
            army,
            seen,
            visible,
        })
}

/// Random views, including inconsistent ones: the cell count, the size and
/// the crown need not agree.
fn any_view() -> impl Strategy<Value = View> {
    (1usize..=16, 1usize..=10, 0usize..4, 0u32..300).prop_flat_map(|(width, height, seat, turn)| {
        let n = width * height;
        (
            prop::collection::vec(any_cell(), n.saturating_sub(2)..=n + 2),
            0usize..n + 3,
            prop::array::uniform4(prop::bool::weighted(0.8)),
        )
            .prop_map(move |(cells, crown, alive)| View {
                seat,
                turn,
                max_turns: 240,
                width,
                height,
                cells,
                crown,
                alive,
            })
    })
}

/// The move rules the captain promises: from a visible cell of ours, at
/// most `army - 1 - reserve` armies and at least one, onto an orthogonal
/// neighbour on the board that is known and not a mountain.
fn assert_legal(plan: &Plan, view: &View, found: Move) {
    let n = (view.width * view.height).min(view.cells.len());
    assert!(found.from < n && found.to < n, "{found:?} off the board");
    let from = &view.cells[found.from];
    let to = &view.cells[found.to];
    assert_eq!(
        from.owner,
        Some(view.seat),
        "{found:?} leaves a cell not ours"
    );
    assert!(from.visible, "{found:?} leaves a cell out of sight");
    let army = from.army.expect("a visible cell of ours has an army");
    assert!(army >= 2, "{found:?} leaves a cell of {army}");
    assert!(found.amount >= 1, "{found:?} sends nothing");
    assert!(
        u64::from(found.amount) + 1 + u64::from(plan.reserve) <= u64::from(army),
        "{found:?} breaks reserve {} on {army}",
        plan.reserve
    );
    let (fr, fc) = (found.from / view.width, found.from % view.width);
    let (tr, tc) = (found.to / view.width, found.to % view.width);
    assert_eq!(
        fr.abs_diff(tr) + fc.abs_diff(tc),
        1,
        "{found:?} is no orthogonal step"
    );
    assert!(
        matches!(to.kind, Some(k) if k != CellKind::Mountain),
        "{found:?} targets {to:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_bytes_parse_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn any_json_parses_without_panicking(value in any_json()) {
        let line = serde_json::to_vec(&value).expect("a value serialises");
        match parse(&line) {
            // Whatever passes is a valid plan that survives a round trip.
            Ok(plan) => {
                prop_assert_eq!(validate(&plan), Ok(()));
                let again = serde_json::to_vec(&plan).expect("a plan serialises");
                prop_assert_eq!(parse(&again), Ok(plan));
            }
            Err(malformed) => prop_assert!(!malformed.reason.is_empty()),
        }
    }

    #[test]
    fn valid_plans_round_trip(plan in any_plan()) {
        prop_assert_eq!(validate(&plan), Ok(()));
        let line = serde_json::to_vec(&plan).expect("a plan serialises");
        prop_assert_eq!(parse(&line), Ok(plan));
    }

    #[test]
    fn every_move_is_legal_and_deterministic(plan in any_plan(), view in any_view()) {
        let found = compile(&plan, &view);
        prop_assert_eq!(found, compile(&plan, &view.clone()));
        if let Some(found) = found {
            assert_legal(&plan, &view, found);
        }
        for baseline in [plan::sprawl(), plan::crown()] {
            if let Some(found) = compile(&baseline, &view) {
                assert_legal(&baseline, &view, found);
            }
        }
    }
}

#[test]
fn the_captain_defends_expands_and_attacks() {
    // 4 × 3, we are seat 0 with the crown at 5; everything is in sight.
    let cell = |kind, owner, army| CellView {
        kind: Some(kind),
        owner,
        army: Some(army),
        seen: Some(4),
        visible: true,
    };
    let plain = cell(CellKind::Plain, None, 0);
    let mut cells = vec![plain; 12];
    cells[5] = cell(CellKind::Crown, Some(0), 12);
    let mut view = View {
        seat: 0,
        turn: 4,
        max_turns: 240,
        width: 4,
        height: 3,
        cells,
        crown: 5,
        alive: [true; 4],
    };

    // Nothing near: sprawl expands from the crown onto a plain next to it.
    let found = compile(&plan::sprawl(), &view).expect("a plain to take");
    assert_eq!((found.from, found.amount), (5, 11));
    assert!([1, 4, 6, 9].contains(&found.to));

    // An enemy stack next to the crown: take it.
    view.cells[6] = cell(CellKind::Plain, Some(2), 4);
    assert_eq!(
        compile(&plan::sprawl(), &view),
        Some(Move {
            from: 5,
            to: 6,
            amount: 11
        })
    );

    // crown keeps 20 and has 12: it cannot move at all.
    assert_eq!(compile(&plan::crown(), &view), None);
}
