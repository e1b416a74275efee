//! Team games: which seats play for one side, and the two translations the
//! tournament needs between sides and seats.
//!
//! A game played in teams says so per seat ([`arena_engine::Match::teams`]:
//! `teams[seat]` is the side of each seat, known before the first turn; empty
//! when every seat plays for itself). A team entrant is one submission that
//! plays every seat of its side, so a tournament of a team game is scheduled,
//! and scored, as a game of *sides*:
//!
//! - **Seats from sides** ([`Sides::expand`]): the schedulers pair entrants
//!   into `sides` "seats" as for any game; each pairing then becomes the
//!   match's seat list, seat `s` taken by the pairing's entrant for the side
//!   of `teams[s]`. Sides are numbered by ascending team id, so with
//!   `teams = [0, 1, 0, 1]` the pairing `[A, B]` is seated `[A, B, A, B]`.
//! - **Sides from seats** ([`Sides::collapse`]): a result is reported per
//!   seat; before the standings or the Swiss pairer read it, each side's
//!   seats become one seat. Teammates must share a rank (a result where they
//!   differ is refused, naming both seats); the side's faults, moves and
//!   stats are the sums over its seats, its forfeit the first of its seats'
//!   in seat order, and its score the placement points among the sides.
//!
//! Without teams both translations are the identity, whatever the seat count.

use std::collections::BTreeMap;

use arena_engine::Rules;
use arena_engine::registry::{GameEntry, SetupError};

use crate::domain::{EntrantId, MatchRecord, Pairing, Round, SeatResult};

/// The seed a game is probed with for its teams: the layout is a property
/// of the seat count and the rules, the same for every map.
const PROBE_SEED: u64 = 0;

/// Why a team layout, a pairing or a result does not fit the sides.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TeamError {
    // The layout itself.
    #[error("the team layout {teams:?} is for {} seats, the match has {seats}", teams.len())]
    LayoutLength { teams: Vec<u32>, seats: usize },
    #[error("the team layout {teams:?} puts every seat on one side")]
    OneSide { teams: Vec<u32> },
    #[error("the game's team layout is {game:?}, not {given:?}")]
    NotTheGames { game: Vec<u32>, given: Vec<u32> },
    // A pairing or a result against the layout.
    #[error("a pairing of {got} entrants cannot fill {sides} sides")]
    PairingSize { sides: usize, got: usize },
    #[error("the result has {got} seats, the team layout {expected}")]
    SeatCount { expected: usize, got: usize },
    #[error(
        "seats {seat} and {teammate} play for team {team} but are ranked {rank} and {teammate_rank}"
    )]
    SplitRank {
        team: u32,
        seat: usize,
        teammate: usize,
        rank: u32,
        teammate_rank: u32,
    },
    #[error(
        "seats {seat} and {teammate} play for team {team} but name {entrant} and {teammate_entrant}"
    )]
    SplitEntrant {
        team: u32,
        seat: usize,
        teammate: usize,
        entrant: EntrantId,
        teammate_entrant: EntrantId,
    },
}

/// The game's team layout for `seats` seats under `rules`: `teams()` of a
/// match made on any seed (empty when every seat plays for itself).
pub fn probe(entry: &GameEntry, seats: usize, rules: &Rules) -> Result<Vec<u32>, SetupError> {
    Ok(entry.create(PROBE_SEED, seats, rules)?.teams())
}

/// Which side each seat of a match plays for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sides {
    /// The per-seat team ids as the game gave them; empty when every seat
    /// plays for itself.
    teams: Vec<u32>,
    /// `side[s]`: the side of seat `s`, sides numbered by ascending team id.
    side: Vec<usize>,
    /// The team id of each side, ascending.
    ids: Vec<u32>,
}

impl Sides {
    /// The sides of a `seats`-seat match with the per-seat `teams` (empty:
    /// every seat its own side). A layout must cover every seat and have at
    /// least two sides.
    pub fn new(seats: usize, teams: &[u32]) -> Result<Sides, TeamError> {
        if teams.is_empty() {
            return Ok(Sides {
                teams: Vec::new(),
                side: (0..seats).collect(),
                ids: (0..seats).map(|s| s as u32).collect(),
            });
        }
        if teams.len() != seats {
            return Err(TeamError::LayoutLength {
                teams: teams.to_vec(),
                seats,
            });
        }
        let mut ids = teams.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() < 2 {
            return Err(TeamError::OneSide {
                teams: teams.to_vec(),
            });
        }
        let side = teams
            .iter()
            // Every team id is in `ids`, which is sorted.
            .map(|t| ids.partition_point(|i| i < t))
            .collect();
        Ok(Sides {
            teams: teams.to_vec(),
            side,
            ids,
        })
    }

    /// Whether the match is played in teams (a layout was given): only then
    /// do the translations change anything.
    pub fn is_team_game(&self) -> bool {
        !self.teams.is_empty()
    }

    /// How many sides a match has: what the schedulers pair as "seats".
    pub fn count(&self) -> usize {
        self.ids.len()
    }

    /// The per-seat team ids (empty without teams).
    pub fn teams(&self) -> &[u32] {
        &self.teams
    }

    /// A pairing of sides (one entrant per side, in side order) as the
    /// match's seats; the identity without teams.
    pub fn expand(&self, pairing: Pairing) -> Result<Pairing, TeamError> {
        if !self.is_team_game() {
            return Ok(pairing);
        }
        if pairing.seats.len() != self.count() {
            return Err(TeamError::PairingSize {
                sides: self.count(),
                got: pairing.seats.len(),
            });
        }
        let seats = self
            .side
            .iter()
            .map(|&side| pairing.seats[side].clone())
            .collect();
        Ok(Pairing {
            seats,
            seed: pairing.seed,
        })
    }

    /// [`Sides::expand`] over every pairing of a round; byes stay as they are.
    pub fn expand_round(&self, round: Round) -> Result<Round, TeamError> {
        let pairings = round
            .pairings
            .into_iter()
            .map(|p| self.expand(p))
            .collect::<Result<_, _>>()?;
        Ok(Round {
            pairings,
            byes: round.byes,
        })
    }

    /// Checks that teammates share a rank, given every seat's rank in seat
    /// order; the error names the first two seats of a side that differ.
    pub fn check_ranks(&self, ranks: &[u32]) -> Result<(), TeamError> {
        self.check_seat_count(ranks.len())?;
        for (seat, &rank) in ranks.iter().enumerate() {
            let first = self.first_seat(self.side[seat]);
            if ranks[first] != rank {
                return Err(TeamError::SplitRank {
                    team: self.teams[seat],
                    seat: first,
                    teammate: seat,
                    rank: ranks[first],
                    teammate_rank: rank,
                });
            }
        }
        Ok(())
    }

    /// A per-seat result as one seat per side, in side order (see the
    /// [module docs](self)); a clone without teams.
    pub fn collapse(&self, record: &MatchRecord) -> Result<MatchRecord, TeamError> {
        if !self.is_team_game() {
            return Ok(record.clone());
        }
        let ranks: Vec<u32> = record.seats.iter().map(|s| s.rank).collect();
        self.check_ranks(&ranks)?;
        let mut sides: Vec<SeatResult> = Vec::with_capacity(self.count());
        for side in 0..self.count() {
            let first = self.first_seat(side);
            let lead = &record.seats[first];
            let mut merged = SeatResult {
                team: self.ids[side],
                stats: BTreeMap::new(),
                timeouts: 0,
                malformed: 0,
                moves: 0,
                ..lead.clone()
            };
            for (seat, result) in self.seats_of(side).map(|s| (s, &record.seats[s])) {
                if result.entrant != lead.entrant {
                    return Err(TeamError::SplitEntrant {
                        team: self.ids[side],
                        seat: first,
                        teammate: seat,
                        entrant: lead.entrant.clone(),
                        teammate_entrant: result.entrant.clone(),
                    });
                }
                merged.forfeit = merged.forfeit.or(result.forfeit);
                merged.timeouts = merged.timeouts.saturating_add(result.timeouts);
                merged.malformed = merged.malformed.saturating_add(result.malformed);
                merged.moves = merged.moves.saturating_add(result.moves);
                for (key, value) in &result.stats {
                    let total = merged.stats.entry(key.clone()).or_default();
                    *total = total.saturating_add(*value);
                }
            }
            sides.push(merged);
        }
        // Ranks among the sides: how many sides finished strictly ahead.
        let side_ranks: Vec<u32> = sides.iter().map(|s| s.rank).collect();
        let points = arena_engine::placement_points(&side_ranks);
        for (side, score) in sides.iter_mut().zip(points) {
            side.rank = side_ranks.iter().filter(|r| **r < side.rank).count() as u32;
            side.score = score;
        }
        Ok(MatchRecord {
            seats: sides,
            worker: String::new(),
            ..record.clone()
        })
    }

    /// [`Sides::collapse`] over many records.
    pub fn collapse_all(&self, records: &[MatchRecord]) -> Result<Vec<MatchRecord>, TeamError> {
        records.iter().map(|r| self.collapse(r)).collect()
    }

    fn check_seat_count(&self, got: usize) -> Result<(), TeamError> {
        if got != self.side.len() {
            return Err(TeamError::SeatCount {
                expected: self.side.len(),
                got,
            });
        }
        Ok(())
    }

    /// The seats of `side`, in seat order.
    fn seats_of(&self, side: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.side.len()).filter(move |&s| self.side[s] == side)
    }

    /// The lowest seat of `side`; every side has one by construction.
    fn first_seat(&self, side: usize) -> usize {
        self.seats_of(side).next().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_engine::Forfeit;

    fn seat(entrant: &str, rank: u32) -> SeatResult {
        SeatResult {
            entrant: entrant.into(),
            rank,
            ..SeatResult::default()
        }
    }

    #[test]
    fn layouts_are_checked() {
        assert!(matches!(
            Sides::new(4, &[0, 1, 0]),
            Err(TeamError::LayoutLength { seats: 4, .. })
        ));
        assert!(matches!(
            Sides::new(2, &[3, 3]),
            Err(TeamError::OneSide { .. })
        ));
        let solo = Sides::new(3, &[]).unwrap();
        assert_eq!(solo.count(), 3);
        assert!(!solo.is_team_game());
        // Sides are numbered by ascending team id, whatever the ids are.
        let odd = Sides::new(4, &[7, 2, 7, 2]).unwrap();
        assert_eq!(odd.count(), 2);
        let p = Pairing {
            seats: vec!["a".into(), "b".into()],
            seed: 9,
        };
        assert_eq!(odd.expand(p).unwrap().seats, ["b", "a", "b", "a"]);
    }

    #[test]
    fn expanding_seats_each_side_entrant_on_its_team_s_seats() {
        let sides = Sides::new(4, &[0, 1, 0, 1]).unwrap();
        let p = Pairing {
            seats: vec!["a".into(), "b".into()],
            seed: 9,
        };
        let seated = sides.expand(p.clone()).unwrap();
        assert_eq!(seated.seats, ["a", "b", "a", "b"]);
        assert_eq!(seated.seed, 9);
        let three = Pairing {
            seats: vec!["a".into(), "b".into(), "c".into()],
            seed: 1,
        };
        assert!(matches!(
            sides.expand(three),
            Err(TeamError::PairingSize { sides: 2, got: 3 })
        ));
        // Without teams nothing changes, whatever the size.
        let solo = Sides::new(2, &[]).unwrap();
        assert_eq!(solo.expand(p.clone()).unwrap(), p);
    }

    #[test]
    fn collapsing_merges_each_side() {
        let sides = Sides::new(4, &[0, 1, 0, 1]).unwrap();
        let mut seats = vec![seat("a", 1), seat("b", 0), seat("a", 1), seat("b", 0)];
        seats[0].timeouts = 2;
        seats[2].timeouts = 3;
        seats[2].forfeit = Some(Forfeit::Crash);
        seats[3].forfeit = Some(Forfeit::Memory);
        seats[1].stats.insert("invalid_moves".into(), 4);
        seats[3].stats.insert("invalid_moves".into(), 1);
        let record = MatchRecord {
            match_id: "t:0:0".into(),
            round: 0,
            seats,
            reason: "general_captured".into(),
            turns: 10,
            worker: String::new(),
        };
        let one = sides.collapse(&record).unwrap();
        assert_eq!(one.seats.len(), 2);
        let (a, b) = (&one.seats[0], &one.seats[1]);
        assert_eq!((a.entrant.as_str(), a.rank, a.score), ("a", 1, 0.0));
        assert_eq!((b.entrant.as_str(), b.rank, b.score), ("b", 0, 1.0));
        assert_eq!((a.team, b.team), (0, 1));
        assert_eq!(a.timeouts, 5);
        assert_eq!(a.forfeit, Some(Forfeit::Crash));
        assert_eq!(b.forfeit, Some(Forfeit::Memory));
        assert_eq!(b.stats["invalid_moves"], 5);
        assert_eq!((one.reason.as_str(), one.turns), ("general_captured", 10));
    }

    #[test]
    fn teammates_must_agree() {
        let sides = Sides::new(4, &[0, 1, 0, 1]).unwrap();
        let split = MatchRecord {
            match_id: "t:0:0".into(),
            round: 0,
            seats: vec![seat("a", 0), seat("b", 1), seat("a", 1), seat("b", 1)],
            reason: "x".into(),
            turns: 1,
            worker: String::new(),
        };
        assert_eq!(
            sides.collapse(&split),
            Err(TeamError::SplitRank {
                team: 0,
                seat: 0,
                teammate: 2,
                rank: 0,
                teammate_rank: 1
            })
        );
        let mut strangers = split.clone();
        strangers.seats[2] = seat("c", 0);
        assert!(matches!(
            sides.collapse(&strangers),
            Err(TeamError::SplitEntrant {
                seat: 0,
                teammate: 2,
                ..
            })
        ));
        let short = MatchRecord {
            seats: vec![seat("a", 0), seat("b", 1)],
            worker: String::new(),
            ..split
        };
        assert!(matches!(
            sides.collapse(&short),
            Err(TeamError::SeatCount {
                expected: 4,
                got: 2
            })
        ));
    }
}
