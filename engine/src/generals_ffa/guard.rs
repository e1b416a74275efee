//! The sim guard: invariants every state reached by the rules satisfies.
//!
//! A violation is an engine bug (or a forged state), never a result: it is
//! reported through [`crate::game::Game::invariant_violation`] and the runner
//! stops the match. Checked after every step (step 7 of the turn), and on
//! demand for a state that was loaded rather than stepped:
//!
//! * **mountains** are never owned and hold no army;
//! * **crowns**: every crown cell is the crown of a living seat that owns it,
//!   and every living seat's crown cell is such a crown — so there is exactly
//!   one crown per living seat; a dead seat owns nothing;
//! * **structures**: an owned city or crown holds at least 1 army after
//!   growth (an owned plain may hold 0: a crown capture halves 1 to 0);
//! * **symmetry**: the board was drawn four-fold symmetric and only a
//!   crown → city change ever alters a kind, so mountains are exactly
//!   symmetric, and so are "city or crown" cells;
//! * **liveness**: at least one seat is alive;
//! * **army bounds**: a step never adds more army than its growth did
//!   (moves only move or destroy armies; captures halve), and no add
//!   overflowed `u32`.

use super::board::{GeneralsFfa, MAX_TOTAL_ARMY, SEATS};
use super::view::CellKind;

impl GeneralsFfa {
    /// The first broken invariant of the current state, if any.
    pub fn check_invariants(&self) -> Option<String> {
        self.check_all(None)
    }

    /// The per-step check: the state's invariants, and that the army on the
    /// board grew by at most `grown` from `before`.
    pub(crate) fn check_step(&self, before: u64, grown: u64) -> Option<String> {
        self.check_all(Some((before, grown)))
    }

    /// Every state invariant; with `step = (before, grown)` also the army bound.
    fn check_all(&self, step: Option<(u64, u64)>) -> Option<String> {
        let (total, crowns) = match self.check_cells() {
            Ok(found) => found,
            Err(violation) => return Some(violation),
        };
        if total > MAX_TOTAL_ARMY {
            return Some(format!(
                "the armies add up to {total}, over {MAX_TOTAL_ARMY}"
            ));
        }
        if let Some((before, grown)) = step
            && total > before + grown
        {
            return Some(format!(
                "turn {}: army went from {before} to {total} with only {grown} grown",
                self.turn + 1
            ));
        }
        self.check_crowns(crowns).or_else(|| self.check_symmetry())
    }

    /// The per-cell checks in one pass; the army total and the number of
    /// crown cells on success.
    fn check_cells(&self) -> Result<(u64, usize), String> {
        let alive: [bool; SEATS] = std::array::from_fn(|s| self.seats[s].alive);
        let (kinds, owners, armies) = (&self.kind[..], &self.owner[..], &self.army[..]);
        let (mut total, mut crowns) = (0u64, 0usize);
        for cell in 0..kinds.len().min(owners.len()).min(armies.len()) {
            let (kind, owner, army) = (kinds[cell], owners[cell], armies[cell]);
            total += u64::from(army);
            let mountain = matches!(kind, CellKind::Mountain);
            crowns += usize::from(matches!(kind, CellKind::Crown));
            let Some(o) = owner else {
                if mountain && army != 0 {
                    return Err(format!("mountain {cell} holds {army} armies"));
                }
                continue;
            };
            if mountain {
                return Err(format!("mountain {cell} is owned by seat {o}"));
            }
            if army == 0 && !matches!(kind, CellKind::Plain) {
                return Err(format!("owned structure {cell} holds no army"));
            }
            if !alive[usize::from(o) % SEATS] {
                return Err(format!("cell {cell} is owned by dead seat {o}"));
            }
        }
        Ok((total, crowns))
    }

    fn check_crowns(&self, crowns: usize) -> Option<String> {
        let alive = self.seats.iter().filter(|s| s.alive).count();
        if alive == 0 {
            return Some("no seat is alive".to_owned());
        }
        for (seat, state) in self.seats.iter().enumerate() {
            let cell = state.crown;
            let is_crown = matches!(self.kind.get(cell), Some(CellKind::Crown));
            let owned = self.owner.get(cell) == Some(&Some(seat as u8));
            if state.alive && !(is_crown && owned) {
                return Some(format!("living seat {seat} does not hold its crown {cell}"));
            }
            if !state.alive && is_crown {
                return Some(format!("dead seat {seat}'s crown {cell} is still a crown"));
            }
        }
        (crowns != alive).then(|| format!("{crowns} crowns on the board for {alive} living seats"))
    }

    fn check_symmetry(&self) -> Option<String> {
        // Terrain class: what a step can never change (mountain, structure, plain).
        let class = |k: CellKind| match k {
            CellKind::Mountain => 1u8,
            CellKind::City | CellKind::Crown => 2,
            CellKind::Plain => 0,
        };
        let (width, height) = (self.params.width, self.params.height);
        let kinds = &self.kind[..];
        // Each top-left quadrant cell against its three other images.
        for row in 0..height / 2 {
            for col in 0..width / 2 {
                let cell = row * width + col;
                let own = class(kinds[cell]);
                let (mrow, mcol) = (height - 1 - row, width - 1 - col);
                for image in [row * width + mcol, mrow * width + col, mrow * width + mcol] {
                    if class(kinds[image]) != own {
                        return Some(format!("cells {cell} and {image} break the symmetry"));
                    }
                }
            }
        }
        None
    }
}
