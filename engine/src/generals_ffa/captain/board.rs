//! The board as the captain sees it: geometry (the shared [`crate::grid`]),
//! what each cell is to us, and one breadth-first search with caller-owned
//! buffers.
//!
//! The view comes from the engine, but the captain is also fuzzed on views
//! nobody generated, so nothing here trusts `cells.len()`, `width`,
//! `height` or `crown` to agree: the board is the cells both describe.

use crate::generals_ffa::view::{CellKind, CellView, View};
use crate::grid::{self, Grid};

/// The distance of a cell the search did not reach.
pub(super) const FAR: u32 = grid::UNREACHABLE;

/// A view with its geometry checked.
pub(super) struct Board<'v> {
    /// The view everything is read from.
    pub view: &'v View,
    /// Cells per row (at least 1).
    pub width: usize,
    /// Cells on the board: `width × height`, cut to the cells the view has.
    pub n: usize,
}

impl<'v> Board<'v> {
    /// `None` when the view describes no cell at all.
    pub fn new(view: &'v View) -> Option<Self> {
        let n = view.width.checked_mul(view.height)?.min(view.cells.len());
        (n > 0).then_some(Board {
            view,
            width: view.width,
            n,
        })
    }

    /// Cell `i` (callers pass `i < n`).
    pub fn cell(&self, i: usize) -> &CellView {
        &self.view.cells[i]
    }

    /// Our crown's index, if it is on the board and ours.
    pub fn crown(&self) -> Option<usize> {
        let crown = self.view.crown;
        (crown < self.n && is_own(self.cell(crown), self.view.seat)).then_some(crown)
    }

    /// The board's geometry: rows of `width`, cut to the `n` cells.
    #[inline]
    fn grid(&self) -> Grid {
        Grid::ragged(self.width, self.n)
    }

    /// The up to four orthogonal neighbours of `i` on the board.
    #[inline]
    pub fn neighbours(&self, i: usize) -> impl Iterator<Item = usize> {
        self.grid().neighbours(i).into_iter().flatten()
    }

    /// How many of the up to eight cells around `i` were never seen: what a
    /// capture of `i` would uncover.
    pub fn unseen_around(&self, i: usize) -> u32 {
        let w = self.width;
        let (row, col) = (i / w, i % w);
        let mut count = 0;
        for r in row.saturating_sub(1)..=row + 1 {
            for c in col.saturating_sub(1)..(col + 2).min(w) {
                let j = r * w + c;
                if j != i && j < self.n && self.cell(j).seen.is_none() {
                    count += 1;
                }
            }
        }
        count
    }

    /// Orthogonal steps between `i` and `j` ignoring walls: the captain's
    /// cheap "nearness" for tie-breaks.
    pub fn manhattan(&self, i: usize, j: usize) -> usize {
        self.grid().manhattan(i, j)
    }

    /// Breadth-first distances from `sources` into `dist`, entering only
    /// cells for which `through` holds, up to `max` steps (cells beyond stay
    /// [`FAR`]). Sources are at 0 whatever `through` says of them.
    pub fn bfs(
        &self,
        scratch: &mut Scratch,
        sources: impl IntoIterator<Item = usize>,
        through: impl Fn(usize) -> bool,
        max: u32,
    ) {
        let Scratch { dist, queue } = scratch;
        grid::bfs(self.grid(), sources, through, max, dist, queue);
    }
}

/// The buffers one search needs, reused by every search of one compile.
#[derive(Default)]
pub(super) struct Scratch {
    /// `dist[i]`: steps from the nearest source, or [`FAR`].
    pub dist: Vec<u32>,
    /// Cells in the order they were reached.
    pub queue: Vec<usize>,
}

/// Ours: owned by `seat`, in sight, of a known kind that is not a
/// mountain, with a known army: the only cells a move may leave from, and
/// the cells a step over our land may enter. (The engine's views always
/// say so of owned cells; the fuzzed ones need not.)
pub(super) fn is_own(cell: &CellView, seat: usize) -> bool {
    cell.owner == Some(seat) && cell.visible && cell.army.is_some() && is_enterable(cell)
}

/// Held by another seat when last seen.
pub(super) fn is_enemy(cell: &CellView, seat: usize) -> bool {
    cell.owner.is_some_and(|o| o != seat)
}

/// A cell a path may cross: not a known mountain, and not a neutral city,
/// whose 40-army toll a path should not pay by accident. Never-seen cells
/// count as open: the plan adapts as the fog lifts.
pub(super) fn is_walkable(cell: &CellView) -> bool {
    match cell.kind {
        Some(CellKind::Mountain) => false,
        Some(CellKind::City) => cell.owner.is_some(),
        _ => true,
    }
}

/// A cell a move may target: its kind is known and it is not a mountain.
pub(super) fn is_enterable(cell: &CellView) -> bool {
    matches!(cell.kind, Some(k) if k != CellKind::Mountain)
}

/// What a move from `cell` sends: everything above the one army it must
/// keep and the plan's reserve; 0 when it is not ours or cannot move.
pub(super) fn amount(cell: &CellView, seat: usize, reserve: u32) -> u32 {
    match cell.army {
        Some(army) if is_own(cell, seat) => army.saturating_sub(reserve.saturating_add(1)),
        _ => 0,
    }
}
