//! The referee: one match, turn by turn, over seat runtimes.
//!
//! Each turn every due seat gets its frame through its [`SeatRuntime`]; the
//! referee then waits until every one of them has settled (a reply, a fault
//! or an exit), each against its own budget, and steps the game with the
//! replies (or the fallback action for faults). It never blocks on a seat:
//! waiting is a short spin (the runner owns a core, and spinning is what gets
//! the round trip to a few microseconds) followed by `poll` up to the
//! earliest deadline.

use std::time::{Duration, Instant};

use arena_engine::{FaultCounts, FaultKind, Forfeit, Match, Outcome};

use crate::fd;
use crate::launcher::{LaunchError, Launcher};
use crate::report::{FuelUse, LatencyMs, MatchReport, PlayerReport};
use crate::runner::{BuildSummary, MatchOutput, RunnerConfig, RunnerError, SeatSpec};
use crate::seat::{Answer, Budget, Offer, SeatRuntime, setup};

/// Plays one match of `game` between `seats` (seat order) and reports it.
pub fn play_match(
    game: Box<dyn Match>,
    seed: u64,
    seats: &[SeatSpec],
    launcher: &dyn Launcher,
    config: &RunnerConfig,
) -> Result<MatchOutput, RunnerError> {
    if seats.len() != game.seats() {
        return Err(RunnerError::SeatCount {
            bots: seats.len(),
            seats: game.seats(),
        });
    }
    let mut referee = Referee {
        game,
        config,
        seats: seats.iter().map(SeatRecord::new).collect(),
        frame: Vec::with_capacity(16 * 1024),
    };
    let built = setup::build_all(seats, launcher, config)?;
    for &seat in &built.failed {
        referee.forfeit(seat, Forfeit::BuildFailed);
    }
    let mut spawn_times = Vec::with_capacity(seats.len());
    let outcome = if !built.failed.is_empty() {
        referee.game.apply_forfeits()
    } else {
        // Launching and the game loop; one span for the whole game, none per move.
        let span = tracing::info_span!("play", turns = tracing::field::Empty);
        let _play = span.enter();
        let mut unstartable = false;
        for (seat, spec) in built.runnable.iter().enumerate() {
            let spawn_started = Instant::now();
            let game = referee.game.name();
            let kind = &built.kinds[seat];
            let started = match setup::start(spec, kind, launcher, config, game, seat, seed) {
                Ok(started) => started,
                Err(e) => {
                    referee.stop_all();
                    return Err(e);
                }
            };
            match started {
                Ok(runtime) => {
                    if matches!(spec, SeatSpec::Bot(_)) {
                        spawn_times.push(spawn_started.elapsed());
                    }
                    referee.seats[seat].runtime = Some(runtime);
                }
                Err(LaunchError::BotCannotStart { .. }) => {
                    referee.forfeit(seat, Forfeit::Exit);
                    unstartable = true;
                }
                Err(source) => {
                    referee.stop_all();
                    return Err(RunnerError::Launch { seat, source });
                }
            }
        }
        if unstartable {
            referee.stop_all();
            referee.game.apply_forfeits()
        } else {
            let played = referee.play();
            // Seats are stopped whether the game ended or the runner failed.
            referee.stop_all();
            span.record("turns", referee.game.turn());
            Some(played?)
        }
    };
    let outcome = outcome.unwrap_or_else(|| unreachable_outcome(referee.game.seats()));
    referee.finish(seed, outcome, built.logs, built.builds, spawn_times)
}

/// A game that declines to end on a forfeit is treated as a shared place,
/// so the runner never loops on a game bug.
fn unreachable_outcome(seats: usize) -> Outcome {
    Outcome::ranked(vec![0; seats], "forfeit")
}

/// The referee's bookkeeping for one seat.
struct SeatRecord {
    name: String,
    runtime: Option<Box<dyn SeatRuntime>>,
    /// Frames sent so far (the first carries the handshake).
    frames_sent: u64,
    /// Offered a frame this turn and not yet settled.
    waiting: bool,
    /// This turn's answer, once settled.
    answer: Option<Answer>,
    forfeit: Option<Forfeit>,
    /// Steps applied when `forfeit` happened.
    forfeit_turn: u32,
    faults: FaultCounts,
    moves: u32,
}

impl SeatRecord {
    fn new(spec: &SeatSpec) -> Self {
        Self {
            name: spec.name(),
            runtime: None,
            frames_sent: 0,
            waiting: false,
            answer: None,
            forfeit: None,
            forfeit_turn: 0,
            faults: FaultCounts::default(),
            moves: 0,
        }
    }
}

struct Referee<'c> {
    game: Box<dyn Match>,
    config: &'c RunnerConfig,
    seats: Vec<SeatRecord>,
    /// Scratch buffer the game renders frames into.
    frame: Vec<u8>,
}

impl Referee<'_> {
    /// Records a seat's first forfeit with the game; later ones change nothing.
    fn forfeit(&mut self, seat: usize, reason: Forfeit) {
        let record = &mut self.seats[seat];
        if record.forfeit.is_none() {
            record.forfeit = Some(reason);
            record.forfeit_turn = self.game.turn();
            record.waiting = false;
            self.game.forfeit(seat, reason);
        }
    }

    /// Plays turns until the game ends.
    fn play(&mut self) -> Result<Outcome, RunnerError> {
        loop {
            if let Some(outcome) = self.game.apply_forfeits() {
                return Ok(outcome);
            }
            self.send_frames()?;
            self.collect_answers()?;
            self.settle_turn();
            let outcome = self.game.step();
            if let Some(progress) = &self.config.progress {
                let game = &self.game;
                progress.publish(game.turn(), || {
                    serde_json::to_vec(&game.live_json()).unwrap_or_default()
                });
            }
            if let Some(reason) = self.game.invariant_violation() {
                return Err(RunnerError::Engine {
                    turn: self.game.turn(),
                    reason,
                });
            }
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Renders and offers this turn's frame to every due seat.
    fn send_frames(&mut self) -> Result<(), RunnerError> {
        for s in 0..self.seats.len() {
            if self.seats[s].forfeit.is_some() || !self.game.is_due(s) {
                continue;
            }
            self.frame.clear();
            let record = &mut self.seats[s];
            if record.frames_sent == 0 {
                self.game.write_handshake(s, &mut self.frame);
            }
            let fuel = record.runtime.as_ref().and_then(|r| r.fuel());
            self.game.write_frame_fuel(s, fuel, &mut self.frame);
            let limit = if record.frames_sent == 0 {
                self.config.first_move
            } else {
                self.config.per_move
            };
            let Some(runtime) = record.runtime.as_mut() else {
                continue;
            };
            runtime.offer(Offer {
                seat: s,
                frame: &self.frame,
                budget: Budget::Wall(limit),
                game: self.game.as_ref(),
            })?;
            record.frames_sent += 1;
            record.waiting = true;
            record.answer = None;
        }
        Ok(())
    }

    /// Waits until every offered seat has settled.
    fn collect_answers(&mut self) -> Result<(), RunnerError> {
        let mut spin_until = Instant::now() + self.config.spin;
        let mut interests = Vec::with_capacity(self.seats.len() * 3);
        loop {
            let mut earliest: Option<Instant> = None;
            for record in &mut self.seats {
                let Some(runtime) = record.runtime.as_mut() else {
                    continue;
                };
                if !record.waiting {
                    continue;
                }
                if let Some(answer) = runtime.poll()? {
                    record.waiting = false;
                    record.answer = Some(answer);
                    continue;
                }
                if let Some(due) = runtime.deadline() {
                    earliest = Some(earliest.map_or(due, |e| e.min(due)));
                }
            }
            let Some(earliest) = earliest else {
                return Ok(());
            };
            if Instant::now() < spin_until {
                std::hint::spin_loop();
                continue;
            }
            interests.clear();
            for record in &self.seats {
                if let (true, Some(runtime)) = (record.waiting, record.runtime.as_ref()) {
                    runtime.wait_on(&mut interests);
                }
            }
            let timeout = earliest.saturating_duration_since(Instant::now());
            fd::wait_any(&interests, timeout).map_err(RunnerError::Poll)?;
            // After a wake-up the reply is usually a few microseconds behind.
            spin_until = Instant::now() + self.config.spin.min(Duration::from_micros(20));
        }
    }

    /// Turns this turn's answers into held actions, faults and forfeits.
    fn settle_turn(&mut self) {
        for s in 0..self.seats.len() {
            let stray = self.seats[s]
                .runtime
                .as_mut()
                .map_or(0, |r| r.take_stray_lines());
            self.seats[s].faults.malformed += stray;
            match self.seats[s].answer.take() {
                Some(Answer::Reply(line)) => match self.game.offer(s, &line) {
                    Ok(refused) => {
                        self.seats[s].moves += 1;
                        // The game holds its no-action turn; only the count is ours.
                        if let Some(kind) = refused {
                            self.seats[s].faults.add(kind);
                        }
                    }
                    Err(_) => self.fault(s, FaultKind::Malformed),
                },
                Some(Answer::Fault(kind)) => self.fault(s, kind),
                Some(Answer::Gone(reason)) => self.forfeit(s, reason),
                None => {}
            }
            if self.seats[s].forfeit.is_none()
                && self.seats[s].faults.total() >= self.config.fault_limit
            {
                self.forfeit(s, Forfeit::Faults);
            }
        }
    }

    fn fault(&mut self, seat: usize, kind: FaultKind) {
        self.seats[seat].faults.add(kind);
        self.game.offer_fallback(seat, Some(kind));
    }

    /// Ends every seat: EOF for all first, then a shared grace period, then force.
    fn stop_all(&mut self) {
        for record in &mut self.seats {
            if let Some(runtime) = record.runtime.as_mut() {
                runtime.close_input();
            }
        }
        let grace_until = Instant::now() + self.config.exit_grace;
        for record in &mut self.seats {
            if let Some(runtime) = record.runtime.as_mut() {
                runtime.stop(grace_until);
            }
        }
    }

    fn finish(
        self,
        seed: u64,
        outcome: Outcome,
        build_logs: Vec<Vec<u8>>,
        builds: Vec<BuildSummary>,
        spawn_times: Vec<Duration>,
    ) -> Result<MatchOutput, RunnerError> {
        let turns = self.game.turn();
        let mut players = Vec::with_capacity(self.seats.len());
        let mut logs = Vec::with_capacity(self.seats.len());
        let mut move_latencies_ns = Vec::with_capacity(self.seats.len());
        let mut fuel_per_turn = Vec::with_capacity(self.seats.len());
        let mut evaluations_ns = Vec::with_capacity(self.seats.len());
        for ((seat, mut record), build_log) in self.seats.into_iter().enumerate().zip(build_logs) {
            let (mut log, mut latencies, mut fuel, mut evaluations) = match record.runtime.as_mut()
            {
                Some(runtime) => (
                    runtime.log(),
                    runtime.latencies().to_vec(),
                    runtime.fuel_per_turn().to_vec(),
                    runtime.evaluations().to_vec(),
                ),
                None => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            };
            let runtime_stats = record
                .runtime
                .as_ref()
                .map(|r| r.stats())
                .unwrap_or_default();
            if !build_log.is_empty() {
                log.extend_from_slice(b"\n[arena: build log]\n");
                log.extend_from_slice(&build_log);
            }
            logs.push(log);
            players.push(PlayerReport {
                seat,
                bot: record.name,
                rank: outcome.ranks.get(seat).copied().unwrap_or(0),
                score: outcome.scores.get(seat).copied().unwrap_or(0.0),
                team: outcome.teams.get(seat).copied(),
                forfeit: record.forfeit,
                forfeit_turn: record.forfeit.map(|_| record.forfeit_turn),
                faults: record.faults,
                moves: record.moves,
                latency_ms: LatencyMs::from_nanos(&mut latencies),
                stats: self
                    .game
                    .seat_stats(seat)
                    .into_iter()
                    .chain(runtime_stats)
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
                fuel: FuelUse::from_turns(&mut fuel),
                evaluation_ms: (!evaluations.is_empty())
                    .then(|| LatencyMs::from_nanos(&mut evaluations)),
            });
            move_latencies_ns.push(latencies);
            fuel_per_turn.push(fuel);
            evaluations_ns.push(evaluations);
        }
        let report = MatchReport {
            game: self.game.name().to_owned(),
            seed,
            winner: outcome.winner(),
            placements: outcome.ranks.clone(),
            scores: outcome.scores.clone(),
            reason: outcome.reason.clone(),
            turns,
            players,
        };
        // A result without its replay cannot be proved: the match is replayed.
        let replay = self.game.replay_json(seed).map_err(RunnerError::Replay)?;
        Ok(MatchOutput {
            report,
            replay,
            logs,
            move_latencies_ns,
            fuel_per_turn,
            evaluations_ns,
            builds,
            spawn_times,
        })
    }
}
