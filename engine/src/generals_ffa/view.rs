//! What one seat knows: its fogged view with memory, the input of the
//! captain and (as JSON) the frame its bot reads; and the move the captain
//! hands to the rules.

use serde::{Deserialize, Serialize};

/// A cell's kind as a seat saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellKind {
    Plain,
    Mountain,
    City,
    Crown,
}

/// One cell of a seat's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellView {
    /// `None`: never seen.
    pub kind: Option<CellKind>,
    /// The owner's seat when last seen; `None` for neutral or never seen.
    pub owner: Option<usize>,
    /// The army, only while the cell is visible now.
    pub army: Option<u32>,
    /// The turn the cell was last seen (the current turn while visible).
    pub seen: Option<u32>,
    /// In sight now (owned, or touching an owned cell in any of 8 directions).
    pub visible: bool,
}

/// One seat's whole view at the start of a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub seat: usize,
    /// Steps applied so far.
    pub turn: u32,
    pub max_turns: u32,
    pub width: usize,
    pub height: usize,
    /// Row-major: cell `row * width + col`.
    pub cells: Vec<CellView>,
    /// This seat's own crown cell.
    pub crown: usize,
    /// Which seats are still in the game.
    pub alive: [bool; 4],
}

/// At most one move per seat per turn, as the captain compiles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Move {
    /// Source cell index (row-major).
    pub from: usize,
    /// Target cell index; must be one of the four orthogonal neighbours of
    /// `from`, or the move is discarded.
    pub to: usize,
    /// Armies to send; the rules clamp it into `1 ..= army(from) - 1`.
    pub amount: u32,
}
