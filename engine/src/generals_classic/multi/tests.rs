//! Unit tests of the multi-player engine's small parts: the format a
//! match's rules pick, the move order, the rules version, the owner codes,
//! the standings.
//! The rules on hand-made positions are in `tests/classic_multi.rs`.

use super::{
    GeneralsClassicMulti, Mode, MultiState, MultiStateError, ROTATION_RULES_VERSION, RULES_VERSION,
};
use crate::game::Game;
use crate::generals::Action;
use crate::generals_classic::{
    Format, GeneralsClassic, Params, format_of, mapgen, random_legal_action,
};
use crate::registry::{RuleValue, Rules};
use crate::rng::SplitMix64;

fn rules(mode: &str, players: i64) -> Rules {
    let mut rules = Rules::default();
    rules.0.insert("mode".into(), RuleValue::Word(mode.into()));
    rules.0.insert("players".into(), RuleValue::Int(players));
    rules
}

fn game(seats: usize, mode: Mode) -> GeneralsClassicMulti {
    let options = mapgen::MapOptions {
        players: seats,
        ..mapgen::MapOptions::default()
    };
    GeneralsClassicMulti::from_map(mapgen::generate(5, &options), mode, 500).unwrap()
}

#[test]
fn auto_is_1v1_for_two_seats_and_ffa_beyond() {
    assert_eq!(format_of(&rules("auto", 0), 2), Ok(Format::Duel));
    for seats in 3..=8 {
        assert_eq!(
            format_of(&rules("auto", 0), seats),
            Ok(Format::Multi(Mode::Ffa))
        );
    }
    assert_eq!(format_of(&Rules::default(), 2), Ok(Format::Duel));
    assert_eq!(format_of(&rules("ffa", 0), 2), Ok(Format::Multi(Mode::Ffa)));
    assert_eq!(
        format_of(&rules("2v2", 4), 4),
        Ok(Format::Multi(Mode::Teams))
    );
}

#[test]
fn a_mode_that_does_not_fit_the_seats_is_refused_by_name() {
    assert_eq!(
        format_of(&rules("2v2", 0), 6),
        Err("mode 2v2 is played by 4 seats, not 6".to_owned())
    );
    assert_eq!(
        format_of(&rules("1v1", 0), 3),
        Err("mode 1v1 is played by 2 seats, not 3".to_owned())
    );
    assert_eq!(
        format_of(&rules("ffa", 0), 9),
        Err("mode ffa is played by 2..=8 seats, not 9".to_owned())
    );
    assert!(
        format_of(&rules("ffa", 5), 4)
            .unwrap_err()
            .contains("players is 5")
    );
}

#[test]
fn the_order_does_not_rotate_with_the_turn() {
    // Passes are never ranked: with nothing real to sort, every turn's
    // order is plain seat order, where the old rotation put seat t mod N first.
    let mut g = game(5, Mode::Ffa);
    let passes = [Some(Action::PASS); 5];
    for _ in 0..10 {
        assert!(g.move_priorities(&passes).is_empty());
        assert_eq!(g.move_order(&passes), vec![0, 1, 2, 3, 4]);
        assert_eq!(g.move_order(&[None; 5]), vec![0, 1, 2, 3, 4]);
        g.step(&passes);
    }
}

#[test]
fn two_seats_move_in_the_order_of_the_1v1_engine() {
    // On two seats the sort is the 1v1 cascade, so both engines leave the
    // same board after every step until a general falls (captures differ:
    // here the victim's cells are halved and its later move is lost).
    // Small boards, so that the two moves often share a cell and the
    // order decides.
    let options = mapgen::MapOptions {
        min_side: 6,
        max_side: 8,
        players: 2,
    };
    let mut decisive = 0;
    for seed in 0..100 {
        let map = mapgen::generate(seed, &options);
        let mut duel = GeneralsClassic::from_map(map.clone(), Params::default()).unwrap();
        let mut multi = GeneralsClassicMulti::from_map(map, Mode::Ffa, 500).unwrap();
        let mut rng = SplitMix64::new(seed);
        loop {
            let pair = [0, 1].map(|s| random_legal_action(&multi, s, &mut rng));
            let cells: Vec<_> = pair.iter().filter_map(|a| multi.move_cells(a)).collect();
            if let [(a, b), (c, d)] = cells[..] {
                decisive += usize::from([a, b].contains(&c) || [a, b].contains(&d));
            }
            let over = duel.step_pair(pair).is_some();
            if multi.step(&pair.map(Some)).is_some() || over {
                break;
            }
            assert_eq!(
                (&duel.owner, &duel.army, &duel.kind),
                (&multi.owner, &multi.army, &multi.kind),
                "seed {seed}, time {}",
                multi.time
            );
        }
    }
    assert!(
        decisive > 100,
        "only {decisive} steps where the order matters"
    );
}

#[test]
fn states_carry_the_rules_version_they_are_played_under() {
    let json = serde_json::to_value(game(3, Mode::Ffa)).unwrap();
    assert_eq!(json["rules_version"], RULES_VERSION);
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("rules_version");
    let state: MultiState = serde_json::from_value(old).unwrap();
    assert_eq!(state.rules_version, ROTATION_RULES_VERSION);
    assert_eq!(
        GeneralsClassicMulti::try_from(state),
        Err(MultiStateError::RulesVersion { found: 1 })
    );
}

#[test]
fn owner_codes_are_relative_to_the_reader() {
    let ffa = game(4, Mode::Ffa);
    assert_eq!(
        (0..=4).map(|o| ffa.owner_code(2, o)).collect::<Vec<_>>(),
        vec![0, 3, 4, 1, 6]
    );
    let teams = game(4, Mode::Teams);
    assert_eq!(
        (0..=4).map(|o| teams.owner_code(2, o)).collect::<Vec<_>>(),
        vec![0, 2, 4, 1, 6]
    );
}

#[test]
fn only_standing_seats_that_play_are_due() {
    let mut g = game(3, Mode::Ffa);
    assert!((0..3).all(|s| g.is_due(s)));
    assert!(g.forfeit(&[1]).is_none());
    assert!(!g.is_due(1) && g.is_due(0));
    assert_eq!(g.standing_keys()[1], (false, false, 0, 0, 0));
    let outcome = g.forfeit(&[1, 2]).unwrap();
    assert_eq!(
        (outcome.reason.as_str(), outcome.ranks),
        ("forfeit", vec![0, 1, 1])
    );
}

#[test]
fn the_teams_are_known_from_the_start() {
    assert_eq!(game(4, Mode::Teams).teams(), vec![0, 1, 0, 1]);
    assert!(game(4, Mode::Ffa).teams().is_empty());
    let mut out = Vec::new();
    game(4, Mode::Teams).write_handshake(3, &mut out);
    assert!(out.starts_with(b"3 ") && out.ends_with(b" 4 0 1 0 1\n"));
}
