//! The ruleset's numbers (the seed's parameter table) and their ranges.

use serde::{Deserialize, Serialize};

use super::state::StateError;

/// Longest grid side accepted: cells index as `u16` and the collision
/// buffers stay small.
pub const MAX_SIDE: usize = 64;
/// Most seats a position may have (a cell's owners fit one `u8` mask).
pub const MAX_SEATS: usize = 8;
/// Most turns a game may be configured for.
pub const MAX_TURNS_LIMIT: u32 = 100_000;
/// Largest cargo cap, spawn cost and divisor: keeps every sum far inside `u32`.
pub const MAX_AMOUNT: u32 = 1_000_000;
/// Most units a player may field.
pub const MAX_UNITS_CAP: u32 = 1_000;

/// Every number a match is played with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Players in the match.
    pub seats: usize,
    /// The grid is `side × side`.
    pub side: usize,
    /// Most ore a unit carries.
    pub cargo_cap: u32,
    /// A harvest takes `floor(cell_ore / harvest_divisor)`.
    pub harvest_divisor: u32,
    /// A move costs `floor(source_cell_ore / move_cost_divisor)` from cargo.
    pub move_cost_divisor: u32,
    /// Bank a spawn costs; below it, a player without units is eliminated.
    pub spawn_cost: u32,
    /// Most units one player may have at once.
    pub units_cap: u32,
    /// The match ends after this many turns.
    pub max_turns: u32,
    /// The zone shrinks on turns that are multiples of this.
    pub shrink_interval: u32,
    /// The zone's side never shrinks below this.
    pub min_zone: usize,
}

impl Params {
    /// The seed's table for `seats` players: 24 × 24 for 2, 32 × 32 otherwise.
    pub fn standard(seats: usize) -> Params {
        Params {
            seats,
            side: Params::standard_side(seats),
            cargo_cap: 1000,
            harvest_divisor: 4,
            move_cost_divisor: 10,
            spawn_cost: 500,
            units_cap: 50,
            max_turns: 400,
            shrink_interval: 25,
            min_zone: 8,
        }
    }

    /// The seed's grid side for `seats` players.
    pub fn standard_side(seats: usize) -> usize {
        if seats <= 2 { 24 } else { 32 }
    }

    /// Checks every range the rules' arithmetic and indexing rely on.
    pub fn check(&self) -> Result<(), StateError> {
        let bad = StateError::Params;
        if !(2..=MAX_SEATS).contains(&self.seats) {
            return Err(bad("seats must be 2..=8"));
        }
        if !(2..=MAX_SIDE).contains(&self.side) {
            return Err(bad("side must be 2..=64"));
        }
        if self.min_zone == 0 || self.min_zone > self.side {
            return Err(bad("min_zone must be 1..=side"));
        }
        // The zone loses one ring (2 cells of side) at a time, so only a
        // floor of the side's parity is ever reached exactly.
        if !(self.side - self.min_zone).is_multiple_of(2) {
            return Err(bad("side - min_zone must be even"));
        }
        for (value, what) in [
            (self.cargo_cap, "cargo_cap must be 1..=1000000"),
            (self.harvest_divisor, "harvest_divisor must be 1..=1000000"),
            (
                self.move_cost_divisor,
                "move_cost_divisor must be 1..=1000000",
            ),
        ] {
            if value == 0 || value > MAX_AMOUNT {
                return Err(bad(what));
            }
        }
        if self.spawn_cost > MAX_AMOUNT {
            return Err(bad("spawn_cost must be 0..=1000000"));
        }
        if self.units_cap == 0 || self.units_cap > MAX_UNITS_CAP {
            return Err(bad("units_cap must be 1..=1000"));
        }
        if self.max_turns == 0 || self.max_turns > MAX_TURNS_LIMIT {
            return Err(bad("max_turns must be 1..=100000"));
        }
        if self.shrink_interval == 0 {
            return Err(bad("shrink_interval must be at least 1"));
        }
        Ok(())
    }

    /// Cells on the grid.
    pub fn cells(&self) -> usize {
        self.side * self.side
    }

    /// The smallest zone the border ever reaches: `min_zone` cells wide,
    /// centred.
    pub fn final_zone(&self) -> Zone {
        let inset = (self.side - self.min_zone) / 2;
        Zone::inset(self.side, inset)
    }
}

/// The safe zone: the inclusive square `x0..=x1 × y0..=y1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub x0: usize,
    pub y0: usize,
    pub x1: usize,
    pub y1: usize,
}

impl Zone {
    /// The whole `side × side` grid less `inset` rings.
    pub fn inset(side: usize, inset: usize) -> Zone {
        Zone {
            x0: inset,
            y0: inset,
            x1: side - 1 - inset,
            y1: side - 1 - inset,
        }
    }

    /// Cells across.
    pub fn side(&self) -> usize {
        self.x1 + 1 - self.x0
    }

    /// Whether `(x, y)` is inside.
    pub fn contains(&self, x: usize, y: usize) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }

    /// One ring smaller. Only called while the side exceeds the floor, so
    /// the side is at least 3 and the result is not empty.
    pub fn shrunk(&self) -> Zone {
        Zone {
            x0: self.x0 + 1,
            y0: self.y0 + 1,
            x1: self.x1 - 1,
            y1: self.y1 - 1,
        }
    }
}
