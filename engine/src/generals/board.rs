//! Board state: cell planes, running totals, and validated construction.

use serde::{Deserialize, Serialize};

use crate::game::Outcome;

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
    #[error("max_turns must be positive")]
    NoTurns,
}

/// A game of generals in progress: plain data, compared and serialised whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generals {
    pub(crate) height: usize,
    pub(crate) width: usize,
    pub(crate) params: Params,
    pub(crate) kind: Vec<Kind>,
    /// 0 neutral, 1 player 0, 2 player 1.
    pub(crate) owner: Vec<u8>,
    pub(crate) army: Vec<u32>,
    /// Cell index of each player's general (it never moves, only changes hands).
    pub(crate) generals: [usize; 2],
    /// Cell index of every general and castle ever on the board; structures
    /// never revert, so this only grows.
    pub(crate) structures: Vec<usize>,
    /// Owned cells per player, kept current by every write.
    pub(crate) land: [u32; 2],
    /// Army on owned cells per player, kept current by every write.
    pub(crate) army_total: [u64; 2],
    /// Each player's owned cells, in no meaningful order (swap-removed).
    pub(crate) owned: [Vec<u32>; 2],
    /// Where each cell sits in its owner's `owned` list.
    pub(crate) owned_slot: Vec<u32>,
    pub(crate) time: u32,
    pub(crate) outcome: Option<Outcome>,
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
        if !(1..=255).contains(&height) || !(1..=255).contains(&width) {
            return Err(SetupError::Size { height, width });
        }
        let cells = height * width;
        if kind.len() != cells {
            return Err(SetupError::KindLength {
                got: kind.len(),
                expected: cells,
            });
        }
        if params.max_turns == 0 {
            return Err(SetupError::NoTurns);
        }
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
        let mut owned_slot = vec![0u32; cells];
        for &cell in &general_cells {
            owned_slot[cell] = 0;
        }
        Ok(Generals {
            height,
            width,
            params,
            kind,
            owner,
            army,
            generals: general_cells,
            structures: general_cells.to_vec(),
            land: [1, 1],
            army_total: [1, 1],
            owned: [vec![general_cells[0] as u32], vec![general_cells[1] as u32]],
            owned_slot,
            time: 0,
            outcome: None,
        })
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
        let cell = self.generals[player];
        [cell / self.width, cell % self.width]
    }

    /// `(land, army)` of a player: owned cells and the army on them.
    pub fn totals(&self, player: usize) -> (u32, u64) {
        (self.land[player], self.army_total[player])
    }

    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// The cells a player owns, in no particular order.
    pub fn owned_cells(&self, player: usize) -> &[u32] {
        &self.owned[player]
    }

    /// Sets a cell's owner and army, keeping the totals and owned lists current.
    #[inline]
    pub(crate) fn set_cell(&mut self, cell: usize, owner: u8, army: u32) {
        let old_owner = self.owner[cell];
        if old_owner != owner {
            if old_owner != 0 {
                let p = usize::from(old_owner - 1);
                self.land[p] -= 1;
                let slot = self.owned_slot[cell] as usize;
                self.owned[p].swap_remove(slot);
                if let Some(&moved) = self.owned[p].get(slot) {
                    self.owned_slot[moved as usize] = slot as u32;
                }
            }
            if owner != 0 {
                let p = usize::from(owner - 1);
                self.land[p] += 1;
                self.owned_slot[cell] = self.owned[p].len() as u32;
                self.owned[p].push(cell as u32);
            }
        }
        if old_owner != 0 {
            let p = usize::from(old_owner - 1);
            self.army_total[p] -= u64::from(self.army[cell]);
        }
        if owner != 0 {
            let p = usize::from(owner - 1);
            self.army_total[p] += u64::from(army);
        }
        self.owner[cell] = owner;
        self.army[cell] = army;
    }

    /// Changes the army on a cell without changing its owner.
    #[inline]
    pub(crate) fn set_army(&mut self, cell: usize, army: u32) {
        let owner = self.owner[cell];
        if owner != 0 {
            let p = usize::from(owner - 1);
            self.army_total[p] = self.army_total[p] - u64::from(self.army[cell]) + u64::from(army);
        }
        self.army[cell] = army;
    }
}
