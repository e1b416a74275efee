//! Matches through the registry as the runner plays them: baselines,
//! faults, forfeits, replays that verify and dump.

use arena_engine::replay::open_any;
use arena_engine::{FaultKind, Forfeit, Match, Rules, registry};

/// A match of `seats` baseline seats (`names[seat]`), played to the end.
fn play(rules: &str, seats: usize, names: &[&str]) -> Box<dyn Match> {
    let entry = registry::find("ants").unwrap();
    let mut m = entry
        .create(5, seats, &Rules::parse_pairs(rules).unwrap())
        .unwrap();
    let mut line = Vec::new();
    for seat in 0..seats {
        line.clear();
        m.write_handshake(seat, &mut line);
        assert!(line.ends_with(b"\n"));
    }
    while m.outcome().is_none() {
        for seat in 0..seats {
            if !m.is_due(seat) {
                continue;
            }
            line.clear();
            m.write_frame(seat, &mut line);
            line.clear();
            assert!(m.write_baseline_reply(names[seat % names.len()], seat, &mut line));
            line.pop();
            assert_eq!(m.offer(seat, &line).unwrap(), None);
        }
        m.step();
        assert_eq!(m.invariant_violation(), None);
    }
    m
}

#[test]
fn forage_plays_hold_on_every_shipped_map_and_the_replay_verifies() {
    for (map, seats) in [("duel", 2), ("quartet", 4), ("octet", 8)] {
        let m = play(
            &format!("map={map},max_turns=120"),
            seats,
            &["forage", "hold"],
        );
        let outcome = m.outcome().unwrap().clone();
        assert_eq!(outcome.ranks.len(), seats);
        let spawned: u64 = (0..seats)
            .map(|s| {
                m.seat_stats(s)
                    .iter()
                    .find(|(k, _)| *k == "ants_spawned")
                    .unwrap()
                    .1
            })
            .sum();
        assert!(spawned > 0, "{map}: foragers grow");
        let bytes = m.replay_json(5).unwrap();
        let replay = open_any(&bytes).unwrap();
        replay.verify().unwrap();
        let lines = replay.dump().unwrap();
        assert!(lines[1]["state"]["deaths"].is_array());
    }
}

#[test]
fn forage_never_collides_with_itself() {
    use arena_engine::Game;
    use arena_engine::ants::{Ants, Cause, Params, mapgen};
    for seed in 0..8u64 {
        let players = 2 + seed as usize % 4;
        let params = Params {
            max_turns: 150,
            food_rate: 100,
            ..Params::standard(players)
        };
        let mut g = Ants::new(params, mapgen::generate(seed, players), seed).unwrap();
        let mut line = Vec::new();
        while g.outcome().is_none() {
            let actions: Vec<_> = (0..players)
                .map(|s| {
                    g.is_due(s).then(|| {
                        line.clear();
                        assert!(g.write_baseline_reply("forage", s, &mut line));
                        line.pop();
                        g.parse_action(s, &line).unwrap()
                    })
                })
                .collect();
            g.step(&actions);
            let collided: Vec<_> = g
                .deaths()
                .iter()
                .filter(|d| d.cause == Cause::Collision)
                .collect();
            for d in &collided {
                let others = collided
                    .iter()
                    .filter(|o| (o.row, o.col) == (d.row, d.col) && o.owner != d.owner)
                    .count();
                assert!(
                    others > 0,
                    "seed {seed}: seat {} collided with itself",
                    d.owner
                );
            }
        }
    }
}

#[test]
fn random_maps_play_at_every_seat_count() {
    for seats in 2..=8 {
        let m = play("max_turns=40", seats, &["forage"]);
        let bytes = m.replay_json(5).unwrap();
        open_any(&bytes).unwrap().verify().unwrap();
    }
}

#[test]
fn a_malformed_reply_is_refused_and_all_ants_stay() {
    let entry = registry::find("ants").unwrap();
    let mut m = entry
        .create(9, 2, &Rules::parse_pairs("map=duel").unwrap())
        .unwrap();
    assert!(m.offer(0, b"{\"orders\":\"NNNN\"}").is_err());
    m.offer_fallback(0, Some(FaultKind::Malformed));
    m.offer_fallback(1, Some(FaultKind::Timeout));
    assert_eq!(m.step(), None);
    assert_eq!(m.turn(), 1);
}

#[test]
fn a_forfeit_removes_the_ants_and_ranks_the_seat_last() {
    let entry = registry::find("ants").unwrap();
    let mut m = entry
        .create(9, 3, &Rules::parse_pairs("max_turns=50").unwrap())
        .unwrap();
    m.forfeit(1, Forfeit::Crash);
    assert_eq!(m.apply_forfeits(), None, "two colonies still play");
    assert!(!m.is_due(1));
    m.forfeit(2, Forfeit::Exit);
    let outcome = m.apply_forfeits().expect("one colony left");
    assert_eq!(outcome.reason, "forfeit");
    assert_eq!(outcome.ranks[0], 0);
    assert!(outcome.ranks[1] > 0 && outcome.ranks[2] > 0);
    // Seat 0 is credited with both standing enemy hills.
    assert!(outcome.scores[0] > outcome.scores[1]);
}

#[test]
fn a_map_for_other_seats_is_a_setup_error() {
    let entry = registry::find("ants").unwrap();
    let err = entry
        .create(1, 3, &Rules::parse_pairs("map=duel").unwrap())
        .err()
        .expect("duel is for two");
    assert!(err.to_string().contains("duel"), "{err}");
    assert!(
        entry
            .create(1, 2, &Rules::parse_pairs("map=nowhere").unwrap())
            .is_err()
    );
}
