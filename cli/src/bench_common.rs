//! What the `arena bench` targets share: the instant-bot matches that
//! `arena bench runner` (in [`crate::bench`]) and `arena bench sandbox`
//! (in [`crate::bench_sandbox`]) both time, and the median of a sample.
//! It depends on no `bench_*` module, so each of them (and `bench` itself,
//! which dispatches to them) depends on it one way only.

use std::time::Instant;

use anyhow::Context;
use arena_engine::Session;
use arena_engine::generals::{Generals, Params};
use arena_worker::{BotSpec, RunnerConfig, play_match};

/// Medians over matches of [`instant_matches`].
pub struct InstantFigures {
    pub wall_s_median: f64,
    pub round_trip_us_p50_median: f64,
    pub round_trip_us_p99_median: f64,
}

/// Plays `matches` full 1200-turn matches between two instant pass bots on
/// `launcher`. With `own_copy`, the bot runs a copy of this binary placed in
/// its directory (a sandboxed bot sees only its directory and the system's).
pub fn instant_matches(
    matches: u32,
    launcher: &dyn arena_worker::Launcher,
    own_copy: bool,
) -> anyhow::Result<InstantFigures> {
    let exe = std::env::current_exe().context("locating the arena binary")?;
    let dir = std::env::temp_dir().join(format!("arena-bench-runner-{}", std::process::id()));
    let bot_dir = dir.join("instant");
    std::fs::create_dir_all(&bot_dir).with_context(|| format!("creating {}", bot_dir.display()))?;
    let result = (|| {
        let script = if own_copy {
            std::fs::copy(&exe, bot_dir.join("arena"))?;
            "#!/bin/sh\nexec ./arena internal-bot pass\n".to_owned()
        } else {
            format!("#!/bin/sh\nexec '{}' internal-bot pass\n", exe.display())
        };
        std::fs::write(bot_dir.join("run.sh"), script)?;
        let bots = [
            BotSpec::from_dir(&bot_dir).into(),
            BotSpec::from_dir(&bot_dir).into(),
        ];
        let mut walls = Vec::new();
        let mut p50s = Vec::new();
        let mut p99s = Vec::new();
        for m in 0..matches {
            let game = Generals::from_seed(u64::from(m), Params::default());
            let started = Instant::now();
            let output = play_match(
                Session::boxed(game),
                u64::from(m),
                &bots,
                launcher,
                &RunnerConfig::default(),
            )?;
            walls.push(started.elapsed().as_secs_f64());
            anyhow::ensure!(
                output.report.turns == 1200,
                "bench match ended after {} turns ({})",
                output.report.turns,
                output.report.reason
            );
            for p in &output.report.players {
                p50s.push(p.latency_ms.p50 * 1000.0);
                p99s.push(p.latency_ms.p99 * 1000.0);
            }
        }
        Ok::<_, anyhow::Error>((walls, p50s, p99s))
    })();
    let cleanup = std::fs::remove_dir_all(&dir);
    let (mut walls, mut p50s, mut p99s) = result?;
    cleanup.with_context(|| format!("removing {}", dir.display()))?;
    Ok(InstantFigures {
        wall_s_median: median(&mut walls),
        round_trip_us_p50_median: median(&mut p50s),
        round_trip_us_p99_median: median(&mut p99s),
    })
}

/// The middle value (the upper one of an even count), 0 for none; sorts
/// `values`.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
