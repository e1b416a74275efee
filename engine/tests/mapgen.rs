//! Property tests of the map generator: every competition rule on every seed
//! in 0..10 000 plus random seeds, determinism, variety, and a distribution
//! report (run with `--nocapture` to see it).
//!
//! The checks recompute everything with their own BFS rather than trusting
//! the generator's helpers; only the published thresholds are shared.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use arena_engine::generals::mapgen::{
    self, MAX_MOUNTAINS, MAX_SIDE, MIN_GENERAL_DISTANCE, MIN_MOUNTAINS, MIN_SIDE, MIN_SPAWN_EXITS,
    MIN_SPAWN_REACH, MapStats, SPAWN_FAIRNESS_PERCENT, SPAWN_RADIUS, generate,
};
use arena_engine::generals::{Generals, Kind, Params, Setup, SetupError};
use proptest::prelude::*;

const SEEDS: u64 = 10_000;

/// What one board measured, for the distribution report.
struct Sample {
    height: usize,
    width: usize,
    mountains: usize,
    distance: u32,
    reach: [usize; 2],
}

/// Plain BFS over non-mountain cells; `None` where not reached.
fn distances(setup: &Setup, start: [usize; 2]) -> Vec<Option<u32>> {
    let (h, w) = (setup.height, setup.width);
    let mut dist = vec![None; h * w];
    let mut queue = VecDeque::new();
    dist[start[0] * w + start[1]] = Some(0);
    queue.push_back((start[0], start[1]));
    while let Some((r, c)) = queue.pop_front() {
        let d = dist[r * w + c].expect("queued cells have a distance");
        let steps = [
            (r.wrapping_sub(1), c),
            (r + 1, c),
            (r, c.wrapping_sub(1)),
            (r, c + 1),
        ];
        for (nr, nc) in steps {
            if nr < h && nc < w {
                let i = nr * w + nc;
                if setup.kind[i] != Kind::Mountain && dist[i].is_none() {
                    dist[i] = Some(d + 1);
                    queue.push_back((nr, nc));
                }
            }
        }
    }
    dist
}

fn exits(setup: &Setup, [r, c]: [usize; 2]) -> usize {
    let (h, w) = (setup.height, setup.width);
    [
        (r.wrapping_sub(1), c),
        (r + 1, c),
        (r, c.wrapping_sub(1)),
        (r, c + 1),
    ]
    .into_iter()
    .filter(|&(nr, nc)| nr < h && nc < w && setup.kind[nr * w + nc] != Kind::Mountain)
    .count()
}

/// Asserts every rule the generator promises for `setup`, naming `seed`.
fn check(seed: u64, setup: &Setup, params: &Params) -> Sample {
    let (h, w) = (setup.height, setup.width);
    let sides = MIN_SIDE..=MAX_SIDE;
    assert!(sides.contains(&h), "seed {seed}: height {h}");
    assert!(sides.contains(&w), "seed {seed}: width {w}");
    assert_eq!(setup.kind.len(), h * w, "seed {seed}: plane length");
    assert_eq!(
        &setup.params, params,
        "seed {seed}: params not stored as given"
    );

    // No castles (or generals) in the plane: plains and mountains only.
    for (i, k) in setup.kind.iter().enumerate() {
        assert!(
            matches!(k, Kind::Plain | Kind::Mountain),
            "seed {seed}: cell {i} is {k:?}"
        );
    }
    let mountains = setup.kind.iter().filter(|&&k| k == Kind::Mountain).count();
    assert!(
        (MIN_MOUNTAINS..=MAX_MOUNTAINS).contains(&mountains),
        "seed {seed}: {mountains} mountains"
    );

    let [g0, g1] = setup.generals;
    for (player, [r, c]) in setup.generals.into_iter().enumerate() {
        assert!(r < h && c < w, "seed {seed}: general {player} off board");
        assert_eq!(
            setup.kind[r * w + c],
            Kind::Plain,
            "seed {seed}: general {player} not on a plain"
        );
    }
    assert_ne!(g0, g1, "seed {seed}: generals coincide");

    // Distance: unreachable is a failure, never "far".
    let from0 = distances(setup, g0);
    let distance = from0[g1[0] * w + g1[1]]
        .unwrap_or_else(|| panic!("seed {seed}: no passable path between the generals"));
    assert!(
        distance >= MIN_GENERAL_DISTANCE,
        "seed {seed}: generals only {distance} steps apart"
    );

    // The generator's stronger promise: no passable pockets at all.
    let reached = from0.iter().filter(|d| d.is_some()).count();
    assert_eq!(
        reached + mountains,
        h * w,
        "seed {seed}: some passable cells are cut off from the generals"
    );

    // Spawn fairness.
    let mut reach = [0usize; 2];
    for (player, general) in setup.generals.into_iter().enumerate() {
        let e = exits(setup, general);
        assert!(
            e >= MIN_SPAWN_EXITS,
            "seed {seed}: general {player} has {e} exits"
        );
        reach[player] = distances(setup, general)
            .iter()
            .filter(|d| d.is_some_and(|d| d <= SPAWN_RADIUS))
            .count();
        assert!(
            reach[player] >= MIN_SPAWN_REACH,
            "seed {seed}: general {player} reaches only {} cells",
            reach[player]
        );
    }
    let (small, large) = (reach[0].min(reach[1]), reach[0].max(reach[1]));
    assert!(
        small * 100 >= large * SPAWN_FAIRNESS_PERCENT,
        "seed {seed}: unfair spawns, reach {reach:?}"
    );

    // The generator's own measurement agrees.
    let stats = MapStats::of(setup).unwrap_or_else(|| panic!("seed {seed}: malformed"));
    assert!(stats.meets_rules(), "seed {seed}: {stats:?}");
    assert_eq!(stats.general_distance, Some(distance), "seed {seed}");
    assert_eq!(stats.spawn_reach, reach, "seed {seed}");
    assert_eq!(stats.mountains, mountains, "seed {seed}");

    Sample {
        height: h,
        width: w,
        mountains,
        distance,
        reach,
    }
}

fn median<T: Copy + Ord>(values: &mut [T]) -> T {
    values.sort_unstable();
    values[values.len() / 2]
}

fn report(samples: &[Sample]) {
    let n = samples.len();
    eprintln!("=== map distribution over {n} seeds ===");
    let mut sizes = BTreeMap::new();
    let mut heights = BTreeMap::new();
    let mut widths = BTreeMap::new();
    for s in samples {
        *sizes.entry((s.height, s.width)).or_insert(0usize) += 1;
        *heights.entry(s.height).or_insert(0usize) += 1;
        *widths.entry(s.width).or_insert(0usize) += 1;
    }
    eprintln!("height: {heights:?}");
    eprintln!("width:  {widths:?}");
    eprintln!("height x width:");
    for h in MIN_SIDE..=MAX_SIDE {
        let row: Vec<String> = (MIN_SIDE..=MAX_SIDE)
            .map(|w| format!("{w}:{:>4}", sizes.get(&(h, w)).copied().unwrap_or(0)))
            .collect();
        eprintln!("  {h} | {}", row.join("  "));
    }

    let mut mountains: Vec<usize> = samples.iter().map(|s| s.mountains).collect();
    let (lo, hi) = (
        mountains.iter().min().copied().unwrap_or(0),
        mountains.iter().max().copied().unwrap_or(0),
    );
    eprintln!(
        "mountains: min {lo} median {} max {hi}",
        median(&mut mountains)
    );
    let mut buckets = BTreeMap::new();
    for &m in &mountains {
        *buckets.entry(m / 5 * 5).or_insert(0usize) += 1;
    }
    for (start, count) in &buckets {
        eprintln!(
            "  {start:>3}-{:<3} {count:>5} {}",
            start + 4,
            "#".repeat(count * 60 / n)
        );
    }
    let per_mille: Vec<usize> = samples
        .iter()
        .map(|s| s.mountains * 1000 / (s.height * s.width))
        .collect();
    eprintln!(
        "mountain density (per mille): min {} max {}",
        per_mille.iter().min().copied().unwrap_or(0),
        per_mille.iter().max().copied().unwrap_or(0)
    );

    let mut distance: Vec<u32> = samples.iter().map(|s| s.distance).collect();
    let (dlo, dhi) = (
        distance.iter().min().copied().unwrap_or(0),
        distance.iter().max().copied().unwrap_or(0),
    );
    eprintln!(
        "general BFS distance: min {dlo} median {} max {dhi}",
        median(&mut distance)
    );
    let mut buckets = BTreeMap::new();
    for &d in &distance {
        *buckets.entry(d / 4 * 4).or_insert(0usize) += 1;
    }
    for (start, count) in &buckets {
        eprintln!(
            "  {start:>3}-{:<3} {count:>5} {}",
            start + 3,
            "#".repeat(count * 60 / n)
        );
    }

    let mut reach: Vec<usize> = samples.iter().flat_map(|s| s.reach).collect();
    let mut ratio: Vec<usize> = samples
        .iter()
        .map(|s| s.reach[0].min(s.reach[1]) * 100 / s.reach[0].max(s.reach[1]))
        .collect();
    eprintln!(
        "spawn reach (r={SPAWN_RADIUS}): min {} median {} max {}; smaller/larger %: min {} median {}",
        reach.iter().min().copied().unwrap_or(0),
        median(&mut reach),
        reach.iter().max().copied().unwrap_or(0),
        ratio.iter().min().copied().unwrap_or(0),
        median(&mut ratio),
    );
}

#[test]
fn every_seed_below_ten_thousand_meets_the_rules() {
    let params = Params::default();
    let started = Instant::now();
    let setups: Vec<Setup> = (0..SEEDS)
        .map(|seed| generate(seed, params.clone()))
        .collect();
    let elapsed = started.elapsed();
    eprintln!(
        "generated {SEEDS} maps in {elapsed:?} ({:?} per map)",
        elapsed / SEEDS as u32
    );

    let mut samples = Vec::new();
    let mut distinct = BTreeSet::new();
    for (seed, setup) in (0..SEEDS).zip(&setups) {
        samples.push(check(seed, setup, &params));
        assert_eq!(
            &generate(seed, params.clone()),
            setup,
            "seed {seed}: not deterministic"
        );
        let game = Generals::new(setup.clone())
            .unwrap_or_else(|err| panic!("seed {seed}: Generals::new rejected it: {err}"));
        for (player, [r, c]) in setup.generals.into_iter().enumerate() {
            assert_eq!(game.kind_at(r, c), Kind::General, "seed {seed}");
            assert_eq!(game.owner_at(r, c), player as u8 + 1, "seed {seed}");
        }
        let plane: Vec<u8> = setup.kind.iter().map(|&k| k as u8).collect();
        distinct.insert((setup.height, setup.width, plane, setup.generals));
    }
    report(&samples);

    // Variety: seeds name different boards.
    assert!(
        distinct.len() as u64 >= SEEDS - 5,
        "only {} distinct boards from {SEEDS} seeds",
        distinct.len()
    );
    let spawns: BTreeSet<[[usize; 2]; 2]> = setups.iter().map(|s| s.generals).collect();
    assert!(spawns.len() > 1000, "only {} spawn pairs", spawns.len());

    // Sanity of the distribution.
    for side in MIN_SIDE..=MAX_SIDE {
        let heights = samples.iter().filter(|s| s.height == side).count();
        let widths = samples.iter().filter(|s| s.width == side).count();
        // Expected 2 500 each; uniform draws stay far inside ±300.
        assert!((2200..=2800).contains(&heights), "height {side}: {heights}");
        assert!((2200..=2800).contains(&widths), "width {side}: {widths}");
    }
    let lo = samples.iter().map(|s| s.mountains).min().unwrap_or(0);
    let hi = samples.iter().map(|s| s.mountains).max().unwrap_or(0);
    assert!(lo <= 72, "mountain counts never go low: min {lo}");
    assert!(hi >= 100, "mountain counts never go high: max {hi}");
    for s in &samples {
        // About 20–24 % of the board, as the rules describe.
        let per_mille = s.mountains * 1000 / (s.height * s.width);
        assert!((200..=240).contains(&per_mille), "density {per_mille}");
    }
    let far = samples.iter().map(|s| s.distance).max().unwrap_or(0);
    assert!(far >= 30, "generals are never far apart: max {far}");
}

#[test]
fn params_are_stored_as_given() {
    let params = Params {
        max_turns: 77,
        deathtouch_turn: 5,
        build_base_cost: 1,
    };
    for seed in [0, 1, 42, u64::MAX] {
        check(seed, &generate(seed, params.clone()), &params);
    }
}

#[test]
fn from_seed_builds_the_generated_board() {
    for seed in [0, 7, 12345, u64::MAX - 1, u64::MAX] {
        let params = Params::default();
        let expected = Generals::new(generate(seed, params.clone())).expect("valid board");
        assert_eq!(Generals::from_seed(seed, params.clone()), expected);
        assert_eq!(Generals::try_from_seed(seed, params), Ok(expected));
    }
}

#[test]
fn try_from_seed_reports_bad_params() {
    for params in [
        Params {
            max_turns: 0,
            ..Params::default()
        },
        Params {
            max_turns: 50_001,
            ..Params::default()
        },
        Params {
            build_base_cost: 1_000_001,
            ..Params::default()
        },
    ] {
        assert!(matches!(
            Generals::try_from_seed(3, params),
            Err(SetupError::Params(_))
        ));
    }
}

#[test]
fn nearby_seeds_differ() {
    let a = generate(1000, Params::default());
    let b = generate(1001, Params::default());
    assert_ne!(a, b);
    // The public BFS helper agrees with the test's own on a real board.
    let own: Vec<u32> = distances(&a, a.generals[0])
        .into_iter()
        .map(|d| d.unwrap_or(mapgen::UNREACHABLE))
        .collect();
    assert_eq!(
        mapgen::bfs_distances(a.height, a.width, &a.kind, a.generals[0]),
        own
    );
}

proptest! {
    // No failure file: a failing seed is printed in full by `check` anyway.
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_seeds_meet_the_rules(seed in any::<u64>()) {
        let params = Params::default();
        let setup = generate(seed, params.clone());
        check(seed, &setup, &params);
        prop_assert_eq!(&generate(seed, params), &setup);
        prop_assert!(Generals::new(setup).is_ok());
    }
}
