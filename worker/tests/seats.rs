//! The referee's contract with N-seat games, through a small game defined
//! here: seats due only every few turns, actions that are not `Copy`, a
//! per-seat fallback, an in-engine baseline beside real processes, a seat
//! that forfeits while the others play on, and placements with ties.

use std::path::Path;
use std::time::Duration;

use arena_engine::replay::Replay;
use arena_engine::{Game, Malformed, Outcome, Seat, Session};
use arena_worker::report::FaultKind;
use arena_worker::{BotSpec, Forfeit, ProcessLauncher, RunnerConfig, SeatSpec, play_match};
use serde::{Deserialize, Serialize};

/// Seats "install" a word every `every` turns; at the end, longer words
/// place higher, equal lengths tie, and forfeited seats place last.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Words {
    turn: u32,
    max_turns: u32,
    every: u32,
    words: Vec<String>,
    forfeited: Vec<bool>,
    outcome: Option<Outcome>,
}

impl Words {
    fn new(seats: usize, max_turns: u32, every: u32) -> Self {
        Self {
            turn: 0,
            max_turns,
            every,
            words: vec!["-".to_owned(); seats],
            forfeited: vec![false; seats],
            outcome: None,
        }
    }
}

impl Game for Words {
    type Action = String;

    fn name(&self) -> &'static str {
        "words"
    }

    fn seats(&self) -> usize {
        self.words.len()
    }

    fn turn(&self) -> u32 {
        self.turn
    }

    fn is_due(&self, seat: Seat) -> bool {
        !self.forfeited[seat] && self.turn.is_multiple_of(self.every)
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("seat {seat}\n").as_bytes());
    }

    fn write_frame(&self, _seat: Seat, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("turn {}\n", self.turn).as_bytes());
    }

    fn parse_action(&self, _seat: Seat, line: &[u8]) -> Result<String, Malformed> {
        match std::str::from_utf8(line) {
            Ok(word) if !word.is_empty() && word.len() <= 16 && !word.contains(' ') => {
                Ok(word.to_owned())
            }
            _ => Err(Malformed::new("not a word")),
        }
    }

    fn fallback_action(&self, _seat: Seat) -> String {
        "-".to_owned()
    }

    fn step(&mut self, actions: &[Option<String>]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        for (seat, action) in actions.iter().enumerate() {
            if let Some(word) = action {
                self.words[seat] = word.clone();
            }
        }
        self.turn += 1;
        if self.turn == self.max_turns {
            let key = |s: usize| (self.forfeited[s], std::cmp::Reverse(self.words[s].len()));
            let ranks = (0..self.seats())
                .map(|s| (0..self.seats()).filter(|&o| key(o) < key(s)).count() as u32)
                .collect();
            self.outcome = Some(Outcome::ranked(ranks, "turn_limit"));
        }
        self.outcome.clone()
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        for &s in seats {
            self.forfeited[s] = true;
        }
        None
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    fn write_baseline_reply(&self, name: &str, _seat: Seat, out: &mut Vec<u8>) -> bool {
        match name {
            "long" => out.extend_from_slice(b"baselineword\n"),
            "four" => out.extend_from_slice(b"base\n"),
            _ => return false,
        }
        true
    }
}

/// A bot made of one shell script.
fn script_bot(dir: &Path, name: &str, script: &str) -> SeatSpec {
    let bot = dir.join(name);
    std::fs::create_dir(&bot).unwrap();
    std::fs::write(bot.join("run.sh"), format!("#!/bin/sh\n{script}")).unwrap();
    BotSpec::from_dir(bot).into()
}

fn config() -> RunnerConfig {
    RunnerConfig {
        first_move: Duration::from_secs(10),
        per_move: Duration::from_secs(2),
        fault_limit: 3,
        ..RunnerConfig::default()
    }
}

#[test]
fn due_seats_baselines_forfeits_and_ties_reach_the_report() {
    let dir = tempfile::tempdir().unwrap();
    // Answers "abcd" to every frame (after the handshake line).
    let steady = script_bot(
        dir.path(),
        "steady",
        "read hello\nwhile read frame; do echo abcd; done\n",
    );
    // Answers with the same length as `steady`: a tie.
    let twin = script_bot(
        dir.path(),
        "twin",
        "read hello\nwhile read frame; do echo wxyz; done\n",
    );
    // Sends garbage (two words) every time: three faults forfeit it.
    let garbage = script_bot(
        dir.path(),
        "garbage",
        "read hello\nwhile read frame; do echo not one; done\n",
    );
    // The baseline's word is as long as the bots': first place is shared.
    let seats = [steady, SeatSpec::Baseline("four".to_owned()), twin, garbage];
    let game = Words::new(4, 40, 4);
    let out = play_match(
        Session::boxed(game),
        9,
        &seats,
        &ProcessLauncher::default(),
        &config(),
    )
    .expect("match runs");
    let r = &out.report;
    assert_eq!(r.reason, "turn_limit");
    assert_eq!(r.turns, 40);
    // Three words of four letters share first place; garbage forfeited.
    assert_eq!(r.placements, vec![0, 0, 0, 3]);
    assert_eq!(r.winner, None, "no sole winner");
    let third = 2.0 / 3.0;
    let expected = [third, third, third, 0.0];
    for (got, want) in r.scores.iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "{:?}", r.scores);
    }
    assert!((r.scores.iter().sum::<f64>() - 2.0).abs() < 1e-12);
    assert_eq!(r.players[1].bot, "baseline:four");
    assert_eq!(r.players[1].rank, 0);
    assert!((r.players[0].score - third).abs() < 1e-12);
    // Due every 4th turn: 10 frames each.
    assert_eq!(r.players[0].moves, 10, "{:?}", r.players[0]);
    assert_eq!(r.players[1].moves, 10);
    assert_eq!(r.players[3].faults.malformed, 3);
    assert_eq!(r.players[3].forfeit, Some(Forfeit::Faults));
    assert_eq!(r.players[3].forfeit_turn, Some(8));
    for p in &r.players[..3] {
        assert_eq!(p.forfeit, None, "{p:?}");
        assert_eq!(p.faults.total(), 0, "{p:?}");
    }

    let replay: Replay<Words> = serde_json::from_slice(&out.replay).unwrap();
    replay.verify().expect("the replay re-simulates");
    assert_eq!(replay.turns.len(), 40);
    for (t, turn) in replay.turns.iter().enumerate() {
        let due = t % 4 == 0;
        assert_eq!(turn.actions[0].is_some(), due, "turn {t}");
        // The garbage seat faulted on turns 0, 4 and 8, then left the game.
        let garbage_due = due && t <= 8;
        assert_eq!(turn.actions[3].is_some(), garbage_due && t < 8, "turn {t}");
        if due && t < 8 {
            assert_eq!(turn.faults[3], Some(FaultKind::Malformed), "turn {t}");
            assert_eq!(turn.actions[3].as_deref(), Some("-"), "the fallback");
        }
    }
    assert_eq!(replay.forfeits[3].map(|f| f.turn), Some(8));

    // A replay whose due pattern was altered does not verify.
    let mut forged = replay.clone();
    forged.turns[1].actions[0] = Some("sneaky".to_owned());
    assert!(forged.verify().is_err());
}

#[test]
fn a_seat_that_crashes_is_driven_by_the_game_and_others_play_on() {
    let dir = tempfile::tempdir().unwrap();
    let crash = script_bot(
        dir.path(),
        "crash",
        "read hello\nread frame\nkill -SEGV $$\n",
    );
    let steady = script_bot(
        dir.path(),
        "steady",
        "read hello\nwhile read frame; do echo abc; done\n",
    );
    let seats = [crash, steady, SeatSpec::Baseline("long".to_owned())];
    let out = play_match(
        Session::boxed(Words::new(3, 12, 2)),
        1,
        &seats,
        &ProcessLauncher::default(),
        &config(),
    )
    .expect("match runs");
    let r = &out.report;
    assert_eq!(r.players[0].forfeit, Some(Forfeit::Crash), "{r:?}");
    assert_eq!(r.turns, 12, "the others play the whole game");
    assert_eq!(r.placements, vec![2, 1, 0]);
    assert_eq!(r.players[1].moves, 6);
    let replay: Replay<Words> = serde_json::from_slice(&out.replay).unwrap();
    replay.verify().unwrap();
}

#[test]
fn an_unknown_baseline_is_a_runner_error() {
    let seats = [
        SeatSpec::Baseline("long".to_owned()),
        SeatSpec::Baseline("nope".to_owned()),
    ];
    let err = play_match(
        Session::boxed(Words::new(2, 4, 1)),
        1,
        &seats,
        &ProcessLauncher::default(),
        &config(),
    )
    .err()
    .expect("an unknown baseline cannot play");
    assert!(err.to_string().contains("nope"), "{err}");
}
