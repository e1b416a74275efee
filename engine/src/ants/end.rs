//! The endings and the placement.
//!
//! After every turn, in this order:
//! 1. no colony has ants left: `extermination`;
//! 2. one colony alone has ants: it is credited with every enemy hill
//!    still standing (+2 each, −1 to each owner, recorded as razed by it
//!    this turn): `lone_survivor`;
//! 3. no colony still playing can change its place by razing the hills
//!    still standing: `rank_stabilized` (see [`Ants::rank_stabilized`]);
//! 4. `max_turns` turns played: `turn_limit`.
//!
//! Placement: seats that did not forfeit first, then by score; equal
//! scores share a rank.

use super::state::Ants;
use crate::game::Outcome;

/// The stable words for how a match ended.
pub mod reason {
    /// No colony has an ant left.
    pub const EXTERMINATION: &str = "extermination";
    /// One colony alone has ants; it was credited with the standing hills.
    pub const LONE_SURVIVOR: &str = "lone_survivor";
    /// Razing the standing hills could no longer change the order.
    pub const RANK_STABILIZED: &str = "rank_stabilized";
    /// `max_turns` turns were played.
    pub const TURN_LIMIT: &str = "turn_limit";
    /// Forfeits left at most one colony with ants.
    pub const FORFEIT: &str = "forfeit";
}

impl Ants {
    /// The end checks after a turn.
    pub(crate) fn check_end(&mut self) {
        let alive = self.alive();
        if alive.is_empty() {
            self.finish(reason::EXTERMINATION);
        } else if let [last] = alive[..] {
            self.credit(last);
            self.finish(reason::LONE_SURVIVOR);
        } else if self.rank_stabilized() {
            self.finish(reason::RANK_STABILIZED);
        } else if self.turn >= self.params.max_turns {
            self.finish(reason::TURN_LIMIT);
        }
    }

    /// The end check after forfeits: only the count of colonies with ants.
    pub(crate) fn check_end_after_forfeit(&mut self) {
        let alive = self.alive();
        if let [last] = alive[..] {
            self.credit(last);
        }
        if alive.len() <= 1 {
            self.finish(reason::FORFEIT);
        }
    }

    /// Seats still playing (not forfeited, with ants), increasing.
    pub fn alive(&self) -> Vec<usize> {
        (0..self.params.players)
            .filter(|&s| self.is_alive(s))
            .collect()
    }

    /// Credits `seat` with every standing enemy hill.
    fn credit(&mut self, seat: usize) {
        let turn = self.turn;
        for h in 0..self.hills.len() {
            if self.hills[h].razed.is_none() && self.hills[h].owner != seat {
                self.razed(h, seat, turn);
            }
        }
    }

    /// Whether razing could still change the finishing order, as the 2011
    /// game judged it. Only a colony still playing that has a standing hill
    /// of its own is given the chance to overtake: at best it adds +2 for
    /// every standing hill not its own, and at worst a rival loses 1 for
    /// each of its own standing hills. If that best would reach the worst
    /// of a rival now ahead of it, or pass the worst of one now level, the
    /// order is open. Forfeited seats rank below everyone whatever their
    /// score, so they are nobody's rival.
    pub fn rank_stabilized(&self) -> bool {
        let seats = self.params.players;
        let standing = |owner: usize, own: bool| {
            self.hills
                .iter()
                .filter(|h| h.razed.is_none() && (h.owner == owner) == own)
                .count() as i64
        };
        for p in (0..seats).filter(|&p| self.is_alive(p) && standing(p, true) > 0) {
            let best = self.scores[p].saturating_add(2 * standing(p, false));
            for o in (0..seats).filter(|&o| o != p && !self.forfeited[o]) {
                let (mine, theirs) = (self.scores[p], self.scores[o]);
                let worst = theirs.saturating_sub(standing(o, true));
                if (mine < theirs && best >= worst) || (mine == theirs && best > worst) {
                    return false;
                }
            }
        }
        true
    }

    /// Ends the match now, placing every seat.
    pub(crate) fn finish(&mut self, reason: &str) {
        let key = |s: usize| (self.forfeited[s], std::cmp::Reverse(self.scores[s]));
        let seats = self.params.players;
        let ranks = (0..seats)
            .map(|s| {
                let ahead = (0..seats).filter(|&o| key(o) < key(s)).count();
                u32::try_from(ahead).unwrap_or(u32::MAX)
            })
            .collect();
        // Standings add up placement points, as in every game; the colony's
        // own points travel as its `points` counter (and in the dump).
        self.outcome = Some(Outcome::ranked(ranks, reason));
    }
}
