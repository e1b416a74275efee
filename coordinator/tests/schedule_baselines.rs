//! Scheduling for games with baselines: seats the field cannot fill are
//! filled with the game's first baseline (`baseline:NAME`) instead of byes.
//! The game here is `generals-ffa`, by its registry entry only (4 seats,
//! baselines "sprawl" and "crown"); no match is played.

use std::collections::BTreeMap;

use arena_coordinator::domain::{
    EntrantId, MatchRecord, Round, SeatResult, baseline_id, baseline_name,
};
use arena_coordinator::schedule::{
    ScheduleError, round_robin, round_robin_round_count_with_baseline, round_robin_with_baseline,
    splitmix64, swiss_round, swiss_round_with_baseline,
};

fn ids(n: usize) -> Vec<EntrantId> {
    (0..n).map(|i| format!("bot-{i:03}")).collect()
}

/// The baseline the coordinator fills with: the game's first.
fn first_baseline() -> &'static str {
    let entry = arena_engine::registry::find("generals-ffa").expect("generals-ffa is registered");
    assert_eq!(entry.seats, [4]);
    entry.baselines[0]
}

/// Results for a round, ranks drawn from `state` (ties allowed), baseline
/// seats included as the worker reports them.
fn play(round_no: u32, round: &Round, state: &mut u64) -> Vec<MatchRecord> {
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
                    *state = splitmix64(*state);
                    SeatResult {
                        entrant: e.clone(),
                        rank: (*state % p.seats.len() as u64) as u32,
                        baseline: baseline_name(e).map(str::to_owned),
                        ..SeatResult::default()
                    }
                })
                .collect(),
            reason: "test".into(),
            turns: 1,
            worker: String::new(),
        })
        .collect()
}

/// Every entrant plays exactly once, nobody sits out, every game is full,
/// and the only seats that are not entrants are the fill baseline's.
/// Returns how many baseline seats the round has.
fn assert_filled(round: &Round, entrants: &[EntrantId], seats: usize, baseline: &str) -> usize {
    assert!(round.byes.is_empty(), "no byes with baselines: {round:?}");
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let mut fill = 0;
    for pairing in &round.pairings {
        assert_eq!(pairing.seats.len(), seats, "{pairing:?}");
        for seat in &pairing.seats {
            match baseline_name(seat) {
                Some(name) => {
                    assert_eq!(name, baseline);
                    fill += 1;
                }
                None => *seen.entry(seat).or_default() += 1,
            }
        }
    }
    let expected: BTreeMap<&str, u32> = entrants.iter().map(|e| (e.as_str(), 1)).collect();
    assert_eq!(seen, expected);
    fill
}

#[test]
fn swiss_six_entrants_four_seats_fills_the_short_group_with_baselines() {
    let baseline = first_baseline();
    let entrants = ids(6);
    let mut history = Vec::new();
    let mut state = 11;
    for round in 0..5 {
        let paired =
            swiss_round_with_baseline(round, &entrants, &history, 4, 99, baseline).unwrap();
        assert_eq!(paired.pairings.len(), 2);
        assert_eq!(assert_filled(&paired, &entrants, 4, baseline), 2);
        // The baselines sit together in one group, beside two entrants.
        let short: Vec<_> = paired
            .pairings
            .iter()
            .filter(|p| p.seats.iter().any(|s| baseline_name(s).is_some()))
            .collect();
        assert_eq!(short.len(), 1);
        assert_eq!(
            short[0]
                .seats
                .iter()
                .filter(|s| **s == baseline_id(baseline))
                .count(),
            2
        );
        history.extend(play(round, &paired, &mut state));
    }
    // Without a baseline the same field gives two byes.
    let plain = swiss_round(0, &entrants, &[], 4, 99).unwrap();
    assert_eq!(plain.byes.len(), 2);
}

#[test]
fn swiss_with_baselines_fills_every_field_size() {
    let baseline = first_baseline();
    for n in 1..=9 {
        let entrants = ids(n);
        let mut history = Vec::new();
        let mut state = n as u64;
        for round in 0..3 {
            let paired =
                swiss_round_with_baseline(round, &entrants, &history, 4, 5, baseline).unwrap();
            let fill = assert_filled(&paired, &entrants, 4, baseline);
            assert_eq!(fill, (4 - n % 4) % 4, "{n} entrants");
            history.extend(play(round, &paired, &mut state));
        }
    }
}

#[test]
fn swiss_two_seats_plays_the_odd_one_out_against_the_baseline() {
    let entrants = ids(5);
    let mut history = Vec::new();
    let mut state = 3;
    for round in 0..4 {
        let paired = swiss_round_with_baseline(round, &entrants, &history, 2, 1, "sprawl").unwrap();
        assert_eq!(assert_filled(&paired, &entrants, 2, "sprawl"), 1);
        history.extend(play(round, &paired, &mut state));
    }
}

#[test]
fn swiss_with_baselines_still_refuses_bad_fields() {
    assert_eq!(
        swiss_round_with_baseline(0, &[], &[], 4, 1, "sprawl"),
        Err(ScheduleError::TooFewEntrants {
            entrants: 0,
            seats: 4
        })
    );
    let posing = vec!["bot".to_owned(), baseline_id("sprawl")];
    assert!(matches!(
        swiss_round_with_baseline(0, &posing, &[], 4, 1, "sprawl"),
        Err(ScheduleError::BaselineEntrant(_))
    ));
}

#[test]
fn round_robin_fills_a_small_field_and_rotates_seats() {
    let baseline = first_baseline();
    let entrants = ids(2);
    let rounds = round_robin_with_baseline(&entrants, 4, 2, 4, 7, baseline).unwrap();
    assert_eq!(
        round_robin_round_count_with_baseline(&entrants, 4, 2, 4),
        Ok(rounds.len())
    );
    assert_eq!(rounds.len(), 2, "one round per cycle");
    for round in &rounds {
        assert_eq!(round.pairings.len(), 4);
        // Each entrant sits in every seat once per cycle.
        for entrant in &entrants {
            let mut seats: Vec<usize> = round
                .pairings
                .iter()
                .map(|p| p.seats.iter().position(|s| s == entrant).unwrap())
                .collect();
            seats.sort_unstable();
            assert_eq!(seats, [0, 1, 2, 3]);
        }
        for pairing in &round.pairings {
            assert_eq!(pairing.seed, round.pairings[0].seed);
            let fill = pairing
                .seats
                .iter()
                .filter(|s| **s == baseline_id(baseline))
                .count();
            assert_eq!(fill, 2);
        }
        assert!(round.byes.is_empty());
    }
    assert_ne!(rounds[0].pairings[0].seed, rounds[1].pairings[0].seed);
}

#[test]
fn round_robin_with_a_full_field_needs_no_baseline() {
    let entrants = ids(5);
    assert_eq!(
        round_robin_with_baseline(&entrants, 4, 1, 4, 7, "sprawl").unwrap(),
        round_robin(&entrants, 4, 1, 4, 7).unwrap()
    );
}
