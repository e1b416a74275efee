//! `arena bench`: throughput figures, printed for humans or as JSON.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use arena_engine::generals::random::random_legal_action;
use arena_engine::generals::{Action, Generals, Params};
use arena_engine::generals_classic::mapgen::MapOptions;
use arena_engine::generals_classic::{
    self, GeneralsClassic, GeneralsClassicMulti, Mode, Params as ClassicParams,
};
use arena_engine::grid_royale::{self, GridRoyale};
use arena_engine::registry::{self, GameEntry};
use arena_engine::rng::SplitMix64;
use arena_engine::{Game, Rules};
use arena_worker::ProcessLauncher;

use crate::bench_common::instant_matches;
use crate::cli::{BenchArgs, BenchTarget};

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        BenchTarget::Engine {
            game,
            seconds,
            json,
        } => engine(&game, Duration::from_secs_f64(seconds), json),
        BenchTarget::Runner { matches, json } => runner(matches, json),
        BenchTarget::Sandbox {
            runs,
            matches,
            json,
            sandbox,
        } => crate::bench_sandbox::run(runs, matches, json, &sandbox),
        BenchTarget::Coordinator {
            store,
            entrants,
            workers,
            connections,
            seconds,
            json,
        } => crate::bench_coordinator::run(
            crate::bench_coordinator::Plan {
                entrants: entrants as usize,
                workers: workers as usize,
                connections: connections as usize,
                seconds,
            },
            store,
            json,
        ),
        BenchTarget::Model {
            dir,
            game,
            matches,
            rules,
            json,
            sandbox,
        } => crate::bench_model::run(
            crate::bench_model::Plan {
                game: &game,
                dir: &dir,
                matches,
                rules: &rules,
            },
            json,
            &sandbox,
        ),
        BenchTarget::Pairing { json, max_entrants } => {
            crate::bench_pairing::run(json, max_entrants)
        }
        BenchTarget::Wasm {
            matches,
            runs,
            json,
            sandbox,
        } => crate::bench_wasm::run(matches, runs, json, &sandbox),
    }
}

/// A two-seat generals board the random-legal-action benchmark can step:
/// the competition's and the classic ruleset's share the engine.
trait GeneralsBoard: Game {
    fn generals(&self) -> &Generals;
    fn step_pair(&mut self, actions: [Action; 2]);
}

impl GeneralsBoard for Generals {
    fn generals(&self) -> &Generals {
        self
    }

    fn step_pair(&mut self, actions: [Action; 2]) {
        Generals::step_pair(self, actions);
    }
}

impl GeneralsBoard for GeneralsClassic {
    fn generals(&self) -> &Generals {
        self
    }

    fn step_pair(&mut self, actions: [Action; 2]) {
        GeneralsClassic::step_pair(self, actions);
    }
}

/// Steps competition games with random legal actions for `budget`; with
/// `render`, both seats' frames are rendered before every step. Returns
/// steps per second.
pub fn engine_throughput(budget: Duration, render: bool) -> f64 {
    // Boards are generated up front: map generation is not what is measured.
    let boards: Vec<Generals> = (0..16)
        .map(|seed| Generals::from_seed(seed, Params::default()))
        .collect();
    throughput(&boards, budget, render)
}

/// [`engine_throughput`] for any generals ruleset's boards.
fn throughput<G: GeneralsBoard>(boards: &[G], budget: Duration, render: bool) -> f64 {
    let mut rng = SplitMix64::new(0xA4E1A);
    let mut next_board = 0;
    let mut game = boards[0].clone();
    let mut frame = Vec::with_capacity(16 * 1024);
    let mut steps: u64 = 0;
    let started = Instant::now();
    loop {
        for _ in 0..1024 {
            if game.generals().is_over() {
                next_board = (next_board + 1) % boards.len();
                game.clone_from(&boards[next_board]);
            }
            if render {
                for seat in 0..2 {
                    frame.clear();
                    game.write_frame(seat, &mut frame);
                }
                std::hint::black_box(&frame);
            }
            let actions = [
                random_legal_action(game.generals(), 0, &mut rng),
                random_legal_action(game.generals(), 1, &mut rng),
            ];
            game.step_pair(actions);
            steps += 1;
        }
        let elapsed = started.elapsed();
        if elapsed >= budget {
            return steps as f64 / elapsed.as_secs_f64();
        }
    }
}

/// Multi-player classic games (boards generated up front) stepped with a
/// random legal action per seat: steps per second.
fn multi_throughput(seats: usize, mode: Mode, budget: Duration) -> anyhow::Result<f64> {
    let options = MapOptions {
        players: seats,
        ..MapOptions::default()
    };
    let boards = (0..16)
        .map(|seed| {
            GeneralsClassicMulti::from_map(
                generals_classic::mapgen::generate(seed, &options),
                mode,
                ClassicParams::default().max_turns,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut rng = SplitMix64::new(0xA4E1A);
    let mut game = boards[0].clone();
    let mut next_board = 0;
    let mut actions = vec![None; seats];
    let mut steps: u64 = 0;
    let started = Instant::now();
    loop {
        for _ in 0..256 {
            if game.is_over() {
                next_board = (next_board + 1) % boards.len();
                game.clone_from(&boards[next_board]);
            }
            for (seat, action) in actions.iter_mut().enumerate() {
                *action = Some(generals_classic::random_legal_action(&game, seat, &mut rng));
            }
            game.step_all(&actions);
            steps += 1;
        }
        let elapsed = started.elapsed();
        if elapsed >= budget {
            return Ok(steps as f64 / elapsed.as_secs_f64());
        }
    }
}

/// Classic 1v1 beside the competition engine, measured in the same run.
fn classic_engine(budget: Duration, json: bool) -> anyhow::Result<ExitCode> {
    let boards = (0..16)
        .map(|seed| GeneralsClassic::from_seed(seed, ClassicParams::default()))
        .collect::<Result<Vec<_>, _>>()?;
    let raw = throughput(&boards, budget, false);
    let rendered = throughput(&boards, budget, true);
    let competition = engine_throughput(budget, false);
    let ratio = raw / competition;
    let ffa8 = multi_throughput(8, Mode::Ffa, budget)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "game": generals_classic::ENTRY.name,
                "raw_steps_per_s": raw,
                "rendered_turns_per_s": rendered,
                "competition_raw_steps_per_s": competition,
                "raw_ratio_to_competition": ratio,
                "ffa8_raw_steps_per_s": ffa8,
            })
        );
    } else {
        println!("generals-classic raw steps/s (random legal actions): {raw:.0}");
        println!("generals-classic rendered turns/s (both frames):    {rendered:.0}");
        println!(
            "competition raw steps/s, same run:                  {competition:.0} (classic at {:.0}%)",
            ratio * 100.0
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn engine(game: &str, budget: Duration, json: bool) -> anyhow::Result<ExitCode> {
    let entry = registry::find(game)?;
    if entry.name == generals_classic::ENTRY.name {
        return classic_engine(budget, json);
    }
    if entry.name == grid_royale::ENTRY.name {
        return grid_royale_engine(budget, json);
    }
    if entry.name != arena_engine::generals::ENTRY.name {
        return fallback_engine(entry, budget, json);
    }
    let raw = engine_throughput(budget, false);
    let rendered = engine_throughput(budget, true);
    if json {
        println!(
            "{}",
            serde_json::json!({"raw_steps_per_s": raw, "rendered_turns_per_s": rendered})
        );
    } else {
        println!("raw steps/s (random legal actions, no frames): {raw:.0}");
        println!("rendered turns/s (both frames rendered):        {rendered:.0}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Any registered game, stepped through its registry entry with every due
/// seat playing its fallback action (for plan games, the default captain):
/// full turns per second, without and with the due seats' frames rendered.
fn fallback_engine(entry: &GameEntry, budget: Duration, json: bool) -> anyhow::Result<ExitCode> {
    let seats = entry.seats[0];
    let measure = |render: bool| -> anyhow::Result<f64> {
        let mut frame = Vec::with_capacity(16 * 1024);
        let mut turns: u64 = 0;
        let mut stepping = Duration::ZERO;
        let mut seed = 0;
        while stepping < budget {
            // Setting a match up is not what is measured.
            let mut game = entry.create(seed, seats, &Rules::default())?;
            seed += 1;
            let started = Instant::now();
            loop {
                for seat in 0..seats {
                    if game.is_due(seat) {
                        if render {
                            frame.clear();
                            game.write_frame(seat, &mut frame);
                            std::hint::black_box(&frame);
                        }
                        game.offer_fallback(seat, None);
                    }
                }
                turns += 1;
                if game.step().is_some() {
                    break;
                }
                anyhow::ensure!(
                    game.invariant_violation().is_none(),
                    "engine error: {:?}",
                    game.invariant_violation()
                );
            }
            stepping += started.elapsed();
        }
        Ok(turns as f64 / stepping.as_secs_f64())
    };
    let raw = measure(false)?;
    let rendered = measure(true)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "game": entry.name,
                "seats": seats,
                "fallback_turns_per_s": raw,
                "rendered_turns_per_s": rendered,
            })
        );
    } else {
        println!(
            "{}: full turns/s, every due seat on its fallback: {raw:.0}",
            entry.name
        );
        println!(
            "{}: the same with due seats' frames rendered:    {rendered:.0}",
            entry.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Units per player in the grid-royale benchmark (the default cap).
const GRID_UNITS: usize = 50;

/// The 4-seat grid-royale start the benchmark plays from: the seed's map
/// with 50 units a player, seat 0's on a lattice in its quadrant and the
/// others' its rotations (so no two share a cell).
fn grid_royale_start(seed: u64) -> anyhow::Result<GridRoyale> {
    let params = grid_royale::Params {
        max_turns: grid_royale::params::MAX_TURNS_LIMIT,
        ..grid_royale::Params::standard(4)
    };
    let mut layout = grid_royale::mapgen::generate(seed, &params)?;
    let base = layout.bases[0];
    let lattice = (0..8)
        .flat_map(|y| {
            (0..8).map(move |x| grid_royale::Cell {
                x: 1 + 2 * x,
                y: 1 + 2 * y,
            })
        })
        .filter(|c| *c != base)
        .take(GRID_UNITS - 1);
    for cell in lattice {
        for seat in 0..4 {
            let c = grid_royale::mapgen::rotate(&params, cell, seat);
            layout.units.push(grid_royale::Placed {
                owner: seat,
                x: c.x,
                y: c.y,
                cargo: 500,
            });
        }
    }
    Ok(GridRoyale::new(params, layout)?)
}

/// 4-seat grid-royale turns with 50 units a player, each unit ordered every
/// turn (a random move half the time, else STAY) and every seat asking for
/// a spawn. Collisions thin the field out, so a game goes back to its start
/// whenever a player is down to 45 units. Only the steps are timed; the
/// orders are drawn outside the clock. Turns per second.
fn grid_royale_throughput(budget: Duration) -> anyhow::Result<f64> {
    use grid_royale::{Action, Dir, Order, Orders};
    let starts = (0..8)
        .map(grid_royale_start)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut rng = SplitMix64::new(0x6a1d);
    let mut game = starts[0].clone();
    let mut next = 0;
    let mut actions: Vec<Option<Action>> = vec![None; 4];
    let mut turns: u64 = 0;
    let mut stepping = Duration::ZERO;
    while stepping < budget {
        for _ in 0..256 {
            if game.is_over() || (0..4).any(|s| game.units_of(s) < GRID_UNITS - 5) {
                next = (next + 1) % starts.len();
                game.clone_from(&starts[next]);
            }
            for (seat, action) in actions.iter_mut().enumerate() {
                let orders = game
                    .units()
                    .iter()
                    .filter(|u| u.owner == seat)
                    .map(|u| {
                        let roll = rng.below(8) as usize;
                        let dir = if roll < 4 {
                            Dir::ALL[1 + roll]
                        } else {
                            Dir::Stay
                        };
                        Order { unit: u.id, dir }
                    })
                    .collect();
                *action = Some(Action(Some(Orders {
                    orders,
                    spawn: true,
                })));
            }
            let started = Instant::now();
            game.step(&actions);
            stepping += started.elapsed();
            turns += 1;
        }
    }
    Ok(turns as f64 / stepping.as_secs_f64())
}

fn grid_royale_engine(budget: Duration, json: bool) -> anyhow::Result<ExitCode> {
    let crowded = grid_royale_throughput(budget)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "game": grid_royale::ENTRY.name,
                "seats": 4,
                "units_per_player": GRID_UNITS,
                "turns_per_s": crowded,
            })
        );
    } else {
        println!(
            "grid-royale: 4-seat turns/s, {GRID_UNITS} units a player, every unit ordered: {crowded:.0}"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Full matches between two instant pass bots (the game always runs its 1200
/// turns), as plain processes: wall time per match and per-move round trip.
fn runner(matches: u32, json: bool) -> anyhow::Result<ExitCode> {
    let figures = instant_matches(matches, &ProcessLauncher::default(), false)?;
    let (wall, p50, p99) = (
        figures.wall_s_median,
        figures.round_trip_us_p50_median,
        figures.round_trip_us_p99_median,
    );
    if json {
        println!(
            "{}",
            serde_json::json!({
                "matches": matches,
                "match_wall_s_median": wall,
                "round_trip_us_p50_median": p50,
                "round_trip_us_p99_median": p99,
            })
        );
    } else {
        println!("{matches} matches of 1200 turns between two instant bots (plain processes)");
        println!("  wall time per match, median:    {wall:.3} s");
        println!("  per-move round trip p50, median: {p50:.1} µs");
        println!("  per-move round trip p99, median: {p99:.1} µs");
    }
    Ok(ExitCode::SUCCESS)
}
