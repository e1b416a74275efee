//! What a seat remembers of the board across turns, built from its views
//! alone: the fog hides what it saw a turn ago, and a policy that is not
//! recurrent needs the platform to remember for it.
//!
//! One [`Memory`] per seat and game, updated with every view the seat
//! gets, in order. The training environment and the model host keep it the
//! same way, so a policy reads the same memory in a match as in training.
//!
//! Planes ([`MEMORY_CHANNELS`], each `side × side`, values as raw numbers):
//! ever seen (0 or 1); the game time it was last seen (−1 never); the tile,
//! owner and army codes it showed then (0 never seen); 1 where an enemy
//! general has been seen. History ([`Memory::write_history`]): the
//! opponents' land and army totals of the last turns, oldest first.

use super::{HeaderLayout, ObserveError, View, check_len, owner, tile};

/// The memory planes, in order.
pub const MEMORY_CHANNELS: [&str; 6] = [
    "seen",
    "last_seen_turn",
    "last_tile",
    "last_owner",
    "last_army",
    "enemy_general",
];

/// The longest history kept (the paper's window).
pub const MAX_HISTORY: usize = 512;

/// One seat's memory of one game.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    side: usize,
    last_seen: Vec<i32>,
    tile: Vec<u8>,
    owner: Vec<u8>,
    army: Vec<i32>,
    general: Vec<u8>,
    /// The opponents' `(land, army)` of every view so far, a ring of
    /// [`MAX_HISTORY`] entries; `views` counts them all.
    history: Vec<[i64; 2]>,
    views: usize,
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Forgets everything: the next view starts a new game.
    pub fn forget(&mut self) {
        self.side = 0;
        self.views = 0;
    }

    /// How many views this memory has taken since the game began.
    pub fn views(&self) -> usize {
        self.views
    }

    /// Takes the seat's view of the next turn. A view of another side than
    /// the previous one starts a new game.
    pub fn update(&mut self, view: &View<'_>) -> Result<(), ObserveError> {
        let side = view.side;
        let cells = side * side;
        check_len("tile", view.tile.len(), cells)?;
        check_len("owner", view.owner.len(), cells)?;
        check_len("army", view.army.len(), cells)?;
        if self.side != side || self.views == 0 {
            self.side = side;
            self.views = 0;
            self.last_seen.clear();
            self.last_seen.resize(cells, -1);
            for plane in [&mut self.tile, &mut self.owner, &mut self.general] {
                plane.clear();
                plane.resize(cells, 0);
            }
            self.army.clear();
            self.army.resize(cells, 0);
            self.history.clear();
            self.history.resize(MAX_HISTORY, [0, 0]);
        }
        let turn = i32::try_from(view.turn()).unwrap_or(i32::MAX);
        let enemy = |code: u8| match view.layout {
            HeaderLayout::Duel => code == owner::SECOND,
            HeaderLayout::Seats => code >= owner::OPPONENT_BASE,
        };
        for cell in 0..cells {
            let t = view.tile[cell];
            if matches!(t, tile::FOG | tile::FOG_STRUCTURE) {
                continue;
            }
            let o = view.owner[cell];
            self.last_seen[cell] = turn;
            self.tile[cell] = t;
            self.owner[cell] = o;
            self.army[cell] = view.army[cell];
            if t == tile::GENERAL && enemy(o) {
                self.general[cell] = 1;
            }
        }
        let opponents = view.opponents();
        self.history[self.views % MAX_HISTORY] = [opponents.land, opponents.army];
        self.views += 1;
        Ok(())
    }

    /// Writes the memory planes, `MEMORY_CHANNELS.len() × side × side`
    /// (channel-major, then row-major). Before any view, all planes read as
    /// never seen.
    pub fn write_planes(&self, side: usize, out: &mut [f32]) -> Result<(), ObserveError> {
        let cells = side * side;
        check_len("memory", out.len(), MEMORY_CHANNELS.len() * cells)?;
        let (seen, rest) = out.split_at_mut(cells);
        let (last, rest) = rest.split_at_mut(cells);
        let (tiles, rest) = rest.split_at_mut(cells);
        let (owners, rest) = rest.split_at_mut(cells);
        let (armies, generals) = rest.split_at_mut(cells);
        if self.views == 0 || self.side != side {
            seen.fill(0.0);
            last.fill(-1.0);
            for plane in [tiles, owners, armies, generals] {
                plane.fill(0.0);
            }
            return Ok(());
        }
        for cell in 0..cells {
            let at = self.last_seen[cell];
            seen[cell] = f32::from(u8::from(at >= 0));
            last[cell] = at as f32;
            tiles[cell] = f32::from(self.tile[cell]);
            owners[cell] = f32::from(self.owner[cell]);
            armies[cell] = self.army[cell] as f32;
            generals[cell] = f32::from(self.general[cell]);
        }
        Ok(())
    }

    /// Writes the opponents' totals of the last `turns` views as `turns × 2`
    /// numbers (land, army), oldest first, the latest view last; rows
    /// before the game's first view are zero.
    pub fn write_history(&self, turns: usize, out: &mut [f32]) -> Result<(), ObserveError> {
        if turns > MAX_HISTORY {
            return Err(ObserveError::Buffer {
                what: "history",
                got: turns,
                expected: MAX_HISTORY,
            });
        }
        check_len("history", out.len(), 2 * turns)?;
        for (i, pair) in out.chunks_exact_mut(2).enumerate() {
            // Row `i` holds the view `turns - 1 - i` views before the latest.
            let back = turns - 1 - i;
            let value = if back < self.views.min(MAX_HISTORY) && self.side != 0 {
                self.history[(self.views - 1 - back) % MAX_HISTORY]
            } else {
                [0, 0]
            };
            pair[0] = value[0] as f32;
            pair[1] = value[1] as f32;
        }
        Ok(())
    }
}
