//! `arena bench pairing`: how long the schedulers take, in memory, with no
//! store: one Swiss round for 1 000, 10 000 and 100 000 entrants after a few
//! rounds of seeded random pairings and results, the first (history-free)
//! round of 10 000, the fifteenth round of 10 000 after fourteen rounds
//! paired by Swiss itself (score groups full of rematches to avoid: the
//! hardest round of a real tournament), a four-seat round of 10 000, and a
//! whole 1 000-entrant round robin.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use arena_coordinator::domain::{EntrantId, MatchRecord, Pairing, Round, SeatResult};
use arena_coordinator::schedule::{
    default_games_per_pairing, round_robin, splitmix64, swiss_round,
};

/// Rounds of random results played before the timed round.
const HISTORY_ROUNDS: u32 = 5;
/// Rounds paired by Swiss before the late round timed.
const SWISS_HISTORY_ROUNDS: u32 = 14;

/// How the rounds before the timed one are paired.
#[derive(Clone, Copy)]
enum History {
    /// Shuffled at random (cheap to build).
    Random(u32),
    /// By the Swiss pairing itself, as a tournament would.
    Swiss(u32),
}

impl History {
    fn rounds(self) -> u32 {
        match self {
            History::Random(r) | History::Swiss(r) => r,
        }
    }
}
/// Base seed of every schedule here (the figures should not depend on it).
const BASE_SEED: u64 = 0xBE7C_4A1E;

/// One measured figure: its JSON key (naming the entrant count and the
/// unit), a line for humans, and the timings behind its median.
struct Figure {
    key: &'static str,
    label: &'static str,
    runs: Vec<Duration>,
}

impl Figure {
    fn median_ms(&self) -> f64 {
        let mut ms: Vec<f64> = self.runs.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        match ms.len() {
            0 => 0.0,
            n if n % 2 == 1 => ms[n / 2],
            n => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
        }
    }
}

pub fn run(json: bool, max_entrants: usize) -> anyhow::Result<ExitCode> {
    let mut figures = Vec::new();
    for (key, label, entrants, seats, history, reps) in [
        (
            "swiss_round_1000_entrants_ms",
            "Swiss round, 1 000 entrants",
            1_000,
            2,
            History::Random(HISTORY_ROUNDS),
            7,
        ),
        (
            "swiss_round_10000_entrants_ms",
            "Swiss round, 10 000 entrants",
            10_000,
            2,
            History::Random(HISTORY_ROUNDS),
            5,
        ),
        (
            "swiss_first_round_10000_entrants_ms",
            "Swiss first round (no history), 10 000 entrants",
            10_000,
            2,
            History::Random(0),
            5,
        ),
        (
            "swiss_round_15_10000_entrants_ms",
            "Swiss round 15 (after 14 Swiss rounds), 10 000",
            10_000,
            2,
            History::Swiss(SWISS_HISTORY_ROUNDS),
            5,
        ),
        (
            "swiss_round_4_seats_10000_entrants_ms",
            "Swiss round, 4 seats, 10 000 entrants",
            10_000,
            4,
            History::Random(HISTORY_ROUNDS),
            5,
        ),
        (
            "swiss_round_100000_entrants_ms",
            "Swiss round, 100 000 entrants",
            100_000,
            2,
            History::Random(HISTORY_ROUNDS),
            3,
        ),
    ] {
        if entrants > max_entrants {
            if !json {
                println!("{label:<50} skipped (over --max-entrants {max_entrants})");
            }
            continue;
        }
        let runs = time_swiss(entrants, seats, history, reps).with_context(|| label.to_string())?;
        figures.push(Figure { key, label, runs });
        if !json {
            print_figure(&figures[figures.len() - 1]);
        }
    }
    figures.push(Figure {
        key: "round_robin_schedule_1000_entrants_ms",
        label: "round-robin schedule, 1 000 entrants",
        runs: time_round_robin(1_000, 3)?,
    });
    if json {
        let map: serde_json::Map<String, serde_json::Value> = figures
            .iter()
            .map(|f| (f.key.to_string(), serde_json::json!(f.median_ms())))
            .collect();
        println!("{}", serde_json::Value::Object(map));
    } else {
        print_figure(&figures[figures.len() - 1]);
    }
    Ok(ExitCode::SUCCESS)
}

/// One human-readable line, printed as soon as the figure is measured (the
/// large fields take a while).
fn print_figure(f: &Figure) {
    let all: Vec<String> = f
        .runs
        .iter()
        .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
        .collect();
    println!(
        "{:<50} {:>9.1} ms median of {} ({} ms)",
        f.label,
        f.median_ms(),
        f.runs.len(),
        all.join(", ")
    );
}

fn entrant_ids(n: usize) -> Vec<EntrantId> {
    (0..n).map(|i| format!("bot-{i:06}")).collect()
}

/// Plays the `history` rounds with seeded random results (untimed), then
/// times pairing the next round `reps` times.
fn time_swiss(
    n: usize,
    seats: usize,
    history: History,
    reps: usize,
) -> anyhow::Result<Vec<Duration>> {
    let entrants = entrant_ids(n);
    let history_rounds = history.rounds();
    let mut played = Vec::new();
    let mut rng = splitmix64(n as u64 ^ BASE_SEED);
    for r in 0..history_rounds {
        let round = match history {
            History::Random(_) => random_round(&entrants, seats, &mut rng),
            History::Swiss(_) => swiss_round(r, &entrants, &played, seats, BASE_SEED)?,
        };
        played.extend(random_results(r, &round, &mut rng));
    }
    let history = played;
    let mut runs = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let round = swiss_round(history_rounds, &entrants, &history, seats, BASE_SEED)?;
        runs.push(started.elapsed());
        std::hint::black_box(round);
    }
    Ok(runs)
}

/// The entrants shuffled and cut into groups of `seats` (a short last group
/// sits out).
fn random_round(entrants: &[EntrantId], seats: usize, rng: &mut u64) -> Round {
    let mut order: Vec<&EntrantId> = entrants.iter().collect();
    for i in (1..order.len()).rev() {
        *rng = splitmix64(*rng);
        order.swap(i, (*rng % (i as u64 + 1)) as usize);
    }
    Round {
        pairings: order
            .chunks_exact(seats.max(1))
            .map(|group| Pairing {
                seats: group.iter().map(|e| (*e).clone()).collect(),
                seed: 0,
            })
            .collect(),
        ..Round::default()
    }
}

/// Each seat's rank drawn uniformly from `0..seats` (ties allowed, so a
/// two-seat game is a draw half the time), as a runner would report it.
fn random_results(round_no: u32, round: &Round, rng: &mut u64) -> Vec<MatchRecord> {
    round
        .pairings
        .iter()
        .enumerate()
        .map(|(i, p)| MatchRecord {
            match_id: format!("r{round_no}-m{i}"),
            round: round_no,
            seats: p
                .seats
                .iter()
                .map(|e| {
                    *rng = splitmix64(*rng);
                    SeatResult {
                        entrant: e.clone(),
                        rank: u32::try_from(*rng % p.seats.len() as u64).unwrap_or(0),
                        ..SeatResult::default()
                    }
                })
                .collect(),
            reason: "bench".into(),
            turns: 1,
            worker: String::new(),
        })
        .collect()
}

/// Times computing a whole two-seat round robin (one cycle, the default
/// games per pairing) `reps` times.
fn time_round_robin(n: usize, reps: usize) -> anyhow::Result<Vec<Duration>> {
    let entrants = entrant_ids(n);
    let mut runs = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let rounds = round_robin(&entrants, 2, 1, default_games_per_pairing(2), BASE_SEED)?;
        runs.push(started.elapsed());
        std::hint::black_box(rounds);
    }
    Ok(runs)
}
