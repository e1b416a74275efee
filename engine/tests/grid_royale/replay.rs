//! Sessions, replays and the dump, through the registry as the runner uses them.

use arena_engine::grid_royale::GridRoyale;
use arena_engine::replay::open_any;
use arena_engine::{FaultKind, Match, Rules, registry};
use serde_json::{Value, json};

use super::support::duel;

/// A short 4-seat match through the registry: seat 0 sends a legal batch,
/// seat 1 an illegal one, seat 2 garbage, seat 3 times out.
fn played() -> (Box<dyn Match>, Vec<u8>) {
    let entry = registry::find("grid-royale").unwrap();
    let rules = Rules::parse_pairs("max_turns=6").unwrap();
    let mut m = entry.create(11, 4, &rules).unwrap();
    let mut frame = Vec::new();
    loop {
        frame.clear();
        m.write_frame(0, &mut frame);
        let obs: Value = serde_json::from_slice(&frame).unwrap();
        let mine = obs["units"][0]["id"].clone();
        let legal = json!({"orders": [{"unit": mine, "do": "MOVE_E"}], "spawn": true}).to_string();
        assert_eq!(m.offer(0, legal.as_bytes()).unwrap(), None, "{obs}");
        let wrong = json!({"orders": [{"unit": mine, "do": "STAY"}]}).to_string();
        assert_eq!(
            m.offer(1, wrong.as_bytes()).unwrap(),
            Some(FaultKind::Illegal)
        );
        assert_eq!(m.offer(2, b"garbage").unwrap(), Some(FaultKind::Illegal));
        m.offer_fallback(3, Some(FaultKind::Timeout));
        if m.step().is_some() {
            break;
        }
    }
    let json = m.replay_json(11).unwrap();
    (m, json)
}

#[test]
fn a_replay_verifies_and_dumps_state_lines_and_no_action_nulls() {
    let (m, bytes) = played();
    assert_eq!(m.turn(), 6);
    assert_eq!(m.outcome().unwrap().reason, "turn_limit");
    let replay = open_any(&bytes).unwrap();
    replay.verify().unwrap();
    let lines = replay.dump().unwrap();
    assert_eq!(lines.len(), 6 + 2);
    let initial = &lines[0]["initial"];
    assert_eq!(initial["turn"], 1);
    assert!(initial.get("you").is_none() && initial.get("fuel").is_none());
    assert_eq!(initial["width"], 32);
    for key in [
        "max_turns",
        "height",
        "safe_zone",
        "ore",
        "bases",
        "banks",
        "units",
        "params",
    ] {
        assert!(initial.get(key).is_some(), "{key}");
    }
    let first = &lines[1];
    assert_eq!(first["turn"], 1);
    assert_eq!(first["actions"][0]["orders"][0]["do"], "MOVE_E");
    assert_eq!(first["actions"][1], Value::Null);
    assert_eq!(first["actions"][3], Value::Null);
    assert_eq!(
        first["faults"],
        json!([null, "illegal", "illegal", "timeout"])
    );
    assert_eq!(
        first["state"]["turn"], 2,
        "the state the next observation shows"
    );
    assert!(lines.last().unwrap()["result"]["ranks"].is_array());
}

#[test]
fn a_tampered_replay_is_caught() {
    let (_, bytes) = played();
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    doc["turns"][2]["actions"][3] = json!({"orders": [], "spawn": true});
    let replay = open_any(&serde_json::to_vec(&doc).unwrap()).unwrap();
    // Seat 3 has no bank, so the spawn changes nothing: still verifies.
    replay.verify().unwrap();
    doc["turns"][0]["actions"][0] = Value::Null;
    let replay = open_any(&serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(replay.verify().is_err());
}

#[test]
fn forged_states_are_refused_on_load() {
    let g = duel(&[], &[(0, 2, 0, 0), (1, 6, 6, 0)]);
    let good = serde_json::to_value(&g).unwrap();
    let back: GridRoyale = serde_json::from_value(good.clone()).unwrap();
    assert_eq!(back, g);
    for (path, value) in [
        ("/units/0/x", json!(8)),
        ("/units/0/owner", json!(2)),
        ("/units/0/cargo", json!(1001)),
        ("/units/1/id", json!(0)),
        ("/next_id", json!(1)),
        ("/bases/1", json!({"x": 1, "y": 1})),
        ("/banks", json!([0])),
        ("/ore", json!([1, 2, 3])),
        ("/zone/x1", json!(9)),
        ("/turn", json!(400)),
        ("/params/harvest_divisor", json!(0)),
        ("/params/min_zone", json!(7)),
    ] {
        let mut bad = good.clone();
        *bad.pointer_mut(path).unwrap() = value;
        assert!(serde_json::from_value::<GridRoyale>(bad).is_err(), "{path}");
    }
}

#[test]
fn the_registry_checks_options_and_seats() {
    let entry = registry::find("grid-royale").unwrap();
    assert_eq!(entry.seats, &[2, 4]);
    for seats in [2, 4] {
        let m = entry.create(3, seats, &Rules::default()).unwrap();
        let mut frame = Vec::new();
        m.write_frame(0, &mut frame);
        let obs: Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(obs["width"], if seats == 2 { 24 } else { 32 });
        assert_eq!(obs["max_turns"], 400);
        let mut handshake = Vec::new();
        m.write_handshake(0, &mut handshake);
        assert!(handshake.is_empty(), "every line is an observation");
    }
    assert!(entry.create(3, 3, &Rules::default()).is_err());
    let small = Rules::parse_pairs("side=12,min_zone=4,spawn_cost=100").unwrap();
    assert!(entry.create(3, 2, &small).is_ok());
    for bad in [
        "side=13",
        "min_zone=7",
        "side=10,min_zone=12",
        "harvest_divisor=0",
    ] {
        assert!(
            entry
                .create(3, 2, &Rules::parse_pairs(bad).unwrap())
                .is_err(),
            "{bad}"
        );
    }
}
