//! A [`ClassicMap`] checked and turned into a game at time 0.
//!
//! The map is unvalidated data (it may come from the generator, a test or a
//! fixture); [`GeneralsClassic::from_map`] is the one way from it to a game.
//! The board-wide invariants every generals state must hold (plane lengths,
//! owner codes, mountains empty, the army total, the params' ranges) are the
//! competition engine's own state check, run last; this module adds what a
//! classic *start* must look like.

use super::{GeneralsClassic, Params};
use crate::generals::state::{State, side_ok};
use crate::generals::{Generals, Kind, Ruleset, StateError};

use super::mapgen::ClassicMap;

/// Why a map cannot start a classic game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("board is {height}x{width}; each side must be 1..=255")]
    Size { height: usize, width: usize },
    #[error("the {plane} plane has {got} cells, expected {expected}")]
    PlaneLength {
        plane: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("{count} generals; classic 1v1 takes exactly 2")]
    GeneralCount { count: usize },
    #[error("general of player {player} at {row},{col} is off the board")]
    GeneralOffBoard {
        player: usize,
        row: usize,
        col: usize,
    },
    #[error("both generals stand on the same cell")]
    GeneralsCoincide,
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
    /// What the shared state check refuses (params, the army total).
    #[error(transparent)]
    State(#[from] StateError),
}

impl GeneralsClassic {
    /// Validates a map and starts the game on it: each general owned by its
    /// player with army 1, each castle neutral with the map's garrison,
    /// everything else neutral and empty.
    pub fn from_map(map: ClassicMap, params: Params) -> Result<GeneralsClassic, SetupError> {
        let ClassicMap {
            height,
            width,
            mut kind,
            army,
            generals,
        } = map;
        if !side_ok(height) || !side_ok(width) {
            return Err(SetupError::Size { height, width });
        }
        let cells = height * width;
        for (plane, got) in [("kind", kind.len()), ("army", army.len())] {
            if got != cells {
                return Err(SetupError::PlaneLength {
                    plane,
                    got,
                    expected: cells,
                });
            }
        }
        let &[first, second] = generals.as_slice() else {
            return Err(SetupError::GeneralCount {
                count: generals.len(),
            });
        };
        let mut general_cells = [0usize; 2];
        for (player, [row, col]) in [first, second].into_iter().enumerate() {
            if row >= height || col >= width {
                return Err(SetupError::GeneralOffBoard { player, row, col });
            }
            let cell = row * width + col;
            // A general stands on a cell marked as one, or on a plain the
            // plane did not mark; never on a mountain or a castle site.
            match kind[cell] {
                Kind::General | Kind::Plain => kind[cell] = Kind::General,
                other => {
                    return Err(SetupError::GeneralOn {
                        player,
                        kind: other,
                    });
                }
            }
            general_cells[player] = cell;
        }
        if general_cells[0] == general_cells[1] {
            return Err(SetupError::GeneralsCoincide);
        }
        let mut owner = vec![0u8; cells];
        for cell in 0..cells {
            let (row, col) = (cell / width, cell % width);
            let expected = match kind[cell] {
                Kind::General if !general_cells.contains(&cell) => {
                    return Err(SetupError::StrayGeneral { row, col });
                }
                Kind::General => Some(1),
                Kind::Castle => None,
                Kind::Plain | Kind::Mountain => Some(0),
            };
            if expected.is_some_and(|a| a != army[cell]) {
                return Err(SetupError::StartArmy {
                    row,
                    col,
                    kind: kind[cell],
                    army: army[cell],
                });
            }
        }
        for (player, &cell) in general_cells.iter().enumerate() {
            owner[cell] = player as u8 + 1;
        }
        let game = Generals::try_from(State {
            height,
            width,
            params: params.competition_form(),
            ruleset: Ruleset::Classic,
            kind,
            owner,
            army,
            generals: general_cells,
            time: 0,
            outcome: None,
        })?;
        Ok(GeneralsClassic(game))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×4 board: generals in two corners, a castle of 40 between them.
    fn small() -> ClassicMap {
        let mut kind = vec![Kind::Plain; 12];
        kind[0] = Kind::General;
        kind[11] = Kind::General;
        kind[5] = Kind::Castle;
        kind[6] = Kind::Mountain;
        let mut army = vec![0; 12];
        army[0] = 1;
        army[11] = 1;
        army[5] = 40;
        ClassicMap {
            height: 3,
            width: 4,
            kind,
            army,
            generals: vec![[0, 0], [2, 3]],
        }
    }

    #[test]
    fn a_valid_map_starts_with_neutral_garrisons() {
        let game = GeneralsClassic::from_map(small(), Params::default()).unwrap();
        assert_eq!(game.kind_at(1, 1), Kind::Castle);
        assert_eq!((game.owner_at(1, 1), game.army_at(1, 1)), (0, 40));
        assert_eq!((game.owner_at(0, 0), game.army_at(0, 0)), (1, 1));
        assert_eq!((game.owner_at(2, 3), game.army_at(2, 3)), (2, 1));
        assert_eq!(game.totals(0), (1, 1));
        assert_eq!(game.ruleset(), Ruleset::Classic);
    }

    #[test]
    fn bad_maps_are_refused_with_a_reason() {
        type Forgery = fn(&mut ClassicMap);
        let cases: [(&str, Forgery); 10] = [
            ("each side", |m| m.height = 0),
            ("army plane", |m| {
                m.army.pop();
            }),
            ("exactly 2", |m| m.generals.push([1, 0])),
            ("off the board", |m| m.generals[1] = [3, 0]),
            ("same cell", |m| m.generals[1] = [0, 0]),
            ("Mountain", |m| m.generals[1] = [1, 2]),
            ("Castle", |m| m.generals[1] = [1, 1]),
            ("neither player", |m| m.kind[3] = Kind::General),
            ("start at 0", |m| m.army[2] = 5),
            ("add up", |m| m.army[5] = u32::MAX),
        ];
        for (expected, forge) in cases {
            let mut map = small();
            forge(&mut map);
            let err = GeneralsClassic::from_map(map, Params::default())
                .expect_err(expected)
                .to_string();
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
        let zero_turns = Params { max_turns: 0 };
        assert!(matches!(
            GeneralsClassic::from_map(small(), zero_turns),
            Err(SetupError::State(StateError::Params(_)))
        ));
    }
}
