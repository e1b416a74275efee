//! Invariants of the generals engine under random play: the running totals
//! and owned-cell lists always match the board, the game always ends within
//! the turn cap, and re-simulating the recorded actions reproduces the game
//! exactly (the property replays rely on).

use arena_engine::Game;
use arena_engine::generals::random::random_legal_action;
use arena_engine::generals::{Action, Generals, Params};
use arena_engine::rng::SplitMix64;
use proptest::prelude::*;

/// Recomputes (land, army) of both players from the cells.
fn recount(game: &Generals) -> [(u32, u64); 2] {
    let mut totals = [(0u32, 0u64); 2];
    for row in 0..game.height() {
        for col in 0..game.width() {
            let owner = game.owner_at(row, col);
            if owner != 0 {
                let t = &mut totals[usize::from(owner - 1)];
                t.0 += 1;
                t.1 += u64::from(game.army_at(row, col));
            }
        }
    }
    totals
}

fn play_random(seed: u64, params: Params) -> (Generals, Vec<[Action; 2]>, Generals) {
    let initial = Generals::from_seed(seed, params);
    let mut game = initial.clone();
    let mut rng = SplitMix64::new(seed ^ 0x5EED);
    let mut actions = Vec::new();
    while !game.is_over() {
        let pair = [0, 1].map(|p| random_legal_action(&game, p, &mut rng));
        game.step_pair(pair);
        actions.push(pair);
        let counted = recount(&game);
        for (p, counted) in counted.iter().enumerate() {
            assert_eq!(
                game.totals(p),
                *counted,
                "totals drifted at time {}",
                game.time()
            );
            let mut owned: Vec<u32> = game.owned_cells(p).to_vec();
            owned.sort_unstable();
            let expected: Vec<u32> = (0..game.height() * game.width())
                .filter(|&c| {
                    usize::from(game.owner_at(c / game.width(), c % game.width())) == p + 1
                })
                .map(|c| c as u32)
                .collect();
            assert_eq!(owned, expected, "owned list of player {p} drifted");
            let mut rows = vec![0u64; game.height()];
            for &c in &expected {
                let c = c as usize;
                rows[c / game.width()] |= 1 << (c % game.width());
            }
            assert_eq!(
                game.owned_row_masks(p),
                &rows[..],
                "owned rows of player {p} drifted"
            );
        }
    }
    (initial, actions, game)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_games_keep_their_invariants_and_replay_exactly(seed in any::<u64>(), cap in 50u32..1200) {
        let params = Params { max_turns: cap, ..Params::default() };
        let (initial, actions, finished) = play_random(seed, params);
        prop_assert!(finished.time() <= cap);
        prop_assert!(finished.outcome().is_some());

        let mut again = initial;
        for pair in &actions {
            again.step(&pair.map(Some));
        }
        prop_assert_eq!(&again, &finished);
    }

    #[test]
    fn stepping_a_finished_game_changes_nothing(seed in any::<u64>()) {
        let params = Params { max_turns: 60, ..Params::default() };
        let (_, _, finished) = play_random(seed, params);
        let mut after = finished.clone();
        let moved = after.step(&[Some(Action::build(0, 0)), Some(Action::PASS)]);
        prop_assert_eq!(moved.as_ref(), finished.outcome());
        prop_assert_eq!(after, finished);
    }

    #[test]
    fn any_reply_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let game = Generals::from_seed(1, Params::default());
        let _ = game.parse_action(0, &bytes);
    }
}

#[test]
fn frames_have_the_documented_shape() {
    let (_, _, game) = play_random(
        99,
        Params {
            max_turns: 300,
            ..Params::default()
        },
    );
    for seat in 0..2 {
        let mut frame = Vec::new();
        game.write_frame(seat, &mut frame);
        let text = String::from_utf8(frame).expect("frames are ASCII");
        let lines: Vec<&str> = text.split_terminator('\n').collect();
        assert!(text.ends_with('\n'));
        assert_eq!(lines.len(), 1 + 3 * game.height());
        assert_eq!(lines[0].split(' ').count(), 5);
        for line in &lines[1..] {
            assert_eq!(line.split(' ').count(), game.width(), "{line:?}");
            assert!(line.split(' ').all(|v| v.parse::<u64>().is_ok()));
        }
    }
}
