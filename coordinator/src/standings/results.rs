//! The results of a tournament as CSV: one row per seat of every recorded
//! match, for `arena export` and the pages' downloads alike.
//!
//! `name` is the entrant's name in the tournament (a baseline seat's is the
//! baseline's name); `forfeit` is empty when the seat did not forfeit, and
//! the latency columns when it never replied in time. RFC 4180 with CRLF
//! line endings, text quoted as [`csv_field`] does.

use std::collections::HashMap;

use super::{csv_field, push_csv_record};
use crate::domain::{MatchRecord, baseline_name};
use crate::store::Entrant;

/// The columns of the results CSV, in order.
pub const RESULTS_HEADER: [&str; 20] = [
    "match_id",
    "round",
    "seat",
    "entrant",
    "name",
    "team",
    "rank",
    "score",
    "forfeit",
    "timeouts",
    "malformed",
    "illegal",
    "fuel_exhausted",
    "strikes",
    "moves",
    "latency_p50_ms",
    "latency_p99_ms",
    "reason",
    "turns",
    "worker",
];

/// One row per seat of every match (see the module docs).
pub fn results_csv(entrants: &[Entrant], results: &[MatchRecord]) -> String {
    let names: HashMap<&str, &str> = entrants
        .iter()
        .map(|e| (e.id.as_str(), e.name.as_str()))
        .collect();
    let mut out = String::new();
    push_csv_record(&mut out, RESULTS_HEADER.iter().map(|h| (*h).to_owned()));
    for record in results {
        for (seat, result) in record.seats.iter().enumerate() {
            let name = names
                .get(result.entrant.as_str())
                .copied()
                .or(result.baseline.as_deref())
                .or_else(|| baseline_name(&result.entrant))
                .unwrap_or("");
            let (p50, p99) = result
                .latency_ms()
                .map_or((String::new(), String::new()), |(p50, p99)| {
                    (p50.to_string(), p99.to_string())
                });
            let fields = [
                csv_field(&record.match_id),
                record.round.to_string(),
                seat.to_string(),
                csv_field(&result.entrant),
                csv_field(name),
                result.team.to_string(),
                result.rank.to_string(),
                result.score.to_string(),
                result.forfeit.map_or("", |f| f.as_str()).to_owned(),
                result.timeouts.to_string(),
                result.malformed.to_string(),
                result.illegal().to_string(),
                result.fuel_exhausted().to_string(),
                result.strikes().to_string(),
                result.moves.to_string(),
                p50,
                p99,
                csv_field(&record.reason),
                record.turns.to_string(),
                csv_field(&record.worker),
            ];
            push_csv_record(&mut out, fields.into_iter());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::SeatResult;

    #[test]
    fn results_csv_has_a_row_per_seat_with_names() {
        let entrants = [Entrant {
            id: "aa".into(),
            name: "Bot, \"A\"".into(),
        }];
        let record = MatchRecord {
            match_id: "t-m0".into(),
            round: 3,
            seats: vec![
                SeatResult {
                    entrant: "aa".into(),
                    score: 1.0,
                    ..Default::default()
                },
                SeatResult {
                    entrant: "baseline:sprawl".into(),
                    rank: 1,
                    baseline: Some("sprawl".into()),
                    forfeit: Some(arena_engine::Forfeit::Crash),
                    ..Default::default()
                },
            ],
            reason: "forfeit".into(),
            turns: 12,
            worker: String::new(),
        };
        let csv = results_csv(&entrants, &[record]);
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines.len(), 4, "{csv:?}");
        assert_eq!(lines[0], RESULTS_HEADER.join(","));
        assert_eq!(
            lines[1],
            "t-m0,3,0,aa,\"Bot, \"\"A\"\"\",0,0,1,,0,0,0,0,0,0,,,forfeit,12,"
        );
        assert_eq!(
            lines[2],
            "t-m0,3,1,baseline:sprawl,sprawl,0,1,0,crash,0,0,0,0,0,0,,,forfeit,12,"
        );
        assert_eq!(lines[3], "");
    }
}
