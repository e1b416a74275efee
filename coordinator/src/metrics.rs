//! The coordinator's Prometheus metrics: results as they are accepted, lease
//! expiries, and gauges refreshed from the store at scrape time.

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry};

use crate::domain::MatchRecord;

#[derive(Clone)]
pub struct CoordinatorMetrics {
    pub registry: Registry,
    matches: IntCounterVec,
    match_duration: Histogram,
    faults: IntCounterVec,
    leases_expired: IntCounter,
    queue_depth: IntGauge,
    workers_connected: IntGauge,
    matches_stuck: IntCounter,
    quarantines: IntCounter,
    workers_quarantined: IntGauge,
}

impl CoordinatorMetrics {
    pub fn new() -> Result<CoordinatorMetrics, prometheus::Error> {
        let registry = Registry::new();
        let matches = IntCounterVec::new(
            Opts::new("arena_matches_total", "Results accepted, by outcome"),
            &["outcome"],
        )?;
        let match_duration = Histogram::with_opts(
            HistogramOpts::new(
                "arena_match_duration_seconds",
                "Wall time of one match, as reported",
            )
            .buckets(prometheus::exponential_buckets(0.05, 2.0, 14)?),
        )?;
        let faults = IntCounterVec::new(
            Opts::new(
                "arena_bot_faults_total",
                "Bot replies replaced by a pass, by kind",
            ),
            &["kind"],
        )?;
        let leases_expired = IntCounter::new(
            "arena_leases_expired_total",
            "Leases that ran out and put their match back in the queue",
        )?;
        let queue_depth = IntGauge::new("arena_queue_depth", "Matches waiting for a worker")?;
        let workers_connected =
            IntGauge::new("arena_workers_connected", "Workers heard from recently")?;
        let matches_stuck = IntCounter::new(
            "arena_matches_stuck_total",
            "Matches set aside after their last allowed attempt failed",
        )?;
        let quarantines = IntCounter::new(
            "arena_worker_quarantines_total",
            "Workers quarantined for too many leases ended without a result",
        )?;
        let workers_quarantined = IntGauge::new(
            "arena_workers_quarantined",
            "Workers in quarantine now (no new leases)",
        )?;
        registry.register(Box::new(matches_stuck.clone()))?;
        registry.register(Box::new(quarantines.clone()))?;
        registry.register(Box::new(workers_quarantined.clone()))?;
        registry.register(Box::new(matches.clone()))?;
        registry.register(Box::new(match_duration.clone()))?;
        registry.register(Box::new(faults.clone()))?;
        registry.register(Box::new(leases_expired.clone()))?;
        registry.register(Box::new(queue_depth.clone()))?;
        registry.register(Box::new(workers_connected.clone()))?;
        Ok(CoordinatorMetrics {
            registry,
            matches,
            match_duration,
            faults,
            leases_expired,
            queue_depth,
            workers_connected,
            matches_stuck,
            quarantines,
            workers_quarantined,
        })
    }

    pub fn result_accepted(&self, record: &MatchRecord, duration_s: f64) {
        let first_places = record.seats.iter().filter(|s| s.rank == 0).count();
        let outcome = if record.reason == "forfeit" {
            "forfeit"
        } else if first_places == 1 {
            "win"
        } else {
            "draw"
        };
        self.matches.with_label_values(&[outcome]).inc();
        if duration_s.is_finite() && duration_s > 0.0 {
            self.match_duration.observe(duration_s);
        }
        for seat in &record.seats {
            self.faults
                .with_label_values(&["timeout"])
                .inc_by(u64::from(seat.timeouts));
            self.faults
                .with_label_values(&["malformed"])
                .inc_by(u64::from(seat.malformed));
        }
    }

    pub fn leases_expired(&self, count: usize) {
        self.leases_expired.inc_by(count as u64);
    }

    pub fn match_stuck(&self) {
        self.matches_stuck.inc();
    }

    pub fn worker_quarantined(&self) {
        self.quarantines.inc();
    }

    pub fn set_gauges(&self, queue_depth: usize, workers_connected: usize, quarantined: usize) {
        self.queue_depth.set(queue_depth as i64);
        self.workers_connected.set(workers_connected as i64);
        self.workers_quarantined.set(quarantined as i64);
    }

    pub fn encode(&self) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_default()
    }
}
