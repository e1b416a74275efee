//! The serialised form of a game in progress: only what defines it.
//!
//! Replays carry their initial state, so a state can come from a file anyone
//! could have edited. The indexes the engine keeps for speed (owned lists,
//! totals, neighbour masks) are therefore never read from a file: they are
//! rebuilt from the planes, after every value a file could get wrong has been
//! checked. A forged state is an error, never a panic or an overflow.

use serde::{Deserialize, Serialize};

use super::board::{Generals, Kind, Params};
use super::ruleset::Ruleset;
use crate::game::Outcome;

/// Limits that keep every sum the engine forms inside its integer types:
/// with at most this many turns and this much army at the start, no cell can
/// exceed `u32` even if every cell of a 255×255 board were a structure.
pub const MAX_TURNS_LIMIT: u32 = 50_000;
pub const MAX_TOTAL_ARMY: u64 = 1_000_000_000;
pub const MAX_BUILD_BASE_COST: u32 = 1_000_000;

/// The defining fields of a [`Generals`]: what is written to JSON, and what
/// [`Generals::try_from`] validates when it is read back.
#[derive(Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) height: usize,
    pub(crate) width: usize,
    pub(crate) params: Params,
    /// Absent in competition states (and in every state written before
    /// rulesets existed), which keeps their JSON and digests unchanged.
    #[serde(default, skip_serializing_if = "Ruleset::is_competition")]
    pub(crate) ruleset: Ruleset,
    pub(crate) kind: Vec<Kind>,
    pub(crate) owner: Vec<u8>,
    pub(crate) army: Vec<u32>,
    pub(crate) generals: [usize; 2],
    pub(crate) time: u32,
    pub(crate) outcome: Option<Outcome>,
}

/// Why a serialised state was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("board is {height}x{width}; each side must be 1..=255")]
    Size { height: usize, width: usize },
    #[error("the {plane} plane has {got} cells, expected {expected}")]
    PlaneLength {
        plane: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("general {player} is not a general cell on the board")]
    General { player: usize },
    #[error("both generals stand on the same cell")]
    GeneralsCoincide,
    #[error("cell {cell} is a general but neither player's")]
    StrayGeneral { cell: usize },
    #[error("cell {cell} has owner code {owner}; only 0, 1 and 2 exist")]
    Owner { cell: usize, owner: u8 },
    #[error("mountain cell {cell} is owned or holds an army")]
    Mountain { cell: usize },
    #[error("the armies add up to {total}, more than {MAX_TOTAL_ARMY}")]
    Army { total: u64 },
    #[error("params out of range: {0}")]
    Params(&'static str),
    #[error("time {time} is past max_turns {max_turns}")]
    Time { time: u32, max_turns: u32 },
    #[error("the outcome must rank exactly two seats, each 0 or 1, scored by placement")]
    Outcome,
    #[error("a game at its turn cap must have an outcome")]
    Unfinished,
}

impl From<Generals> for State {
    fn from(game: Generals) -> State {
        State {
            height: game.height,
            width: game.width,
            params: game.params,
            ruleset: game.ruleset,
            kind: game.kind,
            owner: game.owner,
            army: game.army,
            generals: game.generals,
            time: game.time,
            outcome: game.outcome.map(|o| *o),
        }
    }
}

/// Whether a board side is one this engine accepts (shared with setups).
pub(crate) fn side_ok(side: usize) -> bool {
    (1..=255).contains(&side)
}

/// Checks the ranges the engine's arithmetic relies on (shared with setups).
pub(crate) fn check_params(params: &Params) -> Result<(), &'static str> {
    if params.max_turns == 0 || params.max_turns > MAX_TURNS_LIMIT {
        return Err("max_turns must be 1..=50000");
    }
    if params.build_base_cost > MAX_BUILD_BASE_COST {
        return Err("build_base_cost must be at most 1000000");
    }
    Ok(())
}

impl TryFrom<State> for Generals {
    type Error = StateError;

    fn try_from(state: State) -> Result<Generals, StateError> {
        let State {
            height,
            width,
            ref params,
            ruleset: _,
            ref kind,
            ref owner,
            ref army,
            generals,
            time,
            ref outcome,
        } = state;
        if !side_ok(height) || !side_ok(width) {
            return Err(StateError::Size { height, width });
        }
        let cells = height * width;
        for (plane, got) in [
            ("kind", kind.len()),
            ("owner", owner.len()),
            ("army", army.len()),
        ] {
            if got != cells {
                return Err(StateError::PlaneLength {
                    plane,
                    got,
                    expected: cells,
                });
            }
        }
        check_params(params).map_err(StateError::Params)?;
        for (player, &cell) in generals.iter().enumerate() {
            if kind.get(cell) != Some(&Kind::General) {
                return Err(StateError::General { player });
            }
        }
        if generals[0] == generals[1] {
            return Err(StateError::GeneralsCoincide);
        }
        let mut total = 0u64;
        for cell in 0..cells {
            if owner[cell] > 2 {
                return Err(StateError::Owner {
                    cell,
                    owner: owner[cell],
                });
            }
            match kind[cell] {
                Kind::Mountain if owner[cell] != 0 || army[cell] != 0 => {
                    return Err(StateError::Mountain { cell });
                }
                Kind::General if !generals.contains(&cell) => {
                    return Err(StateError::StrayGeneral { cell });
                }
                _ => {}
            }
            total += u64::from(army[cell]);
        }
        if total > MAX_TOTAL_ARMY {
            return Err(StateError::Army { total });
        }
        if time > params.max_turns {
            return Err(StateError::Time {
                time,
                max_turns: params.max_turns,
            });
        }
        match outcome {
            Some(o)
                if o.ranks.len() != 2
                    || o.ranks.iter().any(|&r| r > 1)
                    || o.scores != crate::game::placement_points(&o.ranks)
                    || !o.teams.is_empty() =>
            {
                return Err(StateError::Outcome);
            }
            None if time == params.max_turns => return Err(StateError::Unfinished),
            _ => {}
        }
        Ok(Generals::from_state(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generals::random::random_legal_action;
    use crate::rng::SplitMix64;
    use serde_json::{Value, json};

    fn midgame() -> Generals {
        let mut game = Generals::from_seed(5, Params::default());
        let mut rng = SplitMix64::new(5);
        for _ in 0..300 {
            let actions = [0, 1].map(|p| random_legal_action(&game, p, &mut rng));
            game.step_pair(actions);
        }
        game
    }

    /// An edit of a good state's JSON.
    type Forgery = Box<dyn Fn(&mut Value)>;

    fn load(value: &Value) -> Result<Generals, String> {
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_state_round_trips_with_its_indexes_rebuilt() {
        let game = midgame();
        let json = serde_json::to_value(&game).unwrap();
        let back = load(&json).unwrap();
        assert_eq!(back, game);
        for player in 0..2 {
            assert_eq!(back.totals(player), game.totals(player));
            let mut a = back.owned_cells(player).to_vec();
            let mut b = game.owned_cells(player).to_vec();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
        }
        let mut structures = game.structures.clone();
        structures.sort_unstable();
        assert_eq!(back.structures, structures);
        assert_eq!(back.open, game.open);
        // Both continue identically.
        let (mut a, mut b) = (game, back);
        let mut rng = SplitMix64::new(9);
        for _ in 0..200 {
            let actions = [0, 1].map(|p| random_legal_action(&a, p, &mut rng));
            a.step_pair(actions);
            b.step_pair(actions);
        }
        assert_eq!(a, b);
    }

    /// A competition state as the engine wrote it before rulesets existed
    /// (generated from the tree before that change): it still reads, plays
    /// the competition, and writes back byte for byte, so the final-state
    /// digests in older replays still match.
    const STATE_BEFORE_RULESETS: &str = r#"{"height":3,"width":4,"params":{"max_turns":1200,"deathtouch_turn":800,"build_base_cost":35},"kind":["General","Plain","Plain","Plain","Plain","Mountain","Plain","Plain","Plain","Plain","Plain","General"],"owner":[1,1,0,0,0,0,0,0,0,0,2,2],"army":[1,3,0,0,0,0,0,0,0,0,2,2],"generals":[0,11],"time":7,"outcome":null}"#;

    #[test]
    fn a_state_written_before_rulesets_reads_and_writes_back_unchanged() {
        let game: Generals = serde_json::from_str(STATE_BEFORE_RULESETS).unwrap();
        assert_eq!(game.ruleset(), Ruleset::Competition);
        assert_eq!(crate::Game::name(&game), "generals");
        assert_eq!(
            (game.time(), game.totals(0), game.totals(1)),
            (7, (2, 4), (2, 4))
        );
        assert_eq!(serde_json::to_string(&game).unwrap(), STATE_BEFORE_RULESETS);
    }

    #[test]
    fn forged_states_are_refused_with_a_reason() {
        let good = serde_json::to_value(midgame()).unwrap();
        let cells = good["kind"].as_array().unwrap().len();
        let mountain = good["kind"]
            .as_array()
            .unwrap()
            .iter()
            .position(|k| k == "Mountain")
            .unwrap();
        let plain = good["kind"]
            .as_array()
            .unwrap()
            .iter()
            .position(|k| k == "Plain")
            .unwrap();
        let cases: Vec<(&str, Forgery)> = vec![
            ("each side", Box::new(|v| v["width"] = json!(0))),
            ("each side", Box::new(|v| v["height"] = json!(256))),
            (
                "plane has",
                Box::new(|v| v["width"] = json!(v["width"].as_u64().unwrap() + 1)),
            ),
            (
                "army plane",
                Box::new(|v| {
                    v["army"].as_array_mut().unwrap().pop();
                }),
            ),
            (
                "general 1",
                Box::new(move |v| v["generals"][1] = json!(cells)),
            ),
            (
                "general 0",
                Box::new(move |v| v["generals"][0] = json!(plain)),
            ),
            (
                "same cell",
                Box::new(|v| v["generals"][1] = v["generals"][0].clone()),
            ),
            (
                "owner code",
                Box::new(move |v| v["owner"][plain] = json!(3)),
            ),
            (
                "mountain",
                Box::new(move |v| v["owner"][mountain] = json!(1)),
            ),
            (
                "mountain",
                Box::new(move |v| v["army"][mountain] = json!(4)),
            ),
            (
                "neither player",
                Box::new(move |v| v["kind"][plain] = json!("General")),
            ),
            (
                "add up",
                Box::new(move |v| v["army"][plain] = json!(u32::MAX)),
            ),
            (
                "max_turns",
                Box::new(|v| v["params"]["max_turns"] = json!(0)),
            ),
            (
                "max_turns",
                Box::new(|v| v["params"]["max_turns"] = json!(u32::MAX)),
            ),
            (
                "build_base_cost",
                Box::new(|v| v["params"]["build_base_cost"] = json!(u32::MAX)),
            ),
            ("past max_turns", Box::new(|v| v["time"] = json!(1201))),
            ("turn cap", Box::new(|v| v["time"] = json!(1200))),
            (
                "two seats",
                Box::new(|v| v["outcome"] = json!({"ranks": [0], "scores": [1.0], "reason": "x"})),
            ),
            (
                "two seats",
                Box::new(|v| {
                    v["outcome"] = json!({"ranks": [0, 7], "scores": [1.0, 0.0], "reason": "x"})
                }),
            ),
            (
                "scored by placement",
                Box::new(|v| {
                    v["outcome"] = json!({"ranks": [0, 1], "scores": [1.0, 1.0], "reason": "x"})
                }),
            ),
        ];
        for (expected, forge) in cases {
            let mut forged = good.clone();
            forge(&mut forged);
            let err = load(&forged).expect_err(expected);
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
        assert!(load(&good).is_ok());
    }
}
