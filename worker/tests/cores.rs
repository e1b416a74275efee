//! One core's worth of compute per bot, on real cgroups: a bot with 8 spinning threads
//! (`bots/spinner`) cannot make an instant-answering opponent (`bots/instant`) late, and is
//! itself held to one CPU, in shared-core mode (this 2-CPU host with 2 bots and the runner),
//! in dedicated mode, and in a dedicated plan that a match overflows (two bots on one CPU).
//!
//! What is asserted holds on a loaded machine, and fails on a broken confinement:
//! - where each bot may and does run: its leaf's `cpuset.cpus` and CPU quota as written, and,
//!   sampled while the match runs, every thread's allowed CPUs (`Cpus_allowed_list`) and the
//!   CPU it last ran on (`/proc/<tid>/stat`), which for the spinner's threads is never the
//!   instant bot's CPU;
//! - the CPU time the kernel accounts to the spinner's cgroup (`cpuacct.usage` or
//!   `cpu.stat`) over windows of at least half a second, against a margin over its cap. A
//!   busy machine can only lower that rate, and each window is measured from before its
//!   first read to after its last, so a stalled sampler can only lower it too;
//! - the instant bot is never late, under a deadline far above what it takes (a few
//!   milliseconds at the 99th percentile; 0.6 s at worst over 5,000 turns, measured beside
//!   the spinner on this 2-core host while other builds ran): a timeout means it was starved,
//!   not that the machine was busy.
//!
//! Needs root and cgroups; without them the tests fail with the reason.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::own_parent;

use arena_engine::Session;
use arena_engine::generals::{Generals, Params};
use arena_sandbox::cgroup::CgroupManager;
use arena_sandbox::cpus::{CoreAllocator, CoreMode};
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::launcher::Launcher;
use arena_worker::{BotSpec, MatchOutput, RunnerConfig, SandboxLauncher, play_match};

/// The cgroup parent of these tests, apart from every other suite's.
/// The prefix of each test's own cgroup parent (tests run in parallel, and a
/// shared parent would let one test see, and remove, another's).
const PARENT: &str = "arena-cores-test";

/// Turns per match: enough frames for the instant bot to be late on, and a match long
/// enough (a few seconds) to measure the spinner over several windows.
const TURNS: u32 = 5000;
/// The shortest window a CPU rate is measured over (five CFS periods).
const WINDOW: Duration = Duration::from_millis(500);
/// How often the watcher samples the bots' cgroups.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
/// The margin over a cap that a measured rate may show: a window can catch one 100 ms CFS
/// period more than its share, and accounting has edges.
const MARGIN: f64 = 1.25;
/// The instant bot's deadline: it answers in microseconds (p99 a few ms, its worst 0.6 s on
/// a loaded 2-core host), so only a bot kept off its CPU misses this.
const DEADLINE: Duration = Duration::from_secs(5);

/// These tests measure CPU use, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn bot(name: &str) -> BotSpec {
    BotSpec::from_dir(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/bots")
            .join(name),
    )
}

/// Removes the test's cgroup parent when the test is over, passed or not, checking that
/// nothing was left in it (the bots' leaves are removed when their children are reaped,
/// before this runs); the build cache goes with its temporary directory.
struct Tidy(SandboxLauncher, tempfile::TempDir);

impl Drop for Tidy {
    fn drop(&mut self) {
        support::remove_parent(&self.0);
        if let Err(e) = std::fs::remove_dir_all(self.1.path()) {
            eprintln!(
                "cores test: removing the build cache {:?}: {e}",
                self.1.path()
            );
        }
    }
}

fn launcher(cores: CoreAllocator) -> Tidy {
    let config = SandboxConfig {
        limits: Limits {
            memory_bytes: 256 << 20,
            ..Limits::default()
        },
        env: RuntimeEnv::host_default(),
        cgroup_parent: own_parent(PARENT),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::new(config).expect("the sandbox needs root and cgroups");
    let cache = tempfile::tempdir().expect("a build cache directory");
    Tidy(
        SandboxLauncher::new(sandbox, cores, cache.path().to_owned()),
        cache,
    )
}

/// The match's limits: [`DEADLINE`] per move, and a fault limit no spinner reaches, so a slow
/// spinner never ends the match early.
fn config() -> RunnerConfig {
    RunnerConfig {
        per_move: DEADLINE,
        first_move: Duration::from_secs(10),
        fault_limit: 100_000,
        ..RunnerConfig::default()
    }
}

/// What the watcher saw of one seat's cgroup.
#[derive(Debug, Default)]
struct Seen {
    /// `cpuset.cpus` as written for the leaf.
    cpus: Option<String>,
    /// The CPU cap in cores, `None` for none (v1 `cpu.cfs_quota_us` -1, v2 `max`).
    quota: Option<Option<f64>>,
    /// CPU time consumed so far, sampled over time.
    samples: Vec<Sample>,
    /// Every thread's allowed CPUs (`Cpus_allowed_list`), as sampled.
    allowed: BTreeSet<String>,
    /// The CPUs the threads were last seen to run on.
    ran_on: BTreeSet<usize>,
    /// How many thread samples `allowed` and `ran_on` come from.
    thread_samples: usize,
}

/// One reading of a leaf's CPU time, between two clock readings.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Just before the read.
    before: Instant,
    /// Just after it.
    after: Instant,
    used: Duration,
}

impl Seen {
    /// The highest CPU rate (cores) over any window of at least [`WINDOW`]. The time between
    /// two reads is taken at its longest (from before the first to after the last), so a
    /// sampler that stalls around a read makes the rate lower, never higher.
    fn peak_rate(&self) -> f64 {
        let mut peak: f64 = 0.0;
        for (i, s0) in self.samples.iter().enumerate() {
            if let Some(s1) = self.samples[i..]
                .iter()
                .find(|s| s.before.saturating_duration_since(s0.after) >= WINDOW)
            {
                let span = (s1.after - s0.before).as_secs_f64();
                peak = peak.max(s1.used.saturating_sub(s0.used).as_secs_f64() / span);
            }
        }
        peak
    }

    /// The CPU rate over everything sampled, and how long that was.
    fn mean_rate(&self) -> (f64, Duration) {
        match (self.samples.first(), self.samples.last()) {
            (Some(s0), Some(s1)) if s1.before > s0.after => {
                let span = s1.after - s0.before;
                (
                    s1.used.saturating_sub(s0.used).as_secs_f64() / span.as_secs_f64(),
                    span,
                )
            }
            _ => (0.0, Duration::ZERO),
        }
    }

    /// Samples the leaf in `dirs`: its cpuset and quota once written, its CPU time, and where
    /// each of its threads may and did run.
    fn sample(&mut self, dirs: &[PathBuf]) {
        if self.cpus.is_none() {
            self.cpus = read_in(dirs, "cpuset.cpus");
        }
        if self.quota.is_none() {
            self.quota = quota(dirs);
        }
        let before = Instant::now();
        if let Some(used) = cpu_time(dirs) {
            let after = Instant::now();
            self.samples.push(Sample {
                before,
                after,
                used,
            });
        }
        for tid in threads(dirs) {
            // A thread that ended between the listing and these reads is skipped.
            let (Some(allowed), Some(cpu)) = (allowed_cpus(tid), last_cpu(tid)) else {
                continue;
            };
            self.allowed.insert(allowed);
            self.ran_on.insert(cpu);
            self.thread_samples += 1;
        }
    }
}

/// The threads in a leaf: v1 `tasks` and v2 `cgroup.threads`, over every hierarchy.
fn threads(dirs: &[PathBuf]) -> BTreeSet<i32> {
    dirs.iter()
        .flat_map(|d| ["tasks", "cgroup.threads"].map(|f| d.join(f)))
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// `Cpus_allowed_list` of thread `tid`.
fn allowed_cpus(tid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{tid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_owned())
}

/// The CPU thread `tid` last ran on: field 39 (`processor`) of `/proc/<tid>/stat`, counted
/// after the parenthesised command name (which may hold spaces).
fn last_cpu(tid: i32) -> Option<usize> {
    let stat = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    after_comm.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// The directories of this process's leaf for `label` under the test parent, in every
/// hierarchy.
fn leaf_dirs(parents: &[PathBuf], label: &str) -> Vec<PathBuf> {
    let prefix = format!("r{}-", std::process::id());
    let suffix = format!("-{label}");
    parents
        .iter()
        .filter_map(|p| std::fs::read_dir(p).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(&suffix))
        })
        .collect()
}

/// The first of `file` found in `dirs`, trimmed.
/// The first non-empty value of `file` among `dirs`. Empty counts as not
/// there yet: a leaf is watched from its mkdir on, before its limits are
/// written into it.
fn read_in(dirs: &[PathBuf], file: &str) -> Option<String> {
    dirs.iter()
        .filter_map(|d| std::fs::read_to_string(d.join(file)).ok())
        .map(|s| s.trim().to_owned())
        .find(|s| !s.is_empty())
}

/// CPU time of a leaf: v1 `cpuacct.usage` (ns) or v2 `cpu.stat` `usage_usec`.
fn cpu_time(dirs: &[PathBuf]) -> Option<Duration> {
    if let Some(ns) = read_in(dirs, "cpuacct.usage") {
        return ns.parse().ok().map(Duration::from_nanos);
    }
    let stat = read_in(dirs, "cpu.stat")?;
    stat.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|us| us.trim().parse().ok())
        .map(Duration::from_micros)
}

/// A leaf's CPU cap in cores, if the cpu controller has the leaf.
fn quota(dirs: &[PathBuf]) -> Option<Option<f64>> {
    if let Some(max) = read_in(dirs, "cpu.max") {
        let mut parts = max.split_whitespace();
        let (quota, period) = (parts.next()?, parts.next()?.parse::<f64>().ok()?);
        return Some(quota.parse::<f64>().ok().map(|q| q / period));
    }
    let quota: i64 = read_in(dirs, "cpu.cfs_quota_us")?.parse().ok()?;
    let period: f64 = read_in(dirs, "cpu.cfs_period_us")?.parse().ok()?;
    Some((quota > 0).then(|| quota as f64 / period))
}

/// Samples the leaves of `labels` until `stop` is set.
fn watch(parents: &[PathBuf], labels: &[&str], stop: &AtomicBool) -> BTreeMap<String, Seen> {
    let mut seen: BTreeMap<String, Seen> = labels
        .iter()
        .map(|l| ((*l).to_owned(), Seen::default()))
        .collect();
    while !stop.load(Ordering::Relaxed) {
        for (label, seen) in &mut seen {
            let dirs = leaf_dirs(parents, label);
            if !dirs.is_empty() {
                seen.sample(&dirs);
            }
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    seen
}

/// The test parent's directory in every hierarchy.
fn parents(launcher: &SandboxLauncher) -> Vec<PathBuf> {
    let parent = &launcher.sandbox().config().cgroup_parent;
    CgroupManager::new(launcher.sandbox().cgroup_setup(), parent)
        .expect("the test's cgroup parent")
        .parent_paths()
}

/// Plays `seats` for [`TURNS`] turns while watching both bots' cgroups.
fn play_watched(launcher: &SandboxLauncher, seats: [BotSpec; 2]) -> (MatchOutput, [Seen; 2]) {
    let parents = parents(launcher);
    let stop = AtomicBool::new(false);
    let (out, mut seen) = std::thread::scope(|s| {
        let watcher = s.spawn(|| watch(&parents, &["seat0", "seat1"], &stop));
        let game = Generals::from_seed(
            3,
            Params {
                max_turns: TURNS,
                ..Params::default()
            },
        );
        let [a, b] = seats;
        let out = play_match(
            Session::boxed(game),
            3,
            &[a.into(), b.into()],
            launcher,
            &config(),
        );
        stop.store(true, Ordering::Relaxed);
        (out, watcher.join().expect("the watcher thread"))
    });
    let out = out.expect("the match runs");
    let mut take = |label: &str| seen.remove(label).unwrap_or_default();
    let seen = [take("seat0"), take("seat1")];
    (out, seen)
}

/// Asserts the instant bot in `seat` was never late (by [`DEADLINE`]) over the whole match.
#[track_caller]
fn assert_never_late(out: &MatchOutput, seat: usize) {
    let r = &out.report;
    assert!(r.turns >= TURNS - 1, "the match ran its turns: {r:?}");
    let player = &r.players[seat];
    assert_eq!(player.forfeit, None, "{r:?}");
    assert_eq!(player.faults.timeout, 0, "the instant bot was late: {r:?}");
    assert_eq!(player.faults.malformed, 0, "{r:?}");
    eprintln!(
        "instant bot (seat {seat}): {} moves, 0 timeouts, latency {:?} ms",
        player.moves, player.latency_ms
    );
}

/// Asserts the spinner spun (so the check is not vacuous) and never used more than `cap`
/// cores over any window.
#[track_caller]
fn assert_held_to(spinner: &Seen, cap: f64) {
    let (mean, span) = spinner.mean_rate();
    let peak = spinner.peak_rate();
    eprintln!(
        "spinner: cpuset {:?}, quota {:?} core, {mean:.2} cores on average over {span:.1?}, \
         peak {peak:.2} over {WINDOW:?} windows (cap {cap:.2})",
        spinner.cpus, spinner.quota
    );
    assert!(span >= WINDOW, "sampled for only {span:?}: {spinner:?}");
    // Low on purpose: on a busy shared host the spinner's CPU is shared with other work too.
    assert!(mean >= 0.1, "the spinner did not spin ({mean:.2} cores)");
    assert!(
        peak <= cap * MARGIN,
        "the spinner used {peak:.2} cores over a {WINDOW:?} window, more than {cap:.2}"
    );
}

/// Asserts a leaf's cpuset is exactly one CPU, that every thread seen in it was allowed that
/// CPU alone and ran on no other, and returns it.
#[track_caller]
fn one_cpu(seen: &Seen) -> usize {
    let cpus = seen
        .cpus
        .as_deref()
        .expect("the leaf's cpuset.cpus was read");
    let cpu = cpus
        .parse()
        .unwrap_or_else(|_| panic!("cpuset {cpus:?} is not exactly one CPU"));
    assert!(seen.thread_samples > 0, "no thread of the leaf was seen");
    assert_eq!(
        seen.allowed,
        BTreeSet::from([cpus.to_owned()]),
        "threads allowed other CPUs than the cpuset {cpus}"
    );
    assert_eq!(
        seen.ran_on,
        BTreeSet::from([cpu]),
        "threads ran on other CPUs than the cpuset {cpus}"
    );
    cpu
}

/// This host's case: 2 CPUs for 2 bots and the runner is shared mode. Each bot is pinned to a
/// CPU of its own, so the spinner's 8 threads get one core at most and the instant bot's CPU
/// is left alone.
#[test]
fn shared_mode_a_spinning_bot_gets_one_core_and_its_opponent_is_never_late() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let available = CoreAllocator::available().unwrap();
    assert!(available.len() >= 2, "needs 2 CPUs, has {available:?}");
    let cores = CoreAllocator::new(&available[..2], 2).unwrap();
    assert_eq!(cores.mode(), CoreMode::Shared);
    assert_eq!(cores.sharers(), 1);
    let launcher = launcher(cores);
    let (out, [spinner, instant]) = play_watched(&launcher.0, [bot("spinner"), bot("instant")]);
    assert_never_late(&out, 1);
    let (a, b) = (one_cpu(&spinner), one_cpu(&instant));
    assert_ne!(a, b, "two bots on two CPUs share none");
    assert_eq!(
        spinner.quota.flatten(),
        None,
        "a CPU of its own needs no cap"
    );
    assert_held_to(&spinner, 1.0);
}

/// Dedicated mode as a 2-CPU host can have it: a plan for 1-bot matches (runner on CPU 0, CPU
/// 1 for the bot). The spinner alone on its exclusive CPU is held to one core, uncapped.
#[test]
fn dedicated_mode_a_spinning_bot_gets_its_one_core() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let cores = CoreAllocator::new(&[0, 1], 1).unwrap();
    assert_eq!(cores.mode(), CoreMode::Dedicated);
    assert_eq!(cores.runner_core(), Some(0));
    let launcher = launcher(cores);
    let parents = parents(&launcher.0);
    let mut launched = launcher
        .0
        .launch(&bot("spinner"), 0)
        .expect("spinner starts");
    let mut seen = Seen::default();
    // Sample for a bit over one window while the spinner spins (it waits on stdin, which
    // never comes).
    let until = Instant::now() + WINDOW + WINDOW / 2;
    while Instant::now() < until {
        let dirs = leaf_dirs(&parents, "seat0");
        if !dirs.is_empty() {
            seen.sample(&dirs);
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    launched.handle.kill().expect("kill the spinner");
    launched.handle.wait().expect("reap the spinner");
    assert_eq!(one_cpu(&seen), 1, "the bot CPU, never the runner's");
    assert_eq!(seen.quota.flatten(), None, "an exclusive CPU needs no cap");
    assert_held_to(&seen, 1.0);
}

/// A dedicated plan that a match overflows (1 bot CPU, 2 bots): the instant bot leases CPU 1,
/// the spinner has to share it and is capped at half a core, and the runner, pinned to CPU 0,
/// never sees the instant bot late even though it shares its CPU with 8 spinning threads.
#[test]
fn dedicated_overflow_a_spinner_sharing_the_cpu_is_capped_and_its_neighbour_is_never_late() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let cores = CoreAllocator::new(&[0, 1], 1).unwrap();
    assert_eq!(cores.mode(), CoreMode::Dedicated);
    cores.pin_runner_thread().unwrap();
    assert_eq!(
        CoreAllocator::available().unwrap(),
        vec![0],
        "runner pinned"
    );
    let launcher = launcher(cores);
    let (out, [instant, spinner]) = play_watched(&launcher.0, [bot("instant"), bot("spinner")]);
    assert_never_late(&out, 0);
    assert_eq!((one_cpu(&instant), one_cpu(&spinner)), (1, 1));
    assert_eq!(
        instant.quota.flatten(),
        None,
        "the first bot holds CPU 1 alone"
    );
    let cap = spinner
        .quota
        .flatten()
        .expect("the sharing spinner is capped");
    assert!((cap - 0.5).abs() < 1e-6, "half a core each, got {cap}");
    assert_held_to(&spinner, cap);
}
