//! One step of the free-for-all and 2v2 formats, time t → t+1, and how a
//! finished game places its seats.
//!
//! Phases, in order: the moves, one per seat in the priority order of
//! [`GeneralsClassicMulti::move_order`] (a capture takes effect the moment
//! its move executes), the clock, growth (skipped when a capture ended the
//! game), the endings. The rules are written out in
//! `docs/games/generals-classic.md`, "Free-for-all and 2v2".

use std::cmp::Reverse;

use super::{GeneralsClassicMulti, Mode};
use crate::game::{Outcome, placement_points};
use crate::generals::{Action, ActionKind, Kind};

/// The stable words for why a game ended.
pub mod reason {
    /// FFA: one seat is still in.
    pub const LAST_GENERAL_STANDING: &str = "last_general_standing";
    /// 2v2: one team still has a general.
    pub const LAST_TEAM_STANDING: &str = "last_team_standing";
    /// Time reached `max_turns` with more than one seat (team) in.
    pub const TURN_LIMIT: &str = "turn_limit";
    /// Forfeits left at most one seat (team) that is in and playing.
    pub const FORFEIT: &str = "forfeit";
}

/// Where one real move stands in a step's order: the 1v1 engine's three
/// comparisons, each read off the board as it stands before any move of the
/// step executes, so that the keys do not depend on the order they decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MovePriority {
    pub seat: usize,
    /// The move's target is the source of another seat's real move this
    /// step (any seat's, a teammate's included).
    pub chasing: bool,
    /// The move's target is a cell of the mover's own. An ally's cell does
    /// not count: the rule reads "onto its own player's cell".
    pub reinforcing: bool,
    /// The army on the move's source.
    pub source_army: u32,
}

impl MovePriority {
    /// Smaller goes first: chasing, then reinforcing, then the smaller
    /// source army, then the lower seat. On two seats this is exactly the
    /// 1v1 cascade, whose tie goes to player 0.
    pub fn sort_key(&self) -> (Reverse<bool>, Reverse<bool>, u32, usize) {
        (
            Reverse(self.chasing),
            Reverse(self.reinforcing),
            self.source_army,
            self.seat,
        )
    }
}

/// The armies a move from a cell of `army` sends: half, rounded down, when
/// `split` is 1, else all but one.
fn moving_army(army: u32, split: i64) -> u32 {
    if split == 1 {
        army / 2
    } else {
        army.saturating_sub(1)
    }
}

impl GeneralsClassicMulti {
    /// The real moves among `actions` (one slot per seat), with their
    /// priorities, in the order they execute.
    ///
    /// A move is real when its seat is due (its general stands and it has
    /// not forfeited) and the move is valid on the board before the step:
    /// not a pass, both cells on the board, the source the seat's own, at
    /// least one army to send, the target not a mountain. Only a real move
    /// is ranked, can chase, or is chased: a pass, an absent reply or an
    /// invalid move is none of these, whatever its fields say (the
    /// reference engine reads a pass's row and column, so there a move onto
    /// (0, 0) can count as chasing a pass; this engine does not).
    ///
    /// The keys are computed once, all on the same board, and the moves
    /// sorted once by [`MovePriority::sort_key`]; there are no pairwise
    /// comparisons, so chains are well defined. If A's target is B's
    /// source and B's is C's, A and B are both chasing and C is not: A and
    /// B go first, between them by reinforcing, army and seat, then C. Two
    /// moves chasing one source both go before its mover, and a cycle of
    /// chases (A onto B's source, B onto A's) has every move chasing, so
    /// the later keys decide.
    pub fn move_priorities(&self, actions: &[Option<Action>]) -> Vec<MovePriority> {
        let real: Vec<(usize, usize, usize)> = (0..self.seat_count())
            .filter_map(|seat| {
                let action = actions.get(seat).copied().flatten()?;
                let (src, dst, _) = self.real_move(seat, &action)?;
                Some((seat, src, dst))
            })
            .collect();
        let mut priorities: Vec<MovePriority> = real
            .iter()
            .map(|&(seat, src, dst)| MovePriority {
                seat,
                chasing: real
                    .iter()
                    .any(|&(other, o_src, _)| other != seat && o_src == dst),
                reinforcing: self.0.owner[dst] == seat as u8 + 1,
                source_army: self.0.army[src],
            })
            .collect();
        priorities.sort_unstable_by_key(MovePriority::sort_key);
        priorities
    }

    /// Every seat in the order its move executes this step: the real moves
    /// by [`GeneralsClassicMulti::move_priorities`], then every other seat
    /// by seat index. Those other moves are still tried when their turn
    /// comes, like every move, on the board the earlier moves left, and do
    /// nothing, with one exception: in 2v2 an ally may have pooled armies
    /// onto a seat's general of 1, and the seat's move out of it then has
    /// armies to send.
    pub fn move_order(&self, actions: &[Option<Action>]) -> Vec<usize> {
        let mut order: Vec<usize> = self
            .move_priorities(actions)
            .iter()
            .map(|p| p.seat)
            .collect();
        let ranked = order.clone();
        order.extend((0..self.seat_count()).filter(|seat| !ranked.contains(seat)));
        order
    }

    /// A seat's move as a real one (see [`Self::move_priorities`]): source,
    /// target and the armies it sends.
    fn real_move(&self, seat: usize, action: &Action) -> Option<(usize, usize, u32)> {
        let record = self.0.seats.get(seat)?;
        if !record.alive || record.forfeited {
            return None;
        }
        self.valid_move(seat, action)
    }

    /// Applies one action per seat (`None` or a pass does nothing); returns
    /// the outcome once the game is over. Stepping a finished game changes
    /// nothing.
    pub fn step_all(&mut self, actions: &[Option<Action>]) -> Option<&Outcome> {
        if self.0.outcome.is_some() {
            return self.0.outcome.as_ref();
        }
        // The whole order is fixed before the first move executes.
        for seat in self.move_order(actions) {
            // A forfeited seat passes, whatever a caller hands in for it.
            if self.0.seats[seat].forfeited {
                continue;
            }
            if let Some(action) = actions.get(seat).copied().flatten() {
                self.try_move(seat, &action);
            }
        }
        self.0.time += 1;
        let ended_by_capture = self.contenders() <= 1;
        if ended_by_capture {
            let word = match self.0.mode {
                Mode::Ffa => reason::LAST_GENERAL_STANDING,
                Mode::Teams => reason::LAST_TEAM_STANDING,
            };
            self.finish(word);
        } else {
            self.grow();
            if self.0.time >= self.0.max_turns {
                self.finish(reason::TURN_LIMIT);
            }
        }
        self.0.outcome.as_ref()
    }

    /// The source and target cells of a move, if both are on the board.
    pub(crate) fn move_cells(&self, action: &Action) -> Option<(usize, usize)> {
        if action.kind == ActionKind::Pass {
            return None;
        }
        let (h, w) = (self.0.height as i64, self.0.width as i64);
        let (dr, dc) = match action.dir {
            0 => (-1, 0),
            1 => (1, 0),
            2 => (0, -1),
            3 => (0, 1),
            _ => return None,
        };
        let (row, col) = (action.row, action.col);
        let (to_row, to_col) = (row.checked_add(dr)?, col.checked_add(dc)?);
        let on = |r: i64, c: i64| (0..h).contains(&r) && (0..w).contains(&c);
        if !on(row, col) || !on(to_row, to_col) {
            return None;
        }
        Some(((row * w + col) as usize, (to_row * w + to_col) as usize))
    }

    /// A move's source, target and the armies it sends, if it is valid on
    /// the board as it stands (1v1 validity: on the board, own source, at
    /// least one army moves, no mountain).
    fn valid_move(&self, seat: usize, action: &Action) -> Option<(usize, usize, u32)> {
        let (src, dst) = self.move_cells(action)?;
        let s = &self.0;
        if s.owner[src] != seat as u8 + 1 || s.kind[dst] == Kind::Mountain {
            return None;
        }
        let m = moving_army(s.army[src], action.split);
        (m > 0).then_some((src, dst, m))
    }

    /// Executes one seat's move if it is valid now.
    fn try_move(&mut self, seat: usize, action: &Action) {
        let Some((src, dst, m)) = self.valid_move(seat, action) else {
            return;
        };
        let me = seat as u8 + 1;
        self.0.army[src] -= m;
        let target = self.0.owner[dst];
        let held = self.0.army[dst];
        if target == me {
            self.0.army[dst] = held.saturating_add(m);
        } else if target != 0 && self.allied(seat, usize::from(target) - 1) {
            // 2v2 pooling: the ally's army joins the stack. A teammate's
            // standing general keeps its owner (a team never takes its own).
            if self.0.kind[dst] != Kind::General {
                self.0.owner[dst] = me;
            }
            self.0.army[dst] = held.saturating_add(m);
        } else if m > held {
            self.0.owner[dst] = me;
            self.0.army[dst] = m - held;
            if target != 0 && self.0.generals[usize::from(target) - 1] == dst {
                self.capture(seat, usize::from(target) - 1);
            }
        } else {
            self.0.army[dst] = held - m;
        }
    }

    /// `captor` took `victim`'s general (whose cell already holds the
    /// captor's stack): every other cell of the victim becomes the captor's
    /// with half its army, rounded down; the general becomes a castle; the
    /// victim is out as of the time after this step.
    fn capture(&mut self, captor: usize, victim: usize) {
        let (from, to) = (victim as u8 + 1, captor as u8 + 1);
        for cell in 0..self.0.owner.len() {
            if self.0.owner[cell] == from {
                self.0.owner[cell] = to;
                self.0.army[cell] /= 2;
            }
        }
        let general = self.0.generals[victim];
        self.0.kind[general] = Kind::Castle;
        let record = &mut self.0.seats[victim];
        record.alive = false;
        record.eliminated_at = Some(self.0.time + 1);
    }

    /// 1v1 growth at the new time: every owned cell +1 at multiples of 50,
    /// then owned generals and castles +1 at even times.
    fn grow(&mut self) {
        let t = self.0.time;
        let (all, structures) = (t.is_multiple_of(50), t.is_multiple_of(2));
        if !all && !structures {
            return;
        }
        let s = &mut self.0;
        for cell in 0..s.owner.len() {
            if s.owner[cell] == 0 {
                continue;
            }
            let bonus = u32::from(all)
                + u32::from(structures && matches!(s.kind[cell], Kind::General | Kind::Castle));
            s.army[cell] = s.army[cell].saturating_add(bonus);
        }
    }

    /// How many seats (FFA) or teams (2v2) are still in and playing: their
    /// general stands (a teammate's, in 2v2) and they have not forfeited.
    pub(crate) fn contenders(&self) -> usize {
        let mut teams: Vec<u8> = self
            .0
            .seats
            .iter()
            .filter(|r| r.alive && !r.forfeited)
            .map(|r| r.team)
            .collect();
        teams.sort_unstable();
        teams.dedup();
        teams.len()
    }

    /// Marks `seats` forfeited; ends the game (`forfeit`) when at most one
    /// seat (team) is left playing.
    pub(crate) fn apply_forfeits(&mut self, seats: &[usize]) -> Option<&Outcome> {
        if self.0.outcome.is_none() {
            for &seat in seats {
                if let Some(record) = self.0.seats.get_mut(seat) {
                    record.forfeited = true;
                }
            }
            if self.contenders() <= 1 {
                self.finish(reason::FORFEIT);
            }
        }
        self.0.outcome.as_ref()
    }

    /// Writes the outcome: ranks from [`GeneralsClassicMulti::standing_keys`],
    /// scored by placement, with the teams in 2v2.
    fn finish(&mut self, reason: &str) {
        // Dense ranks: a place is the number of distinct better keys, so a
        // losing team after a winning one is rank 1 (as a 2-seat loss is).
        let keys = self.standing_keys();
        let mut distinct = keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let ranks: Vec<u32> = keys
            .iter()
            .map(|k| distinct.iter().filter(|o| *o > k).count() as u32)
            .collect();
        let teams = match self.0.mode {
            Mode::Ffa => Vec::new(),
            Mode::Teams => self.0.seats.iter().map(|r| u32::from(r.team)).collect(),
        };
        self.0.outcome = Some(Outcome {
            scores: placement_points(&ranks),
            ranks,
            teams,
            reason: reason.to_owned(),
        });
    }

    /// A per-seat key, larger is better; equal keys share a place. In
    /// order: not forfeited (in 2v2: no seat of the team forfeited); still in (a general stands whose seat has not
    /// forfeited: the seat's own in FFA, either teammate's in 2v2); the later elimination (the team's later one in 2v2); then,
    /// among those still in, land and then army (the team's totals in 2v2).
    pub fn standing_keys(&self) -> Vec<(bool, bool, u32, u32, u64)> {
        let n = self.seat_count();
        let totals: Vec<(u32, u64)> = (0..n).map(|s| self.totals(s)).collect();
        (0..n)
            .map(|seat| {
                let record = &self.0.seats[seat];
                let members: Vec<usize> = (0..n).filter(|&o| self.allied(seat, o)).collect();
                // A team is one entrant (one submission plays both seats), so
                // a forfeit by either seat puts the whole side below every
                // side without one, and teammates always share a place.
                let forfeited = match self.0.mode {
                    Mode::Ffa => record.forfeited,
                    Mode::Teams => members.iter().any(|&o| self.0.seats[o].forfeited),
                };
                if forfeited && self.0.mode == Mode::Ffa {
                    return (false, false, 0, 0, 0);
                }
                // In: a member's general stands and that member plays on (a
                // team kept only by a forfeited general is out, so the
                // forfeit ending ranks the last team playing first).
                let playing = members
                    .iter()
                    .any(|&o| self.0.seats[o].alive && !self.0.seats[o].forfeited);
                if !playing {
                    let out_at = members
                        .iter()
                        .filter_map(|&o| self.0.seats[o].eliminated_at)
                        .max()
                        .unwrap_or(0);
                    return (!forfeited, false, out_at, 0, 0);
                }
                let land = members.iter().map(|&o| totals[o].0).sum();
                let army = members.iter().map(|&o| totals[o].1).sum();
                (!forfeited, true, 0, land, army)
            })
            .collect()
    }
}
