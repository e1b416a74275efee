//! The text a free-for-all or 2v2 seat reads: a handshake once, then one
//! frame per turn it is due.
//!
//! ```text
//! <seat> <H> <W> <N> <team_0> ... <team_{N-1}>          handshake
//! <t> <land_0> <army_0> ... <land_{N-1}> <army_{N-1}>   every seat, in seat order
//! H lines of W types   0 fog, 1 plain, 2 mountain, 3 castle, 4 general, 5 structure in fog
//! H lines of W owners  0 neutral or unseen, 1 me, 2 an ally, 3 + s opponent seat s
//! H lines of W armies  0 where unseen
//! ```
//!
//! Sight is the 1v1 rule (a cell is seen when one of the seat's cells is
//! within Chebyshev distance 1), united over the team in 2v2. Totals are
//! exact and public.

use std::io::Write;

use super::GeneralsClassicMulti;
use crate::game::Seat;
use crate::generals::Kind;

impl GeneralsClassicMulti {
    /// `<seat> <H> <W> <N> <team_0> ... <team_{N-1}>\n`.
    pub fn write_handshake_into(&self, seat: Seat, out: &mut Vec<u8>) {
        let s = &self.0;
        let _ = write!(out, "{seat} {} {} {}", s.height, s.width, s.seats.len());
        for record in &s.seats {
            let _ = write!(out, " {}", record.team);
        }
        out.push(b'\n');
    }

    /// The frame `seat` reads before choosing its action for the current time.
    pub fn write_frame_into(&self, seat: Seat, out: &mut Vec<u8>) {
        let s = &self.0;
        let (h, w) = (s.height, s.width);
        out.reserve(16 + s.seats.len() * 12 + h * w * 8);
        let _ = write!(out, "{}", s.time);
        for other in 0..s.seats.len() {
            let (land, army) = self.totals(other);
            let _ = write!(out, " {land} {army}");
        }
        out.push(b'\n');

        let seen = self.sight(seat);
        let line = |out: &mut Vec<u8>, code: &dyn Fn(usize) -> u64| {
            for col in 0..w {
                if col > 0 {
                    out.push(b' ');
                }
                let _ = write!(out, "{}", code(col));
            }
            out.push(b'\n');
        };
        for row in 0..h {
            line(out, &|col| {
                let cell = row * w + col;
                match (seen[cell], s.kind[cell]) {
                    (false, Kind::Mountain | Kind::Castle) => 5,
                    (false, _) => 0,
                    (true, Kind::Plain) => 1,
                    (true, Kind::Mountain) => 2,
                    (true, Kind::Castle) => 3,
                    (true, Kind::General) => 4,
                }
            });
        }
        for row in 0..h {
            line(out, &|col| {
                let cell = row * w + col;
                if seen[cell] {
                    self.owner_code(seat, s.owner[cell])
                } else {
                    0
                }
            });
        }
        for row in 0..h {
            line(out, &|col| {
                let cell = row * w + col;
                if seen[cell] {
                    u64::from(s.army[cell])
                } else {
                    0
                }
            });
        }
    }

    /// A board owner code as `seat` reads it: 0 neutral, 1 its own, 2 an
    /// ally's, `3 + s` opponent seat `s`'s.
    pub fn owner_code(&self, seat: Seat, owner: u8) -> u64 {
        match owner {
            0 => 0,
            o if usize::from(o) == seat + 1 => 1,
            o if self.allied(seat, usize::from(o) - 1) => 2,
            o => 3 + u64::from(o - 1),
        }
    }

    /// Per cell, whether `seat` sees it: within one step (diagonals too) of
    /// a cell the seat or a teammate owns.
    pub fn sight(&self, seat: Seat) -> Vec<bool> {
        let s = &self.0;
        let (h, w) = (s.height, s.width);
        let mut seen = vec![false; h * w];
        for cell in 0..h * w {
            let owner = s.owner[cell];
            if owner == 0 || !self.allied(seat, usize::from(owner) - 1) {
                continue;
            }
            let (row, col) = (cell / w, cell % w);
            for r in row.saturating_sub(1)..=(row + 1).min(h - 1) {
                let from = r * w + col.saturating_sub(1);
                let to = r * w + (col + 1).min(w - 1);
                seen[from..=to].fill(true);
            }
        }
        seen
    }
}
