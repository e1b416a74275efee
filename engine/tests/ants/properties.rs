//! Random orders never break the rules' invariants: every step keeps the
//! state valid, ants are conserved (before − deaths + spawns = after), and
//! the scores add up to the hills plus one per razing.

use arena_engine::Game;
use arena_engine::ants::{Ants, Dir, Map, Orders, Params, mapgen};
use proptest::prelude::*;

fn spawned(g: &Ants) -> u64 {
    (0..g.seats())
        .map(|s| {
            g.seat_stats(s)
                .iter()
                .find(|(k, _)| *k == "ants_spawned")
                .unwrap()
                .1
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_orders_keep_the_invariants(
        seed in any::<u64>(),
        players in 2usize..=5,
        letters in proptest::collection::vec(0u8..5, 0..4000),
    ) {
        let params = Params { food_rate: 150, max_turns: 60, ..Params::standard(players) };
        let mut g = Ants::new(params, mapgen::generate(seed, players), seed).unwrap();
        let hills = g.hills().len() as i64;
        let mut next = letters.iter().cycle();
        while g.outcome().is_none() {
            let before = g.ants().len() as u64;
            let spawned_before = spawned(&g);
            let actions: Vec<Option<Orders>> = (0..players)
                .map(|s| g.is_due(s).then(|| {
                    let n = g.ant_count(s);
                    Orders((0..n).map(|_| {
                        let k = next.next().copied().unwrap_or(4);
                        [Dir::North, Dir::East, Dir::South, Dir::West, Dir::Stay][k as usize]
                    }).collect())
                }))
                .collect();
            g.step(&actions);
            prop_assert_eq!(g.invariant_violation(), None);
            let after = g.ants().len() as u64;
            let deaths = g.deaths().len() as u64;
            prop_assert_eq!(before - deaths + (spawned(&g) - spawned_before), after);
            let razed = g.hills().iter().filter(|h| h.razed.is_some()).count() as i64;
            prop_assert_eq!(g.scores().iter().sum::<i64>(), hills + razed);
        }
    }

    #[test]
    fn any_map_text_parses_without_panicking(
        header in "(rows [0-9]{1,3}\ncols [0-9]{1,3}\nplayers [0-9]\nshift -?[0-9] -?[0-9]\n)?",
        body in proptest::collection::vec("m [.%*0-9a-jA-J?]{0,9}", 0..9),
    ) {
        let text = format!("{header}{}", body.join("\n"));
        if let Ok(map) = Map::parse(&text) {
            prop_assert!(map.check().is_ok());
            prop_assert_eq!(Map::parse(&map.to_text()), Ok(map));
        }
    }

    #[test]
    fn any_reply_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let g = Ants::new(Params::standard(2), mapgen::generate(3, 2), 3).unwrap();
        let _ = g.parse_action(0, &bytes);
    }
}
