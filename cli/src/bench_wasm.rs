//! `arena bench wasm`: what WebAssembly seats cost.
//!
//! - The per-turn round trip of a trivial module (answers at once) through
//!   the wasm host in the seat's sandbox, beside a trivial process bot
//!   (`internal-bot no-orders`) in the same sandbox: whole 400-turn Grid
//!   Royale matches through the referee, p50 and p99 per seat, medians over
//!   the matches.
//! - A compute-bound module (a pseudo-random walk writing into memory) run
//!   in this process on the pinned engine and on the same engine with fuel
//!   metering off, alternately, same run: the slowdown is the ratio of the
//!   medians.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use arena_engine::registry::LimitOverrides;
use arena_wasm::wasmtime::{Engine, Instance, Module, Store};
use arena_worker::{BotSpec, Launcher, RunnerConfig, SeatSpec, play_match};

use crate::bench_common::median;
use crate::cli::SandboxArgs;
use crate::launch;

/// Answers every frame at once with the empty batch: reads to the newline,
/// writes the reply (no WASI beyond `fd_read`/`fd_write`).
const TRIVIAL: &str = include_str!("../../bots/test/wasm/idle.wat");

/// `run(n)`: n rounds of an xorshift step and a store into a 64 KiB table.
const COMPUTE: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "run") (param $n i32) (result i32)
    (local $x i32) (local $acc i32)
    (local.set $x (i32.const 2463534242))
    (block $done
      (loop $round
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 13))))
        (local.set $x (i32.xor (local.get $x) (i32.shr_u (local.get $x) (i32.const 17))))
        (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 5))))
        (i32.store (i32.and (local.get $x) (i32.const 65532)) (local.get $acc))
        (local.set $acc (i32.add (local.get $acc)
          (i32.load (i32.and (i32.shr_u (local.get $x) (i32.const 7)) (i32.const 65532)))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $round)))
    (i32.add (local.get $acc) (local.get $x))))"#;

/// Rounds per compute run: a few tenths of a second unmetered.
const COMPUTE_ROUNDS: i32 = 200_000_000;

pub fn run(matches: u32, runs: u32, json: bool, args: &SandboxArgs) -> anyhow::Result<ExitCode> {
    let launcher = launch::launcher(args, 2)?;
    let wasm = launch::wasm_support(args)?;
    let scratch = std::env::temp_dir().join(format!("arena-bench-wasm-{}", std::process::id()));
    let program = launch::this_program_for_bots(args)?;
    let measured = round_trips(matches, launcher.as_launcher(), &wasm, &scratch, &program);
    launcher.finish();
    let cleanup = std::fs::remove_dir_all(&scratch);
    let (wasm_trip, process_trip) = measured?;
    cleanup.with_context(|| format!("removing {}", scratch.display()))?;
    let (metered, unmetered) = compute(runs)?;
    let slowdown = metered / unmetered;
    if json {
        let figures = serde_json::json!({
            "matches": matches,
            "wasm_round_trip_us_p50_median": wasm_trip.0,
            "wasm_round_trip_us_p99_median": wasm_trip.1,
            "process_round_trip_us_p50_median": process_trip.0,
            "process_round_trip_us_p99_median": process_trip.1,
            "compute_runs": runs,
            "compute_rounds": COMPUTE_ROUNDS,
            "compute_metered_s_median": metered,
            "compute_unmetered_s_median": unmetered,
            "fuel_slowdown": slowdown,
        });
        println!("{figures}");
    } else {
        println!(
            "per-turn round trip, sandboxed, medians of {matches} matches of 400 turns:\n  \
             wasm host    p50 {:8.1} µs   p99 {:8.1} µs\n  \
             process bot  p50 {:8.1} µs   p99 {:8.1} µs",
            wasm_trip.0, wasm_trip.1, process_trip.0, process_trip.1
        );
        println!(
            "compute-bound module, {COMPUTE_ROUNDS} rounds, medians of {runs} runs:\n  \
             fuel on {metered:.3} s   fuel off {unmetered:.3} s   slowdown {slowdown:.3}x"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Median (p50, p99) round trips in µs: the wasm seats', the process seats'.
fn round_trips(
    matches: u32,
    launcher: &dyn Launcher,
    wasm: &std::sync::Arc<arena_worker::seat::wasm::WasmSupport>,
    scratch: &std::path::Path,
    program: &std::path::Path,
) -> anyhow::Result<((f64, f64), (f64, f64))> {
    let module_dir = scratch.join("wasm");
    std::fs::create_dir_all(&module_dir)?;
    let text = arena_wasm::test_modules::assemble_with(PRELUDE, TRIVIAL);
    let module = wat::parse_str(&text).context("assembling the trivial module")?;
    std::fs::write(module_dir.join("bot.wasm"), module)?;
    let process_dir = scratch.join("process");
    std::fs::create_dir_all(&process_dir)?;
    std::fs::write(
        process_dir.join("run.sh"),
        format!(
            "#!/bin/sh\nexec '{}' internal-bot no-orders\n",
            program.display()
        ),
    )?;
    let entry = &arena_engine::grid_royale::ENTRY;
    let limits = entry.limits.with(&LimitOverrides::default())?;
    let config = RunnerConfig::for_limits(&limits).with_wasm(Some(std::sync::Arc::clone(wasm)));
    let mut figures = Vec::new();
    for dir in [&module_dir, &process_dir] {
        let seats: Vec<SeatSpec> =
            vec![BotSpec::from_dir(dir).into(), BotSpec::from_dir(dir).into()];
        let mut p50s = Vec::new();
        let mut p99s = Vec::new();
        for m in 0..matches {
            let game = entry.create(u64::from(m), 2, &arena_engine::Rules::default())?;
            let output = play_match(game, u64::from(m), &seats, launcher, &config)?;
            for p in &output.report.players {
                anyhow::ensure!(
                    p.forfeit.is_none() && p.moves == output.report.turns,
                    "the trivial bot did not play every turn: {p:?}"
                );
                p50s.push(p.latency_ms.p50 * 1000.0);
                p99s.push(p.latency_ms.p99 * 1000.0);
            }
        }
        figures.push((median(&mut p50s), median(&mut p99s)));
    }
    Ok((figures[0], figures[1]))
}

/// The test modules' prelude (built in: an installed binary has no tree).
const PRELUDE: &str = include_str!("../../bots/test/wasm/prelude.wat");

/// Median seconds of the compute run: fuel on, fuel off.
fn compute(runs: u32) -> anyhow::Result<(f64, f64)> {
    let wasm = wat::parse_str(COMPUTE).context("assembling the compute module")?;
    let metered = arena_wasm::engine().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let unmetered = arena_wasm::config::unmetered_engine().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let mut on = Vec::new();
    let mut off = Vec::new();
    let mut results = Vec::new();
    for _ in 0..runs {
        let (seconds, result) = compute_once(&metered, &wasm, true)?;
        on.push(seconds);
        results.push(result);
        let (seconds, result) = compute_once(&unmetered, &wasm, false)?;
        off.push(seconds);
        results.push(result);
    }
    anyhow::ensure!(
        results.windows(2).all(|w| w[0] == w[1]),
        "the two engines computed different results"
    );
    Ok((median(&mut on), median(&mut off)))
}

fn compute_once(engine: &Engine, wasm: &[u8], fuel: bool) -> anyhow::Result<(f64, i32)> {
    let module = Module::new(engine, wasm).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let mut store = Store::new(engine, ());
    if fuel {
        store
            .set_fuel(u64::MAX / 2)
            .map_err(|e| anyhow::anyhow!("{e:#}"))?;
    }
    store.set_epoch_deadline(u64::MAX / 2);
    let instance = Instance::new(&mut store, &module, &[]).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let run = instance
        .get_typed_func::<i32, i32>(&mut store, "run")
        .map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let started = Instant::now();
    let result = run
        .call(&mut store, COMPUTE_ROUNDS)
        .map_err(|e| anyhow::anyhow!("{e:#}"))?;
    Ok((started.elapsed().as_secs_f64(), result))
}
