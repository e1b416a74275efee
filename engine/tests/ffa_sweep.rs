//! generals-ffa baseline sweep: 10,000 full games through `Game::step`, each
//! seat played by `sprawl` or `crown`, every game scored to 2.0 with ranks
//! that follow the criteria and no guard finding.
//!
//! The engine is optimised even in the test profile (see the workspace
//! manifest), which keeps the sweep to tens of seconds; throughput is
//! measured by `arena bench engine --game generals-ffa`, not here.

use std::time::Instant;

use arena_engine::Game;
use arena_engine::generals_ffa::{GeneralsFfa, Params, Plan, plan};

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

fn check(seed: u64, g: &GeneralsFfa) -> String {
    assert_eq!(g.invariant_violation(), None, "seed {seed}");
    let outcome = g.outcome().unwrap();
    let sum: f64 = outcome.scores.iter().sum();
    assert!((sum - 2.0).abs() < 1e-9, "seed {seed}: {outcome:?}");
    let standings = g.standings();
    for a in 0..4 {
        for b in 0..4 {
            let better = standings[a] > standings[b];
            assert_eq!(better, outcome.ranks[a] < outcome.ranks[b], "seed {seed}");
        }
    }
    outcome.reason.clone()
}

/// Plays seeds `0..games` on every available core; prints the endings.
fn sweep(games: u64) {
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8)) as u64;
    let reasons: Vec<Vec<String>> = std::thread::scope(|scope| {
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
                            check(seed, &play(seed, params, &baselines(seed)))
                        })
                        .collect()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut counts = std::collections::BTreeMap::new();
    for reason in reasons.into_iter().flatten() {
        *counts.entry(reason).or_insert(0u32) += 1;
    }
    println!(
        "{games} games on {threads} threads in {:.1?}: {counts:?}",
        started.elapsed()
    );
    assert_eq!(counts.values().sum::<u32>() as u64, games);
}

#[test]
fn baseline_sweep_scores_sum_to_two() {
    sweep(GAMES);
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
