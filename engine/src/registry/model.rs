//! How a game lets model graphs play: its frames become named input
//! tensors through versioned adapters, and a head of scores becomes the
//! reply a process bot would have sent.
//!
//! The model host (a platform program, game-blind) finds the game's
//! [`ModelInterface`] in the registry; everything game-specific about
//! tensors lives with the game's engine module. The host only ever sees
//! adapter names, their parameters, shapes made of the dims below, flat
//! `f32` buffers and the head's rows of scores.

use std::collections::BTreeMap;

/// A game's adapters and heads for model-graph seats.
#[derive(Debug)]
pub struct ModelInterface {
    /// The adapter set's versioned name (`ants/1`); a `bot.toml` names the
    /// set it was trained against, and only that exact version plays.
    pub adapter_set: &'static str,
    /// Every adapter a graph input may be fed by.
    pub adapters: &'static [AdapterSpec],
    /// The one output the host reads scores from.
    pub head: HeadSpec,
    /// The largest board the game allows, `(rows, cols)`: the size the cost
    /// estimate assumes for board-sized dims.
    pub largest_board: (usize, usize),
    /// The head rows (ants, units...) the cost estimate assumes: a typical
    /// busy turn, not the worst case (which has no useful bound).
    pub reference_rows: usize,
    /// Starts reading one seat's frames of one game, for a graph that fixes
    /// the board size it is given (see [`InputArgs::rows`]).
    pub reader: NewReader,
}

/// Starts a game's frame reader (see [`ModelInterface::reader`]).
pub type NewReader = fn(BoardArgs) -> Box<dyn FrameReader>;

/// A game's reader of one frame alone (see [`Stateless`]).
pub type DecodeFrame = fn(&[u8]) -> Result<Box<dyn FrameView>, AdapterError>;

/// The board size a graph fixes for every input, when it fixes one: all
/// inputs that fix [`Dim::BoardRows`] (or [`Dim::BoardCols`]) fix the same
/// size, which the head's rows may depend on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BoardArgs {
    pub rows: Option<usize>,
    pub cols: Option<usize>,
}

/// Reads the messages a seat is sent during one game, in order, and may
/// remember what earlier ones said (the fog hides it afterwards).
pub trait FrameReader: Send {
    /// Reads the next message: the bytes a process bot would have been
    /// sent this turn, the handshake included on the first turn. Every
    /// message must be read, also when no reply is wanted from it, so that
    /// what the reader remembers is the same whatever the evaluations did.
    fn read(&mut self, message: &[u8]) -> Result<Box<dyn FrameView + '_>, AdapterError>;
}

/// A reader for games whose frame is one line that says everything: each
/// message's last line is decoded alone (the handshake before it adds
/// nothing).
pub struct Stateless(pub DecodeFrame);

impl FrameReader for Stateless {
    fn read(&mut self, message: &[u8]) -> Result<Box<dyn FrameView + '_>, AdapterError> {
        (self.0)(last_line(message))
    }
}

/// The last complete line of `message` (with its newline).
fn last_line(message: &[u8]) -> &[u8] {
    let body = message.strip_suffix(b"\n").unwrap_or(message);
    match body.iter().rposition(|&b| b == b'\n') {
        Some(cut) => &message[cut + 1..],
        None => message,
    }
}

impl ModelInterface {
    /// The adapter called `name`.
    pub fn adapter(&self, name: &str) -> Option<&'static AdapterSpec> {
        self.adapters.iter().find(|a| a.name == name)
    }
}

/// One way of turning a frame into a tensor.
#[derive(Debug)]
pub struct AdapterSpec {
    /// The name `bot.toml` uses (`local_window`).
    pub name: &'static str,
    /// One line for the documentation and the check's report.
    pub summary: &'static str,
    /// The integer parameters a `bot.toml` may set.
    pub params: &'static [ParamSpec],
    /// The tensor's shape, outermost first.
    pub shape: &'static [Dim],
}

/// An integer parameter of an adapter, with its bounds.
#[derive(Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub min: i64,
    pub max: i64,
    /// Used when neither `bot.toml` nor the graph's declared shape sets it.
    pub default: i64,
    pub summary: &'static str,
}

/// One dim of an adapter's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Always this size.
    Fixed(usize),
    /// The head's rows this frame (one per ant): the graph must leave it
    /// symbolic, since it changes every turn.
    HeadRows,
    /// `times * value + plus` for the parameter `param`. A graph that fixes
    /// this dim thereby sets the parameter.
    Param {
        param: &'static str,
        times: usize,
        plus: usize,
    },
    /// The board's rows (cols): symbolic in the graph to follow the board,
    /// or fixed, and then the adapter pads or crops the board to that size.
    BoardRows,
    BoardCols,
}

/// How one frame's input is to be built: the adapter's parameters, all
/// present and within bounds, and the board size the graph fixes, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputArgs {
    pub params: BTreeMap<String, i64>,
    /// `Some(n)` when the graph fixes a [`Dim::BoardRows`] dim to `n`.
    pub rows: Option<usize>,
    /// `Some(n)` when the graph fixes a [`Dim::BoardCols`] dim to `n`.
    pub cols: Option<usize>,
}

impl InputArgs {
    /// The parameter `name`, or 0 if it is missing (the host always fills
    /// every declared parameter, so this is only a fallback for callers that
    /// build arguments by hand).
    pub fn param(&self, name: &str) -> i64 {
        self.params.get(name).copied().unwrap_or(0)
    }
}

/// The output the host reads: `[rows, width]` scores.
#[derive(Debug)]
pub struct HeadSpec {
    /// What the head's rows are.
    pub rows: HeadRows,
    /// Scores per row.
    pub width: usize,
    /// What each score column means, in order (`N`, `E`, ...).
    pub columns: &'static [&'static str],
}

/// What one row of the head scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadRows {
    /// One row per unit of this frame ([`Dim::HeadRows`]; an ant): the
    /// graph leaves the head's rows symbolic, as its inputs' rows.
    PerFrame,
    /// One row per cell of the board as the inputs give it, row-major:
    /// `rows × cols` of [`Dim::BoardRows`] and [`Dim::BoardCols`].
    BoardCells,
}

/// A tensor an adapter built: row-major `data` of `shape`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputTensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// One decoded frame.
pub trait FrameView {
    /// How many head rows this frame needs (0: reply without evaluating).
    fn head_rows(&self) -> usize;
    /// The board's `(rows, cols)` in this frame.
    fn board(&self) -> (usize, usize);
    /// The input the adapter `adapter` builds from this frame.
    fn input(&self, adapter: &str, args: &InputArgs) -> Result<InputTensor, AdapterError>;
    /// The reply line (without its newline) for `scores`, `head_rows()`
    /// rows of the head's width, row-major, every score finite.
    fn reply(&self, scores: &[f32]) -> Result<Vec<u8>, AdapterError>;

    /// [`FrameView::reply`], and whether the head's best entry of all was
    /// one the game refused as illegal (and so not what was played). A game
    /// that plays whatever its head says never refuses one.
    fn answer(&self, scores: &[f32]) -> Result<HeadAnswer, AdapterError> {
        Ok(HeadAnswer {
            line: self.reply(scores)?,
            best_was_illegal: false,
        })
    }
}

/// A reply and how it was chosen (see [`FrameView::answer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadAnswer {
    pub line: Vec<u8>,
    pub best_was_illegal: bool,
}

/// A frame that no adapter can read, or arguments an adapter cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdapterError {
    #[error("the frame is not valid: {0}")]
    Frame(String),
    #[error("no adapter named {0:?}")]
    UnknownAdapter(String),
    #[error("adapter {adapter}: {problem}")]
    Args {
        adapter: &'static str,
        problem: String,
    },
    #[error("the head has {got} scores, not {want}")]
    HeadSize { got: usize, want: usize },
    #[error("the board does not fit the graph: {0}")]
    Board(String),
}

#[cfg(test)]
mod tests {
    use super::last_line;

    #[test]
    fn a_stateless_reader_decodes_the_last_line() {
        assert_eq!(
            last_line(b"{\"game\":1}\n{\"turn\":1}\n"),
            b"{\"turn\":1}\n"
        );
        assert_eq!(last_line(b"{\"turn\":2}\n"), b"{\"turn\":2}\n");
        assert_eq!(last_line(b"{\"turn\":3}"), b"{\"turn\":3}");
    }
}
