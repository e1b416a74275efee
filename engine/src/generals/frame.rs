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

use super::board::{Generals, Kind};
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
    out.reserve(h * w * 7 + 64);

    for (i, value) in [
        u64::from(game.time),
        u64::from(game.land[seat]),
        game.army_total[seat],
        u64::from(game.land[them]),
        game.army_total[them],
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push(b' ');
        }
        write_u64(out, value);
    }
    out.push(b'\n');

    let seen = visibility(game, me);

    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let code = match (seen[cell], game.kind[cell]) {
                (true, Kind::General) => b'4',
                (true, Kind::Castle) => b'3',
                (true, Kind::Mountain) => b'2',
                (true, Kind::Plain) => b'1',
                (false, Kind::Mountain | Kind::Castle) => b'5',
                (false, Kind::Plain | Kind::General) => b'0',
            };
            out.push(code);
            out.push(b' ');
        }
        end_line(out);
    }
    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let owner = game.owner[cell];
            let code = if !seen[cell] || owner == 0 {
                b'0'
            } else if owner == me {
                b'1'
            } else {
                b'2'
            };
            out.push(code);
            out.push(b' ');
        }
        end_line(out);
    }
    for row in 0..h {
        for col in 0..w {
            let cell = row * w + col;
            let army = if seen[cell] { game.army[cell] } else { 0 };
            write_u64(out, u64::from(army));
            out.push(b' ');
        }
        end_line(out);
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

/// Replaces the trailing space of a row with its newline.
fn end_line(out: &mut Vec<u8>) {
    if let Some(last) = out.last_mut() {
        *last = b'\n';
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
