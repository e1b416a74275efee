//! A [`ClassicMap`] checked and turned into a game at time 0.
//!
//! The map is unvalidated data (it may come from the generator, a test or a
//! fixture); [`GeneralsClassic::from_map`] is the one way from it to a game.
//! The board-wide invariants every generals state must hold (plane lengths,
//! owner codes, mountains empty, the army total, the params' ranges) are the
//! competition engine's own state check, run last; this module adds what a
//! classic *start* must look like.

use super::mapgen::ClassicMap;
use super::start::StartError;
use super::{GeneralsClassic, Params};
use crate::generals::state::State;
use crate::generals::{Generals, Ruleset, StateError};

/// Why a map cannot start a classic game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("{count} generals; classic 1v1 takes exactly 2")]
    GeneralCount { count: usize },
    /// Not a start position at all (see [`StartError`]).
    #[error(transparent)]
    Start(#[from] StartError),
    /// What the shared state check refuses (params, the army total).
    #[error(transparent)]
    State(#[from] StateError),
}

impl GeneralsClassic {
    /// Validates a map and starts the game on it: each general owned by its
    /// player with army 1, each castle neutral with the map's garrison,
    /// everything else neutral and empty.
    pub fn from_map(map: ClassicMap, params: Params) -> Result<GeneralsClassic, SetupError> {
        if map.generals.len() != 2 {
            return Err(SetupError::GeneralCount {
                count: map.generals.len(),
            });
        }
        let start = map.start()?;
        let generals = [start.generals[0], start.generals[1]];
        let game = Generals::try_from(State {
            height: start.height,
            width: start.width,
            params: params.competition_form(),
            ruleset: Ruleset::Classic,
            kind: start.kind,
            owner: start.owner,
            army: start.army,
            generals,
            time: 0,
            outcome: None,
        })?;
        Ok(GeneralsClassic(game))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generals::Kind;

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
