//! Checking a reported result against the match it was scheduled as, before
//! the store sees it. A worker is trusted to play, not to say who played or
//! how the game scores: a result whose seats, ranks or points disagree with
//! the pairing and the game's placement points is refused whole, so a forged
//! or buggy report (three seats for a two-seat match, rank 99) can never
//! reach the standings.

use crate::model::{MatchRecord, Pairing, baseline_name};

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
}

/// Checks `record` against the match's `pairing`: the same number of seats,
/// the same entrant in every seat in order (a baseline seat as
/// `baseline:NAME` with `baseline` set to NAME), every rank below the seat
/// count, and every score equal to [`arena_engine::placement_points`] of the
/// ranks (the scoring of every registered game) within [`SCORE_TOLERANCE`].
pub fn check(record: &MatchRecord, pairing: &Pairing) -> Result<(), ResultError> {
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
    let expected = arena_engine::placement_points(&ranks);
    for (seat, (result, expected)) in record.seats.iter().zip(expected).enumerate() {
        // A NaN compares false with everything, so it is refused by name.
        if result.score.is_nan() || (result.score - expected).abs() > SCORE_TOLERANCE {
            return Err(ResultError::Score {
                seat,
                score: result.score,
                expected,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SeatResult, baseline_id};

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
        }
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
        assert_eq!(check(&r, &pairing(&["a", "b", &b, &b])), Ok(()));
    }

    #[test]
    fn each_disagreement_names_its_seat() {
        let p = pairing(&["a", "b"]);
        let three = record(&[("a", 0), ("b", 1), ("c", 2)]);
        assert!(matches!(
            check(&three, &p),
            Err(ResultError::SeatCount {
                expected: 2,
                got: 3,
                ..
            })
        ));
        let swapped = record(&[("b", 0), ("a", 1)]);
        assert!(matches!(
            check(&swapped, &p),
            Err(ResultError::Entrant { seat: 0, .. })
        ));
        let mut far = record(&[("a", 0), ("b", 1)]);
        far.seats[1].rank = 99;
        assert!(matches!(
            check(&far, &p),
            Err(ResultError::Rank {
                seat: 1,
                rank: 99,
                ..
            })
        ));
        let mut greedy = record(&[("a", 0), ("b", 1)]);
        greedy.seats[1].score = 1.0;
        assert!(matches!(
            check(&greedy, &p),
            Err(ResultError::Score { seat: 1, .. })
        ));
        greedy.seats[1].score = f64::NAN;
        assert!(matches!(
            check(&greedy, &p),
            Err(ResultError::Score { seat: 1, .. })
        ));
        let mut posing = record(&[("a", 0), ("b", 1)]);
        posing.seats[0].baseline = Some("sprawl".into());
        assert!(matches!(
            check(&posing, &p),
            Err(ResultError::Baseline { seat: 0, .. })
        ));
    }
}
