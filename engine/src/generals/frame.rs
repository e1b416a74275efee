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
    out.reserve(64 + h * w * 8);

    let mut header = RowBuf::new();
    header.number(u64::from(game.time));
    let (my_land, my_army) = game.totals(seat);
    let (their_land, their_army) = game.totals(them);
    for value in [
        u64::from(my_land),
        my_army,
        u64::from(their_land),
        their_army,
    ] {
        header.byte(b' ');
        header.number(value);
    }
    header.byte(b'\n');
    out.extend_from_slice(header.as_slice());

    let seen = Visibility::of(game, seat);

    // Type codes indexed by [seen][kind]: structures show as 5 in fog,
    // generals and plains as 0.
    const TYPE_CODE: [[u8; 4]; 2] = [[b'0', b'5', b'5', b'0'], [b'1', b'2', b'3', b'4']];
    // Owner codes indexed by [owner == me][owner != 0], for seen cells.
    const OWNER_CODE: [[u8; 2]; 2] = [[b'0', b'2'], [b'0', b'1']];

    let mut row_buf = RowBuf::new();
    for row in 0..h {
        row_buf.clear();
        for (col, kind) in game.kind[row * w..(row + 1) * w].iter().enumerate() {
            let code = TYPE_CODE[usize::from(seen.get(row, col))][*kind as usize];
            row_buf.pair(code, b' ');
        }
        row_buf.end_line(out);
    }
    for row in 0..h {
        row_buf.clear();
        for (col, &owner) in game.owner[row * w..(row + 1) * w].iter().enumerate() {
            let code = if seen.get(row, col) {
                OWNER_CODE[usize::from(owner == me)][usize::from(owner != 0)]
            } else {
                b'0'
            };
            row_buf.pair(code, b' ');
        }
        row_buf.end_line(out);
    }
    for row in 0..h {
        row_buf.clear();
        for (col, &army) in game.army[row * w..(row + 1) * w].iter().enumerate() {
            if seen.get(row, col) {
                row_buf.number(u64::from(army));
                row_buf.byte(b' ');
            } else {
                row_buf.pair(b'0', b' ');
            }
        }
        row_buf.end_line(out);
    }
}

/// Longest row a frame line can need: 255 cells of a 20-digit number and a space.
const ROW_CAPACITY: usize = 255 * 21 + 1;

/// One line assembled on the stack and appended to the frame in one copy.
struct RowBuf {
    buf: [u8; ROW_CAPACITY],
    len: usize,
}

impl RowBuf {
    fn new() -> Self {
        Self {
            buf: [0; ROW_CAPACITY],
            len: 0,
        }
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn pair(&mut self, a: u8, b: u8) {
        self.buf[self.len] = a;
        self.buf[self.len + 1] = b;
        self.len += 2;
    }

    /// Turns the trailing space into the newline and appends the row.
    fn end_line(&mut self, out: &mut Vec<u8>) {
        if self.len > 0 {
            self.buf[self.len - 1] = b'\n';
        }
        out.extend_from_slice(&self.buf[..self.len]);
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
            self.buf[self.len..self.len + len].copy_from_slice(&digits[at..]);
            self.len += len;
        }
    }
}

/// Which cells a player sees: its owned cells dilated by one in all eight
/// directions. Boards up to 64 wide use one bitmask word per row, built from
/// the owned-cell list; wider boards fall back to a byte per cell.
enum Visibility {
    Rows(Vec<u64>),
    Cells { width: usize, seen: Vec<bool> },
}

impl Visibility {
    fn of(game: &Generals, seat: Seat) -> Visibility {
        let (h, w) = (game.height, game.width);
        if w > 64 {
            return Self::cells(game, seat as u8 + 1);
        }
        let mut owned = vec![0u64; h];
        for &cell in &game.owned[seat] {
            let cell = cell as usize;
            owned[cell / w] |= 1 << (cell % w);
        }
        let full = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let across: Vec<u64> = owned
            .iter()
            .map(|&m| (m | (m << 1) | (m >> 1)) & full)
            .collect();
        let rows = (0..h)
            .map(|r| {
                let above = if r > 0 { across[r - 1] } else { 0 };
                let below = across.get(r + 1).copied().unwrap_or(0);
                above | across[r] | below
            })
            .collect();
        Visibility::Rows(rows)
    }

    fn cells(game: &Generals, me: u8) -> Visibility {
        let (h, w) = (game.height, game.width);
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
        let mut seen = vec![false; h * w];
        for row in 0..h {
            let from = row.saturating_sub(1);
            let to = (row + 1).min(h - 1);
            for col in 0..w {
                seen[row * w + col] = (from..=to).any(|r| across[r * w + col]);
            }
        }
        Visibility::Cells { width: w, seen }
    }

    #[inline]
    fn get(&self, row: usize, col: usize) -> bool {
        match self {
            Visibility::Rows(rows) => rows[row] >> col & 1 == 1,
            Visibility::Cells { width, seen } => seen[row * width + col],
        }
    }
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
