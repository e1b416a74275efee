//! Vision, memory and the views built from them.
//!
//! A seat sees a cell when it owns it or the cell touches one of its cells in
//! any of the eight directions. Sight is a function of ownership alone, so it
//! is recomputed from the board whenever needed rather than stored: one pass
//! over the owned cells sets a per-cell bit mask of the seats that see it.
//! Step 6 of the turn writes what each seat sees into its memory; a view is
//! that memory with the visible cells' armies added.

use super::board::{GeneralsFfa, Memory, SEATS, Scratch};
use super::view::{CellView, View};

/// Fills `vis` (resized to the board) with, per cell, bit `s` set when seat
/// `s` sees it.
pub(crate) fn visibility(width: usize, height: usize, owner: &[Option<u8>], vis: &mut Vec<u8>) {
    vis.clear();
    vis.resize(width * height, 0);
    for (cell, owner) in owner.iter().enumerate() {
        let Some(seat) = *owner else { continue };
        let bit = 1u8 << (seat & 7);
        let (row, col) = (cell / width, cell % width);
        let rows = row.saturating_sub(1)..=(row + 1).min(height - 1);
        for r in rows {
            let cols = col.saturating_sub(1)..=(col + 1).min(width - 1);
            for c in cols {
                if let Some(v) = vis.get_mut(r * width + c) {
                    *v |= bit;
                }
            }
        }
    }
}

impl GeneralsFfa {
    /// Step 6: every seat remembers what it sees now, stamped `now`. The
    /// sight masks stay cached in the scratch for the next turn's views: the
    /// board does not change between the end of one step and the next.
    pub(crate) fn remember(&mut self, now: u32) {
        let mut vis = std::mem::take(&mut self.scratch.vis);
        visibility(self.params.width, self.params.height, &self.owner, &mut vis);
        for (cell, &seen_by) in vis.iter().enumerate() {
            if seen_by == 0 {
                continue;
            }
            let memory = Memory {
                kind: self.kind.get(cell).copied(),
                owner: self.owner.get(cell).copied().flatten(),
                seen: Some(now),
            };
            for (seat, state) in self.seats.iter_mut().enumerate() {
                if seen_by & (1 << seat) != 0
                    && let Some(slot) = state.memory.get_mut(cell)
                {
                    *slot = memory;
                }
            }
        }
        self.scratch.vis = vis;
        self.scratch.vis_current = true;
    }

    /// `seat`'s view now: its memory, with army and sight where it sees.
    pub fn view(&self, seat: usize) -> View {
        let mut vis = Vec::new();
        visibility(self.params.width, self.params.height, &self.owner, &mut vis);
        let mut view = empty_view();
        self.fill_view(seat, &vis, &mut view);
        view
    }

    /// Rebuilds every seat's view into the scratch buffers, reusing their
    /// allocations (step 2).
    pub(crate) fn build_views(&self, scratch: &mut Scratch) {
        if !scratch.vis_current || scratch.vis.len() != self.params.cells() {
            visibility(
                self.params.width,
                self.params.height,
                &self.owner,
                &mut scratch.vis,
            );
            scratch.vis_current = true;
        }
        scratch.views.resize_with(SEATS, empty_view);
        for (seat, view) in scratch.views.iter_mut().enumerate() {
            self.fill_view(seat, &scratch.vis, view);
        }
    }

    /// Writes `seat`'s view into `view` given the sight masks `vis`.
    fn fill_view(&self, seat: usize, vis: &[u8], view: &mut View) {
        let cells = self.params.cells();
        view.seat = seat;
        view.turn = self.turn;
        view.max_turns = self.params.max_turns;
        view.width = self.params.width;
        view.height = self.params.height;
        view.crown = self.seats.get(seat).map_or(0, |s| s.crown);
        for (alive, s) in view.alive.iter_mut().zip(&self.seats) {
            *alive = s.alive;
        }
        // Plain slice loops: this runs for every seat every turn, and it is
        // the engine's hottest loop in unoptimised test builds too.
        view.cells.clear();
        view.cells.resize(cells, UNSEEN);
        let Some(state) = self.seats.get(seat) else {
            return;
        };
        let (kind, owner, army) = (&self.kind[..], &self.owner[..], &self.army[..]);
        let (memory, vis) = (&state.memory[..], vis);
        let bit = 1u8 << seat;
        let planes = kind
            .len()
            .min(owner.len())
            .min(army.len())
            .min(memory.len());
        let out = &mut view.cells[..];
        for cell in 0..out.len().min(planes).min(vis.len()) {
            out[cell] = if vis[cell] & bit != 0 {
                CellView {
                    kind: Some(kind[cell]),
                    owner: owner_seat(owner[cell]),
                    army: Some(army[cell]),
                    seen: Some(self.turn),
                    visible: true,
                }
            } else {
                let m = memory[cell];
                CellView {
                    kind: m.kind,
                    owner: owner_seat(m.owner),
                    army: None,
                    seen: m.seen,
                    visible: false,
                }
            };
        }
    }
}

/// An owner code as the view's seat number.
fn owner_seat(owner: Option<u8>) -> Option<usize> {
    owner.map(usize::from)
}

/// A cell never seen.
const UNSEEN: CellView = CellView {
    kind: None,
    owner: None,
    army: None,
    seen: None,
    visible: false,
};

/// A view with no cells, to be filled.
fn empty_view() -> View {
    View {
        seat: 0,
        turn: 0,
        max_turns: 0,
        width: 0,
        height: 0,
        cells: Vec::new(),
        crown: 0,
        alive: [false; SEATS],
    }
}
