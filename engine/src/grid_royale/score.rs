//! Placement: a strict order, compared criterion by criterion.
//!
//! 0. did not forfeit (ours: a seat that left ranks below every seat that
//!    stayed; the seed does not speak of forfeits);
//! 1. higher bank;
//! 2. more units alive;
//! 3. banked earlier: the earlier turn on which the bank last changed,
//!    that is, reached its final value (0 when it never changed);
//! 4. lower seat.
//!
//! The last criterion breaks every tie, so ranks are `0..seats` with no
//! repeats, and the scores are [`crate::game::placement_points`] of them.

use std::cmp::Reverse;

use super::state::GridRoyale;
use crate::game::Outcome;

impl GridRoyale {
    /// The seats from first to last place.
    pub fn placement(&self) -> Vec<usize> {
        let mut seats: Vec<usize> = (0..self.params.seats).collect();
        seats.sort_by_key(|&s| {
            (
                self.forfeited[s],
                Reverse(self.banks[s]),
                Reverse(self.units_of(s)),
                self.bank_turns[s],
                s,
            )
        });
        seats
    }

    /// Ends the match now, placing every seat.
    pub(crate) fn finish(&mut self, reason: &str) {
        let mut ranks = vec![0u32; self.params.seats];
        for (place, seat) in self.placement().into_iter().enumerate() {
            ranks[seat] = u32::try_from(place).unwrap_or(u32::MAX);
        }
        self.outcome = Some(Outcome::ranked(ranks, reason));
    }
}
