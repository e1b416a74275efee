//! A guest played turn by turn in this process: replies, exact fuel,
//! running dry and resuming, late answers, traps, limits and the backstop.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arena_wasm::{HostLimits, Session, TurnEnd, compile, engine};

const NO_ACTION: &[u8] = b"{\"orders\": [], \"spawn\": false}";
const WALL: Duration = Duration::from_secs(5);
const PLENTY: u64 = 1_000_000_000;

fn modules_dir() -> &'static std::path::Path {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../bots/test/wasm"))
}

/// The test module `name` from bots/test/wasm, assembled.
fn test_module(name: &str) -> Vec<u8> {
    let text = arena_wasm::test_modules::named(modules_dir(), name).expect("test module");
    wat::parse_str(&text).expect("test module assembles")
}

/// A module of `body` on the test modules' prelude.
fn assemble(body: &str) -> Vec<u8> {
    let text = arena_wasm::test_modules::assemble(modules_dir(), body).expect("prelude");
    wat::parse_str(&text).expect("test module assembles")
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn session_with(wasm: &[u8], limits: HostLimits) -> (Session, Log) {
    let engine = engine().expect("engine");
    let module = compile::check(&engine, wasm, &limits).expect("module is accepted");
    let log = Log::default();
    let session =
        Session::new(&engine, module, &limits, 7, Box::new(log.clone())).expect("session");
    (session, log)
}

fn session(wasm: &[u8]) -> Session {
    session_with(wasm, HostLimits::default()).0
}

fn fuel_of(end: &TurnEnd) -> u64 {
    match end {
        TurnEnd::Reply { fuel, .. } => *fuel,
        other => panic!("expected a reply, got {other:?}"),
    }
}

/// A frame of fixed width, so reading it costs the same every turn.
fn rounds(n: u32) -> Vec<u8> {
    format!("{n:08}\n").into_bytes()
}

#[test]
fn a_guest_answers_every_frame_with_the_same_fuel() {
    let mut guest = session(&test_module("idle"));
    let mut fuels = Vec::new();
    for _ in 0..5 {
        let end = guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap();
        match &end {
            TurnEnd::Reply { line, stray, .. } => {
                assert_eq!(line, NO_ACTION);
                assert_eq!(*stray, 0);
            }
            other => panic!("expected a reply, got {other:?}"),
        }
        fuels.push(fuel_of(&end));
    }
    assert!(fuels.iter().all(|&f| f > 0));
    // Every turn after the first runs the same instructions.
    assert!(fuels[1..].windows(2).all(|w| w[0] == w[1]), "{fuels:?}");
}

/// The fuel of a `counted` turn of `n` rounds, measured once for 0 and 1
/// rounds: every further round is 8 more.
struct Counted {
    zero: u64,
    one: u64,
}

impl Counted {
    fn measure(guest: &mut Session) -> Counted {
        guest.turn(&rounds(0), PLENTY, PLENTY, WALL).unwrap();
        let zero = fuel_of(&guest.turn(&rounds(0), PLENTY, PLENTY, WALL).unwrap());
        let one = fuel_of(&guest.turn(&rounds(1), PLENTY, PLENTY, WALL).unwrap());
        Counted { zero, one }
    }

    fn cost(&self, n: u32) -> u64 {
        match n {
            0 => self.zero,
            n => self.one + 8 * u64::from(n - 1),
        }
    }
}

#[test]
fn fuel_is_the_instructions_executed_exactly() {
    let mut guest = session(&test_module("counted"));
    let counted = Counted::measure(&mut guest);
    for n in [2u32, 3, 1000, 123_457] {
        let fuel = fuel_of(&guest.turn(&rounds(n), PLENTY, PLENTY, WALL).unwrap());
        assert_eq!(fuel, counted.cost(n), "{n} rounds");
    }
    assert_eq!(counted.cost(1000) - counted.cost(1), 8 * 999);
}

#[test]
fn a_turn_that_runs_dry_resumes_next_turn_and_its_late_answer_is_dropped() {
    let mut guest = session(&test_module("counted"));
    let counted = Counted::measure(&mut guest);
    // 8,000,000 fuel of work against a 5,000,000 budget.
    let end = guest
        .turn(&rounds(1_000_000), 5_000_000, 5_000_000, WALL)
        .unwrap();
    assert_eq!(end, TurnEnd::Exhausted { fuel: 5_000_000 });
    // The rest of that work, its (dropped) answer, and this turn's own.
    let end = guest.turn(&rounds(0), 5_000_000, 5_000_000, WALL).unwrap();
    match end {
        TurnEnd::Reply { line, fuel, stray } => {
            assert_eq!(line, NO_ACTION);
            assert_eq!(stray, 0, "a late answer is not a stray line");
            assert_eq!(fuel, counted.cost(1_000_000) - 5_000_000 + counted.cost(0));
        }
        other => panic!("expected a reply, got {other:?}"),
    }
    // And then it is in step again.
    assert_eq!(
        fuel_of(&guest.turn(&rounds(0), PLENTY, PLENTY, WALL).unwrap()),
        counted.cost(0)
    );
}

#[test]
fn a_guest_dry_for_several_turns_is_charged_each_whole_budget() {
    let mut guest = session(&test_module("counted"));
    let counted = Counted::measure(&mut guest);
    // 24,000,000 of work: dry on three turns (of 5,000,000, 1,000,000 and
    // 5,000,000), answered on the fourth. After a dry turn the budget is
    // that turn's refill: what the bank-less allowance gives.
    let work = 3_000_000u32;
    let first = guest
        .turn(&rounds(work), 5_000_000, 1_000_000, WALL)
        .unwrap();
    assert_eq!(first, TurnEnd::Exhausted { fuel: 5_000_000 });
    let second = guest.turn(&rounds(0), 1_000_000, 5_000_000, WALL).unwrap();
    assert_eq!(second, TurnEnd::Exhausted { fuel: 1_000_000 });
    let third = guest.turn(&rounds(0), 5_000_000, 20_000_000, WALL).unwrap();
    assert_eq!(third, TurnEnd::Exhausted { fuel: 5_000_000 });
    let fourth = guest.turn(&rounds(0), 20_000_000, 5_000_000, WALL).unwrap();
    // Every frame since the long one was read at once: one answer, for
    // the newest, after the rest of the work.
    let spent = 5_000_000 + 1_000_000 + 5_000_000;
    assert_eq!(
        fuel_of(&fourth),
        counted.cost(work) + counted.cost(0) - spent
    );
}

#[test]
fn a_guest_that_computes_forever_runs_dry_every_turn_and_plays_on() {
    let mut guest = session(&test_module("spin"));
    for _ in 0..4 {
        let end = guest.turn(b"frame\n", 2_000_000, 2_000_000, WALL).unwrap();
        assert_eq!(end, TurnEnd::Exhausted { fuel: 2_000_000 });
    }
}

#[test]
fn a_guest_past_its_wall_time_is_stopped() {
    let mut guest = session(&test_module("spin"));
    let started = std::time::Instant::now();
    let end = guest
        .turn(
            b"frame\n",
            u64::MAX / 4,
            u64::MAX / 4,
            Duration::from_millis(200),
        )
        .unwrap();
    assert_eq!(end, TurnEnd::WallBackstop);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(guest.turn(b"frame\n", 10, 10, WALL).is_err());
}

#[test]
fn a_trap_ends_the_guest_with_its_reason() {
    let mut guest = session(&test_module("trap"));
    let first = guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap();
    assert!(matches!(first, TurnEnd::Reply { .. }));
    match guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap() {
        TurnEnd::Trap { message } => assert!(message.contains("unreachable"), "{message}"),
        other => panic!("expected a trap, got {other:?}"),
    }
    assert!(guest.turn(b"frame\n", PLENTY, PLENTY, WALL).is_err());
}

#[test]
fn memory_stops_growing_at_the_limit() {
    let limits = HostLimits {
        memory_bytes: 256 << 20,
        ..HostLimits::default()
    };
    let (mut guest, _) = session_with(&test_module("grow"), limits);
    match guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap() {
        // It grew until refused, then chose to trap.
        TurnEnd::Trap { message } => assert!(message.contains("unreachable"), "{message}"),
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn deep_recursion_traps_on_the_stack_limit() {
    let wasm = wat::parse_str(
        r#"(module (memory (export "memory") 1)
             (func $down (param i32) (result i32)
               (i32.add (call $down (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))
             (func (export "_start") (drop (call $down (i32.const 0)))))"#,
    )
    .unwrap();
    let mut guest = session(&wasm);
    match guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap() {
        TurnEnd::Trap { message } => assert!(message.contains("stack"), "{message}"),
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn garbage_is_a_reply_for_the_game_to_judge() {
    let mut guest = session(&test_module("garbage"));
    match guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap() {
        TurnEnd::Reply { line, .. } => assert_eq!(line, b"this is not json"),
        other => panic!("expected a reply, got {other:?}"),
    }
}

#[test]
fn sleeping_waits_for_nothing_and_runs_dry() {
    let mut guest = session(&test_module("sleep"));
    let started = std::time::Instant::now();
    for _ in 0..2 {
        let end = guest.turn(b"frame\n", 1_000_000, 1_000_000, WALL).unwrap();
        assert_eq!(end, TurnEnd::Exhausted { fuel: 1_000_000 });
    }
    assert!(started.elapsed() < WALL);
}

#[test]
fn reading_again_without_answering_ends_the_turn_unanswered() {
    let wasm = assemble(r#"(func (export "_start") (loop $l (drop (call $read_frame)) (br $l)))"#);
    let mut guest = session(&wasm);
    assert!(matches!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::NoReply { stray: 0, .. }
    ));
    assert!(matches!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::NoReply { .. }
    ));
}

#[test]
fn extra_lines_are_stray_and_overlong_lines_are_flagged() {
    // Two answers per frame: the second is a line nobody asked for.
    let twice = assemble(
        r#"(func (export "_start")
             (loop $t (if (call $read_frame) (then (call $reply) (call $reply) (br $t)))))"#,
    );
    let mut guest = session(&twice);
    assert!(matches!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::Reply { stray: 0, .. }
    ));
    assert!(matches!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::Reply { stray: 1, .. }
    ));
    let limits = HostLimits {
        line_cap: 10,
        ..HostLimits::default()
    };
    let (mut guest, _) = session_with(&test_module("idle"), limits);
    assert!(matches!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::Overlong { .. }
    ));
}

#[test]
fn returning_from_start_is_an_exit() {
    let wasm = wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "_start")))"#)
        .unwrap();
    let mut guest = session(&wasm);
    assert_eq!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::Exit { code: 0 }
    );
    let exits = wat::parse_str(
        r#"(module
             (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
             (memory (export "memory") 1)
             (func (export "_start") (call $exit (i32.const 3))))"#,
    )
    .unwrap();
    let mut guest = session(&exits);
    assert_eq!(
        guest.turn(b"frame\n", PLENTY, PLENTY, WALL).unwrap(),
        TurnEnd::Exit { code: 3 }
    );
}

#[test]
fn modules_that_cannot_be_bots_are_refused_with_a_reason() {
    let engine = engine().unwrap();
    let limits = HostLimits::default();
    let refused = |wasm: &[u8]| match compile::check(&engine, wasm, &limits) {
        Err(compile::CompileError::Refused(reason)) => reason,
        Ok(_) => panic!("accepted"),
        Err(other) => panic!("not refused: {other}"),
    };
    assert!(refused(b"not wasm").contains("not a usable module"));
    let no_start = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
    assert!(refused(&no_start).contains("_start"));
    let foreign = wat::parse_str(
        r#"(module (import "env" "now" (func)) (memory (export "memory") 1) (func (export "_start")))"#,
    )
    .unwrap();
    assert!(refused(&foreign).contains("env::now"));
    let wrong = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32)))
                   (memory (export "memory") 1) (func (export "_start")))"#,
    )
    .unwrap();
    assert!(refused(&wrong).contains("signature"));
    let huge =
        wat::parse_str(r#"(module (memory (export "memory") 20000) (func (export "_start")))"#)
            .unwrap();
    assert!(refused(&huge).contains("memory"));
    // A WASI function the host does not implement is accepted (ENOSYS).
    let unknown = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "path_open"
                     (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
                   (memory (export "memory") 1) (func (export "_start")))"#,
    )
    .unwrap();
    assert!(compile::check(&engine, &unknown, &limits).is_ok());
}

#[test]
fn the_cache_stores_what_was_compiled_and_loads_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine().unwrap();
    let cache = arena_wasm::ModuleCache::new(dir.path().join("wasm"), engine.clone());
    let wasm = test_module("idle");
    let hash = compile::module_hash(&wasm);
    assert_eq!(cache.find(&hash), None);
    let compiled = compile::compile(&engine, &wasm, &HostLimits::default()).unwrap();
    let path = cache.store(&hash, &compiled).unwrap();
    assert_eq!(cache.find(&hash), Some(path.clone()));
    assert_eq!(cache.read_artifact(&path).unwrap(), compiled);
    let outside = dir.path().join("elsewhere.cwasm");
    std::fs::write(&outside, b"x").unwrap();
    assert!(cache.read_artifact(&outside).is_err());
    assert!(cache.fingerprint().starts_with("wasmtime-48.0.8-"));
}

#[test]
fn the_compiler_writes_the_compiled_module_or_the_reason_it_is_refused() {
    let engine = engine().unwrap();
    let limits = HostLimits::default();
    let wasm = test_module("idle");
    let (mut out, mut log) = (Vec::new(), Vec::new());
    let served = compile::serve(&engine, &limits, &mut wasm.as_slice(), &mut out, &mut log);
    assert!(
        matches!(served, Ok(compile::Served::Compiled)),
        "{served:?}"
    );
    assert_eq!(out, compile::compile(&engine, &wasm, &limits).unwrap());
    assert!(log.is_empty());

    let (mut out, mut log) = (Vec::new(), Vec::new());
    let served = compile::serve(&engine, &limits, &mut &b"not wasm"[..], &mut out, &mut log);
    assert!(matches!(served, Ok(compile::Served::Refused)), "{served:?}");
    assert!(out.is_empty());
    let log = String::from_utf8(log).unwrap();
    assert!(log.starts_with("bot.wasm is not a usable module"), "{log}");

    // Past the size cap, refused without compiling.
    let huge = vec![0u8; compile::MAX_MODULE_BYTES + 10];
    let mut log = Vec::new();
    let served = compile::serve(
        &engine,
        &limits,
        &mut huge.as_slice(),
        &mut Vec::new(),
        &mut log,
    );
    assert!(matches!(served, Ok(compile::Served::Refused)));
    assert!(
        String::from_utf8(log)
            .unwrap()
            .contains("the most accepted")
    );
}
