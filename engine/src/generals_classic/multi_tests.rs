//! Unit tests of the multi-player engine's small parts: the format a
//! match's rules pick, the move order, the owner codes, the standings.
//! The rules on hand-made positions are in `tests/classic_multi.rs`.

use super::multi::{GeneralsClassicMulti, Mode};
use super::{Format, format_of, mapgen};
use crate::game::Game;
use crate::generals::Action;
use crate::registry::{RuleValue, Rules};

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
fn the_first_mover_rotates_through_every_seat() {
    let mut g = game(5, Mode::Ffa);
    for t in 0..10 {
        let order = g.move_order();
        assert_eq!(order[0], t % 5);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        g.step(&[Some(Action::PASS); 5]);
    }
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
