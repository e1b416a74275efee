//! A [`ClassicMap`] checked as a start position, for either engine: the
//! 1v1 game ([`super::setup`]) and the 2v2 / free-for-all one
//! ([`super::multi`]) both begin from these planes.

use super::mapgen::ClassicMap;
use crate::generals::Kind;
use crate::generals::state::side_ok;

/// The planes at time 0: each general marked and owned by its seat (owner
/// code seat + 1) with 1 army, castles neutral with their garrisons, every
/// other cell neutral and empty.
pub(crate) struct Start {
    pub height: usize,
    pub width: usize,
    pub kind: Vec<Kind>,
    pub owner: Vec<u8>,
    pub army: Vec<u32>,
    /// Each seat's general, as a cell index.
    pub generals: Vec<usize>,
}

/// Why a map is not a start position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("board is {height}x{width}; each side must be 1..=255")]
    Size { height: usize, width: usize },
    #[error("the {plane} plane has {got} cells, expected {expected}")]
    PlaneLength {
        plane: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("general of player {player} at {row},{col} is off the board")]
    GeneralOffBoard {
        player: usize,
        row: usize,
        col: usize,
    },
    #[error("two generals stand on the same cell (player {player}'s)")]
    GeneralsCoincide { player: usize },
    #[error("general of player {player} stands on a {kind:?}")]
    GeneralOn { player: usize, kind: Kind },
    #[error("cell {row},{col} is a general but neither player's")]
    StrayGeneral { row: usize, col: usize },
    #[error(
        "the {kind:?} at {row},{col} holds {army}; plains and mountains start at 0, generals at 1"
    )]
    StartArmy {
        row: usize,
        col: usize,
        kind: Kind,
        army: u32,
    },
}

impl ClassicMap {
    /// Checks the map as a start position and lays out its planes. A
    /// general stands on a cell marked as one, or on a plain the kind plane
    /// did not mark; never on a mountain or a castle site.
    pub(crate) fn start(self) -> Result<Start, StartError> {
        let ClassicMap {
            height,
            width,
            mut kind,
            army,
            generals,
        } = self;
        if !side_ok(height) || !side_ok(width) {
            return Err(StartError::Size { height, width });
        }
        let cells = height * width;
        for (plane, got) in [("kind", kind.len()), ("army", army.len())] {
            if got != cells {
                return Err(StartError::PlaneLength {
                    plane,
                    got,
                    expected: cells,
                });
            }
        }
        let mut general_cells = Vec::with_capacity(generals.len());
        for (player, &[row, col]) in generals.iter().enumerate() {
            if row >= height || col >= width {
                return Err(StartError::GeneralOffBoard { player, row, col });
            }
            let cell = row * width + col;
            if general_cells.contains(&cell) {
                return Err(StartError::GeneralsCoincide { player });
            }
            match kind[cell] {
                Kind::General | Kind::Plain => kind[cell] = Kind::General,
                other => {
                    return Err(StartError::GeneralOn {
                        player,
                        kind: other,
                    });
                }
            }
            general_cells.push(cell);
        }
        for cell in 0..cells {
            let (row, col) = (cell / width, cell % width);
            let expected = match kind[cell] {
                Kind::General if !general_cells.contains(&cell) => {
                    return Err(StartError::StrayGeneral { row, col });
                }
                Kind::General => Some(1),
                Kind::Castle => None,
                Kind::Plain | Kind::Mountain => Some(0),
            };
            if expected.is_some_and(|a| a != army[cell]) {
                return Err(StartError::StartArmy {
                    row,
                    col,
                    kind: kind[cell],
                    army: army[cell],
                });
            }
        }
        let mut owner = vec![0u8; cells];
        for (seat, &cell) in general_cells.iter().enumerate() {
            // At most 8 seats (the owner plane's codes are small).
            owner[cell] = u8::try_from(seat + 1).unwrap_or(u8::MAX);
        }
        Ok(Start {
            height,
            width,
            kind,
            owner,
            army,
            generals: general_cells,
        })
    }
}
