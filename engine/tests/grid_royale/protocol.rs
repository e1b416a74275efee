//! The observation a seat reads and the replies it may write.

use arena_engine::grid_royale::protocol::{state_value, write_observation};
use arena_engine::grid_royale::{Action, Dir, Fuel, Illegal, Order, Orders};
use arena_engine::{FaultKind, Game};
use serde_json::{Value, json};

use super::support::{duel, idle};

fn observation(game: &impl Game, seat: usize) -> Value {
    let mut out = Vec::new();
    game.write_frame(seat, &mut out);
    assert_eq!(out.last(), Some(&b'\n'), "one line");
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn the_observation_is_the_seed_object_with_fuel_null_for_a_process() {
    let mut g = duel(&[(2, 0, 7), (0, 3, 9)], &[(0, 2, 0, 5), (1, 6, 6, 0)]);
    let obs = observation(&g, 1);
    let keys: Vec<&str> = obs
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "turn",
        "max_turns",
        "you",
        "width",
        "height",
        "safe_zone",
        "ore",
        "bases",
        "banks",
        "units",
        "params",
        "fuel",
    ];
    expected.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, expected);
    assert_eq!(obs["turn"], 1, "turns count from 1");
    assert_eq!(obs["you"], 1);
    assert_eq!(
        (obs["width"].clone(), obs["height"].clone()),
        (json!(8), json!(8))
    );
    assert_eq!(
        obs["safe_zone"],
        json!({"x0": 0, "y0": 0, "x1": 7, "y1": 7})
    );
    assert_eq!(obs["ore"].as_array().unwrap().len(), 8);
    assert_eq!(obs["ore"][0][2], 7, "row-major: ore[y][x]");
    assert_eq!(obs["ore"][3][0], 9);
    assert_eq!(
        obs["bases"],
        json!([{"owner": 0, "x": 1, "y": 1}, {"owner": 1, "x": 6, "y": 6}])
    );
    assert_eq!(obs["banks"], json!([0, 0]));
    assert_eq!(
        obs["units"],
        json!([
            {"id": 0, "owner": 0, "x": 2, "y": 0, "cargo": 5},
            {"id": 1, "owner": 1, "x": 6, "y": 6, "cargo": 0}
        ])
    );
    assert_eq!(
        obs["params"],
        json!({"cargo_cap": 1000, "spawn_cost": 500, "move_cost_divisor": 10,
               "harvest_divisor": 4, "units_cap": 50})
    );
    assert_eq!(obs["fuel"], Value::Null);
    g.step(&idle(2));
    assert_eq!(observation(&g, 0)["turn"], 2);
}

#[test]
fn a_fuel_host_reports_the_allowance_and_the_bank() {
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0)]);
    let mut out = Vec::new();
    let fuel = Fuel {
        allowance: 5_000_000,
        bank: 20_000_000,
    };
    write_observation(&g, 0, Some(fuel), &mut out);
    let obs: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        obs["fuel"],
        json!({"allowance": 5_000_000, "bank": 20_000_000})
    );
}

#[test]
fn a_state_line_is_the_observation_without_you_and_fuel() {
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0)]);
    let state = state_value(&g);
    let mut obs = observation(&g, 0);
    let map = obs.as_object_mut().unwrap();
    map.remove("you");
    map.remove("fuel");
    assert_eq!(state, obs);
    assert_eq!(g.dump_state(), state);
}

fn parsed(
    game: &impl Game<Action = Action>,
    seat: usize,
    line: &str,
) -> (Action, Option<FaultKind>) {
    let action = game
        .parse_action(seat, line.as_bytes())
        .expect("never malformed");
    let fault = game.reply_fault(seat, &action);
    (action, fault)
}

#[test]
fn legal_replies_parse_into_batches() {
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0), (0, 3, 3, 0)]);
    let (action, fault) = parsed(
        &g,
        0,
        r#"{"orders": [{"unit": 0, "do": "MOVE_N"}, {"unit": 2, "do": "STAY"}], "spawn": true}"#,
    );
    assert_eq!(fault, None);
    assert_eq!(
        action,
        Action(Some(Orders {
            orders: vec![
                Order {
                    unit: 0,
                    dir: Dir::North
                },
                Order {
                    unit: 2,
                    dir: Dir::Stay
                }
            ],
            spawn: true
        }))
    );
    // spawn is optional, and so are the orders.
    for line in [r#"{"orders": []}"#, "{}", " {\"spawn\": false}\r"] {
        let (action, fault) = parsed(&g, 0, line);
        assert_eq!(
            (action, fault),
            (Action(Some(Orders::default())), None),
            "{line:?}"
        );
    }
}

#[test]
fn a_refused_batch_is_a_no_action_turn_with_an_illegal_fault() {
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0)]);
    for line in [
        "",
        "not json",
        "[]",
        "null",
        r#"{"orders": [{"unit": 0, "do": "MOVE_UP"}]}"#,
        r#"{"orders": [{"unit": 1, "do": "STAY"}]}"#,
        r#"{"orders": [{"unit": 7, "do": "STAY"}]}"#,
        r#"{"orders": [{"unit": -1, "do": "STAY"}]}"#,
        r#"{"orders": [{"unit": 4294967296, "do": "STAY"}]}"#,
        r#"{"orders": [{"unit": 0, "do": "STAY"}, {"unit": 0, "do": "MOVE_E"}]}"#,
        r#"{"orders": [], "spawn": 1}"#,
        r#"{"orders": [], "spwan": true}"#,
        r#"{"orders": [{"unit": 0, "do": "STAY", "why": "x"}]}"#,
        "\u{fffd}",
    ] {
        assert_eq!(
            parsed(&g, 0, line),
            (Action::NONE, Some(FaultKind::Illegal)),
            "{line:?}"
        );
    }
    assert_eq!(g.fallback_action(0), Action::NONE);
}

#[test]
fn the_reasons_name_what_is_wrong() {
    use arena_engine::grid_royale::protocol::parse_reply;
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0)]);
    let reason = |line: &str| parse_reply(&g, 0, line.as_bytes()).unwrap_err();
    assert!(matches!(reason("{"), Illegal::Syntax(_)));
    assert_eq!(
        reason(r#"{"orders":[{"unit":0,"do":"JUMP"}]}"#),
        Illegal::UnknownDo("JUMP".into())
    );
    assert_eq!(
        reason(r#"{"orders":[{"unit":1,"do":"STAY"}]}"#),
        Illegal::NotYours(1)
    );
    assert_eq!(
        reason(r#"{"orders":[{"unit":0,"do":"STAY"},{"unit":0,"do":"STAY"}]}"#),
        Illegal::Twice(0)
    );
}

#[test]
fn actions_serialise_as_the_reply_and_dump_null_for_no_action() {
    let action = Action(Some(Orders {
        orders: vec![Order {
            unit: 3,
            dir: Dir::West,
        }],
        spawn: false,
    }));
    assert_eq!(
        serde_json::to_value(&action).unwrap(),
        json!({"orders": [{"unit": 3, "do": "MOVE_W"}], "spawn": false})
    );
    // In a replay file `null` means "not due", so no action is a word there;
    // the dump prints it as null.
    assert_eq!(serde_json::to_value(Action::NONE).unwrap(), json!("none"));
    let back: Option<Action> = serde_json::from_value(json!("none")).unwrap();
    assert_eq!(back, Some(Action::NONE));
    let back: Option<Action> = serde_json::from_value(Value::Null).unwrap();
    assert_eq!(back, None);
    assert_eq!(Action::dump(Some(&Action::NONE)), Value::Null);
    assert_eq!(Action::dump(None), Value::Null);
    assert_eq!(Action::dump(Some(&action))["orders"][0]["unit"], 3);
}
