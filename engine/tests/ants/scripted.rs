//! The seed's five scripted replays on a six-by-eight board, each played
//! with the narrated orders and checked against every death, killer, score
//! and ending the seed names. Red is seat 0, blue seat 1.

use arena_engine::Game;
use arena_engine::ants::{Cause, Death, Razing};

use super::support::{board, frame, mine, turn};

fn death(row: usize, col: usize, owner: usize, cause: Cause, killers: &[[usize; 3]]) -> Death {
    Death {
        row,
        col,
        owner,
        cause,
        killers: killers.to_vec(),
    }
}

/// Red's hill at (1,1) and blue's at (4,5): blue's is red's moved by the
/// shift (3, 4).
const SHIFT: (i64, i64) = (3, 4);

#[test]
fn own_ants_colliding_die_without_a_killer_and_blue_is_credited() {
    let mut g = board(
        2,
        SHIFT,
        &[
            "........", ".A......", ".*......", "........", ".....B..", "........",
        ],
    );
    // Turn 1: the hill ant gathers the food below it; nothing spawns yet.
    assert_eq!(turn(&mut g, &["-", "-"]), None);
    assert_eq!(g.hives(), &[1, 0]);
    assert!(g.food().is_empty());
    assert_eq!(mine(&g, 0), vec![[1, 1]]);
    // Turn 2: it steps east and the new ant appears on the hill behind it.
    assert_eq!(turn(&mut g, &["E", "-"]), None);
    assert_eq!(mine(&g, 0), vec![[1, 1], [1, 2]], "the hill ant is entry 0");
    assert_eq!(frame(&g, 0)["mine"], serde_json::json!([[1, 1], [1, 2]]));
    // Turn 3: entry 0 steps onto entry 1, which stays.
    let outcome = turn(&mut g, &["E-", "-"]).expect("the match ends");
    assert_eq!(
        g.deaths(),
        &[
            death(1, 2, 0, Cause::Collision, &[]),
            death(1, 2, 0, Cause::Collision, &[]),
        ]
    );
    assert_eq!(
        g.razings(),
        &[Razing {
            row: 1,
            col: 1,
            owner: 0,
            by: 1
        }]
    );
    assert_eq!(g.scores(), &[0, 3]);
    assert_eq!(outcome.reason, "lone_survivor");
    assert_eq!(outcome.ranks, vec![1, 0]);
    assert_eq!(outcome.scores, vec![0.0, 1.0]);
    assert_eq!(g.turn(), 3);
}

#[test]
fn two_lone_ants_closing_to_distance_five_kill_each_other() {
    let mut g = board(
        2,
        (-1, 4),
        &[
            "........", ".....B..", ".A......", "........", "........", "........",
        ],
    );
    // Turn 1: each steps off its hill; four columns and one row apart.
    assert_eq!(turn(&mut g, &["S", "S"]), None);
    let (red, blue) = (mine(&g, 0)[0], mine(&g, 1)[0]);
    assert_eq!((red, blue), ([3, 1], [2, 5]));
    let t = g.torus();
    assert_eq!(t.dist2(t.square(3, 1), t.square(2, 5)), 17);
    assert!(g.deaths().is_empty());
    // Turn 2: red east, blue west: distance² 5, equal focus, both die.
    let outcome = turn(&mut g, &["E", "W"]).expect("the match ends");
    assert_eq!(t.dist2(t.square(3, 2), t.square(2, 4)), 5);
    assert_eq!(
        g.deaths(),
        &[
            death(2, 4, 1, Cause::Battle, &[[3, 2, 0]]),
            death(3, 2, 0, Cause::Battle, &[[2, 4, 1]]),
        ]
    );
    assert!(g.ants().is_empty());
    assert!(g.razings().is_empty());
    assert_eq!(outcome.reason, "extermination");
    assert_eq!(outcome.ranks, vec![0, 0]);
    assert_eq!(outcome.scores, vec![0.5, 0.5]);
}

#[test]
fn two_supported_ants_kill_a_lone_enemy_and_live() {
    let mut g = board(
        2,
        SHIFT,
        &[
            "........", ".A*.....", "........", "........", ".....B..", "........",
        ],
    );
    // Turn 1: red gathers beside its hill; blue walks west.
    assert_eq!(turn(&mut g, &["-", "W"]), None);
    assert_eq!(g.hives(), &[1, 0]);
    // Turn 2: red's ant steps south and a second one spawns on the hill.
    assert_eq!(turn(&mut g, &["S", "W"]), None);
    assert_eq!(mine(&g, 0), vec![[1, 1], [2, 1]], "red's ants in a column");
    assert_eq!(mine(&g, 1), vec![[4, 3]]);
    let t = g.torus();
    assert_eq!(t.dist2(t.square(2, 1), t.square(4, 3)), 8, "out of range");
    // Turn 3: red steps south, blue west: blue faces two, each red one.
    let outcome = turn(&mut g, &["SS", "W"]).expect("the match ends");
    assert_eq!(
        g.deaths(),
        &[death(4, 2, 1, Cause::Battle, &[[2, 1, 0], [3, 1, 0]])]
    );
    assert_eq!(mine(&g, 0), vec![[2, 1], [3, 1]], "both red ants live");
    assert_eq!(
        g.razings(),
        &[Razing {
            row: 4,
            col: 5,
            owner: 1,
            by: 0
        }]
    );
    assert!(g.hills()[1].razed.is_some());
    assert_eq!(outcome.reason, "lone_survivor");
    // 3–0 in the game's points; the result carries placement points.
    assert_eq!(g.scores(), &[3, 0]);
    assert_eq!(outcome.scores, vec![1.0, 0.0]);
    assert_eq!(outcome.ranks, vec![0, 1]);
}

#[test]
fn razing_an_unguarded_hill_ends_rank_stabilized() {
    let mut g = board(
        2,
        SHIFT,
        &[
            "........", ".A......", "........", "........", ".....B..", "........",
        ],
    );
    let script = [
        ("S", "N"),
        ("S", "N"),
        ("S", "N"),
        ("E", "-"),
        ("E", "-"),
        ("E", "-"),
    ];
    for (red, blue) in script {
        assert_eq!(turn(&mut g, &[red, blue]), None);
        assert!(g.deaths().is_empty());
        assert_eq!(g.scores(), &[1, 1]);
    }
    assert_eq!(mine(&g, 0), vec![[4, 4]], "one square from blue's hill");
    assert_eq!(mine(&g, 1), vec![[1, 5]], "three north, out of range");
    let outcome = turn(&mut g, &["E", "-"]).expect("the match ends");
    assert_eq!(g.turn(), 7);
    assert!(g.deaths().is_empty());
    assert_eq!(
        g.razings(),
        &[Razing {
            row: 4,
            col: 5,
            owner: 1,
            by: 0
        }]
    );
    let razed = g.hills()[1].razed.expect("blue's hill is razed");
    assert_eq!((razed.turn, razed.by), (7, 0));
    assert!(g.hills()[0].razed.is_none(), "red's hill still stands");
    assert_eq!(g.scores(), &[3, 0]);
    assert_eq!(outcome.reason, "rank_stabilized");
    assert_eq!(outcome.ranks, vec![0, 1]);
    assert_eq!(outcome.scores, vec![1.0, 0.0]);
}

#[test]
fn food_gathered_on_one_turn_spawns_on_the_next() {
    let mut g = board(
        2,
        SHIFT,
        &[
            "........", ".A*.....", "........", "........", ".....B*.", "........",
        ],
    );
    // Turn 1: both gather; the food is gone and no ant has appeared.
    assert_eq!(turn(&mut g, &["-", "-"]), None);
    assert!(g.food().is_empty());
    assert_eq!(g.hives(), &[1, 1]);
    assert_eq!(g.ants().len(), 2);
    assert_eq!(frame(&g, 0)["hive"], 1);
    assert_eq!(frame(&g, 0)["food"], serde_json::json!([]));
    // Turn 2: red's gatherer steps off and the new ant stands on the hill.
    assert_eq!(turn(&mut g, &["E", "-"]), None);
    assert_eq!(mine(&g, 0), vec![[1, 1], [1, 2]]);
    assert_eq!(g.hives()[0], 0);
    // Blue's own ant holds its only hill: blue never spawns.
    for _ in 0..5 {
        assert_eq!(turn(&mut g, &["--", "-"]), None);
        assert_eq!(mine(&g, 1), vec![[4, 5]]);
        assert_eq!(g.hives()[1], 1);
    }
    assert!(g.hills().iter().all(|h| h.razed.is_none()));
}
