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
            memory: true,
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

/// The memory, history and totals arrays are, number for number, what the
/// `generals/1` adapters give a model seat that reads the same game's
/// frames: one memory, kept the same way in training and in a match.
#[test]
fn the_memory_arrays_are_what_a_model_seat_reads() {
    use arena_engine::generals::observe::adapters::{CLASSIC, COMPETITION};
    use arena_engine::registry::model::{BoardArgs, FrameReader, InputArgs, ModelInterface};

    let cases: [(&str, &'static ModelInterface); 2] = [
        (generals::ENTRY.name, &COMPETITION),
        ("generals-classic", &CLASSIC),
    ];
    for (game, interface) in cases {
        let builtin = [(0, Builtin::Scripted), (1, Builtin::Random)];
        let mut e = open(game, 2, 2, Rules::default(), &builtin);
        e.env.reset(Some(5)).unwrap();
        let side = e.env.spec().side;
        let board = BoardArgs {
            rows: Some(side),
            cols: Some(side),
        };
        let mut readers: Vec<Box<dyn FrameReader>> =
            (0..4).map(|_| (interface.reader)(board)).collect();
        let mut history = InputArgs::default();
        history.params.insert("turns".to_owned(), 512);
        let planes = 6 * side * side;
        let mut forgotten = 0;
        for _ in 0..300 {
            for env in 0..2 {
                let turn = e.arrays.get::<i32>("turn")[env];
                for seat in 0..2 {
                    let reader = &mut readers[env * 2 + seat];
                    let mut message = Vec::new();
                    if turn == 0 {
                        *reader = (interface.reader)(board);
                        message = e.env.query(env, Query::Handshake { seat }).unwrap();
                    }
                    message.extend(e.env.query(env, Query::Frame { seat }).unwrap());
                    let view = reader.read(&message).unwrap();
                    let row = env * 2 + seat;
                    let memory = &e.arrays.get::<f32>("memory")[row * planes..(row + 1) * planes];
                    let read = view.input("memory", &InputArgs::default()).unwrap();
                    assert!(
                        read.data == memory,
                        "{game} env {env} seat {seat} turn {turn}"
                    );
                    let kept = &e.arrays.get::<f32>("history")[row * 1024..(row + 1) * 1024];
                    assert!(view.input("history", &history).unwrap().data == kept);
                    let totals = &e.arrays.get::<f32>("totals")[row * 7..(row + 1) * 7];
                    assert!(view.input("totals", &InputArgs::default()).unwrap().data == totals);
                    // Seen before, out of sight now: the memory is used.
                    forgotten += memory[..side * side]
                        .iter()
                        .zip(&memory[side * side..2 * side * side])
                        .filter(|&(&seen, &last)| seen == 1.0 && last < turn as f32)
                        .count();
                }
            }
            e.env
                .step(&Actions::Flat {
                    values: &[0; 4],
                    seats: 2,
                })
                .unwrap();
        }
        assert!(forgotten > 0, "{game}: no cell ever left sight");
    }
}
