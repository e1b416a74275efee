//! Board state: cell planes, running totals, and validated construction.

use serde::{Deserialize, Serialize};

use super::action::Direction;
use super::observe::compact::Changes;
use super::ruleset::Ruleset;
use super::state::{State, check_params, side_ok};
use crate::game::Outcome;
use crate::grid::Grid;

/// What stands on a cell, encoded as in the reference engine's fixtures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum Kind {
    Plain = 0,
    Mountain = 1,
    Castle = 2,
    General = 3,
}

impl Kind {
    pub fn from_code(code: u8) -> Option<Kind> {
        Some(match code {
            0 => Kind::Plain,
            1 => Kind::Mountain,
            2 => Kind::Castle,
            3 => Kind::General,
            _ => return None,
        })
    }

    /// Generals and castles: they grow every other turn and raise build prices.
    pub fn is_structure(self) -> bool {
        matches!(self, Kind::Castle | Kind::General)
    }
}

/// The ruleset's numbers. The defaults are the competition's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// The game is a draw when this time is reached undecided.
    pub max_turns: u32,
    /// From this time (the time before a step) any move onto the enemy general wins.
    pub deathtouch_turn: u32,
    /// Base castle price before the crowding surcharge.
    pub build_base_cost: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            max_turns: 1200,
            deathtouch_turn: 800,
            build_base_cost: 35,
        }
    }
}

/// A board as given: not yet checked. [`Generals::new`] validates it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub height: usize,
    pub width: usize,
    /// Row-major, `height * width` entries; only plains and mountains at the start.
    pub kind: Vec<Kind>,
    /// `[row, col]` of player 0's and player 1's general.
    pub generals: [[usize; 2]; 2],
    pub params: Params,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("board is {height}x{width}; each side must be 1..=255")]
    Size { height: usize, width: usize },
    #[error("kind plane has {got} cells, expected {expected}")]
    KindLength { got: usize, expected: usize },
    #[error("general of player {player} at {row},{col} is off the board")]
    GeneralOffBoard {
        player: usize,
        row: usize,
        col: usize,
    },
    #[error("both generals stand on the same cell")]
    GeneralsCoincide,
    #[error("general of player {player} stands on a mountain")]
    GeneralOnMountain { player: usize },
    #[error("the start board holds a {kind:?} outside the generals' cells")]
    UnexpectedStructure { kind: Kind },
    #[error("params out of range: {0}")]
    Params(&'static str),
}

/// A game of generals in progress.
///
/// Serialised and compared by its defining fields only (see [`super::state`]);
/// the rest are indexes derived from them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "State", into = "State")]
pub struct Generals {
    pub(crate) height: usize,
    pub(crate) width: usize,
    pub(crate) params: Params,
    /// Competition or classic: builds, deathtouch, the double-capture outcome.
    pub(crate) ruleset: Ruleset,
    pub(crate) kind: Vec<Kind>,
    /// 0 neutral, 1 player 0, 2 player 1.
    pub(crate) owner: Vec<u8>,
    pub(crate) army: Vec<u32>,
    /// Cell index of each player's general (it never moves, only changes hands).
    pub(crate) generals: [usize; 2],
    /// Cell index of every general and castle ever on the board; structures
    /// never revert, so this only grows.
    pub(crate) structures: Vec<usize>,
    /// Cells per owner code (0 neutral, 1 player 0, 2 player 1), kept current
    /// by every write. Indexing by the code itself keeps the hot paths free of
    /// "is this neutral?" branches; the neutral slot is kept exact too.
    pub(crate) land: [u32; 3],
    /// Army per owner code, as `land`.
    pub(crate) army_total: [u64; 3],
    /// Each player's owned cells, in no meaningful order (swap-removed).
    pub(crate) owned: [Vec<u32>; 2],
    /// Where each cell sits in its owner's `owned` list.
    pub(crate) owned_slot: Vec<u32>,
    /// Each player's owned cells again, as one bit mask per row (bit `c`
    /// for column `c < 64`), so a seat's sight is a few shifts per row
    /// rather than a walk over its cells. Kept current with `owned`.
    pub(crate) owned_rows: [Vec<u64>; 2],
    /// Per cell, bit `d` is set when one step in direction `d` stays on the
    /// board and does not enter a mountain. Mountains are permanent, so this
    /// never changes after construction.
    pub(crate) open: Vec<u8>,
    /// `reciprocal(width)`, kept so a cell's row costs a multiply, not a division.
    pub(crate) width_reciprocal: u64,
    pub(crate) time: u32,
    /// Boxed: the outcome is written once, and keeping it out of line keeps
    /// the struct the hot loops read small.
    pub(crate) outcome: Option<Box<Outcome>>,
    /// Bit `r % 64` set for every row `r` with a cell whose kind, owner or
    /// army changed since the changes were last cleared (all rows for a
    /// new game): an observer that keeps views current redoes only those
    /// rows, and of them only the ones where a seat sees a changed cell
    /// (`changed_columns`) or a kind changed (`changed_kinds`, shown even
    /// in fog). Bookkeeping, like the owned lists.
    pub(crate) changed_rows: u64,
    /// Per row, bit `c` for every changed cell of column `c < 64`; not
    /// kept while `changed_all`.
    pub(crate) changed_columns: Vec<u64>,
    /// Bit `r % 64` for every row where a cell's kind changed.
    pub(crate) changed_kinds: u64,
    /// Everything counts as changed (a new game, or a change to most cells).
    pub(crate) changed_all: bool,
}

impl Generals {
    /// Validates a setup and places both generals with army 1.
    pub fn new(setup: Setup) -> Result<Generals, SetupError> {
        let Setup {
            height,
            width,
            kind,
            generals,
            params,
        } = setup;
        if !side_ok(height) || !side_ok(width) {
            return Err(SetupError::Size { height, width });
        }
        let cells = height * width;
        if kind.len() != cells {
            return Err(SetupError::KindLength {
                got: kind.len(),
                expected: cells,
            });
        }
        check_params(&params).map_err(SetupError::Params)?;
        let mut general_cells = [0usize; 2];
        for (player, [row, col]) in generals.into_iter().enumerate() {
            if row >= height || col >= width {
                return Err(SetupError::GeneralOffBoard { player, row, col });
            }
            general_cells[player] = row * width + col;
        }
        if general_cells[0] == general_cells[1] {
            return Err(SetupError::GeneralsCoincide);
        }
        let mut kind = kind;
        for (i, k) in kind.iter().enumerate() {
            match k {
                Kind::Plain => {}
                Kind::Mountain if general_cells.contains(&i) => {
                    let player = usize::from(general_cells[1] == i);
                    return Err(SetupError::GeneralOnMountain { player });
                }
                Kind::Mountain => {}
                // A general marked in the plane is fine only where a general stands.
                Kind::General if general_cells.contains(&i) => {}
                other => return Err(SetupError::UnexpectedStructure { kind: *other }),
            }
        }
        let mut owner = vec![0u8; cells];
        let mut army = vec![0u32; cells];
        for (player, &cell) in general_cells.iter().enumerate() {
            kind[cell] = Kind::General;
            owner[cell] = player as u8 + 1;
            army[cell] = 1;
        }
        Ok(Generals::from_state(State {
            height,
            width,
            params,
            ruleset: Ruleset::Competition,
            kind,
            owner,
            army,
            generals: general_cells,
            time: 0,
            outcome: None,
        }))
    }

    /// Builds a game from a state already known to be consistent, deriving
    /// every index from it.
    pub(crate) fn from_state(state: State) -> Generals {
        let State {
            height,
            width,
            params,
            ruleset,
            kind,
            owner,
            army,
            generals,
            time,
            outcome,
        } = state;
        let cells = height * width;
        let mut land = [0u32; 3];
        let mut army_total = [0u64; 3];
        let mut owned = [Vec::new(), Vec::new()];
        let mut owned_slot = vec![0u32; cells];
        let mut owned_rows = [vec![0u64; height], vec![0u64; height]];
        for cell in 0..cells {
            let code = usize::from(owner[cell]);
            land[code] += 1;
            army_total[code] += u64::from(army[cell]);
            if code != 0 {
                owned_slot[cell] = owned[code - 1].len() as u32;
                owned[code - 1].push(cell as u32);
                owned_rows[code - 1][cell / width] |= column_bit(cell % width);
            }
        }
        let structures = (0..cells).filter(|&c| kind[c].is_structure()).collect();
        let open = open_directions(height, width, &kind);
        Generals {
            height,
            width,
            params,
            ruleset,
            kind,
            owner,
            army,
            generals,
            structures,
            land,
            army_total,
            owned,
            owned_slot,
            owned_rows,
            open,
            width_reciprocal: reciprocal(width),
            time,
            outcome: outcome.map(Box::new),
            changed_rows: u64::MAX,
            changed_columns: vec![0; height],
            changed_kinds: u64::MAX,
            changed_all: true,
        }
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn ruleset(&self) -> Ruleset {
        self.ruleset
    }

    pub fn time(&self) -> u32 {
        self.time
    }

    pub fn kind_at(&self, row: usize, col: usize) -> Kind {
        self.kind[row * self.width + col]
    }

    /// 0 neutral, 1 player 0, 2 player 1.
    pub fn owner_at(&self, row: usize, col: usize) -> u8 {
        self.owner[row * self.width + col]
    }

    pub fn army_at(&self, row: usize, col: usize) -> u32 {
        self.army[row * self.width + col]
    }

    /// `[row, col]` of a player's general.
    pub fn general(&self, player: usize) -> [usize; 2] {
        let (row, col) = self.coords(self.generals[player]);
        [row, col]
    }

    /// `(land, army)` of a player: owned cells and the army on them.
    pub fn totals(&self, player: usize) -> (u32, u64) {
        (self.land[player + 1], self.army_total[player + 1])
    }

    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// `(row, col)` of a cell index. A multiply-shift instead of a division:
    /// exact for every board this engine accepts (see the test below).
    #[inline]
    pub(crate) fn coords(&self, cell: usize) -> (usize, usize) {
        let row = (cell as u64 * self.width_reciprocal) >> 32;
        let row = row as usize;
        (row, cell - row * self.width)
    }

    /// The cell one step from `cell` in direction `dir`, if that step is open
    /// (on the board and not a mountain).
    #[inline]
    pub(crate) fn open_step(&self, cell: usize, dir: Direction) -> Option<usize> {
        if self.open[cell] & (1 << dir as u8) == 0 {
            return None;
        }
        // Selects rather than a match: the direction is data, and a jump
        // table on it mispredicts. Up/Down move a row, Left/Right a column;
        // Up and Left (even codes) go backwards.
        let code = dir as usize;
        let stride = if code < 2 { self.width } else { 1 };
        Some(if code & 1 == 0 {
            cell.wrapping_sub(stride)
        } else {
            cell + stride
        })
    }

    /// The cells a player owns, in no particular order.
    pub fn owned_cells(&self, player: usize) -> &[u32] {
        &self.owned[player]
    }

    /// A player's owned cells as one bit mask per row (bit `c` for column
    /// `c`; columns past 63 are left out).
    pub fn owned_row_masks(&self, player: usize) -> &[u64] {
        &self.owned_rows[player]
    }

    /// Starts loading what stepping and observing this game read first (the
    /// owned lists and row masks), for a caller about to step it.
    #[inline]
    pub fn prefetch(&self) {
        for player in 0..2 {
            crate::prefetch::lines(&self.owned_rows[player], 3);
            crate::prefetch::lines(&self.owned[player], 2);
        }
        crate::prefetch::lines(&self.changed_columns, 3);
    }

    /// The rows changed since the last call (see `changed_rows`), which
    /// starts the count again.
    pub fn take_changed_rows(&mut self) -> u64 {
        let rows = self.changed_rows;
        self.clear_changes();
        rows
    }

    /// What changed since the changes were last cleared, cell by cell: for
    /// an observer that rewrites only what each seat can see change.
    pub fn changes(&self) -> Changes<'_> {
        if self.changed_all {
            Changes::ALL
        } else {
            Changes {
                rows: self.changed_rows,
                columns: &self.changed_columns,
                kinds: self.changed_kinds,
            }
        }
    }

    /// Starts the count of changes again.
    pub fn clear_changes(&mut self) {
        if self.changed_all {
            self.changed_columns.fill(0);
        } else {
            let mut rows = self.changed_rows;
            while rows != 0 {
                let r = rows.trailing_zeros() as usize;
                rows &= rows - 1;
                if let Some(columns) = self.changed_columns.get_mut(r) {
                    *columns = 0;
                }
            }
        }
        self.changed_rows = 0;
        self.changed_kinds = 0;
        self.changed_all = false;
    }

    /// Records that `cell` changed.
    #[inline]
    pub(crate) fn mark_changed(&mut self, cell: usize) {
        let (row, col) = self.coords(cell);
        self.changed_rows |= 1 << (row & 63);
        if let Some(columns) = self.changed_columns.get_mut(row) {
            *columns |= column_bit(col);
        }
    }

    /// Records that everything changed.
    #[inline]
    pub(crate) fn mark_all_changed(&mut self) {
        self.changed_rows = u64::MAX;
        self.changed_kinds = u64::MAX;
        self.changed_all = true;
    }

    /// Sets a cell's owner and army, keeping the totals and owned lists current.
    #[inline]
    pub(crate) fn set_cell(&mut self, cell: usize, owner: u8, army: u32) {
        let old = usize::from(self.owner[cell]);
        let new = usize::from(owner);
        self.army_total[old] -= u64::from(self.army[cell]);
        self.army_total[new] += u64::from(army);
        if old != new {
            self.land[old] -= 1;
            self.land[new] += 1;
            let (row, col) = self.coords(cell);
            let bit = column_bit(col);
            if old != 0 {
                self.owned_rows[old - 1][row] &= !bit;
                let list = &mut self.owned[old - 1];
                let slot = self.owned_slot[cell] as usize;
                list.swap_remove(slot);
                if let Some(&moved) = list.get(slot) {
                    self.owned_slot[moved as usize] = slot as u32;
                }
            }
            if new != 0 {
                self.owned_rows[new - 1][row] |= bit;
                let list = &mut self.owned[new - 1];
                self.owned_slot[cell] = list.len() as u32;
                list.push(cell as u32);
            }
        }
        self.owner[cell] = owner;
        self.army[cell] = army;
        self.mark_changed(cell);
    }

    /// Changes the army on a cell without changing its owner.
    #[inline]
    pub(crate) fn set_army(&mut self, cell: usize, army: u32) {
        let owner = usize::from(self.owner[cell]);
        self.army_total[owner] =
            self.army_total[owner] - u64::from(self.army[cell]) + u64::from(army);
        self.army[cell] = army;
        self.mark_changed(cell);
    }
}

/// Two games are equal when their defining fields are: the order of the
/// owned lists, say, is bookkeeping.
impl PartialEq for Generals {
    fn eq(&self, other: &Self) -> bool {
        self.height == other.height
            && self.width == other.width
            && self.params == other.params
            && self.ruleset == other.ruleset
            && self.kind == other.kind
            && self.owner == other.owner
            && self.army == other.army
            && self.generals == other.generals
            && self.time == other.time
            && self.outcome == other.outcome
    }
}

impl Eq for Generals {}

/// The bit of column `col` in a row mask; columns past 63 have none (no
/// observer reads boards that wide).
#[inline]
pub(crate) fn column_bit(col: usize) -> u64 {
    1u64.checked_shl(col as u32).unwrap_or(0)
}

/// `ceil(2^32 / width)`: `(cell * r) >> 32 == cell / width` for every
/// `cell < 2^16` and `width <= 255`, since the error term `cell * width / 2^32`
/// stays below `1 / width`.
#[inline]
fn reciprocal(width: usize) -> u64 {
    (1u64 << 32).div_ceil(width as u64)
}

/// The passable-neighbour mask of every cell (see [`Generals::open`]).
pub(crate) fn open_directions(height: usize, width: usize, kind: &[Kind]) -> Vec<u8> {
    let board = Grid::new(width, height);
    (0..board.cells())
        .map(|cell| {
            // The grid lists neighbours in `Direction` order.
            let around = board.neighbours(cell).into_iter().zip(Direction::ALL);
            around
                .filter(|&(next, _)| next.is_some_and(|n| kind[n] != Kind::Mountain))
                .fold(0u8, |mask, (_, dir)| mask | 1 << dir as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_division_is_exact_on_every_board_size() {
        for width in 1..=255usize {
            let r = reciprocal(width);
            for cell in 0..255 * width {
                assert_eq!(
                    ((cell as u64 * r) >> 32) as usize,
                    cell / width,
                    "{cell}/{width}"
                );
            }
        }
    }
}
