//! `arena bench sandbox`: what confinement costs. Two figures, each beside
//! its comparison measured in the same run (on a shared machine only ratios
//! from one run mean anything):
//!
//! - spawn to first line: a trivial bot (`run.sh` echoing one line) started
//!   through Arena's sandbox as a worker starts it (in the process it
//!   started ahead, once that one is ready, as it is between matches), as a
//!   one-shot command starts it (cold: leaf, clone and the whole
//!   confinement), and the same script under `bwrap --unshare-all`
//!   (Debian's `bubblewrap`), from the call to the line read; the three
//!   take turns, so each sees the same machine;
//! - the per-move round trip of an instant bot through the whole sandbox,
//!   beside the same bot as a plain process (see `arena bench runner`).

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::Context;
use arena_worker::{BotSpec, Launcher, ProcessLauncher};

use crate::bench_common::instant_matches;
use crate::cli::SandboxArgs;
use crate::launch::CommandLauncher;

/// The trivial bot: one line, then exit.
const READY_SCRIPT: &str = "#!/bin/sh\necho ready\n";

pub fn run(runs: u32, matches: u32, json: bool, args: &SandboxArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        !args.no_sandbox,
        "arena bench sandbox measures the sandbox; --no-sandbox leaves nothing to measure"
    );
    // As a worker spawns: with a process started ahead; and as a one-shot
    // command does, cold.
    let launcher = crate::launch::worker_launcher(args, 2)?;
    let cold = crate::launch::launcher(args, 2)?;
    let result = measure(runs, matches, &launcher, cold.as_launcher());
    launcher.finish();
    cold.finish();
    let figures = result?;
    if json {
        println!("{}", figures.to_json(runs, matches));
    } else {
        figures.print(runs, matches);
    }
    Ok(ExitCode::SUCCESS)
}

struct Figures {
    /// Spawn to first line through Arena's sandbox as a worker spawns, µs, sorted.
    arena_spawn_us: Vec<f64>,
    /// The same, cold (a one-shot command), µs, sorted.
    cold_spawn_us: Vec<f64>,
    /// How many of the worker's spawns ran in a process started ahead.
    prestarted_spawns: u64,
    /// The same under bwrap, µs, sorted; `None` without bwrap.
    bwrap_spawn_us: Option<Vec<f64>>,
    sandboxed_round_trip_us_p50: f64,
    plain_round_trip_us_p50: f64,
    sandboxed_round_trip_us_p99: f64,
    plain_round_trip_us_p99: f64,
}

fn measure(
    runs: u32,
    matches: u32,
    worker: &CommandLauncher,
    cold: &dyn Launcher,
) -> anyhow::Result<Figures> {
    let dir = std::env::temp_dir().join(format!("arena-bench-sandbox-{}", std::process::id()));
    let result = measure_in(&dir, runs, matches, worker, cold);
    let cleanup = std::fs::remove_dir_all(&dir);
    let figures = result?;
    cleanup.with_context(|| format!("removing {}", dir.display()))?;
    Ok(figures)
}

fn measure_in(
    dir: &Path,
    runs: u32,
    matches: u32,
    worker: &CommandLauncher,
    cold: &dyn Launcher,
) -> anyhow::Result<Figures> {
    let bot = dir.join("ready");
    std::fs::create_dir_all(&bot).with_context(|| format!("creating {}", bot.display()))?;
    std::fs::write(bot.join("run.sh"), READY_SCRIPT)?;
    let spec = BotSpec::from_dir(&bot);
    let bwrap = which("bwrap");
    if bwrap.is_none() {
        crate::messages::say!(
            "arena bench sandbox: no bwrap on PATH (Debian's bubblewrap): spawn compared \
             with nothing"
        );
    }
    let sandbox = match worker {
        CommandLauncher::Sandboxed(launcher) => launcher.sandbox(),
        CommandLauncher::Plain(_) => anyhow::bail!("the worker's launcher is not sandboxed"),
    };
    let before = sandbox.spawn_counts().prestarted;

    let mut arena_spawn_us = Vec::with_capacity(runs as usize);
    let mut cold_spawn_us = Vec::with_capacity(runs as usize);
    let mut bwrap_spawn_us = Vec::with_capacity(runs as usize);
    for _ in 0..runs {
        wait_until_ready(sandbox);
        arena_spawn_us.push(spawn_to_first_line(worker.as_launcher(), &spec)?);
        cold_spawn_us.push(spawn_to_first_line(cold, &spec)?);
        if let Some(bwrap) = &bwrap {
            bwrap_spawn_us.push(bwrap_to_first_line(bwrap, &bot)?);
        }
    }
    let prestarted_spawns = sandbox.spawn_counts().prestarted - before;
    for times in [&mut arena_spawn_us, &mut cold_spawn_us, &mut bwrap_spawn_us] {
        times.sort_by(f64::total_cmp);
    }
    let confined = instant_matches(matches, worker.as_launcher(), true)?;
    let plain = instant_matches(matches, &ProcessLauncher::default(), false)?;
    Ok(Figures {
        arena_spawn_us,
        cold_spawn_us,
        prestarted_spawns,
        bwrap_spawn_us: bwrap.map(|_| bwrap_spawn_us),
        sandboxed_round_trip_us_p50: confined.round_trip_us_p50_median,
        plain_round_trip_us_p50: plain.round_trip_us_p50_median,
        sandboxed_round_trip_us_p99: confined.round_trip_us_p99_median,
        plain_round_trip_us_p99: plain.round_trip_us_p99_median,
    })
}

/// Waits (up to five seconds) until the worker's sandbox has a process started
/// ahead, as it has between two matches; a spawn without one is cold and
/// is measured as such.
fn wait_until_ready(sandbox: &arena_sandbox::Sandbox) {
    let deadline = Instant::now() + std::time::Duration::from_secs(5);
    while sandbox.ready_processes() == 0 && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Launches `bot` and reads up to its first newline; returns the time that
/// took in µs. The bot is then waited for (its teardown is not timed).
fn spawn_to_first_line(launcher: &dyn Launcher, bot: &BotSpec) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut launched = launcher
        .launch(bot, 0)
        .context("launching the trivial bot")?;
    let mut stdout = std::fs::File::from(launched.stdout.try_clone()?);
    read_line(&mut stdout)?;
    let elapsed = started.elapsed();
    let exit = launched
        .handle
        .wait()
        .context("waiting for the trivial bot")?;
    anyhow::ensure!(
        exit.code == Some(0),
        "the trivial bot ended with {exit:?} in the sandbox"
    );
    Ok(elapsed.as_secs_f64() * 1e6)
}

/// The same script under `bwrap --unshare-all`, with the system directories
/// read-only and the bot's directory as its working directory.
fn bwrap_to_first_line(bwrap: &Path, bot: &Path) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut child = Command::new(bwrap)
        .args(["--unshare-all", "--die-with-parent", "--new-session"])
        .args(["--ro-bind", "/usr", "/usr"])
        .args(["--ro-bind-try", "/bin", "/bin"])
        .args(["--ro-bind-try", "/lib", "/lib"])
        .args(["--ro-bind-try", "/lib64", "/lib64"])
        .args(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"])
        .arg("--ro-bind")
        .arg(bot)
        .args(["/bot", "--chdir", "/bot", "/bin/sh", "run.sh"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting bwrap")?;
    let mut stdout = child.stdout.take().context("bwrap's stdout")?;
    read_line(&mut stdout)?;
    let elapsed = started.elapsed();
    let status = child.wait().context("waiting for bwrap")?;
    anyhow::ensure!(status.success(), "bwrap ended with {status}");
    Ok(elapsed.as_secs_f64() * 1e6)
}

/// Reads until the first newline (byte by byte: nothing past it matters).
fn read_line(from: &mut impl Read) -> anyhow::Result<()> {
    let mut byte = [0u8; 1];
    loop {
        let n = from.read(&mut byte).context("reading the first line")?;
        anyhow::ensure!(n == 1, "the bot ended before its first line");
        if byte[0] == b'\n' {
            return Ok(());
        }
    }
}

/// `program` found on PATH.
fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}

/// The `q`-quantile of sorted values (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

impl Figures {
    fn to_json(&self, runs: u32, matches: u32) -> serde_json::Value {
        let arena_p50 = quantile(&self.arena_spawn_us, 0.5);
        let bwrap = self.bwrap_spawn_us.as_deref();
        serde_json::json!({
            "spawn_runs": runs,
            "spawn_to_first_line_us_p50": arena_p50,
            "spawn_to_first_line_us_p99": quantile(&self.arena_spawn_us, 0.99),
            "prestarted_spawns": self.prestarted_spawns,
            "cold_spawn_to_first_line_us_p50": quantile(&self.cold_spawn_us, 0.5),
            "cold_spawn_to_first_line_us_p99": quantile(&self.cold_spawn_us, 0.99),
            "cold_spawn_p50_ratio_to_bwrap":
                bwrap.map(|b| quantile(&self.cold_spawn_us, 0.5) / quantile(b, 0.5)),
            "bwrap_spawn_to_first_line_us_p50": bwrap.map(|b| quantile(b, 0.5)),
            "bwrap_spawn_to_first_line_us_p99": bwrap.map(|b| quantile(b, 0.99)),
            "spawn_p50_ratio_to_bwrap": bwrap.map(|b| arena_p50 / quantile(b, 0.5)),
            "round_trip_matches": matches,
            "sandboxed_round_trip_us_p50_median": self.sandboxed_round_trip_us_p50,
            "sandboxed_round_trip_us_p99_median": self.sandboxed_round_trip_us_p99,
            "plain_round_trip_us_p50_median": self.plain_round_trip_us_p50,
            "plain_round_trip_us_p99_median": self.plain_round_trip_us_p99,
        })
    }

    fn print(&self, runs: u32, matches: u32) {
        let arena_p50 = quantile(&self.arena_spawn_us, 0.5);
        println!("spawn to first line of a trivial bot, {runs} runs each:");
        println!(
            "  arena, as a worker:   p50 {arena_p50:.0} µs, p99 {:.0} µs  ({} of {runs} in a \
             process started ahead)",
            quantile(&self.arena_spawn_us, 0.99),
            self.prestarted_spawns
        );
        println!(
            "  arena, cold:          p50 {:.0} µs, p99 {:.0} µs",
            quantile(&self.cold_spawn_us, 0.5),
            quantile(&self.cold_spawn_us, 0.99)
        );
        match &self.bwrap_spawn_us {
            Some(b) => println!(
                "  bwrap --unshare-all:  p50 {:.0} µs, p99 {:.0} µs  (arena/bwrap p50: {:.2})",
                quantile(b, 0.5),
                quantile(b, 0.99),
                arena_p50 / quantile(b, 0.5)
            ),
            None => println!("  bwrap --unshare-all:  not installed"),
        }
        println!(
            "per-move round trip of an instant bot, medians of {matches} matches of 1200 turns:"
        );
        println!(
            "  sandboxed: p50 {:.1} µs, p99 {:.1} µs",
            self.sandboxed_round_trip_us_p50, self.sandboxed_round_trip_us_p99
        );
        println!(
            "  plain:     p50 {:.1} µs, p99 {:.1} µs",
            self.plain_round_trip_us_p50, self.plain_round_trip_us_p99
        );
    }
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn quantiles_are_nearest_rank() {
        let values: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(quantile(&values, 0.5), 100.0);
        assert_eq!(quantile(&values, 0.99), 198.0);
        assert_eq!(quantile(&values, 1.0), 200.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
