//! [`GeneralsClassicMulti`] as a [`Game`] the runner referees, and a random
//! legal player for benchmarks and property tests.

use super::{GeneralsClassicMulti, Mode, check_state};
use crate::game::{Game, Malformed, Outcome, Seat};
use crate::generals::{Action, Direction, Kind, action};
use crate::grid::Grid;
use crate::rng::SplitMix64;

/// The 1v1 reply line and fallback; a seat whose general fell, or that
/// forfeited, is not due (a forfeited seat's general stays and passes).
impl Game for GeneralsClassicMulti {
    type Action = Action;

    fn name(&self) -> &'static str {
        crate::generals_classic::ENTRY.name
    }

    fn seats(&self) -> usize {
        self.seat_count()
    }

    fn turn(&self) -> u32 {
        self.0.time
    }

    fn is_due(&self, seat: Seat) -> bool {
        self.0
            .seats
            .get(seat)
            .is_some_and(|r| r.alive && !r.forfeited)
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        self.write_handshake_into(seat, out);
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        self.write_frame_into(seat, out);
    }

    fn parse_action(&self, _seat: Seat, line: &[u8]) -> Result<Action, Malformed> {
        action::parse(line)
    }

    fn fallback_action(&self, _seat: Seat) -> Action {
        Action::PASS
    }

    fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        // A runner bug, not bot input: every step carries one slot per seat.
        assert_eq!(actions.len(), self.seat_count(), "one action slot per seat");
        self.step_all(actions).cloned()
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        self.apply_forfeits(seats).cloned()
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.0.outcome.as_ref()
    }

    /// `[0, 1, 0, 1]` in 2v2; empty in FFA, where every seat is its own side.
    fn teams(&self) -> Vec<u32> {
        match self.0.mode {
            Mode::Ffa => Vec::new(),
            Mode::Teams => self.0.seats.iter().map(|r| u32::from(r.team)).collect(),
        }
    }

    fn invariant_violation(&self) -> Option<String> {
        check_state(&self.0).err().map(|e| e.to_string())
    }
}

/// A random legal action for `seat`: from a random cell on, the first cell
/// the seat owns with army ≥ 2 and an open neighbour sends all but one or
/// half (one coin) in the first open direction from a random one. A pass
/// only when nothing can move (an eliminated seat always passes).
pub fn random_legal_action(
    game: &GeneralsClassicMulti,
    seat: Seat,
    rng: &mut SplitMix64,
) -> Action {
    let s = &**game;
    let cells = s.owner.len();
    let me = seat as u8 + 1;
    let draw = rng.next_u64();
    let first = ((draw >> 32) as usize) % cells;
    let half = draw & 1 == 1;
    let first_dir = ((draw >> 1) & 3) as usize;
    let (h, w) = (s.height, s.width);
    let board = Grid::new(w, h);
    for offset in 0..cells {
        let cell = (first + offset) % cells;
        if s.owner[cell] != me || s.army[cell] < 2 {
            continue;
        }
        for turn in 0..4 {
            let dir = Direction::ALL[(first_dir + turn) % 4];
            if let Some(next) = board.step(cell, dir as usize)
                && s.kind[next] != Kind::Mountain
            {
                // Half of 2 or 3 is 1, all but one of 2 is 1: both move.
                let (row, col) = ((cell / w) as i64, (cell % w) as i64);
                return Action::movement(row, col, dir, half);
            }
        }
    }
    Action::PASS
}
