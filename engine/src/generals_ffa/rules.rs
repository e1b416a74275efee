//! The turn: the eight steps of the rules, in order.
//!
//! [`GeneralsFfa::step_plans`] is the whole turn (install, compile, then the
//! rest); [`GeneralsFfa::step_moves`] starts at step 3 with moves given
//! directly, so the rules can be driven without a captain.
//!
//! Turn numbering: `turn` is the number of steps applied before this one
//! (0-based). Plans are installed when `turn % 8 == 0` (so on turn 0), the
//! resolution order is `order[k] = (turn + k) mod 4` with that same 0-based
//! `turn`, and everything stamped by a step (death turns, events, the
//! `seen` turn of memory, periodic growth) uses `now = turn + 1`, the value
//! [`crate::game::Game::turn`] reports once the step is applied. Periodic
//! growth therefore happens in the steps that make `turn()` 25, 50, 75, …

use super::board::{EventKind, GeneralsFfa, PLAN_EVERY, SEATS, Scratch};
use super::captain;
use super::plan::{self, Plan};
use super::view::{CellKind, Move};
use crate::game::Outcome;
use crate::grid::Grid;

/// Why a game ended (the [`Outcome::reason`] words).
pub mod reason {
    /// At most one crown is left on the board.
    pub const LAST_CROWN_STANDING: &str = "last_crown_standing";
    /// `max_turns` turns were played.
    pub const TURN_LIMIT: &str = "turn_limit";
    /// Every seat forfeited.
    pub const ALL_FORFEITED: &str = "all_forfeited";
}

impl GeneralsFfa {
    /// Whether `seat` installs a new plan before the next step: alive, not
    /// forfeited, the game running and the turn a multiple of 8.
    pub fn is_due_seat(&self, seat: usize) -> bool {
        self.outcome.is_none()
            && self.turn.is_multiple_of(PLAN_EVERY)
            && self
                .seats
                .get(seat)
                .is_some_and(|s| s.alive && !s.forfeited)
    }

    /// One whole turn. `plans[seat]` is installed when the seat is due (a
    /// due seat without one keeps its plan; others are ignored). Returns
    /// the outcome once the game is over; a finished game does not change.
    pub fn step_plans(&mut self, plans: &[Option<Plan>]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        // 1. Directive install.
        for seat in 0..SEATS {
            if self.is_due_seat(seat)
                && let Some(Some(plan)) = plans.get(seat)
            {
                self.seats[seat].plan = plan.clone();
            }
        }
        // 2. Move compilation, from each living seat's view at the start of the turn.
        let moves = self.compile_moves();
        self.play(moves)
    }

    /// Steps 3–8 of a turn with `moves` instead of the captains' (a test
    /// and tooling entry point: the moves get the same checks as the
    /// captain's). A finished game does not change.
    pub fn step_moves(&mut self, moves: [Option<Move>; SEATS]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        self.play(moves)
    }

    /// The move each living seat's captain makes now; a plan that yields
    /// none falls back to [`plan::sprawl`]'s.
    pub fn compile_moves(&mut self) -> [Option<Move>; SEATS] {
        let mut scratch = std::mem::take(&mut self.scratch);
        self.build_views(&mut scratch);
        let mut moves = [None; SEATS];
        let Scratch { views, sprawl, .. } = &mut scratch;
        let sprawl = sprawl.get_or_insert_with(plan::sprawl);
        for (seat, (slot, view)) in moves.iter_mut().zip(views.iter()).enumerate() {
            let state = &self.seats[seat];
            if state.alive {
                *slot = captain::compile(&state.plan, view).or_else(|| {
                    // Compiling sprawl again would only repeat its `None`.
                    (state.plan != *sprawl)
                        .then(|| captain::compile(sprawl, view))
                        .flatten()
                });
            }
        }
        self.scratch = scratch;
        moves
    }

    /// Steps 3–8.
    fn play(&mut self, moves: [Option<Move>; SEATS]) -> Option<Outcome> {
        let now = self.turn + 1;
        let before = self.total_army();
        self.scratch.vis_current = false;
        // 3. Resolution in the rotated order.
        for k in 0..SEATS {
            let seat = (self.turn as usize + k) % SEATS;
            if let Some(mv) = moves[seat]
                && !self.apply_move(seat, mv, now)
            {
                self.seats[seat].invalid_moves += 1;
            }
        }
        // 4. and 5. Growth.
        let grown = self.grow(now);
        // 6. Vision and memory.
        self.remember(now);
        // 7. The sim guard.
        if self.scratch.violation.is_none() {
            self.scratch.violation = self.check_step(before, grown);
        }
        // 8. Hash and endings.
        self.turn = now;
        self.hashes.push(self.board_hash());
        let alive = self.seats.iter().filter(|s| s.alive).count();
        if alive <= 1 {
            self.finish(reason::LAST_CROWN_STANDING);
        } else if self.turn >= self.params.max_turns {
            self.finish(reason::TURN_LIMIT);
        }
        self.outcome.clone()
    }

    /// Applies one move; `false` when the rules discard it.
    fn apply_move(&mut self, seat: usize, mv: Move, now: u32) -> bool {
        let cells = self.kind.len();
        let alive = self.seats.get(seat).is_some_and(|s| s.alive);
        if !alive || mv.from >= cells || mv.to >= cells {
            return false;
        }
        let board = Grid::new(self.params.width, self.params.height);
        if board.manhattan(mv.from, mv.to) != 1 {
            return false;
        }
        let source = self.army[mv.from];
        if self.owner[mv.from] != Some(seat as u8)
            || source < 2
            || self.kind[mv.to] == CellKind::Mountain
        {
            return false;
        }
        let amount = mv.amount.clamp(1, source - 1);
        self.army[mv.from] = source - amount;
        let garrison = self.army[mv.to];
        if self.owner[mv.to] == Some(seat as u8) {
            self.army[mv.to] = self.add(garrison, amount);
        } else if amount > garrison {
            let previous = self.owner[mv.to];
            self.owner[mv.to] = Some(seat as u8);
            self.army[mv.to] = amount - garrison;
            if self.kind[mv.to] == CellKind::Crown
                && let Some(victim) = previous
            {
                self.capture_crown(seat, usize::from(victim), mv.to, now);
            }
        } else {
            self.army[mv.to] = garrison - amount;
        }
        true
    }

    /// `captor` has just taken `victim`'s crown `cell`: the rest of the
    /// victim's land passes with its army halved, the crown becomes the
    /// captor's city (keeping the surviving attackers), the victim is out.
    fn capture_crown(&mut self, captor: usize, victim: usize, cell: usize, now: u32) {
        self.kind[cell] = CellKind::City;
        for c in 0..self.kind.len() {
            if self.owner[c] == Some(victim as u8) {
                self.owner[c] = Some(captor as u8);
                self.army[c] /= 2;
            }
        }
        if let Some(state) = self.seats.get_mut(victim) {
            state.alive = false;
            state.death_turn = Some(now);
        }
        self.events.push(super::board::Event {
            turn: now,
            kind: EventKind::GeneralCaptured,
            seat: captor,
            other: victim,
        });
        self.events.push(super::board::Event {
            turn: now,
            kind: EventKind::Eliminated,
            seat: victim,
            other: captor,
        });
    }

    /// Steps 4 and 5; returns how many armies were added.
    fn grow(&mut self, now: u32) -> u64 {
        let periodic = now.is_multiple_of(self.params.growth_period);
        let mut grown = 0;
        for cell in 0..self.kind.len() {
            if self.owner[cell].is_none() {
                continue;
            }
            let mut gain = u32::from(matches!(self.kind[cell], CellKind::City | CellKind::Crown));
            gain += u32::from(periodic);
            if gain > 0 {
                self.army[cell] = self.add(self.army[cell], gain);
                grown += u64::from(gain);
            }
        }
        grown
    }

    /// `a + b`, noting an overflow for the guard instead of wrapping.
    fn add(&mut self, a: u32, b: u32) -> u32 {
        a.checked_add(b).unwrap_or_else(|| {
            self.scratch
                .violation
                .get_or_insert_with(|| "an army overflowed u32".to_owned());
            u32::MAX
        })
    }

    /// Ends the game now, ranked by [`super::score`].
    pub(crate) fn finish(&mut self, reason: &str) {
        if self.outcome.is_none() {
            self.outcome = Some(Outcome::ranked(self.ranks(), reason));
        }
    }
}
