//! The action head: `side × side × A` scores, one row of `A` per cell, and
//! which of them are legal for a view.
//!
//! Per cell, index 0 is a pass; `1 + 2 × dir + half` moves from that cell
//! (`dir` 0 up, 1 down, 2 left, 3 right; `half` 1 sends half the army, 0
//! all but one); in the competition ruleset index 9 builds a castle on the
//! cell. A flat index is `(row × side + col) × A + a`. Every cell's pass is
//! the same action.

use super::{ObserveError, View, check_len, owner, tile};
use crate::generals::{Action, Direction};
use crate::grid::{self, Grid};

/// Moves per cell: pass plus four directions, each with all or half.
pub const MOVES_PER_CELL: usize = 9;
/// The build entry's index within a cell (competition only).
pub const BUILD: usize = 9;
/// The crowding surcharge of a structure at Manhattan distance `d` is
/// `max(0, 14 − 2d)`.
const SURCHARGE_NEAR: u32 = 14;

/// The head's shape on a padded board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionSpace {
    pub side: usize,
    /// The ruleset builds castles (a tenth entry per cell).
    pub builds: bool,
}

impl ActionSpace {
    /// Entries per cell: 9, or 10 with builds.
    pub fn per_cell(&self) -> usize {
        MOVES_PER_CELL + usize::from(self.builds)
    }

    /// Entries in the whole head.
    pub fn len(&self) -> usize {
        self.side * self.side * self.per_cell()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The reply a flat index stands for; `None` past the head's end.
    pub fn decode(&self, index: usize) -> Option<Action> {
        if index >= self.len() {
            return None;
        }
        let per_cell = self.per_cell();
        let (cell, a) = (index / per_cell, index % per_cell);
        let (row, col) = ((cell / self.side) as i64, (cell % self.side) as i64);
        Some(match a {
            0 => Action::PASS,
            BUILD => Action::build(row, col),
            _ => {
                let dir = Direction::ALL[(a - 1) / 2];
                Action::movement(row, col, dir, (a - 1) % 2 == 1)
            }
        })
    }

    /// The flat index of a move or build on the padded board (a pass is
    /// index 0); `None` for an action the head cannot express.
    pub fn encode(&self, action: &Action) -> Option<usize> {
        use crate::generals::ActionKind;
        let on_board = |v: i64| usize::try_from(v).ok().filter(|&v| v < self.side);
        let cell = |row, col| Some(on_board(row)? * self.side + on_board(col)?);
        let per_cell = self.per_cell();
        match action.kind {
            ActionKind::Pass => Some(0),
            ActionKind::Build if self.builds => {
                Some(cell(action.row, action.col)? * per_cell + BUILD)
            }
            ActionKind::Build => None,
            ActionKind::Move => {
                let dir = action.direction()? as usize;
                let half = usize::from(action.split == 1);
                Some(cell(action.row, action.col)? * per_cell + 1 + 2 * dir + half)
            }
        }
    }
}

/// Writes 1 for every legal entry of the head and 0 elsewhere: a pass
/// anywhere; a move from a cell the seat owns with more than one army onto
/// a neighbour that is not a mountain; with builds, a castle on an owned
/// plain whose army covers the price (`build_base_cost` plus the crowding
/// surcharge of the seat's own generals and castles). Every fact it needs
/// is in the view: a seat always sees its own cells and their neighbours.
pub fn legal_mask(
    view: &View<'_>,
    space: &ActionSpace,
    build_base_cost: u32,
    out: &mut [u8],
) -> Result<(), ObserveError> {
    let side = view.side;
    check_len("mask", out.len(), space.len())?;
    check_len("tile", view.tile.len(), side * side)?;
    check_len("owner", view.owner.len(), side * side)?;
    check_len("army", view.army.len(), side * side)?;
    let per_cell = space.per_cell();
    let open = |cell: usize| !matches!(view.tile[cell], tile::MOUNTAIN | tile::FOG_STRUCTURE);

    let mut structures = Vec::new();
    if space.builds {
        for cell in 0..side * side {
            if view.owner[cell] == owner::ME
                && matches!(view.tile[cell], tile::CASTLE | tile::GENERAL)
            {
                structures.push((cell / side, cell % side));
            }
        }
    }

    for (cell, entries) in out.chunks_exact_mut(per_cell).enumerate() {
        entries.fill(0);
        entries[0] = 1;
        if view.owner[cell] != owner::ME {
            continue;
        }
        let (row, col) = (cell / side, cell % side);
        let army = view.army[cell];
        if army > 1 {
            let neighbours = Grid::new(side, side).neighbours(cell);
            for (dir, next) in neighbours.into_iter().enumerate() {
                if next.is_some_and(open) {
                    entries[1 + 2 * dir] = 1;
                    entries[2 + 2 * dir] = 1;
                }
            }
        }
        if space.builds && view.tile[cell] == tile::PLAIN {
            let surcharge: u32 = structures
                .iter()
                .map(|&(r, c)| {
                    let distance = grid::manhattan((r, c), (row, col)) as u32;
                    SURCHARGE_NEAR.saturating_sub(distance.saturating_mul(2))
                })
                .sum();
            let price = i64::from(build_base_cost) + i64::from(surcharge);
            entries[BUILD] = u8::from(i64::from(army) >= price);
        }
    }
    Ok(())
}
