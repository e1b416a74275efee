//! Property tests of the classic map generator: every documented rule on
//! 10,000 default seeds, 2,000 seeds each of small boards and of 4 and 8
//! players on 23×23, determinism, option errors, and a distribution report
//! (run with `--nocapture` to see it).
//!
//! The checks recompute everything with their own BFS rather than trusting
//! the generator's helpers; only the published constants are shared.

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use arena_engine::generals::Kind;
use arena_engine::generals_classic::mapgen::{
    CASTLE_RADIUS, ClassicMap, MAX_CASTLES, MAX_GARRISON, MAX_MOUNTAIN_PERCENT, MIN_CASTLES,
    MIN_GARRISON, MIN_MOUNTAIN_PERCENT, MapError, MapOptions, MapReport, generate,
    generate_with_report, min_general_distance, try_generate,
};

/// Plain BFS over non-mountain cells; `None` where not reached.
fn distances(map: &ClassicMap, [row, col]: [usize; 2]) -> Vec<Option<u32>> {
    let (h, w) = (map.height, map.width);
    let mut dist = vec![None; h * w];
    let mut queue = VecDeque::from([(row, col)]);
    dist[row * w + col] = Some(0);
    while let Some((r, c)) = queue.pop_front() {
        let d = dist[r * w + c].expect("queued cells have a distance");
        for (nr, nc) in neighbours(h, w, r, c) {
            let i = nr * w + nc;
            if map.kind[i] != Kind::Mountain && dist[i].is_none() {
                dist[i] = Some(d + 1);
                queue.push_back((nr, nc));
            }
        }
    }
    dist
}

fn neighbours(h: usize, w: usize, r: usize, c: usize) -> impl Iterator<Item = (usize, usize)> {
    [
        (r.wrapping_sub(1), c),
        (r + 1, c),
        (r, c.wrapping_sub(1)),
        (r, c + 1),
    ]
    .into_iter()
    .filter(move |&(nr, nc)| nr < h && nc < w)
}

/// What one board measured, for the distribution report.
struct Sample {
    height: usize,
    width: usize,
    /// Floor of the mountain percentage, for the histogram.
    mountain_percent: usize,
    /// Exact mountain fraction, for the mean.
    mountain_fraction: f64,
    castles: usize,
    /// Least pairwise BFS distance between generals.
    distance: u32,
    /// Per general: BFS steps to its nearest castle.
    castle_steps: Vec<u32>,
    garrisons: Vec<u32>,
    report: MapReport,
}

/// Every generator rule on one board (panics with the seed on a violation).
fn check(seed: u64, options: &MapOptions) -> Sample {
    let (map, report) = generate_with_report(seed, options);
    let (h, w) = (map.height, map.width);
    let cells = h * w;
    let sides = options.min_side..=options.max_side;
    assert!(
        sides.contains(&h) && sides.contains(&w),
        "seed {seed}: {h}x{w}"
    );
    assert_eq!(map.kind.len(), cells, "seed {seed}");
    assert_eq!(map.army.len(), cells, "seed {seed}");

    // Kinds and armies.
    let count = |k: Kind| map.kind.iter().filter(|&&x| x == k).count();
    let mountains = count(Kind::Mountain);
    let castles = count(Kind::Castle);
    assert!(
        (MIN_MOUNTAIN_PERCENT * cells..=MAX_MOUNTAIN_PERCENT * cells).contains(&(mountains * 100)),
        "seed {seed}: {mountains} mountains on {cells} cells"
    );
    assert!(
        (MIN_CASTLES..=MAX_CASTLES).contains(&castles),
        "seed {seed}: {castles} castles"
    );
    assert_eq!(count(Kind::General), options.players, "seed {seed}");
    let mut garrisons = Vec::new();
    for (i, (&k, &a)) in map.kind.iter().zip(&map.army).enumerate() {
        match k {
            Kind::Castle => {
                assert!(
                    (MIN_GARRISON..=MAX_GARRISON).contains(&a),
                    "seed {seed}: {a}"
                );
                garrisons.push(a);
            }
            Kind::General => assert_eq!(a, 1, "seed {seed}: general army at {i}"),
            Kind::Plain | Kind::Mountain => assert_eq!(a, 0, "seed {seed}: army at {i}"),
        }
    }

    // Generals: on the board, on their own General cells, distinct.
    assert_eq!(map.generals.len(), options.players, "seed {seed}");
    for &[r, c] in &map.generals {
        assert!(r < h && c < w, "seed {seed}: general off the board");
        assert_eq!(map.kind[r * w + c], Kind::General, "seed {seed}");
        let plain_exit =
            neighbours(h, w, r, c).any(|(nr, nc)| map.kind[nr * w + nc] == Kind::Plain);
        assert!(
            plain_exit,
            "seed {seed}: general at {r},{c} has no plain neighbour"
        );
    }

    // Distances, connectivity, castles in reach.
    let target = min_general_distance(h, w, options.players);
    assert_eq!(report.target_distance, target, "seed {seed}");
    if !report.relaxed {
        assert_eq!(report.placed_distance, target, "seed {seed}");
    }
    assert_eq!(report.sealing_castles, 0, "seed {seed}");
    let mut distance = u32::MAX;
    let mut castle_steps = Vec::new();
    for (p, &g) in map.generals.iter().enumerate() {
        let dist = distances(&map, g);
        // All non-mountain cells reachable from every general.
        for (i, d) in dist.iter().enumerate() {
            assert_eq!(
                d.is_some(),
                map.kind[i] != Kind::Mountain,
                "seed {seed}: cell {i} from general {p}"
            );
        }
        for &[r, c] in &map.generals[p + 1..] {
            let d = dist[r * w + c].expect("connected");
            distance = distance.min(d);
        }
        let nearest = (0..cells)
            .filter(|&i| map.kind[i] == Kind::Castle)
            .filter_map(|i| dist[i])
            .min()
            .expect("a reachable castle");
        assert!(
            nearest <= CASTLE_RADIUS,
            "seed {seed}: general {p} nearest castle {nearest} steps"
        );
        castle_steps.push(nearest);
    }
    assert!(
        distance >= report.placed_distance,
        "seed {seed}: generals {distance} apart, promised {}",
        report.placed_distance
    );
    Sample {
        height: h,
        width: w,
        mountain_percent: mountains * 100 / cells,
        mountain_fraction: mountains as f64 / cells as f64,
        castles,
        distance,
        castle_steps,
        garrisons,
        report,
    }
}

fn mean_mountain_percent(samples: &[Sample]) -> f64 {
    100.0 * samples.iter().map(|s| s.mountain_fraction).sum::<f64>() / samples.len() as f64
}

fn histogram<K: Ord + std::fmt::Debug>(title: &str, values: impl IntoIterator<Item = K>) {
    let mut counts = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_insert(0usize) += 1;
    }
    let line: Vec<String> = counts.iter().map(|(k, n)| format!("{k:?}:{n}")).collect();
    println!("  {title}: {}", line.join(" "));
}

/// Checks `seeds` seeds of `options` and prints their distributions; returns
/// the samples for extra assertions.
fn sweep(label: &str, options: &MapOptions, seeds: u64) -> Vec<Sample> {
    let started = Instant::now();
    let samples: Vec<Sample> = (0..seeds).map(|seed| check(seed, options)).collect();
    let elapsed = started.elapsed();
    // Determinism on a sample: same seed and options, same map.
    for seed in (0..seeds).step_by(10) {
        assert_eq!(
            generate(seed, options),
            generate(seed, options),
            "seed {seed}"
        );
        assert_eq!(try_generate(seed, options), Ok(generate(seed, options)));
    }
    let n = samples.len();
    let relaxed = samples.iter().filter(|s| s.report.relaxed).count();
    let extra_layouts = samples.iter().filter(|s| s.report.layouts > 1).count();
    let forced: usize = samples.iter().map(|s| s.report.forced_castles).sum();
    println!("{label}: {n} seeds {options:?} in {elapsed:?}");
    histogram("height", samples.iter().map(|s| s.height));
    histogram("width", samples.iter().map(|s| s.width));
    histogram("mountain %", samples.iter().map(|s| s.mountain_percent));
    println!("  mean mountain %: {:.2}", mean_mountain_percent(&samples));
    histogram("castles", samples.iter().map(|s| s.castles));
    histogram("garrison", samples.iter().flat_map(|s| s.garrisons.clone()));
    histogram(
        "target distance",
        samples.iter().map(|s| s.report.target_distance),
    );
    histogram("least general distance", samples.iter().map(|s| s.distance));
    histogram(
        "steps to nearest castle",
        samples.iter().flat_map(|s| s.castle_steps.clone()),
    );
    histogram("layouts drawn", samples.iter().map(|s| s.report.layouts));
    println!(
        "  fallback (relaxed distance): {relaxed}; extra layouts: {extra_layouts}; \
         forced near castles: {forced} of {} generals",
        n * options.players
    );
    samples
}

#[test]
fn default_boards_meet_every_rule() {
    let options = MapOptions::default();
    assert_eq!(
        options,
        MapOptions {
            min_side: 15,
            max_side: 23,
            players: 2
        }
    );
    let samples = sweep("default", &options, 10_000);
    for s in &samples {
        // The reference's numbers: 17 steps on every full-size board, and the
        // fallback is never needed.
        assert_eq!(s.report.target_distance, 17);
        assert!(s.distance >= 17 && !s.report.relaxed);
        assert!((13..=24).contains(&s.mountain_percent));
    }
    // Every side length and castle count actually occurs.
    for side in 15..=23 {
        assert!(samples.iter().any(|s| s.height == side && s.width == side));
    }
    for castles in MIN_CASTLES..=MAX_CASTLES {
        assert!(samples.iter().any(|s| s.castles == castles));
    }
    let mean = mean_mountain_percent(&samples);
    assert!((18.5..=20.5).contains(&mean), "mean mountain % {mean}");
}

#[test]
fn small_boards_scale_the_distance() {
    let options = MapOptions {
        min_side: 8,
        max_side: 10,
        players: 2,
    };
    for s in sweep("small", &options, 2_000) {
        let target = ((s.height + s.width) * 2 / 3) as u32;
        assert_eq!(s.report.target_distance, target);
        assert!(s.distance >= target && !s.report.relaxed);
    }
}

#[test]
fn four_and_eight_players_on_full_boards() {
    for (players, target) in [(4, 17), (8, 12)] {
        let options = MapOptions {
            min_side: 23,
            max_side: 23,
            players,
        };
        for s in sweep(&format!("{players} players"), &options, 2_000) {
            assert_eq!(s.report.target_distance, target);
            assert!(s.distance >= target && !s.report.relaxed);
        }
    }
}

#[test]
fn every_size_and_player_count_stays_valid() {
    // Broad and shallow: every option corner, fallback allowed (checked to
    // keep every promise but the full distance).
    for players in 2..=8 {
        for (min_side, max_side) in [(6, 6), (6, 23), (12, 14)] {
            let options = MapOptions {
                min_side,
                max_side,
                players,
            };
            for seed in 0..150 {
                check(seed, &options);
            }
        }
    }
}

#[test]
fn seeds_give_different_maps() {
    let options = MapOptions::default();
    let key = |map: ClassicMap| {
        let kinds: Vec<u8> = map.kind.iter().map(|&k| k as u8).collect();
        (kinds, map.army, map.generals)
    };
    let mut seen: Vec<_> = (0..500).map(|seed| key(generate(seed, &options))).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 500);
}

#[test]
fn invalid_options_are_clear_errors() {
    let base = MapOptions::default();
    let cases = [
        (
            MapOptions {
                min_side: 5,
                ..base.clone()
            },
            MapError::SideOutOfRange { side: 5 },
            "side 5 is outside 6..=23",
        ),
        (
            MapOptions {
                max_side: 24,
                ..base.clone()
            },
            MapError::SideOutOfRange { side: 24 },
            "side 24 is outside 6..=23",
        ),
        (
            MapOptions {
                min_side: 20,
                max_side: 16,
                ..base.clone()
            },
            MapError::SidesReversed {
                min_side: 20,
                max_side: 16,
            },
            "min_side 20 is larger than max_side 16",
        ),
        (
            MapOptions {
                players: 1,
                ..base.clone()
            },
            MapError::Players { players: 1 },
            "1 players; the generator supports 2..=8",
        ),
        (
            MapOptions {
                players: 9,
                ..base.clone()
            },
            MapError::Players { players: 9 },
            "9 players; the generator supports 2..=8",
        ),
    ];
    for (options, error, message) in cases {
        assert_eq!(options.check(), Err(error.clone()), "{options:?}");
        assert_eq!(try_generate(0, &options), Err(error.clone()));
        assert_eq!(error.to_string(), message);
        // `generate` clamps instead and still returns a valid board.
        let clamped = options.clamped();
        assert_eq!(clamped.check(), Ok(()));
        assert_eq!(generate(7, &options), generate(7, &clamped));
        check(7, &clamped);
    }
    assert_eq!(base.check(), Ok(()));
    assert_eq!(base.clamped(), base);
    let wild = MapOptions {
        min_side: 0,
        max_side: usize::MAX,
        players: usize::MAX,
    };
    assert_eq!(
        wild.clamped(),
        MapOptions {
            min_side: 6,
            max_side: 23,
            players: 8
        }
    );
    let map = generate(3, &wild);
    assert_eq!(map.generals.len(), 8);
}

/// FNV-1a over every field of the default maps of seeds 0..100.
fn fingerprint() -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |v: u64| {
        for byte in v.to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for seed in 0..100 {
        let map = generate(seed, &MapOptions::default());
        eat(map.height as u64);
        eat(map.width as u64);
        map.kind.iter().for_each(|&k| eat(k as u64));
        map.army.iter().for_each(|&a| eat(u64::from(a)));
        map.generals.iter().flatten().for_each(|&x| eat(x as u64));
    }
    hash
}

#[test]
fn seeds_name_the_same_maps_forever() {
    // A seed is a map's name: any change to the draws renames every map and
    // must show up here (update the constant only on purpose).
    assert_eq!(fingerprint(), 0x6a13_78e4_7dde_a5a2);
}
