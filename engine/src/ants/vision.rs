//! What a colony sees now and what it knows: every square within the view
//! radius of one of its ants is in view; every square ever in view stays
//! known (its water or land), while ants, food and hills are reported only
//! while in view (a colony's own standing hills always are).

use super::state::Ants;

impl Ants {
    /// Per square: whether `seat` has it in view now.
    pub fn visible(&self, seat: usize) -> Vec<bool> {
        let mut view = vec![false; self.torus.len()];
        let disc = self.torus.disc(self.params.view_radius2);
        for square in self.mine(seat) {
            for &d in &disc {
                view[self.torus.add(square, d)] = true;
            }
        }
        view
    }

    /// Per square: whether `seat` has ever seen it.
    pub fn seen(&self, seat: usize) -> &[bool] {
        self.seen.get(seat).map_or(&[][..], |m| &m.0[..])
    }

    /// Adds what every colony sees now to what it knows; the last thing a
    /// turn does before the turn count advances.
    pub(crate) fn fold_vision(&mut self) {
        let disc = self.torus.disc(self.params.view_radius2);
        for ant in &self.ants {
            let Some(seen) = self.seen.get_mut(ant.owner) else {
                continue;
            };
            for &d in &disc {
                seen.0[self.torus.add(ant.square, d)] = true;
            }
        }
    }
}
