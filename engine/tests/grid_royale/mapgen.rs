//! Generated maps: exact rotational symmetry over 10,000 seeds per seat
//! count, bases in the final zone, one unit on each.

use arena_engine::grid_royale::mapgen::rotate;
use arena_engine::grid_royale::{Cell, GridRoyale, Params};

#[test]
fn maps_are_rotationally_symmetric_for_every_seed() {
    for seats in [2, 4] {
        let params = Params::standard(seats);
        let side = params.side;
        let final_zone = params.final_zone();
        for seed in 0..10_000 {
            let g = GridRoyale::from_seed(seed, params).unwrap();
            let ore = g.ore_plane();
            for y in 0..side {
                for x in 0..side {
                    let turned = rotate(&params, Cell { x, y }, 1);
                    assert_eq!(
                        ore[y * side + x],
                        ore[turned.y * side + turned.x],
                        "seats {seats} seed {seed} ({x}, {y})"
                    );
                }
            }
            let bases = g.bases();
            for s in 0..seats {
                assert_eq!(
                    bases[(s + 1) % seats],
                    rotate(&params, bases[s], 1),
                    "seed {seed}"
                );
                assert!(final_zone.contains(bases[s].x, bases[s].y), "seed {seed}");
            }
            let units: Vec<_> = g
                .units()
                .iter()
                .map(|u| (u.id, u.owner, u.x, u.y, u.cargo))
                .collect();
            let expected: Vec<_> = (0..seats)
                .map(|s| (s as u32, s, bases[s].x, bases[s].y, 0))
                .collect();
            assert_eq!(units, expected, "seed {seed}");
        }
    }
}

#[test]
fn maps_have_the_seed_sizes_ore_and_differ_by_seed() {
    let two = GridRoyale::from_seed(1, Params::standard(2)).unwrap();
    let four = GridRoyale::from_seed(1, Params::standard(4)).unwrap();
    assert_eq!((two.params().side, four.params().side), (24, 32));
    for g in [&two, &four] {
        assert!(g.ore_plane().iter().any(|&o| o >= 300), "deposits");
        for b in g.bases() {
            assert_eq!(g.ore(b.x, b.y), 0, "bases hold no ore");
        }
    }
    let other = GridRoyale::from_seed(2, Params::standard(2)).unwrap();
    assert_ne!(two.ore_plane(), other.ore_plane());
    assert_eq!(two, GridRoyale::from_seed(1, Params::standard(2)).unwrap());
}

#[test]
fn a_clockwise_quarter_turn_takes_the_corners_round() {
    let p = Params::standard(4);
    let turn = |x, y| rotate(&p, Cell { x, y }, 1);
    assert_eq!(turn(0, 0), Cell { x: 31, y: 0 });
    assert_eq!(turn(31, 0), Cell { x: 31, y: 31 });
    let p2 = Params::standard(2);
    assert_eq!(rotate(&p2, Cell { x: 0, y: 0 }, 1), Cell { x: 23, y: 23 });
}

#[test]
fn odd_sides_and_other_seat_counts_are_refused() {
    let odd = Params {
        side: 25,
        min_zone: 9,
        ..Params::standard(2)
    };
    assert!(GridRoyale::from_seed(0, odd).is_err());
    assert!(GridRoyale::from_seed(0, Params::standard(3)).is_err());
    let parity = Params {
        min_zone: 7,
        ..Params::standard(2)
    };
    assert!(parity.check().is_err(), "24 - 7 is odd");
}
