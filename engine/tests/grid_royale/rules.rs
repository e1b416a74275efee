//! The six phases, elimination, the end and the placement, one rule a test.

use arena_engine::Game;
use arena_engine::grid_royale::rules::reason;
use arena_engine::grid_royale::{Dir, Params, Zone};

use super::support::{batch, duel, edited, idle, params, position, where_is};

use Dir::{East, North, South, Stay, West};

#[test]
fn a_move_pays_a_tenth_of_the_source_cell_and_the_mover_does_not_harvest() {
    // Unit 0 leaves a 259-ore cell (cost 25) for an 80-ore cell.
    let mut g = duel(&[(3, 3, 259), (4, 3, 80)], &[(0, 3, 3, 100), (1, 6, 6, 0)]);
    g.step(&[batch(&[(0, East)], false), None]);
    assert_eq!(where_is(&g, 0), Some((4, 3, 75)));
    assert_eq!(g.ore(4, 3), 80, "a unit that moved does not harvest");
    assert_eq!(g.ore(3, 3), 259, "moving costs cargo, not ore");
}

#[test]
fn an_exactly_affordable_move_goes_and_an_unaffordable_one_stays_without_harvest() {
    let mut g = duel(
        &[(3, 3, 250), (3, 5, 250)],
        &[(0, 3, 3, 25), (0, 3, 5, 24), (1, 6, 6, 0)],
    );
    g.step(&[batch(&[(0, North), (1, North)], false), None]);
    assert_eq!(where_is(&g, 0), Some((3, 2, 0)));
    assert_eq!(
        where_is(&g, 1),
        Some((3, 5, 24)),
        "stuck: no cost, no harvest"
    );
    assert_eq!(g.ore(3, 5), 250);
}

#[test]
fn a_move_off_the_grid_is_a_free_stay_without_harvest() {
    let mut g = duel(&[(0, 3, 500), (7, 0, 500)], &[(0, 0, 3, 100), (1, 7, 0, 0)]);
    g.step(&[batch(&[(0, West)], false), batch(&[(1, North)], false)]);
    assert_eq!(
        where_is(&g, 0),
        Some((0, 3, 100)),
        "no cost (50 would be affordable)"
    );
    assert_eq!(where_is(&g, 1), Some((7, 0, 0)));
    assert_eq!((g.ore(0, 3), g.ore(7, 0)), (500, 500), "no harvest");
}

#[test]
fn enemies_meeting_on_a_cell_die_and_spill_their_cargo_there() {
    let mut g = duel(
        &[(4, 3, 10)],
        &[(0, 3, 3, 100), (1, 5, 3, 40), (0, 0, 7, 0), (1, 7, 0, 0)],
    );
    g.step(&[batch(&[(0, East)], false), batch(&[(1, West)], false)]);
    assert_eq!((where_is(&g, 0), where_is(&g, 1)), (None, None));
    assert_eq!(g.ore(4, 3), 150);
    assert_eq!(g.units().len(), 2);
}

#[test]
fn a_unit_moving_onto_a_staying_one_collides_with_it() {
    let mut g = duel(
        &[],
        &[(0, 4, 3, 7), (1, 5, 3, 9), (0, 0, 7, 0), (1, 7, 0, 0)],
    );
    g.step(&[None, batch(&[(1, West)], false)]);
    assert_eq!((where_is(&g, 0), where_is(&g, 1)), (None, None));
    assert_eq!(g.ore(4, 3), 16);
}

#[test]
fn two_units_of_one_owner_on_a_plain_cell_die_too() {
    let mut g = duel(&[], &[(0, 3, 3, 5), (0, 5, 3, 6), (1, 7, 0, 0)]);
    g.step(&[batch(&[(0, East), (1, West)], false), None]);
    assert_eq!(g.units_of(0), 0);
    assert_eq!(g.ore(4, 3), 11);
}

#[test]
fn swapping_cells_is_not_a_collision() {
    let mut g = duel(&[], &[(0, 3, 3, 0), (1, 4, 3, 0)]);
    g.step(&[batch(&[(0, East)], false), batch(&[(1, West)], false)]);
    assert_eq!(where_is(&g, 0), Some((4, 3, 0)));
    assert_eq!(where_is(&g, 1), Some((3, 3, 0)));
}

#[test]
fn an_owner_units_crowding_its_own_base_survive_and_bank() {
    // Base (1, 1): unit 0 waits on it, units 1 and 2 arrive loaded.
    let mut g = duel(
        &[],
        &[(0, 1, 1, 0), (0, 0, 1, 30), (0, 2, 1, 50), (1, 6, 6, 0)],
    );
    g.step(&[batch(&[(1, East), (2, West)], false), None]);
    assert_eq!(g.units_of(0), 3);
    assert_eq!(g.banks(), &[80, 0]);
    assert_eq!(where_is(&g, 1), Some((1, 1, 0)));
}

#[test]
fn an_enemy_on_a_base_with_its_owner_unit_is_a_collision() {
    let mut g = duel(
        &[],
        &[(0, 1, 1, 0), (1, 2, 1, 60), (0, 5, 5, 0), (1, 6, 6, 0)],
    );
    g.step(&[None, batch(&[(1, West)], false)]);
    assert_eq!((where_is(&g, 0), where_is(&g, 1)), (None, None));
    assert_eq!(g.ore(1, 1), 60, "the cargo spills onto the base");
    assert_eq!(g.banks(), &[0, 0]);
}

#[test]
fn a_staying_unit_harvests_a_quarter_capped_by_cargo_space() {
    let mut g = duel(
        &[(3, 3, 403), (5, 3, 400)],
        &[(0, 3, 3, 0), (0, 5, 3, 950), (1, 6, 6, 0)],
    );
    // Unit 0 has no order (the default is STAY); unit 1 stays by order.
    g.step(&[batch(&[(1, Stay)], false), None]);
    assert_eq!((where_is(&g, 0), g.ore(3, 3)), (Some((3, 3, 100)), 303));
    assert_eq!((where_is(&g, 1), g.ore(5, 3)), (Some((5, 3, 1000)), 350));
}

#[test]
fn no_harvest_on_ones_own_base_but_an_enemy_base_can_be_mined() {
    let mut g = duel(
        &[(1, 1, 40), (6, 6, 40)],
        &[(0, 1, 1, 0), (0, 6, 6, 0), (1, 2, 6, 0)],
    );
    g.step(&idle(2));
    assert_eq!(where_is(&g, 0), Some((1, 1, 0)));
    assert_eq!(g.ore(1, 1), 40);
    assert_eq!(where_is(&g, 1), Some((6, 6, 10)));
}

#[test]
fn banking_moves_all_cargo_and_keeps_the_unit() {
    // The move off a 200-ore cell costs 20, then the rest is banked.
    let mut g = duel(&[(2, 1, 200)], &[(0, 2, 1, 320), (1, 6, 6, 0)]);
    g.step(&[batch(&[(0, West)], false), None]);
    assert_eq!(where_is(&g, 0), Some((1, 1, 0)));
    assert_eq!(g.banks(), &[300, 0]);
    // A unit staying on its base banks nothing more and stays.
    g.step(&idle(2));
    assert_eq!((where_is(&g, 0), g.banks()[0]), (Some((1, 1, 0)), 300));
}

#[test]
fn a_spawn_costs_the_bank_and_gets_the_next_id() {
    let g = duel(&[], &[(0, 3, 3, 0), (1, 6, 5, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([1200, 0]));
    g.step(&[batch(&[], true), None]);
    let spawned = g.units().last().copied().unwrap();
    assert_eq!(
        (
            spawned.id,
            spawned.owner,
            spawned.x,
            spawned.y,
            spawned.cargo
        ),
        (2, 0, 1, 1, 0)
    );
    assert_eq!(g.banks(), &[700, 0]);
}

#[test]
fn a_spawn_is_blocked_uncharged_by_a_unit_on_the_base_after_banking() {
    // Unit 1 arrives and banks 100 (bank 500): the spawn it would afford is
    // blocked because it stands on the base.
    let g = duel(&[], &[(0, 3, 3, 0), (0, 1, 2, 100), (1, 6, 5, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([400, 0]));
    g.step(&[batch(&[(1, North)], true), None]);
    assert_eq!((g.banks()[0], g.units_of(0)), (500, 2));
    // It steps off; now the spawn goes through.
    g.step(&[batch(&[(1, South)], true), None]);
    assert_eq!((g.banks()[0], g.units_of(0)), (0, 3));
}

#[test]
fn an_enemy_standing_on_the_base_blocks_the_spawn_too() {
    let g = duel(&[], &[(0, 3, 3, 0), (1, 1, 1, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([600, 0]));
    g.step(&[batch(&[], true), None]);
    assert_eq!((g.banks()[0], g.units_of(0)), (600, 1));
}

#[test]
fn a_spawn_needs_the_bank_and_room_under_the_cap() {
    let p = Params {
        units_cap: 2,
        ..params(2, 8)
    };
    let g = position(
        p,
        &[],
        &[(1, 1), (6, 6)],
        &[(0, 3, 3, 0), (0, 4, 4, 0), (1, 6, 5, 0)],
    );
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([900, 499]));
    g.step(&[batch(&[], true), batch(&[], true)]);
    assert_eq!(g.banks(), &[900, 499], "over the cap; below the cost");
    assert_eq!((g.units_of(0), g.units_of(1)), (2, 1));
}

#[test]
fn same_turn_spawns_take_ids_in_seat_order() {
    let g = duel(&[], &[(0, 3, 3, 0), (1, 4, 4, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([500, 500]));
    g.step(&[batch(&[], true), batch(&[], true)]);
    let ids: Vec<(u32, usize)> = g.units().iter().map(|u| (u.id, u.owner)).collect();
    assert_eq!(ids, vec![(0, 0), (1, 1), (2, 0), (3, 1)]);
    // Later spawns keep counting up; ids of dead units are never reused.
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([0, 500]));
    g.step(&[batch(&[(2, East)], false), batch(&[(3, West)], false)]);
    g.step(&[None, batch(&[], true)]);
    assert_eq!(g.units().last().map(|u| (u.id, u.owner)), Some((4, 1)));
}

#[test]
fn the_border_shrinks_on_its_turns_down_to_the_floor_and_kills_outside_units_every_turn() {
    let p = Params {
        min_zone: 4,
        shrink_interval: 2,
        ..params(2, 8)
    };
    let g = position(
        p,
        &[(0, 0, 300), (1, 3, 0)],
        &[(2, 2), (5, 5)],
        &[(0, 0, 0, 70), (0, 1, 3, 0), (0, 3, 3, 0), (1, 5, 5, 0)],
    );
    let mut g = g;
    g.step(&[batch(&[(0, Stay)], false), None]);
    assert_eq!(
        g.zone(),
        Zone {
            x0: 0,
            y0: 0,
            x1: 7,
            y1: 7
        },
        "turn 1 does not shrink"
    );
    assert!(where_is(&g, 0).is_some());
    // Turn 2 shrinks to 1..=6: unit 0 on (0, 0) dies, its cargo is lost.
    g.step(&idle(2));
    assert_eq!(
        g.zone(),
        Zone {
            x0: 1,
            y0: 1,
            x1: 6,
            y1: 6
        }
    );
    assert_eq!(where_is(&g, 0), None);
    assert_eq!(g.ore(0, 0), 300 - 75 - 56, "two harvests, no spill");
    // Turn 3 does not shrink, but stepping outside the zone is still lethal.
    g.step(&[batch(&[(1, West)], false), None]);
    assert_eq!(where_is(&g, 1), None);
    assert_eq!(g.ore(0, 3), 0);
    g.step(&idle(2));
    assert_eq!(g.zone().side(), 4);
    g.step(&idle(2));
    g.step(&idle(2));
    assert_eq!(
        g.zone(),
        Zone {
            x0: 2,
            y0: 2,
            x1: 5,
            y1: 5
        },
        "never below min_zone"
    );
}

#[test]
fn a_player_without_units_stays_in_while_it_can_spawn() {
    // Seat 1's only unit collides; with 500 banked it is still in and due.
    let g = duel(&[], &[(0, 3, 3, 0), (0, 0, 7, 0), (1, 5, 3, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([0, 500]));
    assert!(
        g.step(&[batch(&[(0, East)], false), batch(&[(2, West)], false)])
            .is_none()
    );
    assert_eq!(g.units_of(1), 0);
    assert!(!g.is_eliminated(1) && g.is_due(1));
    g.step(&[None, batch(&[], true)]);
    assert_eq!((g.units_of(1), g.banks()[1]), (1, 0));
}

#[test]
fn elimination_ends_the_match_and_the_bank_still_places() {
    // Seat 1 loses its only unit with 499 banked: eliminated, and the match
    // is over; its bank still beats seat 0's 0.
    let g = duel(&[], &[(0, 3, 3, 0), (0, 0, 7, 0), (1, 5, 3, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([0, 499]));
    let outcome = g
        .step(&[batch(&[(0, East)], false), batch(&[(2, West)], false)])
        .expect("the match is over");
    assert!(g.is_eliminated(1) && !g.is_due(1));
    assert_eq!(outcome.reason, reason::LAST_STANDING);
    assert_eq!(outcome.ranks, vec![1, 0]);
    assert_eq!(g.turn(), 1);
}

#[test]
fn the_match_ends_at_max_turns_and_stepping_after_changes_nothing() {
    let p = Params {
        max_turns: 3,
        ..params(2, 8)
    };
    let mut g = position(
        p,
        &[(3, 3, 100)],
        &[(1, 1), (6, 6)],
        &[(0, 3, 3, 0), (1, 6, 6, 0)],
    );
    assert!(g.step(&idle(2)).is_none());
    assert!(g.step(&idle(2)).is_none());
    let outcome = g.step(&idle(2)).expect("over after 3 turns");
    assert_eq!(outcome.reason, reason::TURN_LIMIT);
    let before = g.clone();
    assert_eq!(g.step(&idle(2)), Some(outcome));
    assert_eq!(g, before);
}

#[test]
fn placement_is_bank_then_units_then_banked_earlier_then_seat() {
    let base = position(
        params(4, 8),
        &[],
        &[(1, 1), (6, 1), (6, 6), (1, 6)],
        &[
            (0, 2, 2, 0),
            (1, 5, 2, 0),
            (2, 5, 5, 0),
            (3, 2, 5, 0),
            (3, 3, 5, 0),
        ],
    );
    let set = |banks: [u64; 4], turns: [u32; 4]| {
        edited(&base, |s| {
            s["banks"] = serde_json::json!(banks);
            s["bank_turns"] = serde_json::json!(turns);
        })
    };
    // Higher bank first.
    assert_eq!(set([1, 4, 3, 2], [0; 4]).placement(), vec![1, 2, 3, 0]);
    // Equal banks: seat 3 has two units.
    assert_eq!(set([5, 5, 5, 5], [0; 4]).placement(), vec![3, 0, 1, 2]);
    // Equal banks and units among 0..=2: the earlier last bank change first.
    assert_eq!(
        set([5, 5, 5, 9], [7, 3, 5, 1]).placement(),
        vec![3, 1, 2, 0]
    );
    // Everything equal: the lower seat.
    assert_eq!(
        set([5, 5, 5, 0], [2, 2, 2, 0]).placement(),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn banked_earlier_is_the_turn_the_bank_last_changed() {
    // Both bank 100, seat 1 one turn later: seat 0 places first.
    let mut g = duel(&[], &[(0, 1, 2, 100), (1, 6, 4, 100)]);
    g.step(&[batch(&[(0, North)], false), batch(&[(1, South)], false)]);
    g.step(&[None, batch(&[(1, South)], false)]);
    assert_eq!(g.banks(), &[100, 100]);
    assert_eq!(g.placement(), vec![0, 1]);
}

#[test]
fn an_illegal_batch_in_the_step_is_a_no_action_turn() {
    // Seat 0 names seat 1's unit (a forged replay: the parser never passes
    // one): none of its orders apply and it does not spawn; its units stay
    // and harvest.
    let g = duel(&[(3, 3, 40)], &[(0, 3, 3, 0), (1, 5, 5, 0)]);
    let mut g = edited(&g, |s| s["banks"] = serde_json::json!([500, 0]));
    g.step(&[batch(&[(0, East), (1, North)], true), None]);
    assert_eq!(where_is(&g, 0), Some((3, 3, 10)));
    assert_eq!(
        where_is(&g, 1),
        Some((5, 5, 0)),
        "seat 1's unit ignored the order"
    );
    assert_eq!((g.banks()[0], g.units_of(0)), (500, 1));
    // A unit named twice refuses the whole batch too, the first order included.
    g.step(&[batch(&[(0, East), (0, West)], false), None]);
    assert_eq!(where_is(&g, 0), Some((3, 3, 17)));
}

#[test]
fn forfeits_remove_units_rank_last_and_can_end_the_match() {
    let mut g = position(
        params(4, 8),
        &[],
        &[(1, 1), (6, 1), (6, 6), (1, 6)],
        &[(0, 2, 2, 0), (1, 5, 2, 0), (2, 5, 5, 0), (3, 2, 5, 0)],
    );
    let mut g2 = edited(&g, |s| s["banks"] = serde_json::json!([0, 900, 0, 0]));
    assert!(g2.forfeit(&[1]).is_none());
    assert_eq!(g2.units_of(1), 0);
    assert!(g2.is_eliminated(1));
    assert_eq!(
        *g2.placement().last().unwrap(),
        1,
        "below the rest despite its bank"
    );
    let outcome = g.forfeit(&[0, 1, 2]).expect("one player left");
    assert_eq!(outcome.reason, reason::FORFEIT);
    assert_eq!(outcome.ranks[3], 0);
}

#[test]
fn matches_are_deterministic() {
    let play = || {
        let mut g =
            arena_engine::grid_royale::GridRoyale::from_seed(99, Params::standard(4)).unwrap();
        let mut turn = 0u32;
        while !g.is_over() {
            let actions: Vec<_> = (0..4)
                .map(|seat| {
                    let orders: Vec<_> = g
                        .units()
                        .iter()
                        .filter(|u| u.owner == seat)
                        .map(|u| (u.id, Dir::ALL[((u.id + turn) % 5) as usize]))
                        .collect();
                    batch(&orders, turn.is_multiple_of(7))
                })
                .collect();
            g.step(&actions);
            turn += 1;
        }
        g
    };
    assert_eq!(play(), play());
}
