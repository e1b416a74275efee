//! The shipped starter model against the random-order model, fifty games on
//! the shipped maps: thirty one-on-one on `duel`, ten on `quartet` against
//! three random colonies and ten on `octet` against seven. A game counts as
//! won when the starter alone places first. The models are evaluated in
//! this process with the host's own policy code (no sandbox, no pipes), as
//! the seats' hosts would evaluate them.

use std::path::{Path, PathBuf};

use arena_engine::registry::{self, Rules};
use arena_engine::{Game, ants};
use arena_model::Policy;

fn bot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bots/ants-models")
        .join(name)
}

/// Plays one game; whether the starter (in seat `starter_seat`) alone
/// placed first.
fn starter_wins(
    map: &str,
    seats: usize,
    seed: u64,
    starter: &mut Policy,
    random: &mut Policy,
) -> bool {
    let entry = registry::find("ants").unwrap();
    let given = Rules::parse_pairs(&format!("map={map},max_turns=200")).unwrap();
    let rules = entry.rules(&given).unwrap();
    let mut game = ants::from_rules(seed, seats, &rules).unwrap();
    let starter_seat = (seed as usize) % seats;
    let mut frame = Vec::new();
    let outcome = loop {
        let mut actions = Vec::with_capacity(seats);
        for seat in 0..seats {
            if !game.is_due(seat) {
                actions.push(None);
                continue;
            }
            frame.clear();
            game.write_frame(seat, &mut frame);
            // Ants frames say everything: one policy may read every seat's.
            let policy = if seat == starter_seat {
                &mut *starter
            } else {
                &mut *random
            };
            let reply = policy.evaluate(&frame).expect("the shipped models answer");
            actions.push(Some(
                game.parse_action(seat, &reply)
                    .expect("a well-formed reply"),
            ));
        }
        if let Some(outcome) = game.step(&actions) {
            break outcome;
        }
    };
    let mine = outcome.ranks[starter_seat];
    (0..seats).all(|s| s == starter_seat || outcome.ranks[s] > mine)
}

#[test]
fn the_starter_beats_the_random_model_in_four_games_of_five() {
    let entry = registry::find("ants").unwrap();
    let interface = entry.model.expect("ants plays model graphs");
    let limits = entry.limits.model.expect("ants has model limits");
    let mut starter = Policy::load(&bot("starter"), interface, &limits).unwrap();
    let mut random = Policy::load(&bot("random"), interface, &limits).unwrap();
    let mut wins = 0;
    let mut games = 0;
    for (map, seats, count) in [("duel", 2, 30), ("quartet", 4, 10), ("octet", 8, 10)] {
        for seed in 0..count {
            games += 1;
            if starter_wins(map, seats, seed, &mut starter, &mut random) {
                wins += 1;
            }
        }
    }
    assert_eq!(games, 50);
    println!("the starter won {wins} of {games}");
    assert!(
        wins * 5 >= games * 4,
        "the starter won only {wins} of {games}"
    );
}
