//! generals-ffa baseline sweep: 10,000 full games through `Game::step`, each
//! seat played by `sprawl` or `crown`, with no guard finding, and every
//! game's ending, ranks and scores equal to what the rules
//! (`docs/games/generals-ffa.md`, after the published "gen-generals-io"
//! rules) give for what the game shows: its elimination events and its
//! final board, read cell by cell. Nothing of the engine's own ranking
//! (`standings`, `ranks`, `totals`, the seats' alive flags) is used.
//!
//! The engine is optimised even in the test profile (see the workspace
//! manifest), which keeps the sweep to tens of seconds; throughput is
//! measured by `arena bench engine --game generals-ffa`, not here.

use std::time::Instant;

use arena_engine::Game;
use arena_engine::generals_ffa::view::CellKind;
use arena_engine::generals_ffa::{EventKind, GeneralsFfa, Params, Plan, plan};

const SEATS: usize = 4;

const GAMES: u64 = 10_000;

/// Each seat's baseline for `seed`: `sprawl` or `crown` by the seed's bits.
fn baselines(seed: u64) -> [Plan; 4] {
    std::array::from_fn(|s| {
        if seed >> s & 1 == 0 {
            plan::sprawl()
        } else {
            plan::crown()
        }
    })
}

/// Plays one game to its end, seat `s` installing `plans[s]` whenever due.
fn play(seed: u64, params: Params, plans: &[Plan; 4]) -> GeneralsFfa {
    let mut g = GeneralsFfa::from_seed(seed, params).unwrap();
    let mut actions: Vec<Option<Plan>> = vec![None; 4];
    while g.outcome().is_none() {
        for (seat, action) in actions.iter_mut().enumerate() {
            *action = g.is_due(seat).then(|| plans[seat].clone());
        }
        g.step(&actions);
    }
    g
}

/// One seat's figures on the rules' ranking criteria, in their order:
/// compared field by field, greater is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// 1. Still alive: it holds a crown on the final board.
    alive: bool,
    /// 2. Among the dead, who lasted longer: the turn of its elimination
    ///    event (`u32::MAX` for the living, who outlast every dead seat).
    lasted: u32,
    /// 3. Most land: cells it owns on the final board.
    land: u64,
    /// 4. Biggest army: the armies on those cells.
    army: u64,
    /// 5. Most cities: cities it owns, its crown included.
    cities: u64,
}

/// Each seat's [`Key`], read from the final board and the event log.
fn keys(seed: u64, g: &GeneralsFfa) -> [Key; SEATS] {
    let cells = g.width() * g.height();
    std::array::from_fn(|seat| {
        let owned = (0..cells).filter(|&c| g.owner(c) == Some(seat));
        let (mut land, mut army, mut cities, mut crowns) = (0, 0, 0, 0);
        for cell in owned {
            land += 1;
            army += u64::from(g.army(cell));
            match g.kind(cell) {
                Some(CellKind::City) => cities += 1,
                Some(CellKind::Crown) => {
                    cities += 1;
                    crowns += 1;
                }
                _ => {}
            }
        }
        let deaths: Vec<u32> = g
            .events()
            .iter()
            .filter(|e| e.kind == EventKind::Eliminated && e.seat == seat)
            .map(|e| e.turn)
            .collect();
        let alive = crowns == 1;
        // The board and the log agree: a seat without a crown was
        // eliminated once, and then owns nothing.
        assert!(
            crowns <= 1,
            "seed {seed}: seat {seat} holds {crowns} crowns"
        );
        assert_eq!(
            deaths.len(),
            usize::from(!alive),
            "seed {seed}: seat {seat}"
        );
        if !alive {
            assert_eq!(land, 0, "seed {seed}: eliminated seat {seat} owns land");
        }
        Key {
            alive,
            lasted: deaths.first().copied().unwrap_or(u32::MAX),
            land,
            army,
            cities,
        }
    })
}

/// Ranks by the rules: the number of seats strictly ahead, so seats equal on
/// every criterion share a place.
fn ranks_of(keys: &[Key; SEATS]) -> Vec<u32> {
    keys.iter()
        .map(|mine| keys.iter().filter(|other| *other > mine).count() as u32)
        .collect()
}

/// The rules' place points, `(4 - 1 - place) / (4 - 1)`, averaged over the
/// places a tie group shares.
fn scores_of(ranks: &[u32]) -> Vec<f64> {
    let points = |place: u32| f64::from(SEATS as u32 - 1 - place) / (SEATS - 1) as f64;
    ranks
        .iter()
        .map(|&rank| {
            let tied = ranks.iter().filter(|&&r| r == rank).count() as u32;
            (rank..rank + tied).map(points).sum::<f64>() / f64::from(tied)
        })
        .collect()
}

/// Which criterion told each two seats apart (0 = alive ... 4 = cities),
/// and how many pairs were tied on all five.
fn deciders(keys: &[Key; SEATS]) -> [u32; 6] {
    let mut counts = [0; 6];
    for a in 0..SEATS {
        for b in a + 1..SEATS {
            let (x, y) = (keys[a], keys[b]);
            let criterion = [
                x.alive != y.alive,
                x.lasted != y.lasted,
                x.land != y.land,
                x.army != y.army,
                x.cities != y.cities,
            ]
            .iter()
            .position(|&differ| differ)
            .unwrap_or(5);
            counts[criterion] += 1;
        }
    }
    counts
}

/// Checks one finished game; returns its ending and [`deciders`].
fn check(seed: u64, params: Params, g: &GeneralsFfa) -> (String, [u32; 6]) {
    assert_eq!(g.invariant_violation(), None, "seed {seed}");
    let outcome = g.outcome().unwrap();
    for seat in 0..SEATS {
        let state = g.seat(seat).unwrap();
        assert!(!state.forfeited, "seed {seed}: baselines never forfeit");
    }
    let keys = keys(seed, g);
    let alive = keys.iter().filter(|k| k.alive).count();
    let reason = if alive <= 1 {
        "last_crown_standing"
    } else {
        assert_eq!(g.turn(), params.max_turns, "seed {seed}: {keys:?}");
        "turn_limit"
    };
    assert_eq!(outcome.reason, reason, "seed {seed}: {keys:?}");
    assert!(g.turn() <= params.max_turns, "seed {seed}");
    let ranks = ranks_of(&keys);
    assert_eq!(outcome.ranks, ranks, "seed {seed}: {keys:?}");
    let scores = scores_of(&ranks);
    for (seat, (got, want)) in outcome.scores.iter().zip(&scores).enumerate() {
        assert!(
            (got - want).abs() < 1e-9,
            "seed {seed}: seat {seat} scored {got}, the rules give {want}: {keys:?}"
        );
    }
    let sum: f64 = outcome.scores.iter().sum();
    assert!((sum - 2.0).abs() < 1e-9, "seed {seed}: {outcome:?}");
    (outcome.reason.clone(), deciders(&keys))
}

/// Plays seeds `0..games` on every available core; prints the endings and
/// which criterion told seats apart, and checks that the first four each
/// did in some game, so the sweep exercises them (the fifth, cities, decides
/// about one pair in 60,000: only between seats equal in land and army).
fn sweep(games: u64) {
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8)) as u64;
    let results: Vec<Vec<(String, [u32; 6])>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..games)
                        .step_by(threads as usize)
                        .map(|seed| {
                            let params = if seed % 4 == 3 {
                                Params::BLITZ
                            } else {
                                Params::STANDARD
                            };
                            check(seed, params, &play(seed, params, &baselines(seed)))
                        })
                        .collect()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut counts = std::collections::BTreeMap::new();
    let mut decided = [0u32; 6];
    for (reason, deciders) in results.into_iter().flatten() {
        *counts.entry(reason).or_insert(0u32) += 1;
        for (total, n) in decided.iter_mut().zip(deciders) {
            *total += n;
        }
    }
    println!(
        "{games} games on {threads} threads in {:.1?}: {counts:?}; seat pairs told apart by \
         alive {}, lasted {}, land {}, army {}, cities {}, tied {}",
        started.elapsed(),
        decided[0],
        decided[1],
        decided[2],
        decided[3],
        decided[4],
        decided[5],
    );
    assert_eq!(counts.values().sum::<u32>() as u64, games);
    assert!(
        decided[..4].iter().all(|&n| n > 0),
        "some criterion never decided: {decided:?}"
    );
}

#[test]
fn baseline_sweep_ranks_and_scores_follow_the_rules() {
    sweep(GAMES);
}

/// The derivation itself, on keys whose order is known: ties share a place
/// and average its points.
#[test]
fn ranks_and_scores_by_the_rules_split_ties() {
    let key = |alive, lasted, land| Key {
        alive,
        lasted,
        land,
        army: 10,
        cities: 1,
    };
    let keys = [
        key(true, u32::MAX, 5),
        key(false, 40, 0),
        key(true, u32::MAX, 5),
        key(false, 90, 0),
    ];
    let ranks = ranks_of(&keys);
    assert_eq!(ranks, [0, 3, 0, 2]);
    let scores = scores_of(&ranks);
    let want = [5.0 / 6.0, 0.0, 5.0 / 6.0, 1.0 / 3.0];
    for (got, want) in scores.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{scores:?}");
    }
}

#[test]
fn same_seed_and_plans_give_the_same_hashes() {
    for seed in [0, 1, 77, 1234] {
        let plans = baselines(seed);
        let (a, b) = (
            play(seed, Params::STANDARD, &plans),
            play(seed, Params::STANDARD, &plans),
        );
        assert_eq!(a.hashes(), b.hashes());
        assert_eq!(a, b);
    }
}
