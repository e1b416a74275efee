//! The handshake, the frame, the reply parser and the baselines.

use arena_engine::Game;
use serde_json::{Value, json};

use super::support::{board, frame, reply};

fn duel() -> arena_engine::ants::Ants {
    board(
        2,
        (3, 4),
        &[
            "%.......", ".A*.....", "..a.....", "........", ".....B..", "........",
        ],
    )
}

#[test]
fn the_handshake_names_the_game_and_its_numbers() {
    let g = duel();
    let mut out = Vec::new();
    g.write_handshake(1, &mut out);
    let h: Value = serde_json::from_slice(&out).unwrap();
    for (key, value) in [
        ("game", json!("ants")),
        ("you", json!(1)),
        ("players", json!(2)),
        ("rows", json!(6)),
        ("cols", json!(8)),
        ("max_turns", json!(1000)),
        ("attack_radius2", json!(5)),
        ("gather_radius2", json!(1)),
        ("view_radius2", json!(77)),
    ] {
        assert_eq!(h[key], value, "{key}");
    }
}

#[test]
fn the_frame_has_the_contract_fields() {
    let g = duel();
    let f = frame(&g, 0);
    assert_eq!(f["turn"], 1);
    assert_eq!(f["max_turns"], 1000);
    assert_eq!(f["you"], 0);
    assert_eq!(f["players"], 2);
    assert_eq!((f["rows"].clone(), f["cols"].clone()), (json!(6), json!(8)));
    assert_eq!(f["attack_radius2"], 5);
    assert_eq!(f["gather_radius2"], 1);
    assert_eq!(f["view_radius2"], 77);
    let map: Vec<&str> = f["map"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(map.len(), 6);
    assert_eq!(map[0], "%.......");
    assert!(map.iter().all(|r| r.len() == 8));
    assert_eq!(f["ants"], json!([[1, 1, 0], [2, 2, 0], [4, 5, 1]]));
    assert_eq!(f["mine"], json!([[1, 1], [2, 2]]));
    assert_eq!(f["food"], json!([[1, 2]]));
    assert_eq!(f["hills"], json!([[1, 1, 0], [4, 5, 1]]));
    assert_eq!(f["hive"], 0);
    assert_eq!(f["scores"], json!([1, 1]));
    let keys: Vec<&String> = f.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 16, "{keys:?}");
}

#[test]
fn replies_are_exactly_one_letter_per_ant() {
    let g = duel();
    assert_eq!(
        g.parse_action(0, reply("N-").as_bytes()).unwrap().letters(),
        "N-"
    );
    assert!(g.parse_action(1, reply("W").as_bytes()).is_ok());
    assert!(g.parse_action(1, br#" {"orders": "S"} "#).is_ok());
    for bad in [
        reply("N"),
        reply("N--"),
        reply("Nx"),
        reply("n-"),
        r#"{"orders":["N","-"]}"#.to_owned(),
        r#"{"orders":"N-","extra":1}"#.to_owned(),
        r#"{"orders":"N-"} x"#.to_owned(),
        r#"["N-"]"#.to_owned(),
        "N-".to_owned(),
        String::new(),
    ] {
        assert!(g.parse_action(0, bad.as_bytes()).is_err(), "{bad:?}");
    }
    assert!(g.parse_action(0, &[0xff, 0xfe]).is_err());
    assert_eq!(g.fallback_action(0).letters(), "");
}

#[test]
fn baselines_answer_with_parseable_replies() {
    let g = duel();
    for name in ["hold", "forage"] {
        for seat in 0..2 {
            let mut out = Vec::new();
            assert!(g.write_baseline_reply(name, seat, &mut out));
            assert_eq!(out.pop(), Some(b'\n'));
            assert!(g.parse_action(seat, &out).is_ok(), "{name}");
        }
    }
    let mut out = Vec::new();
    g.write_baseline_reply("hold", 0, &mut out);
    assert_eq!(out, b"{\"orders\":\"--\"}\n");
    assert!(!g.write_baseline_reply("nope", 0, &mut Vec::new()));
}

#[test]
fn forage_walks_toward_food_and_stays_beside_it() {
    let g = board(
        2,
        (3, 4),
        &[
            "........", ".A......", "........", "........", ".....B..", "......*.",
        ],
    );
    let mut out = Vec::new();
    g.write_baseline_reply("forage", 1, &mut out);
    // Blue's ant at (4,5): food at (5,6) is two steps away.
    let letters = serde_json::from_slice::<Value>(&out).unwrap()["orders"].clone();
    assert!(letters == "S" || letters == "E", "{letters}");
    let g = duel();
    let mut out = Vec::new();
    g.write_baseline_reply("forage", 0, &mut out);
    // The hill ant is next to the food: it stays and gathers.
    let letters = serde_json::from_slice::<Value>(&out).unwrap()["orders"].clone();
    assert_eq!(letters.as_str().unwrap().as_bytes()[0], b'-');
}

#[test]
fn the_dump_names_deaths_killers_and_razings_in_absolute_seats() {
    let mut g = board(
        2,
        (3, 4),
        &[
            "........", ".A......", "........", "........", "....a1.b", "........",
        ],
    );
    super::support::turn(&mut g, &["-E", "-"]);
    let d = g.dump_state();
    assert_eq!(d["turn"], 1);
    // Blue has no ant left: red is credited with blue's hill.
    assert_eq!(d["scores"], json!([3, 0]));
    assert_eq!(d["hives"], json!([0, 0]));
    assert_eq!(d["ants"], json!([[1, 1, 0]]));
    assert_eq!(
        d["deaths"],
        json!([
            {"row": 4, "col": 5, "owner": 0, "cause": "battle", "killers": [[4, 7, 1]]},
            {"row": 4, "col": 7, "owner": 1, "cause": "battle", "killers": [[4, 5, 0]]},
        ])
    );
    assert_eq!(
        d["razings"],
        json!([{"row": 4, "col": 5, "owner": 1, "by": 0}])
    );
    assert_eq!(
        d["hills"],
        json!([
            {"row": 1, "col": 1, "owner": 0, "razed": false},
            {"row": 4, "col": 5, "owner": 1, "razed": true, "razed_turn": 1, "by": 0},
        ])
    );
    assert_eq!(d["water"][0], "........");
    assert_eq!(d["food"], json!([]));
}
