//! generals-ffa map generator properties over 10,000 seeds per board size:
//! symmetry, distances, connectivity and counts. The distributions are
//! printed (`cargo test --test ffa_mapgen -- --nocapture`).

use std::collections::BTreeMap;

use arena_engine::generals_ffa::mapgen::{self, reachable};
use arena_engine::generals_ffa::{Board, CellKind, GeneralsFfa, Params, board};

const SEEDS: u64 = 10_000;

fn chebyshev(width: usize, a: usize, b: usize) -> usize {
    let (ar, ac) = (a / width, a % width);
    let (br, bc) = (b / width, b % width);
    ar.abs_diff(br).max(ac.abs_diff(bc))
}

/// Every generator rule on one board; returns the number of mountains.
fn check(seed: u64, params: &Params, b: &Board) -> usize {
    let (w, h) = (params.width, params.height);
    let cells = w * h;
    assert_eq!(b.kind.len(), cells);
    for cell in 0..cells {
        for image in board::mirrors(w, h, cell) {
            assert_eq!(
                b.kind[cell], b.kind[image],
                "seed {seed}: kind {cell}/{image}"
            );
            assert_eq!(
                b.army[cell], b.army[image],
                "seed {seed}: army {cell}/{image}"
            );
        }
    }
    let count = |k: CellKind| b.kind.iter().filter(|&&x| x == k).count();
    let mountains = count(CellKind::Mountain);
    assert!(
        mountains <= 32 && mountains % 4 == 0,
        "seed {seed}: {mountains} mountains"
    );
    assert_eq!(count(CellKind::City), 8, "seed {seed}");
    assert_eq!(count(CellKind::Crown), 4, "seed {seed}");
    for (seat, &crown) in b.crowns.iter().enumerate() {
        assert_eq!(b.kind[crown], CellKind::Crown);
        assert_eq!(b.owner[crown], Some(seat as u8));
        assert_eq!(b.army[crown], board::CROWN_ARMY);
    }
    // Seat 0 top-left, then clockwise.
    let (r0, c0) = (b.crowns[0] / w, b.crowns[0] % w);
    assert!(r0 < 2 && c0 < 2, "seed {seed}: crown at {r0},{c0}");
    assert_eq!(b.crowns[1], r0 * w + (w - 1 - c0));
    assert_eq!(b.crowns[2], (h - 1 - r0) * w + (w - 1 - c0));
    assert_eq!(b.crowns[3], (h - 1 - r0) * w + c0);
    // Distances, in the top-left quadrant (the rest are mirror images).
    let (qw, qh) = (w / 2, h / 2);
    let quadrant: Vec<usize> = (0..qh)
        .flat_map(|r| (0..qw).map(move |c| r * w + c))
        .collect();
    let cities: Vec<usize> = quadrant
        .iter()
        .copied()
        .filter(|&c| b.kind[c] == CellKind::City)
        .collect();
    assert_eq!(cities.len(), 2, "seed {seed}");
    let all: Vec<usize> = (0..cells)
        .filter(|&c| b.kind[c] == CellKind::City)
        .collect();
    for &a in &all {
        for &c in &all {
            assert!(
                a == c || chebyshev(w, a, c) >= 2,
                "seed {seed}: cities {a}, {c} touch"
            );
        }
    }
    let crown = b.crowns[0];
    for &cell in &quadrant {
        match b.kind[cell] {
            CellKind::Mountain => assert!(chebyshev(w, cell, crown) >= 2, "seed {seed}"),
            CellKind::City => assert!(chebyshev(w, cell, crown) >= 3, "seed {seed}"),
            _ => {}
        }
    }
    let mut armies: Vec<u32> = cities.iter().map(|&c| b.army[c]).collect();
    armies.sort_unstable();
    assert_eq!(
        armies,
        vec![board::CITY_ARMY, board::CITADEL_ARMY],
        "seed {seed}"
    );
    // Nothing owned but the crowns, no army on plains and mountains.
    for cell in 0..cells {
        if b.kind[cell] != CellKind::Crown {
            assert_eq!(b.owner[cell], None);
        }
        if matches!(b.kind[cell], CellKind::Plain | CellKind::Mountain) {
            assert_eq!(b.army[cell], 0);
        }
    }
    // Every non-mountain cell reachable from every crown.
    for &crown in &b.crowns {
        let reached = reachable(w, h, &b.kind, crown);
        for (cell, (&kind, &reached)) in b.kind.iter().zip(&reached).enumerate() {
            assert!(
                reached || kind == CellKind::Mountain,
                "seed {seed}: {cell} sealed from crown {crown}"
            );
        }
    }
    mountains
}

fn sweep(params: Params, label: &str) {
    let mut mountains = BTreeMap::new();
    let mut repairs = BTreeMap::new();
    let mut crowns = BTreeMap::new();
    for seed in 0..SEEDS {
        let (b, stats) = mapgen::generate_with_stats(seed, &params);
        let m = check(seed, &params, &b);
        assert_eq!(m, stats.mountains);
        assert_eq!(m + 4 * stats.repairs, 32, "seed {seed}");
        *mountains.entry(m).or_insert(0u32) += 1;
        *repairs.entry(stats.repairs).or_insert(0u32) += 1;
        *crowns.entry(b.crowns[0]).or_insert(0u32) += 1;
        assert_eq!(
            mapgen::generate(seed, &params),
            b,
            "seed {seed}: not deterministic"
        );
    }
    println!("{label}: mountains after repair over {SEEDS} seeds: {mountains:?}");
    println!("{label}: repair rounds: {repairs:?}");
    println!("{label}: seat 0 crown cell: {crowns:?}");
}

#[test]
fn standard_boards_meet_the_rules() {
    sweep(Params::STANDARD, "16x10");
}

#[test]
fn blitz_boards_meet_the_rules() {
    sweep(Params::BLITZ, "12x8");
}

#[test]
fn generated_games_pass_the_guard() {
    for seed in 0..200 {
        for params in [Params::STANDARD, Params::BLITZ] {
            let g = GeneralsFfa::from_seed(seed, params).unwrap();
            assert_eq!(g.check_invariants(), None, "seed {seed}");
        }
    }
}

#[test]
fn map_of_seed_zero_is_frozen() {
    // A change here renames every map: bump it only on purpose.
    let b = mapgen::generate(0, &Params::STANDARD);
    let text: String = b
        .kind
        .chunks(16)
        .map(|row| {
            row.iter()
                .map(|k| match k {
                    CellKind::Plain => '.',
                    CellKind::Mountain => '#',
                    CellKind::City => 'c',
                    CellKind::Crown => 'K',
                })
                .chain(['\n'])
                .collect::<String>()
        })
        .collect();
    println!("{text}");
    assert_eq!(text, FROZEN_SEED_0);
}

const FROZEN_SEED_0: &str = concat!(
    "....c.c..c.c....\n",
    "K..............K\n",
    "...##.#..#.##...\n",
    "....#.#..#.#....\n",
    ".#....#..#....#.\n",
    ".#....#..#....#.\n",
    "....#.#..#.#....\n",
    "...##.#..#.##...\n",
    "K..............K\n",
    "....c.c..c.c....\n",
);
