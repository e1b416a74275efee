//! Checking a reported result against the match it was scheduled as, before
//! the store sees it. A worker is trusted to play, not to say who played or
//! how the game scores: a result whose seats, ranks or points disagree with
//! the pairing and the game's placement points is refused whole, so a forged
//! or buggy report (three seats for a two-seat match, rank 99) can never
//! reach the standings.
//!
//! The check is per seat, team games included: a team entrant sits on each
//! seat of its side and the worker reports every one. What teams add is that
//! teammates must share a rank (a side wins or loses as one).

use crate::domain::{MatchRecord, Pairing, baseline_name};
use crate::teams::{Sides, TeamError};

/// How far a reported score may be from the placement points of its rank:
/// the points are ratios of small integers, so anything further is wrong.
pub const SCORE_TOLERANCE: f64 = 1e-9;

/// Why a reported result does not fit its match. Every variant past the
/// seat count names the seat (0-based) it is about.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ResultError {
    #[error("match {match_id} has {expected} seats, the result {got}")]
    SeatCount {
        match_id: String,
        expected: usize,
        got: usize,
    },
    #[error("seat {seat}: the match seats {expected}, the result names {got}")]
    Entrant {
        seat: usize,
        expected: String,
        got: String,
    },
    #[error("seat {seat}: baseline {baseline:?} does not match entrant {entrant}")]
    Baseline {
        seat: usize,
        entrant: String,
        baseline: Option<String>,
    },
    #[error("seat {seat}: rank {rank} is out of range for {seats} seats")]
    Rank {
        seat: usize,
        rank: u32,
        seats: usize,
    },
    #[error("seat {seat}: score {score} is not {expected}, the placement points of its rank")]
    Score {
        seat: usize,
        score: f64,
        expected: f64,
    },
    #[error("teammates disagree")]
    Team(#[from] TeamError),
}

/// Checks `record` against the match's `pairing`: the same number of seats,
/// the same entrant in every seat in order (a baseline seat as
/// `baseline:NAME` with `baseline` set to NAME), every rank below the seat
/// count, and every score equal to [`arena_engine::placement_points`] of the
/// ranks (the scoring of every registered game) within [`SCORE_TOLERANCE`].
///
/// In a team game (`sides` has teams), teammates must also share a rank
/// ([`TeamError::SplitRank`] names the two seats), and a seat's score may
/// instead be its side's placement points among the sides: both readings
/// of "the game's points" agree on the order, and the standings score the
/// ranks, never the reported score.
pub fn check(record: &MatchRecord, pairing: &Pairing, sides: &Sides) -> Result<(), ResultError> {
    let seats = pairing.seats.len();
    if record.seats.len() != seats {
        return Err(ResultError::SeatCount {
            match_id: record.match_id.clone(),
            expected: seats,
            got: record.seats.len(),
        });
    }
    for (seat, (result, leased)) in record.seats.iter().zip(&pairing.seats).enumerate() {
        if &result.entrant != leased {
            return Err(ResultError::Entrant {
                seat,
                expected: leased.clone(),
                got: result.entrant.clone(),
            });
        }
        if result.baseline.as_deref() != baseline_name(&result.entrant) {
            return Err(ResultError::Baseline {
                seat,
                entrant: result.entrant.clone(),
                baseline: result.baseline.clone(),
            });
        }
        if result.rank as usize >= seats {
            return Err(ResultError::Rank {
                seat,
                rank: result.rank,
                seats,
            });
        }
    }
    let ranks: Vec<u32> = record.seats.iter().map(|s| s.rank).collect();
    if sides.is_team_game() {
        sides.check_ranks(&ranks)?;
    }
    let expected = arena_engine::placement_points(&ranks);
    let by_side = side_points(record, sides)?;
    for (seat, (result, expected)) in record.seats.iter().zip(expected).enumerate() {
        let near = |points: f64| (result.score - points).abs() <= SCORE_TOLERANCE;
        let side_points = by_side.as_ref().and_then(|p| p.get(seat)).copied();
        // A NaN compares false with everything, so it is refused by name.
        if result.score.is_nan() || !(near(expected) || side_points.is_some_and(near)) {
            return Err(ResultError::Score {
                seat,
                score: result.score,
                expected,
            });
        }
    }
    Ok(())
}

/// In a team game, the placement points of each seat's side among the
/// sides, in seat order; `None` without teams.
fn side_points(record: &MatchRecord, sides: &Sides) -> Result<Option<Vec<f64>>, TeamError> {
    if !sides.is_team_game() {
        return Ok(None);
    }
    let collapsed = sides.collapse(record)?;
    let teams = sides.teams();
    Ok(Some(
        teams
            .iter()
            .map(|team| {
                collapsed
                    .seats
                    .iter()
                    .find(|s| s.team == *team)
                    .map_or(f64::NAN, |s| s.score)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{SeatResult, baseline_id};

    fn record(seats: &[(&str, u32)]) -> MatchRecord {
        let ranks: Vec<u32> = seats.iter().map(|s| s.1).collect();
        let points = arena_engine::placement_points(&ranks);
        MatchRecord {
            match_id: "t:0:0".into(),
            round: 0,
            seats: seats
                .iter()
                .zip(points)
                .map(|(&(entrant, rank), score)| SeatResult {
                    entrant: entrant.into(),
                    rank,
                    score,
                    baseline: baseline_name(entrant).map(str::to_owned),
                    ..SeatResult::default()
                })
                .collect(),
            reason: "x".into(),
            turns: 1,
            worker: String::new(),
        }
    }

    fn solo() -> Sides {
        Sides::new(2, &[]).unwrap()
    }

    fn pairing(seats: &[&str]) -> Pairing {
        Pairing {
            seats: seats.iter().map(|s| s.to_string()).collect(),
            seed: 1,
        }
    }

    #[test]
    fn a_faithful_result_passes() {
        let b = baseline_id("sprawl");
        let r = record(&[("a", 0), ("b", 0), (&b, 2), (&b, 3)]);
        assert_eq!(check(&r, &pairing(&["a", "b", &b, &b]), &solo()), Ok(()));
    }

    #[test]
    fn each_disagreement_names_its_seat() {
        let p = pairing(&["a", "b"]);
        let three = record(&[("a", 0), ("b", 1), ("c", 2)]);
        assert!(matches!(
            check(&three, &p, &solo()),
            Err(ResultError::SeatCount {
                expected: 2,
                got: 3,
                ..
            })
        ));
        let swapped = record(&[("b", 0), ("a", 1)]);
        assert!(matches!(
            check(&swapped, &p, &solo()),
            Err(ResultError::Entrant { seat: 0, .. })
        ));
        let mut far = record(&[("a", 0), ("b", 1)]);
        far.seats[1].rank = 99;
        assert!(matches!(
            check(&far, &p, &solo()),
            Err(ResultError::Rank {
                seat: 1,
                rank: 99,
                ..
            })
        ));
        let mut greedy = record(&[("a", 0), ("b", 1)]);
        greedy.seats[1].score = 1.0;
        assert!(matches!(
            check(&greedy, &p, &solo()),
            Err(ResultError::Score { seat: 1, .. })
        ));
        greedy.seats[1].score = f64::NAN;
        assert!(matches!(
            check(&greedy, &p, &solo()),
            Err(ResultError::Score { seat: 1, .. })
        ));
        let mut posing = record(&[("a", 0), ("b", 1)]);
        posing.seats[0].baseline = Some("sprawl".into());
        assert!(matches!(
            check(&posing, &p, &solo()),
            Err(ResultError::Baseline { seat: 0, .. })
        ));
    }

    #[test]
    fn teammates_share_a_rank() {
        let sides = Sides::new(4, &[0, 1, 0, 1]).unwrap();
        let p = pairing(&["a", "b", "a", "b"]);
        let won = record(&[("a", 0), ("b", 1), ("a", 0), ("b", 1)]);
        assert_eq!(check(&won, &p, &sides), Ok(()));
        // Scored per side (1 and 0) instead of per seat: the same order.
        let mut by_side = won.clone();
        for (seat, score) in by_side.seats.iter_mut().zip([1.0, 0.0, 1.0, 0.0]) {
            seat.score = score;
        }
        assert_eq!(check(&by_side, &p, &sides), Ok(()));
        let split = record(&[("a", 0), ("b", 1), ("a", 1), ("b", 1)]);
        assert_eq!(
            check(&split, &p, &sides),
            Err(ResultError::Team(TeamError::SplitRank {
                team: 0,
                seat: 0,
                teammate: 2,
                rank: 0,
                teammate_rank: 1
            }))
        );
        // Without teams the same ranks are an ordinary result.
        assert_eq!(check(&split, &p, &Sides::new(4, &[]).unwrap()), Ok(()));
    }
}
