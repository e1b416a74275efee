//! A match's live view (`Match::live_json`, what workers send the live
//! pages) is the state the replay dump shows for the same turn, with the
//! forfeits and faults so far, for every registered game.

use arena_engine::registry;
use arena_engine::{FaultKind, Forfeit, Rules};

/// Steps played before the other seats forfeit.
const STEPS: u32 = 12;

#[test]
fn the_live_view_of_every_game_is_the_replay_dump_at_that_turn() {
    for entry in registry::games() {
        let seats = entry.seats[0];
        let mut game = entry
            .create(9, seats, &Rules::default())
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let mut views = vec![game.live_json()];
        for _ in 0..STEPS {
            for seat in 0..seats {
                if game.is_due(seat) {
                    // Seat 0 times out every turn; the others pass quietly.
                    let fault = (seat == 0).then_some(FaultKind::Timeout);
                    game.offer_fallback(seat, fault);
                }
            }
            assert!(game.step().is_none(), "{} ended early", entry.name);
            views.push(game.live_json());
        }
        for seat in 1..seats {
            game.forfeit(seat, Forfeit::Crash);
        }
        let ended = game.live_json();
        // Games that play on drive the forfeited seats until they end.
        let mut outcome = game.apply_forfeits();
        for _ in 0..100_000 {
            if outcome.is_some() {
                break;
            }
            for seat in 0..seats {
                if game.is_due(seat) {
                    game.offer_fallback(seat, None);
                }
            }
            outcome = game.step();
        }
        assert!(outcome.is_some(), "{} never ended", entry.name);

        let replay = game.replay_json(9).expect("the replay");
        let dump = arena_engine::replay::open_any(&replay)
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name))
            .dump()
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        assert_eq!(views[0]["state"], dump[0]["initial"], "{}", entry.name);
        for turn in 1..=STEPS as usize {
            let view = &views[turn];
            assert_eq!(view["game"], entry.name);
            assert_eq!(view["turn"], turn, "{}", entry.name);
            assert_eq!(
                view["state"], dump[turn]["state"],
                "{} turn {turn}",
                entry.name
            );
            let faults = view["faults"].as_array().expect("faults per seat");
            assert_eq!(faults.len(), seats, "{}", entry.name);
            assert!(faults[1..].iter().all(|f| f == 0), "{}: {view}", entry.name);
            assert!(view["forfeits"].as_array().is_some_and(Vec::is_empty));
        }
        // Seat 0 was due at least once, and every due turn was a fault.
        assert!(views[STEPS as usize]["faults"][0].as_u64() > Some(0));
        let forfeits = ended["forfeits"].as_array().expect("forfeits");
        assert_eq!(forfeits.len(), seats - 1, "{}: {ended}", entry.name);
        for (i, forfeit) in forfeits.iter().enumerate() {
            assert_eq!(forfeit["seat"], i + 1);
            assert_eq!(forfeit["turn"], STEPS);
            assert_eq!(forfeit["reason"], "crash");
        }
    }
}
