//! Every seat's views of a game in owned buffers, for the engine's tests.

use super::View;
use super::compact::{Compact, CompactMut, Observe};

/// Every seat's views of a game, in buffers reused from turn to turn.
pub(crate) struct Views {
    pub(crate) side: usize,
    pub(crate) tile: Vec<u8>,
    pub(crate) owner: Vec<u8>,
    pub(crate) army: Vec<i32>,
    pub(crate) header: Vec<i64>,
}

impl Views {
    /// Buffers for `seats` seats on a `side × side` board.
    pub(crate) fn new(seats: usize, side: usize) -> Views {
        let cells = seats * side * side;
        Views {
            side,
            tile: vec![9; cells],
            owner: vec![9; cells],
            army: vec![-1; cells],
            header: vec![-1; seats * (1 + 2 * seats)],
        }
    }

    /// `game`'s views, written whole.
    pub(crate) fn of(game: &impl Observe, side: usize) -> Views {
        let mut views = Views::new(game.seat_count(), side);
        views.update(game);
        views
    }

    /// Rewrites every view from `game`.
    pub(crate) fn update(&mut self, game: &impl Observe) {
        let out = CompactMut {
            tile: &mut self.tile,
            owner: &mut self.owner,
            army: &mut self.army,
            header: &mut self.header,
            changed_rows: None,
        };
        game.observe(self.side, out)
            .unwrap_or_else(|e| panic!("a test game's views: {e}"));
    }

    /// Seat `seat`'s view.
    pub(crate) fn view<'a>(&'a self, game: &impl Observe, seat: usize) -> View<'a> {
        let views = Compact {
            tile: &self.tile,
            owner: &self.owner,
            army: &self.army,
            header: &self.header,
        };
        views.view(game, self.side, seat)
    }
}
