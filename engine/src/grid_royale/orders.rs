//! What a seat does in one turn: its order batch, and why a batch can be
//! refused as a whole.
//!
//! An [`Action`] is `None` for a no-action turn (every unit stays, no
//! spawn): a refused batch, a late or malformed reply, a seat that said
//! nothing. A batch is checked against the state it is played on
//! ([`super::GridRoyale::check_orders`]) both when a reply is parsed and
//! again in the step, so a forged replay cannot smuggle in an order for
//! another seat's unit.

use serde::{Deserialize, Serialize};

/// One unit's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dir {
    #[serde(rename = "STAY")]
    Stay,
    #[serde(rename = "MOVE_N")]
    North,
    #[serde(rename = "MOVE_E")]
    East,
    #[serde(rename = "MOVE_S")]
    South,
    #[serde(rename = "MOVE_W")]
    West,
}

impl Dir {
    /// The five orders, in a fixed order (benchmarks and bots draw from it).
    pub const ALL: [Dir; 5] = [Dir::Stay, Dir::North, Dir::East, Dir::South, Dir::West];

    /// The protocol word.
    pub fn word(self) -> &'static str {
        match self {
            Dir::Stay => "STAY",
            Dir::North => "MOVE_N",
            Dir::East => "MOVE_E",
            Dir::South => "MOVE_S",
            Dir::West => "MOVE_W",
        }
    }

    /// The inverse of [`Dir::word`].
    pub fn from_word(word: &str) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.word() == word)
    }

    /// The step `(dx, dy)`; north is `y - 1` (row 0 is the top row).
    pub fn delta(self) -> (isize, isize) {
        match self {
            Dir::Stay => (0, 0),
            Dir::North => (0, -1),
            Dir::East => (1, 0),
            Dir::South => (0, 1),
            Dir::West => (-1, 0),
        }
    }
}

/// One entry of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// The unit's id.
    pub unit: u32,
    /// What it does.
    #[serde(rename = "do")]
    pub dir: Dir,
}

/// A seat's batch for one turn, shaped as the reply it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Orders {
    /// At most one per owned unit; units not named stay.
    #[serde(default)]
    pub orders: Vec<Order>,
    /// Ask for a new unit on the base.
    #[serde(default)]
    pub spawn: bool,
}

/// A seat's action: `None` is a no-action turn.
///
/// In a replay file a no-action turn is the word `"none"`, because `null`
/// already means "not due" there; `arena replay dump` prints it as `null`
/// (see [`Action::dump`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Wire", into = "Wire")]
pub struct Action(pub Option<Orders>);

/// How an [`Action`] is written in a replay.
#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    NoAction(NoAction),
    Orders(Orders),
}

#[derive(Clone, Copy, Serialize, Deserialize)]
enum NoAction {
    #[serde(rename = "none")]
    None,
}

impl From<Wire> for Action {
    fn from(wire: Wire) -> Action {
        match wire {
            Wire::NoAction(NoAction::None) => Action(None),
            Wire::Orders(orders) => Action(Some(orders)),
        }
    }
}

impl From<Action> for Wire {
    fn from(action: Action) -> Wire {
        match action.0 {
            None => Wire::NoAction(NoAction::None),
            Some(orders) => Wire::Orders(orders),
        }
    }
}

impl Action {
    /// Every unit stays and nothing spawns.
    pub const NONE: Action = Action(None);

    /// The dump's form: the batch as the reply would write it, `null` for a
    /// no-action turn or a seat that was not asked.
    pub fn dump(action: Option<&Action>) -> serde_json::Value {
        match action.and_then(|a| a.0.as_ref()) {
            Some(orders) => serde_json::to_value(orders).unwrap_or(serde_json::Value::Null),
            None => serde_json::Value::Null,
        }
    }
}

/// Why a batch was refused as a whole.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Illegal {
    /// Not JSON, or not the reply's shape (wrong types, unknown keys).
    #[error("not an order batch: {0}")]
    Syntax(String),
    /// A `do` that is none of the five orders.
    #[error("unknown order {0:?}")]
    UnknownDo(String),
    /// An order for a unit the seat does not own (or that does not exist).
    #[error("unit {0} is not yours")]
    NotYours(u64),
    /// Two orders for one unit.
    #[error("unit {0} is ordered twice")]
    Twice(u32),
}
