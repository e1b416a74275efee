//! Criterion benchmarks of the generals engine's hot paths: one step, one
//! frame, one random legal action, one map; and one classic step, which runs
//! the same code under the classic ruleset.

use std::hint::black_box;

use arena_engine::generals::random::random_legal_action;
use arena_engine::generals::{Action, Generals, Params, mapgen};
use arena_engine::generals_classic::{self, GeneralsClassic};
use arena_engine::rng::SplitMix64;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

/// A mid-game position: 300 turns of random play from a generated map.
fn midgame(seed: u64) -> Generals {
    let mut game = Generals::from_seed(seed, Params::default());
    let mut rng = SplitMix64::new(seed);
    for _ in 0..300 {
        let actions = [
            random_legal_action(&game, 0, &mut rng),
            random_legal_action(&game, 1, &mut rng),
        ];
        game.step_pair(actions);
    }
    game
}

fn step(c: &mut Criterion) {
    let start = midgame(1);
    let mut rng = SplitMix64::new(2);
    // Pre-drawn actions, so the figure is the step alone.
    let actions: Vec<[Action; 2]> = {
        let mut game = start.clone();
        (0..256)
            .map(|_| {
                let a = [
                    random_legal_action(&game, 0, &mut rng),
                    random_legal_action(&game, 1, &mut rng),
                ];
                game.step_pair(a);
                a
            })
            .collect()
    };
    c.bench_function("generals/step x256 (recorded random actions)", |b| {
        b.iter_batched_ref(
            || start.clone(),
            |game| {
                for a in &actions {
                    game.step_pair(*a);
                }
            },
            BatchSize::SmallInput,
        )
    });
}

fn classic_step(c: &mut Criterion) {
    let mut start = GeneralsClassic::from_seed(1, generals_classic::Params::default())
        .expect("default params are valid");
    let mut rng = SplitMix64::new(1);
    for _ in 0..200 {
        let a = [0, 1].map(|p| random_legal_action(&start, p, &mut rng));
        start.step_pair(a);
    }
    let actions: Vec<[Action; 2]> = {
        let mut game = start.clone();
        (0..256)
            .map(|_| {
                let a = [0, 1].map(|p| random_legal_action(&game, p, &mut rng));
                game.step_pair(a);
                a
            })
            .collect()
    };
    c.bench_function(
        "generals-classic/step x256 (recorded random actions)",
        |b| {
            b.iter_batched_ref(
                || start.clone(),
                |game| {
                    for a in &actions {
                        game.step_pair(*a);
                    }
                },
                BatchSize::SmallInput,
            )
        },
    );
}

fn random_action(c: &mut Criterion) {
    let game = midgame(3);
    let mut rng = SplitMix64::new(4);
    c.bench_function("generals/random_legal_action", |b| {
        b.iter(|| random_legal_action(black_box(&game), 0, &mut rng))
    });
}

fn frame(c: &mut Criterion) {
    let game = midgame(5);
    let mut out = Vec::with_capacity(16 * 1024);
    c.bench_function("generals/write_frame", |b| {
        b.iter(|| {
            out.clear();
            game.write_frame_into(0, &mut out);
            black_box(&out);
        })
    });
}

fn map(c: &mut Criterion) {
    let mut seed = 0;
    c.bench_function("generals/mapgen", |b| {
        b.iter(|| {
            seed += 1;
            mapgen::generate(black_box(seed), Params::default())
        })
    });
}

criterion_group!(benches, step, classic_step, random_action, frame, map);
criterion_main!(benches);
