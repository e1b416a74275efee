//! The numbers a match is played with, and their ranges.

use serde::{Deserialize, Serialize};

use super::state::StateError;

/// Most rows or columns a board may have.
pub const MAX_SIDE: usize = 200;
/// Most colonies a board may hold (`0`–`7` in a map file).
pub const MAX_SEATS: usize = 8;
/// Most turns a match may be configured for.
pub const MAX_TURNS_LIMIT: u32 = 100_000;
/// Largest `food_rate` (hundredths of a food per colony per turn).
pub const MAX_FOOD_RATE: u32 = 10_000;

/// The 2011 radii: attack, gathering and view, all squared.
pub const ATTACK_RADIUS2: u32 = 5;
pub const GATHER_RADIUS2: u32 = 1;
pub const VIEW_RADIUS2: u32 = 77;

/// Every number the rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Colonies in the match; the map's `players`.
    pub players: usize,
    /// The match ends after this many turns.
    pub max_turns: u32,
    /// Expected random food per colony per turn, in hundredths (0: none).
    pub food_rate: u32,
    /// Enemies within this squared distance fight.
    pub attack_radius2: u32,
    /// Ants within this squared distance of food gather it.
    pub gather_radius2: u32,
    /// Ants see every square within this squared distance.
    pub view_radius2: u32,
}

impl Params {
    /// The 2011 numbers for `seats` colonies.
    pub fn standard(seats: usize) -> Params {
        Params {
            players: seats,
            max_turns: 1000,
            food_rate: 25,
            attack_radius2: ATTACK_RADIUS2,
            gather_radius2: GATHER_RADIUS2,
            view_radius2: VIEW_RADIUS2,
        }
    }

    /// Checks every range the rules rely on.
    pub fn check(&self) -> Result<(), StateError> {
        let bad = StateError::Params;
        if !(2..=MAX_SEATS).contains(&self.players) {
            return Err(bad("players must be 2..=8"));
        }
        if self.max_turns == 0 || self.max_turns > MAX_TURNS_LIMIT {
            return Err(bad("max_turns must be 1..=100000"));
        }
        if self.food_rate > MAX_FOOD_RATE {
            return Err(bad("food_rate must be 0..=10000"));
        }
        // Radii beyond the board's diagonal change nothing; the cap keeps
        // the discs small.
        let cap = (MAX_SIDE * MAX_SIDE) as u32;
        if self.attack_radius2 > cap || self.gather_radius2 > cap || self.view_radius2 > cap {
            return Err(bad("radii must be at most 40000"));
        }
        Ok(())
    }
}
