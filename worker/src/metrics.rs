//! A worker's Prometheus metrics. Per-bot figures go to the store with each
//! result, not to labels: labels here are bounded sets (fault kinds,
//! outcomes), never bot names.

use prometheus::{Histogram, HistogramOpts, IntCounterVec, Opts, Registry};

use crate::runner::MatchOutput;

#[derive(Clone)]
pub struct WorkerMetrics {
    pub registry: Registry,
    faults: IntCounterVec,
    move_latency: Histogram,
    fuel_used: Histogram,
    evaluation: Histogram,
    matches: IntCounterVec,
    match_duration: Histogram,
    builds: IntCounterVec,
    build_duration: Histogram,
    spawn: Histogram,
}

impl WorkerMetrics {
    pub fn new() -> Result<WorkerMetrics, prometheus::Error> {
        let registry = Registry::new();
        Ok(WorkerMetrics {
            faults: counter(
                &registry,
                "arena_bot_faults_total",
                "Bot replies replaced by a pass, by kind",
                "kind",
            )?,
            // Move latency spans microseconds (instant bots) to the 150 ms deadline.
            move_latency: histogram(
                &registry,
                "arena_move_latency_seconds",
                "Time from frame written to reply line complete",
                vec![
                    20e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
                    100e-3, 150e-3,
                ],
            )?,
            // A turn's fuel: from a few thousand instructions to the bank's cap.
            fuel_used: histogram(
                &registry,
                "arena_bot_fuel_used",
                "WebAssembly instructions a seat spent on one turn (a dry turn counts its budget)",
                prometheus::exponential_buckets(1e4, 4.0, 10)?,
            )?,
            // A model evaluation: well under a millisecond to the deadline.
            evaluation: histogram(
                &registry,
                "arena_model_evaluation_seconds",
                "Time the model host took to evaluate a model-graph seat's turn",
                vec![
                    50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3,
                    250e-3, 500e-3, 1.0,
                ],
            )?,
            matches: counter(
                &registry,
                "arena_matches_total",
                "Matches played, by outcome",
                "outcome",
            )?,
            match_duration: histogram(
                &registry,
                "arena_match_duration_seconds",
                "Wall time of one match",
                prometheus::exponential_buckets(0.05, 2.0, 14)?,
            )?,
            builds: counter(
                &registry,
                "arena_builds_total",
                "Submission builds, by outcome",
                "outcome",
            )?,
            build_duration: histogram(
                &registry,
                "arena_build_duration_seconds",
                "Wall time of one build.sh",
                prometheus::exponential_buckets(0.1, 2.0, 14)?,
            )?,
            spawn: histogram(
                &registry,
                "arena_sandbox_spawn_seconds",
                "Time to start one bot process (confined or not)",
                prometheus::exponential_buckets(0.0005, 2.0, 12)?,
            )?,
            registry,
        })
    }

    /// Records everything a played match says about the worker's bots.
    pub fn record(&self, output: &MatchOutput, wall_s: f64) {
        let report = &output.report;
        for player in &report.players {
            self.faults
                .with_label_values(&["timeout"])
                .inc_by(u64::from(player.faults.timeout));
            self.faults
                .with_label_values(&["malformed"])
                .inc_by(u64::from(player.faults.malformed));
            self.faults
                .with_label_values(&["illegal"])
                .inc_by(u64::from(player.faults.illegal));
            self.faults
                .with_label_values(&["fuel_exhausted"])
                .inc_by(u64::from(player.faults.fuel_exhausted));
            self.faults
                .with_label_values(&["strike"])
                .inc_by(u64::from(player.faults.strike));
        }
        for seat in &output.evaluations_ns {
            for &ns in seat {
                self.evaluation.observe(ns as f64 / 1e9);
            }
        }
        for seat in &output.fuel_per_turn {
            for &fuel in seat {
                self.fuel_used.observe(fuel as f64);
            }
        }
        for seat in &output.move_latencies_ns {
            for &ns in seat {
                self.move_latency.observe(ns as f64 / 1e9);
            }
        }
        let outcome = match (report.reason.as_str(), report.winner) {
            ("forfeit", _) => "forfeit",
            (_, Some(_)) => "win",
            (_, None) => "draw",
        };
        self.matches.with_label_values(&[outcome]).inc();
        self.match_duration.observe(wall_s);
        for build in &output.builds {
            let outcome = match (build.succeeded, build.cached) {
                (true, true) => "cached",
                (true, false) => "ok",
                (false, _) => "failed",
            };
            self.builds.with_label_values(&[outcome]).inc();
            if !build.cached {
                self.build_duration.observe(build.duration.as_secs_f64());
            }
        }
        for spawn in &output.spawn_times {
            self.spawn.observe(spawn.as_secs_f64());
        }
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_default()
    }
}

/// A counter with one label, registered in `registry`.
fn counter(
    registry: &Registry,
    name: &str,
    help: &str,
    label: &str,
) -> Result<IntCounterVec, prometheus::Error> {
    let counter = IntCounterVec::new(Opts::new(name, help), &[label])?;
    registry.register(Box::new(counter.clone()))?;
    Ok(counter)
}

/// A histogram, registered in `registry`.
fn histogram(
    registry: &Registry,
    name: &str,
    help: &str,
    buckets: Vec<f64>,
) -> Result<Histogram, prometheus::Error> {
    let histogram = Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))?;
    registry.register(Box::new(histogram.clone()))?;
    Ok(histogram)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_its_documented_name() {
        let metrics = WorkerMetrics::new().unwrap();
        metrics.faults.with_label_values(&["timeout"]).inc();
        metrics.matches.with_label_values(&["win"]).inc();
        metrics.builds.with_label_values(&["ok"]).inc();
        metrics.move_latency.observe(0.001);
        metrics.fuel_used.observe(5e6);
        metrics.faults.with_label_values(&["fuel_exhausted"]).inc();
        metrics.faults.with_label_values(&["strike"]).inc();
        metrics.evaluation.observe(2e-3);
        let text = metrics.encode();
        for name in [
            "arena_bot_faults_total{kind=\"timeout\"} 1",
            "arena_move_latency_seconds_bucket",
            "arena_matches_total{outcome=\"win\"} 1",
            "arena_match_duration_seconds",
            "arena_builds_total{outcome=\"ok\"} 1",
            "arena_build_duration_seconds",
            "arena_sandbox_spawn_seconds",
            "arena_bot_fuel_used_bucket",
            "arena_bot_faults_total{kind=\"fuel_exhausted\"} 1",
            "arena_bot_faults_total{kind=\"strike\"} 1",
            "arena_model_evaluation_seconds_bucket",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
