//! The environment driven from Rust over owned arrays: threads change
//! nothing, episodes restart on the step after they end, and every
//! finished episode is a replay the engine verifies.

use arena_engine::generals;
use arena_engine::registry::{RuleValue, Rules};
use arena_engine::replay::open_any;
use arena_rl::buffers::OwnedArrays;
use arena_rl::games::{Builtin, Request};
use arena_rl::slice::Query;
use arena_rl::{Actions, EnvError, ObsLayout, VecEnv};

struct Env {
    env: VecEnv,
    // Declared after `env`, so it is dropped after the threads that write it.
    arrays: OwnedArrays,
}

fn open(
    game: &str,
    envs: usize,
    threads: usize,
    rules: Rules,
    builtin: &[(usize, Builtin)],
) -> Env {
    let request = Request {
        game,
        seats: 2,
        rules: &rules,
        envs,
        side: None,
        layout: ObsLayout {
            reference: true,
            masks: true,
        },
        builtin,
        record: true,
    };
    let family = VecEnv::open(&request).unwrap();
    let mut arrays = OwnedArrays::new(family.spec());
    // SAFETY: `arrays` lives in the same struct as the environment and is
    // dropped after it; nothing reads it while a step runs.
    let buffers = unsafe { arrays.buffers(family.spec()) }.unwrap();
    let env = VecEnv::new(family, threads, buffers).unwrap();
    Env { env, arrays }
}

fn random_pair() -> Vec<(usize, Builtin)> {
    vec![(0, Builtin::Random), (1, Builtin::Random)]
}

#[test]
fn threads_do_not_change_a_single_number() {
    let run = |threads| {
        let mut e = open(
            generals::ENTRY.name,
            5,
            threads,
            Rules::default(),
            &random_pair(),
        );
        e.env.reset(Some(9)).unwrap();
        let passes = vec![0i64; 10];
        let mut digest = Vec::new();
        for _ in 0..150 {
            e.env
                .step(&Actions::Flat {
                    values: &passes,
                    seats: 2,
                })
                .unwrap();
            digest.push((
                e.arrays
                    .get::<i32>("army")
                    .iter()
                    .map(|&v| i64::from(v))
                    .sum::<i64>(),
                e.arrays
                    .get::<f32>("reference")
                    .iter()
                    .map(|&v| v as f64)
                    .sum::<f64>(),
                e.arrays.get::<u64>("board_seed").to_vec(),
            ));
        }
        digest
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(4), one);
}

#[test]
fn episodes_restart_on_the_next_step_and_replay_exactly() {
    let mut rules = Rules::default();
    rules.0.insert("max_turns".into(), RuleValue::Int(40));
    let mut e = open("generals-classic", 3, 2, rules, &random_pair());
    e.env.reset(Some(1)).unwrap();
    let passes = vec![0i64; 6];
    let step = |e: &mut Env| {
        e.env
            .step(&Actions::Flat {
                values: &passes,
                seats: 2,
            })
            .unwrap()
    };
    for _ in 0..40 {
        step(&mut e);
    }
    assert_eq!(e.arrays.get::<u8>("terminated"), &[1, 1, 1]);
    for env in 0..3 {
        let bytes = e.env.query(env, Query::Replay { finished: true }).unwrap();
        open_any(&bytes).unwrap().verify().unwrap();
    }
    let seeds = e.arrays.get::<u64>("board_seed").to_vec();
    step(&mut e);
    assert_eq!(e.arrays.get::<u8>("terminated"), &[0, 0, 0]);
    assert_eq!(e.arrays.get::<i32>("turn"), &[0, 0, 0]);
    assert!(
        e.arrays
            .get::<u64>("board_seed")
            .iter()
            .zip(&seeds)
            .all(|(a, b)| a != b)
    );
}

#[test]
fn a_bad_action_moves_nothing() {
    let mut e = open(generals::ENTRY.name, 2, 1, Rules::default(), &[]);
    assert!(matches!(
        e.env.step(&Actions::Flat {
            values: &[0; 4],
            seats: 2
        }),
        Err(EnvError::Config(_))
    ));
    e.env.reset(Some(3)).unwrap();
    let before = e.arrays.get::<i64>("header").to_vec();
    let mut fields = [1i64, 0, 0, 0, 0].repeat(4);
    fields[15] = 7; // env 1, seat 1: pass field 7
    let err = e
        .env
        .step(&Actions::Fields {
            values: &fields,
            seats: 2,
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            EnvError::Action {
                env: 1,
                seat: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(e.arrays.get::<i64>("header"), &before[..]);
    let err = e
        .env
        .step(&Actions::Flat {
            values: &[0, 0, 0],
            seats: 2,
        })
        .unwrap_err();
    assert!(matches!(err, EnvError::Shape(_)), "{err}");
}
