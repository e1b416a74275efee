//! What one seat of a generals game sees, as numbers a learner or a model
//! graph reads: the one observation encoder of the generals games, shared by
//! the Python training environment (`arena_rl`) and the model host.
//!
//! Layout: [`compact`] writes every seat's view of a running game straight
//! from the engine's state into caller-owned planes: the tile, owner and
//! army grids and the header line of the text frame the referee sends that
//! seat, number for number, on a square board padded with mountains.
//! [`frame`] reads the same planes back from a frame's text, which is how a
//! test proves the two agree and how a seat that only has the text (the
//! model host) gets the identical view. Everything else is a function of a
//! [`View`] alone: [`reference`] lays it out as the reference environment's
//! float tensor, [`actions`] maps the `H×W×A` action head to replies
//! and computes the legal-action mask, and [`memory`] keeps what a seat
//! saw on earlier turns. [`adapters`] is the `generals/1` adapter set that
//! gives model graphs exactly these tensors in a match.
//!
//! Padding: boards are drawn in several sizes, while a network wants one
//! shape, so every view is `side × side` with the true board in the top-left
//! corner (rows and columns keep their indices) and mountains beyond it, as
//! the reference environment pads. A padding cell is then encoded as a
//! mountain would be: seen (code 2) when the seat's sight reaches it, a
//! structure in fog (code 5) otherwise.

pub mod actions;
#[cfg(test)]
mod adapter_tests;
pub mod adapters;
pub mod compact;
pub mod frame;
pub mod memory;
pub mod reference;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use actions::{ActionSpace, legal_mask};
pub use compact::Observe;
pub use frame::{FrameError, parse_frame};
pub use memory::Memory;
pub use reference::{reference_channels, write_reference, write_reference_rows};

/// The largest padded side a view can have: one row of sight fits a `u64`.
pub const MAX_SIDE: usize = 64;

/// Tile codes, as the frame writes them.
pub mod tile {
    /// Unseen, and not a structure.
    pub const FOG: u8 = 0;
    pub const PLAIN: u8 = 1;
    pub const MOUNTAIN: u8 = 2;
    pub const CASTLE: u8 = 3;
    pub const GENERAL: u8 = 4;
    /// An unseen mountain or castle: an obstacle, but which one is hidden.
    pub const FOG_STRUCTURE: u8 = 5;
}

/// Owner codes, as the frame writes them: 0 neutral or unseen, 1 the seat
/// itself; in a duel 2 is the opponent, in the multi-player formats 2 is a
/// teammate and `3 + s` opponent seat `s`.
pub mod owner {
    pub const NEUTRAL: u8 = 0;
    pub const ME: u8 = 1;
    /// The opponent in a duel; a teammate in 2v2 (never seen in FFA).
    pub const SECOND: u8 = 2;
    /// Opponent seat `s` of a multi-player game is `OPPONENT_BASE + s`.
    pub const OPPONENT_BASE: u8 = 3;
}

/// How a game's frame header lists the totals, which is also how its owner
/// codes read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderLayout {
    /// `<t> <my_land> <my_army> <opp_land> <opp_army>`: two seats, seen from
    /// the seat itself (the generals and classic 1v1 frames).
    Duel,
    /// `<t> <land_0> <army_0> ... <land_{N-1}> <army_{N-1}>` in seat order
    /// (classic 2v2 and free-for-all).
    Seats,
}

/// One seat's view: borrowed planes of `side × side` cells (row-major) and
/// the header line.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub side: usize,
    /// The true board's rows and columns (the rest is padding).
    pub height: usize,
    pub width: usize,
    pub tile: &'a [u8],
    pub owner: &'a [u8],
    pub army: &'a [i32],
    /// `1 + 2 × seats` numbers: the frame's first line.
    pub header: &'a [i64],
    pub layout: HeaderLayout,
    /// The seat this view belongs to.
    pub seat: usize,
    /// Bit `s` set for every other seat on this seat's team.
    pub allies: u32,
}

/// `(land, army)` pairs summed over the seats a view groups together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub land: i64,
    pub army: i64,
}

impl View<'_> {
    /// The game time of the frame.
    pub fn turn(&self) -> i64 {
        self.header.first().copied().unwrap_or(0)
    }

    /// The number of seats in the game.
    pub fn seats(&self) -> usize {
        self.header.len().saturating_sub(1) / 2
    }

    fn pair(&self, index: usize) -> Totals {
        Totals {
            land: self.header.get(1 + 2 * index).copied().unwrap_or(0),
            army: self.header.get(2 + 2 * index).copied().unwrap_or(0),
        }
    }

    /// This seat's own land and army.
    pub fn mine(&self) -> Totals {
        match self.layout {
            HeaderLayout::Duel => self.pair(0),
            HeaderLayout::Seats => self.pair(self.seat),
        }
    }

    /// The teammates' land and army, this seat excluded (zero in a duel and
    /// in free-for-all).
    pub fn allied(&self) -> Totals {
        self.sum_where(|s| self.allies >> s & 1 == 1)
    }

    /// Every opponent's land and army together.
    pub fn opponents(&self) -> Totals {
        match self.layout {
            HeaderLayout::Duel => self.pair(1),
            HeaderLayout::Seats => self.sum_where(|s| s != self.seat && self.allies >> s & 1 == 0),
        }
    }

    fn sum_where(&self, keep: impl Fn(usize) -> bool) -> Totals {
        if self.layout == HeaderLayout::Duel {
            return Totals::default();
        }
        (0..self.seats())
            .filter(|&s| keep(s))
            .fold(Totals::default(), |acc, s| {
                let p = self.pair(s);
                Totals {
                    land: acc.land + p.land,
                    army: acc.army + p.army,
                }
            })
    }
}

/// Why a view could not be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObserveError {
    #[error("the board is {height}x{width}, larger than the view's side {side}")]
    BoardTooLarge {
        height: usize,
        width: usize,
        side: usize,
    },
    #[error("a view's side must be 1..={MAX_SIDE}, not {side}")]
    Side { side: usize },
    #[error("the {what} buffer holds {got} values, expected {expected}")]
    Buffer {
        what: &'static str,
        got: usize,
        expected: usize,
    },
}

/// Checks that a buffer has exactly the length a layout needs.
pub(crate) fn check_len(
    what: &'static str,
    got: usize,
    expected: usize,
) -> Result<(), ObserveError> {
    if got == expected {
        Ok(())
    } else {
        Err(ObserveError::Buffer {
            what,
            got,
            expected,
        })
    }
}
