//! The map format's errors, the shipped maps, and the generator's
//! symmetry over many seeds.

use arena_engine::ants::map::{Map, MapError};
use arena_engine::ants::{mapgen, maps};

use super::support::text;

fn err(t: &str) -> MapError {
    Map::parse(t).expect_err("the map is refused")
}

#[test]
fn a_map_file_reads_back_as_it_was_written() {
    let t = text(
        2,
        (3, 4),
        &[
            "%.......", ".A*.....", "..a.....", "........", ".....1b.", "........",
        ],
    );
    let map = Map::parse(&t).unwrap();
    assert_eq!(map.players, 2);
    assert_eq!(map.shift, (3, 4));
    assert_eq!(map.hills, vec![(9, 0), (37, 1)]);
    assert_eq!(map.ants, vec![(9, 0), (18, 0), (38, 1)]);
    assert_eq!(map.food, vec![10]);
    assert!(map.water[0]);
    assert_eq!(Map::parse(&map.to_text()).unwrap(), map);
    // Negative shifts are taken modulo the board.
    let neg = text(
        2,
        (-3, -4),
        &[
            "........", ".0......", "........", "........", ".....1..", "........",
        ],
    );
    assert_eq!(Map::parse(&neg).unwrap().shift, (3, 4));
}

#[test]
fn bad_map_files_are_clear_errors() {
    let ok_rows = [
        "........", ".0......", "........", "........", ".....1..", "........",
    ];
    let base = text(2, (3, 4), &ok_rows);
    assert!(Map::parse(&base).is_ok());
    let cases: Vec<(String, &str)> = vec![
        (base.replace("rows 6\n", ""), "missing `rows`"),
        (base.replace("shift 3 4\n", ""), "missing `shift`"),
        (base.replace("players 2", "players 9"), "players must be"),
        (base.replace("players 2", "players 1"), "players must be"),
        (base.replace("rows 6", "rows 7"), "7 rows"),
        (base.replace("rows 6", "rows x"), "not an integer"),
        (base.replace("cols 8", "cols 201"), "rows and cols"),
        (base.replace("shift 3 4", "shift 3"), "two integers"),
        (base.replace("m .0......", "m .0.....?"), "unknown square"),
        (
            base.replace("m .0......", "m .0....."),
            "7 squares for 8 cols",
        ),
        (base.replace("m .0......", "m .0.2...."), "hill of seat 2"),
        (base.replace("m .0......", "m .0.c...."), "ant of seat 2"),
        (base.replace("m .....1..", "m ....1..."), "seat 0's hill 0"),
        (
            base.replace("m ........\nm .0", "m ..0.....\nm .0"),
            "seat 1 has 1 hills",
        ),
        (base.replace("rows 6", "depth 6"), "unknown key"),
    ];
    for (t, needle) in cases {
        let e = err(&t).to_string();
        assert!(e.contains(needle), "{needle:?} not in {e:?}");
    }
    // An ant on its own hill is `A`–`H`.
    assert!(Map::parse(&base.replace("m .....1..", "m .....B..")).is_ok());
    assert!(Map::parse("").is_err());
    assert!(Map::parse("m ☃\n").is_err());
}

#[test]
fn the_shipped_maps_load_for_their_seat_counts() {
    for (name, seats) in [("duel", 2), ("quartet", 4), ("octet", 8)] {
        let map = maps::choose(name, seats, 0).unwrap();
        assert_eq!(map.players, seats);
        assert!(map.torus.rows <= 64 && map.torus.cols <= 64);
        assert!(maps::choose(name, seats + 1, 0).is_err());
        assert_symmetric(&map);
    }
}

/// Every seat's water, food, hills and ants are seat 0's moved by its shift.
fn assert_symmetric(map: &Map) {
    let t = map.torus;
    let p = map.players;
    assert!(map.check().is_ok());
    for sq in 0..t.len() {
        let img = map.image(sq, 1);
        assert_eq!(map.water[sq], map.water[img]);
        assert_eq!(
            map.food.binary_search(&sq).is_ok(),
            map.food.binary_search(&img).is_ok()
        );
    }
    let per_seat = map.hills.len() / p;
    for (i, &(sq, owner)) in map.hills.iter().enumerate() {
        let (seat, k) = (i / per_seat, i % per_seat);
        assert_eq!(owner, seat);
        assert_eq!(sq, map.image(map.hills[k].0, seat));
    }
    for &(sq, owner) in &map.ants {
        let next = ((map.image(sq, 1)), (owner + 1) % p);
        assert!(map.ants.contains(&next));
    }
    // The shift's images are distinct and come back after `p` seats.
    assert_eq!(map.image(0, p), 0);
    let mut imgs: Vec<usize> = (0..p).map(|s| map.image(0, s)).collect();
    imgs.dedup();
    assert_eq!(imgs.len(), p);
}

#[test]
fn generated_maps_are_shift_symmetric_over_ten_thousand_seeds() {
    for seed in 0..10_000u64 {
        let players = 2 + (seed % 7) as usize;
        let map = mapgen::generate(seed, players);
        assert_eq!(map.players, players, "seed {seed}");
        assert!(map.torus.rows <= 200 && map.torus.cols <= 200);
        assert!(!map.hills.is_empty());
        assert_eq!(map.ants.len(), map.hills.len(), "an ant on every hill");
        assert_symmetric(&map);
    }
}

#[test]
fn the_same_seed_draws_the_same_map() {
    assert_eq!(mapgen::generate(42, 4), mapgen::generate(42, 4));
    assert_ne!(mapgen::generate(42, 4), mapgen::generate(43, 4));
}
