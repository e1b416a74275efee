//! Random food, placed symmetrically: one placement puts food on a square
//! and on each of its images under the seats' shifts at once, and only
//! when every one of them is land with no food, ant or hill on it, so no
//! colony is favoured by the draw.

use super::map::image;
use super::state::Ants;

/// Squares tried per placement before it is given up for the turn.
const TRIES: usize = 8;

impl Ants {
    /// Step 6. `food_rate` is in hundredths of a placement per turn (one
    /// placement is one food per colony): `food_rate / 100` placements,
    /// plus one more with probability `(food_rate % 100) / 100`.
    pub(crate) fn place_food(&mut self) {
        let rate = u64::from(self.params.food_rate);
        if rate == 0 {
            return;
        }
        let mut placements = rate / 100;
        if self.rng.below(100) < rate % 100 {
            placements += 1;
        }
        for _ in 0..placements {
            for _ in 0..TRIES {
                let square = self.rng.below(self.torus.len() as u64) as usize;
                if self.place_symmetric(square) {
                    break;
                }
            }
        }
    }

    /// Puts food on `square` and all its images if every one is free land.
    pub(crate) fn place_symmetric(&mut self, square: usize) -> bool {
        let mut squares: Vec<usize> = (0..self.params.players)
            .map(|s| image(self.torus, self.shift, square, s))
            .collect();
        squares.sort_unstable();
        squares.dedup();
        let free = |sq: &usize| {
            !self.is_water(*sq)
                && self.food.binary_search(sq).is_err()
                && self.ants.binary_search_by_key(sq, |a| a.square).is_err()
                && !self.hills.iter().any(|h| h.square == *sq)
        };
        if !squares.iter().all(free) {
            return false;
        }
        self.food.extend(squares);
        self.food.sort_unstable();
        true
    }
}
