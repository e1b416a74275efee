//! Every rule on hand-made positions.

use arena_engine::ants::{Cause, Params};

use super::support::{board, frame, mine, turn, with_params};

const SHIFT: (i64, i64) = (3, 4);

/// Red's hill at (1,1), blue's at (4,5), with the ants placed by `rows`.
fn duel(rows: &[&str]) -> arena_engine::ants::Ants {
    board(2, SHIFT, rows)
}

#[test]
fn moves_wrap_at_both_edges() {
    let mut g = duel(&[
        "...a...a", ".0......", "........", "........", ".....1..", "b.......",
    ]);
    // Red: (0,3) north wraps to row 5; (0,7) east wraps to column 0.
    assert_eq!(mine(&g, 0), vec![[0, 3], [0, 7]]);
    // Blue (5,0) stays; red's (0,7) east lands on (0,0), next to it.
    turn(&mut g, &["NE", "-"]);
    assert_eq!(g.deaths().len(), 2, "{:?}", g.deaths());
    assert!(g.deaths().iter().all(|d| d.cause == Cause::Battle));
    assert_eq!(mine(&g, 0), vec![[5, 3]]);
    // Blue at (5,0) and red at (0,0) were one row apart across the edge.
    let killed_blue = g.deaths().iter().find(|d| d.owner == 1).unwrap();
    assert_eq!(killed_blue.killers, vec![[0, 0, 0]]);
}

#[test]
fn distances_wrap_across_the_corner() {
    let g = duel(&[
        "a......b", ".0......", "........", "........", ".....1..", "........",
    ]);
    let t = g.torus();
    assert_eq!(t.dist2(t.square(0, 0), t.square(0, 7)), 1);
    assert_eq!(t.dist2(t.square(0, 0), t.square(5, 7)), 2);
    assert_eq!(t.dist2(t.square(1, 1), t.square(4, 5)), 25);
    let mut g = g;
    turn(&mut g, &["-", "-"]);
    assert_eq!(g.deaths().len(), 2, "neighbours across the edge fight");
}

#[test]
fn the_positional_order_follows_the_squares_each_turn() {
    let mut g = duel(&[
        "........", ".0...a..", ".a......", "........", ".....1.b", "........",
    ]);
    assert_eq!(mine(&g, 0), vec![[1, 5], [2, 1]]);
    // Entry 0 is (1,5): south puts it below the other ant's row.
    turn(&mut g, &["S-", "-"]);
    assert_eq!(mine(&g, 0), vec![[2, 1], [2, 5]]);
    // Now entry 0 is the other ant.
    turn(&mut g, &["N-", "-"]);
    assert_eq!(mine(&g, 0), vec![[1, 1], [2, 5]]);
}

#[test]
fn water_and_food_refuse_a_move() {
    let mut g = duel(&[
        ".%......", ".A*.....", "........", "........", ".....1..", "......b.",
    ]);
    // East is food: a stay (and the food, next to it, is gathered).
    turn(&mut g, &["E", "-"]);
    assert_eq!(mine(&g, 0), vec![[1, 1]]);
    assert_eq!(g.hives()[0], 1);
    // North is water: a stay.
    turn(&mut g, &["N", "-"]);
    assert_eq!(mine(&g, 0), vec![[1, 1]]);
}

#[test]
fn swaps_do_not_collide_and_enemies_that_swap_still_fight() {
    let mut g = duel(&[
        "........", ".0......", "...aa...", "........", ".....1..", "b.......",
    ]);
    turn(&mut g, &["EW", "-"]);
    assert!(g.deaths().is_empty());
    assert_eq!(mine(&g, 0), vec![[2, 3], [2, 4]]);

    let mut g = duel(&[
        "........", ".0......", "...ab...", "........", ".....1..", "........",
    ]);
    turn(&mut g, &["E", "W"]);
    assert_eq!(g.deaths().len(), 2);
    assert!(g.deaths().iter().all(|d| d.cause == Cause::Battle));
    assert_eq!(g.deaths()[0].killers, vec![[2, 4, 0]]);
}

#[test]
fn focus_is_counted_before_anyone_is_removed() {
    // Red a1 at (2,2) and a2 at (2,6); blue b at (2,4) between them faces
    // two (focus 2); each red faces one (focus 1): blue dies, reds live.
    let mut g = duel(&[
        "........", ".0......", "..a.b.a.", "........", ".....1..", "........",
    ]);
    turn(&mut g, &["--", "-"]);
    assert_eq!(g.deaths().len(), 1);
    assert_eq!(g.deaths()[0].owner, 1);
    assert_eq!(g.deaths()[0].killers, vec![[2, 2, 0], [2, 6, 0]]);
    assert_eq!(mine(&g, 0).len(), 2);
}

#[test]
fn hills_spawn_untouched_longest_first_and_ties_go_to_the_listing_order() {
    let mut g = duel(&[
        "0.0.....", "........", ".....a*.", ".b..1.1.", ".....*..", "........",
    ]);
    // Seat 0's hills, row-major: (0,0) then (0,2); seat 1's are their images.
    let listed: Vec<_> = g.hills().iter().map(|h| (h.square, h.owner)).collect();
    let t = g.torus();
    assert_eq!(
        listed,
        vec![
            (t.square(0, 0), 0),
            (t.square(0, 2), 0),
            (t.square(3, 4), 1),
            (t.square(3, 6), 1)
        ]
    );
    // Turn 1: gather one food.
    turn(&mut g, &["-", "-"]);
    assert_eq!(g.hives()[0], 1);
    // Turn 2: both hills untouched: the first listed spawns. The gatherer
    // steps next to the second food and gathers it.
    turn(&mut g, &["S", "-"]);
    assert_eq!(mine(&g, 0), vec![[0, 0], [3, 5]]);
    assert_eq!(g.hives()[0], 1);
    assert_eq!(g.hills()[0].touched, 2);
    // Turn 3: the new ant steps off; (0,0) was touched on turn 2, (0,2)
    // never: (0,2) goes first although it is listed second.
    turn(&mut g, &["E-", "-"]);
    assert_eq!(mine(&g, 0), vec![[0, 1], [0, 2], [3, 5]]);
    assert_eq!(g.hills()[1].touched, 3);
}

#[test]
fn an_own_ant_standing_on_a_hill_touches_it() {
    let mut g = duel(&[
        "0.0.....", ".a......", "........", "....1.1b", "........", "........",
    ]);
    // Turn 1: red steps onto its first hill and touches it.
    turn(&mut g, &["N", "-"]);
    assert_eq!(mine(&g, 0), vec![[0, 1]]);
    let mut g2 = g.clone();
    turn(&mut g2, &["W", "-"]);
    assert_eq!(g2.hills()[0].touched, 2);
    assert_eq!(g2.hills()[1].touched, 0);
    turn(&mut g, &["-", "-"]);
    assert_eq!(g.hills()[0].touched, 0);
}

#[test]
fn an_attacker_killed_on_the_hill_razes_nothing() {
    let mut g = duel(&[
        "........", ".0......", "........", "........", "....a1.b", "........",
    ]);
    // Red steps onto blue's hill into range of its defender: both die.
    let outcome = turn(&mut g, &["E", "-"]).expect("no ants left");
    assert_eq!(g.deaths().len(), 2);
    assert!(g.razings().is_empty());
    assert!(g.hills().iter().all(|h| h.razed.is_none()));
    assert_eq!(g.scores(), &[1, 1]);
    assert_eq!(outcome.reason, "extermination");
}

#[test]
fn a_defender_killed_on_its_hill_is_replaced_in_the_same_turn() {
    let mut g = duel(&[
        "........", ".0......", "........", "........", ".....B*.", "...a....",
    ]);
    // Turn 1: blue gathers (hive 1) while red steps out of range.
    turn(&mut g, &["W", "-"]);
    assert_eq!(g.hives()[1], 1);
    assert!(g.deaths().is_empty());
    // Turn 2: red closes in (focus 1 each): both die; blue's hill is free
    // and the hive refills it at once.
    turn(&mut g, &["E", "-"]);
    assert_eq!(g.deaths().len(), 2);
    assert_eq!(mine(&g, 1), vec![[4, 5]]);
    assert_eq!(g.hives()[1], 0);
}

#[test]
fn food_contested_by_two_colonies_is_destroyed() {
    // With attack radius 0 no fight happens, so both gatherers live.
    let params = Params {
        food_rate: 0,
        attack_radius2: 0,
        ..Params::standard(2)
    };
    let mut g = with_params(
        params,
        SHIFT,
        &[
            "........", ".0......", "..a*b...", "........", ".....1..", "......*a",
        ],
    );
    turn(&mut g, &["--", "-"]);
    // (2,3) is reached by both and destroyed; (5,6) by red alone.
    assert_eq!(g.hives(), &[1, 0]);
    assert!(g.food().is_empty());
}

#[test]
fn food_nobody_reaches_stays() {
    let mut g = duel(&[
        "........", ".A......", "....*...", "........", ".....B..", "........",
    ]);
    turn(&mut g, &["-", "-"]);
    assert_eq!(g.food().len(), 1);
    assert_eq!(g.hives(), &[0, 0]);
}

#[test]
fn food_waits_in_the_hive_while_no_hill_is_free() {
    let mut g = duel(&[
        "........", ".A**....", "........", "........", ".....B..", "........",
    ]);
    // Turn 1 gathers (1,2); turn 2 the hill ant stays, (1,3) is out of reach.
    turn(&mut g, &["-", "-"]);
    turn(&mut g, &["-", "-"]);
    assert_eq!(g.hives()[0], 1);
    assert_eq!(mine(&g, 0).len(), 1);
    // Turn 3: it steps off onto the gathered square, the hive spawns.
    turn(&mut g, &["E", "-"]);
    assert_eq!(mine(&g, 0), vec![[1, 1], [1, 2]]);
}

#[test]
fn vision_accumulates_what_a_colony_knows() {
    // 30 × 30: red's ant at (0,0) sees within distance² 77.
    let mut rows = vec![".".repeat(30); 30];
    rows[0].replace_range(0..1, "A");
    rows[1].replace_range(22..23, "%");
    rows[15].replace_range(15..16, "B");
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut g = board(2, (15, 15), &rows);
    let at = |f: &serde_json::Value, r: usize, c: usize| {
        f["map"][r].as_str().unwrap().as_bytes()[c] as char
    };
    let f = frame(&g, 0);
    assert_eq!(at(&f, 0, 8), '.', "distance² 64");
    assert_eq!(at(&f, 0, 9), '?', "distance² 81");
    assert_eq!(at(&f, 0, 22), '.', "column 22 is 8 away, wrapping");
    assert_eq!(at(&f, 1, 22), '%');
    assert_eq!(at(&f, 15, 15), '?');
    assert_eq!(
        f["ants"],
        serde_json::json!([[0, 0, 0]]),
        "blue is not in view"
    );
    turn(&mut g, &["E", "-"]);
    let f = frame(&g, 0);
    assert_eq!(at(&f, 0, 9), '.', "now in view");
    assert_eq!(at(&f, 0, 22), ',', "seen before, out of view now");
    assert_eq!(at(&f, 1, 22), '%', "water stays known");
    // Blue's view: its own hill is known, red's ant is out of sight.
    let b = frame(&g, 1);
    assert_eq!(b["hills"], serde_json::json!([[15, 15, 0]]));
    assert_eq!(b["ants"], serde_json::json!([[15, 15, 0]]));
}

#[test]
fn frames_speak_in_relative_owners() {
    let mut g = board(
        3,
        (2, 3),
        &[
            "A.......", "........", "...B....", "........", "......C.", "........",
        ],
    );
    // Owner k is seat (you + k) mod 3.
    let f = frame(&g, 1);
    assert_eq!(f["you"], 1);
    assert_eq!(f["mine"], serde_json::json!([[2, 3]]));
    assert_eq!(
        f["ants"],
        serde_json::json!([[0, 0, 2], [2, 3, 0], [4, 6, 1]])
    );
    assert_eq!(
        f["hills"],
        serde_json::json!([[0, 0, 2], [2, 3, 0], [4, 6, 1]])
    );
    // Seat 2's turn to read: the same ants, owners rotated once more.
    turn(&mut g, &["-", "-", "-"]);
    let f = frame(&g, 2);
    assert_eq!(
        f["ants"],
        serde_json::json!([[0, 0, 1], [2, 3, 2], [4, 6, 0]])
    );
    assert_eq!(f["scores"], serde_json::json!([1, 1, 1]));
}

#[test]
fn the_last_colony_is_credited_with_every_standing_enemy_hill() {
    // Three seats; seats 1 and 2 lose their only ants in one turn to
    // a collision each; seat 0 takes both hills.
    let mut g = board(
        3,
        (2, 3),
        &[
            "A.......", "........", "...1b...", "...b....", "......2c", "......c.",
        ],
    );
    let outcome = turn(&mut g, &["-", "WN", "WN"]).expect("one colony left");
    assert_eq!(g.deaths().len(), 4);
    assert_eq!(g.scores(), &[5, 0, 0]);
    assert_eq!(g.razings().len(), 2);
    assert_eq!(outcome.reason, "lone_survivor");
    assert_eq!(outcome.ranks, vec![0, 1, 1]);
}

#[test]
fn random_food_is_placed_on_every_colony_s_image_at_once() {
    // Every colony holds: the whole state stays symmetric, so the food
    // set must be invariant under the shift after every turn.
    use arena_engine::Game;
    use arena_engine::ants::{Ants, Orders, mapgen};
    for seed in 0..6u64 {
        let players = 2 + seed as usize % 3;
        let params = Params {
            food_rate: 300,
            max_turns: 80,
            ..Params::standard(players)
        };
        let map = mapgen::generate(seed, players);
        let (torus, shift) = (map.torus, map.shift);
        let mut g = Ants::new(params, map, seed).unwrap();
        let start = g.food().len();
        let hold: Vec<Option<Orders>> = vec![Some(Orders::default()); players];
        while g.outcome().is_none() {
            g.step(&hold);
            for &f in g.food() {
                let img = arena_engine::ants::map::image(torus, shift, f, 1);
                assert!(g.food().binary_search(&img).is_ok(), "seed {seed}");
            }
        }
        assert!(
            g.food().len() > start + 100,
            "seed {seed}: food accumulates"
        );
        assert_eq!(g.food().len() % players, 0);
    }
}

#[test]
fn the_order_stays_open_while_a_trailing_colony_could_still_catch_up() {
    let mut g = duel(&[
        "0.0....b", "........", "....a...", "....1.1.", "........", "........",
    ]);
    assert_eq!(g.scores(), &[2, 2], "one point a hill");
    // Red razes blue's first hill: 4–1, but blue could still raze red's
    // two hills (1 + 4 ≥ 4): play on.
    assert_eq!(turn(&mut g, &["S", "-"]), None);
    assert_eq!(g.scores(), &[4, 1]);
    assert_eq!(turn(&mut g, &["E", "-"]), None);
    // The second: 6–0, and blue's best (0 + 4) no longer reaches 6.
    let outcome = turn(&mut g, &["E", "-"]).expect("the order is settled");
    assert_eq!(g.scores(), &[6, 0]);
    assert_eq!(outcome.reason, "rank_stabilized");
}

#[test]
fn the_turn_limit_ends_a_level_match_in_a_shared_first_place() {
    let params = Params {
        food_rate: 0,
        max_turns: 3,
        ..Params::standard(2)
    };
    let mut g = with_params(
        params,
        SHIFT,
        &[
            "........", ".A......", "........", "........", ".....B..", "........",
        ],
    );
    assert_eq!(turn(&mut g, &["-", "-"]), None);
    assert_eq!(turn(&mut g, &["-", "-"]), None);
    let outcome = turn(&mut g, &["-", "-"]).expect("three turns played");
    assert_eq!(outcome.reason, "turn_limit");
    assert_eq!(outcome.ranks, vec![0, 0]);
    assert_eq!(outcome.scores, vec![0.5, 0.5]);
}
