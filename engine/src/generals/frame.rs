//! The text each bot reads: a handshake once, then one frame per turn.
//!
//! ```text
//! <t> <my_land> <my_army> <opp_land> <opp_army>
//! H lines of W types   0 fog, 1 plain, 2 mountain, 3 castle, 4 general, 5 structure in fog
//! H lines of W owners  0 neutral or unseen, 1 me, 2 opponent
//! H lines of W armies  0 where unseen
//! ```
//!
//! A cell is seen when the player owns a cell within Chebyshev distance 1.
//! Totals are exact and public; everything else outside sight is fogged.

use super::board::Generals;
use crate::game::Seat;

/// `<seat> <H> <W>\n`.
pub fn write_handshake(game: &Generals, seat: Seat, out: &mut Vec<u8>) {
    write_u64(out, seat as u64);
    out.push(b' ');
    write_u64(out, game.height as u64);
    out.push(b' ');
    write_u64(out, game.width as u64);
    out.push(b'\n');
}

/// The frame `seat` reads before choosing its action for the current time.
pub fn write_frame(game: &Generals, seat: Seat, out: &mut Vec<u8>) {
    let me = seat as u8 + 1;
    let them = 1 - seat;
    let (h, w) = (game.height, game.width);
    let cells = h * w;

    // Write into a slice sized for the longest possible frame, then trim: the
    // per-byte capacity checks of `push` cost more than the whole render.
    let start = out.len();
    let bound = 5 * 21 + cells * (2 + 2 + 11);
    out.resize(start + bound, 0);
    let mut w_ = Writer {
        buf: &mut out[start..],
        at: 0,
    };

    w_.number(u64::from(game.time));
    for value in [
        u64::from(game.land[seat]),
        game.army_total[seat],
        u64::from(game.land[them]),
        game.army_total[them],
    ] {
        w_.byte(b' ');
        w_.number(value);
    }
    w_.byte(b'\n');

    let seen = visibility(game, me);
    let visible = |cell: usize| seen[cell];

    // Type codes indexed by [seen][kind]: structures show as 5 in fog,
    // generals and plains as 0.
    const TYPE_CODE: [[u8; 4]; 2] = [[b'0', b'5', b'5', b'0'], [b'1', b'2', b'3', b'4']];
    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let code = TYPE_CODE[usize::from(visible(cell))][game.kind[cell] as usize];
            w_.pair(code, b' ');
        }
        w_.end_line();
    }
    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let owner = game.owner[cell];
            let code = if !visible(cell) || owner == 0 {
                b'0'
            } else if owner == me {
                b'1'
            } else {
                b'2'
            };
            w_.pair(code, b' ');
        }
        w_.end_line();
    }
    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let army = if visible(cell) { game.army[cell] } else { 0 };
            w_.number(u64::from(army));
            w_.byte(b' ');
        }
        w_.end_line();
    }
    let written = w_.at;
    out.truncate(start + written);
}

/// A cursor over a slice known to be long enough for everything written.
struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        self.buf[self.at] = b;
        self.at += 1;
    }

    fn pair(&mut self, a: u8, b: u8) {
        self.buf[self.at] = a;
        self.buf[self.at + 1] = b;
        self.at += 2;
    }

    /// Replaces the trailing space of a row with its newline.
    fn end_line(&mut self) {
        self.buf[self.at - 1] = b'\n';
    }

    fn number(&mut self, value: u64) {
        if value < 10 {
            self.byte(b'0' + value as u8);
        } else if value < 100 {
            self.pair(b'0' + (value / 10) as u8, b'0' + (value % 10) as u8);
        } else {
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut rest = value;
            while rest > 0 {
                at -= 1;
                digits[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            let len = digits.len() - at;
            self.buf[self.at..self.at + len].copy_from_slice(&digits[at..]);
            self.at += len;
        }
    }
}

/// Which cells `me` sees: the owned cells dilated by one in all eight directions.
fn visibility(game: &Generals, me: u8) -> Vec<bool> {
    let (h, w) = (game.height, game.width);
    // Horizontal pass: a cell is marked when it or a side neighbour is owned.
    let mut across = vec![false; h * w];
    for row in 0..h {
        let base = row * w;
        for col in 0..w {
            if game.owner[base + col] == me {
                let from = col.saturating_sub(1);
                let to = (col + 1).min(w - 1);
                across[base + from..=base + to].fill(true);
            }
        }
    }
    // Vertical pass over the horizontal result completes the 3x3 block.
    let mut seen = vec![false; h * w];
    for row in 0..h {
        let from = row.saturating_sub(1);
        let to = (row + 1).min(h - 1);
        for col in 0..w {
            seen[row * w + col] = (from..=to).any(|r| across[r * w + col]);
        }
    }
    seen
}

/// Appends a decimal number without going through `fmt`.
fn write_u64(out: &mut Vec<u8>, mut value: u64) {
    if value < 10 {
        out.push(b'0' + value as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while value > 0 {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    out.extend_from_slice(&digits[at..]);
}

impl Generals {
    /// Renders `seat`'s frame (same as [`crate::Game::write_frame`]).
    pub fn write_frame_into(&self, seat: Seat, out: &mut Vec<u8>) {
        write_frame(self, seat, out);
    }
}
