//! Ranking at the final turn.
//!
//! Seats are compared criterion by criterion, the first difference deciding:
//!
//! 0. did not forfeit (a forfeited seat ranks below every seat that did not;
//!    this comes before the rules' five), and among forfeited seats the
//!    later forfeit (a seat that played longer; games of ranking version 1,
//!    recorded before this criterion, skip it);
//! 1. still alive;
//! 2. among the dead, the later death turn;
//! 3. most land (owned cells);
//! 4. biggest army (sum over owned cells);
//! 5. most cities, counting owned cities *and* crowns (a crown is the
//!    strongest city; all living seats hold exactly one, so among them it
//!    only shifts the count).
//!
//! A seat's rank is the number of seats strictly ahead of it, so seats equal
//! on every criterion share a rank (`[0, 0, 2, 3]`), and the scores are
//! [`crate::game::placement_points`] of the ranks: the average place points
//! of each tie group, adding up to 2.0.

use super::board::{GeneralsFfa, SEATS};

/// One seat's figures on the ranking criteria.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Standing {
    /// Did not forfeit.
    pub stayed: bool,
    /// The turn it forfeited; `u32::MAX` if it did not (or in a game of
    /// ranking version 1).
    pub forfeited_at: u32,
    /// Still holds its crown.
    pub alive: bool,
    /// Death turn; `u32::MAX` while alive (outlasts every dead seat).
    pub lasted: u32,
    /// Owned cells.
    pub land: u64,
    /// Army on owned cells.
    pub army: u64,
    /// Owned cities plus crowns.
    pub cities: u64,
}

impl GeneralsFfa {
    /// Every seat's figures on the ranking criteria now; greater is better,
    /// compared field by field in declaration order.
    pub fn standings(&self) -> [Standing; SEATS] {
        std::array::from_fn(|seat| {
            let state = &self.seats[seat];
            let (land, army, cities) = self.totals(seat);
            Standing {
                stayed: !state.forfeited,
                forfeited_at: state.forfeit_turn.unwrap_or(u32::MAX),
                alive: state.alive,
                lasted: state.death_turn.unwrap_or(u32::MAX),
                land,
                army,
                cities,
            }
        })
    }

    /// Ranks now: the number of seats strictly ahead of each.
    pub fn ranks(&self) -> Vec<u32> {
        let standings = self.standings();
        standings
            .iter()
            .map(|mine| standings.iter().filter(|other| *other > mine).count() as u32)
            .collect()
    }
}
