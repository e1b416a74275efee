//! The `generals/1` adapter set: how a generals seat's frames become a
//! model graph's input tensors, and how its head of scores becomes a reply.
//!
//! Every tensor comes from the same code the training environment uses
//! (`arena_rl`): the frame is read into the compact planes by
//! [`super::frame`], which a test proves equal to what [`super::compact`]
//! writes from the state; the reference layout, the memory and the legal
//! actions are functions of that view. Participants' documentation:
//! `docs/games/generals-models.md`.
//!
//! Boards are padded to a square with mountains, as in training: to the
//! side the graph fixes, or, when its board dims are symbolic, to the
//! game's largest default side (or the board's own, if larger).

use super::frame::{FrameShape, parse_frame, parse_handshake};
use super::memory::{MAX_HISTORY, MEMORY_CHANNELS, Memory};
use super::reference::{DUEL_CHANNELS, SEATS_CHANNELS, write_reference};
use super::{ActionSpace, HeaderLayout, MAX_SIDE, View, legal_mask};
use crate::generals::{Action, Params};
use crate::registry::model::{
    AdapterError, AdapterSpec, BoardArgs, Dim, FrameReader, FrameView, HeadAnswer, HeadRows,
    HeadSpec, InputArgs, InputTensor, ModelInterface, ParamSpec,
};

/// The adapter set's name, shared by both rulesets.
pub const ADAPTER_SET: &str = "generals/1";

/// The Generals Competition (with builds: ten scores per cell).
pub static COMPETITION: ModelInterface = ModelInterface {
    adapter_set: ADAPTER_SET,
    adapters: &[COMPACT, REFERENCE, MEMORY, HISTORY, TOTALS],
    head: HeadSpec {
        rows: HeadRows::BoardCells,
        width: 10,
        columns: &COLUMNS,
    },
    largest_board: (COMPETITION_SIDE, COMPETITION_SIDE),
    reference_rows: COMPETITION_SIDE * COMPETITION_SIDE,
    reader: competition_reader,
};

/// Classic generals.io, every mode (nine scores per cell).
pub static CLASSIC: ModelInterface = ModelInterface {
    adapter_set: ADAPTER_SET,
    adapters: &[COMPACT, REFERENCE, REFERENCE_SEATS, MEMORY, HISTORY, TOTALS],
    head: HeadSpec {
        rows: HeadRows::BoardCells,
        width: 9,
        columns: COLUMNS.split_at(9).0,
    },
    largest_board: (CLASSIC_SIDE, CLASSIC_SIDE),
    reference_rows: CLASSIC_SIDE * CLASSIC_SIDE,
    reader: classic_reader,
};

/// The competition's board side (every board is at most this).
const COMPETITION_SIDE: usize = crate::generals::mapgen::MAX_SIDE;
/// The classic map generator's largest side.
const CLASSIC_SIDE: usize = *crate::generals_classic::mapgen::SIDE_LIMITS.end();

/// The head's columns, as [`super::actions`] numbers them.
const COLUMNS: [&str; 10] = [
    "pass",
    "up",
    "up_half",
    "down",
    "down_half",
    "left",
    "left_half",
    "right",
    "right_half",
    "build",
];

const fn board(channels: usize) -> [Dim; 4] {
    [
        Dim::Fixed(1),
        Dim::Fixed(channels),
        Dim::BoardRows,
        Dim::BoardCols,
    ]
}

const COMPACT: AdapterSpec = AdapterSpec {
    name: "compact",
    summary: "the frame's tile, owner and army grids as three planes, codes as the referee sends them",
    params: &[],
    shape: &board(3),
};

const REFERENCE: AdapterSpec = AdapterSpec {
    name: "reference",
    summary: "the reference environment's 14 duel channels (1v1 only)",
    params: &[],
    shape: &board(DUEL_CHANNELS.len()),
};

const REFERENCE_SEATS: AdapterSpec = AdapterSpec {
    name: "reference_seats",
    summary: "the reference environment's 17 multi-player channels (2v2 and free-for-all only)",
    params: &[],
    shape: &board(SEATS_CHANNELS.len()),
};

const MEMORY: AdapterSpec = AdapterSpec {
    name: "memory",
    summary: "what the seat remembers of each cell: ever seen, turn last seen, tile, owner and army then, enemy general seen",
    params: &[],
    shape: &board(MEMORY_CHANNELS.len()),
};

const HISTORY: AdapterSpec = AdapterSpec {
    name: "history",
    summary: "the opponents' land and army totals of the last turns, oldest first",
    params: &[ParamSpec {
        name: "turns",
        min: 1,
        max: MAX_HISTORY as i64,
        default: MAX_HISTORY as i64,
        summary: "how many turns back, the current one included",
    }],
    shape: &[
        Dim::Fixed(1),
        Dim::Param {
            param: "turns",
            times: 1,
            plus: 0,
        },
        Dim::Fixed(2),
    ],
};

const TOTALS: AdapterSpec = AdapterSpec {
    name: "totals",
    summary: "the turn, then land and army of the seat, its teammates and its opponents",
    params: &[],
    shape: &[Dim::Fixed(1), Dim::Fixed(TOTALS_FIELDS.len())],
};

/// The `totals` adapter's numbers, in order.
pub const TOTALS_FIELDS: [&str; 7] = [
    "turn",
    "my_land",
    "my_army",
    "allied_land",
    "allied_army",
    "opponent_land",
    "opponent_army",
];

/// The `totals` adapter's numbers for a view (see [`TOTALS_FIELDS`]); the
/// teammates' are zero outside 2v2, the opponents' summed.
pub fn totals(view: &View<'_>) -> [f32; 7] {
    let (mine, allied, opponents) = (view.mine(), view.allied(), view.opponents());
    [
        view.turn(),
        mine.land,
        mine.army,
        allied.land,
        allied.army,
        opponents.land,
        opponents.army,
    ]
    .map(|v| v as f32)
}

fn competition_reader(args: BoardArgs) -> Box<dyn FrameReader> {
    Box::new(Reader::new(args, true, COMPETITION_SIDE))
}

fn classic_reader(args: BoardArgs) -> Box<dyn FrameReader> {
    Box::new(Reader::new(args, false, CLASSIC_SIDE))
}

/// One seat's frames of one game: the latest view (once the handshake has
/// told its shape) and the memory of every view before it.
struct Reader {
    board: BoardArgs,
    builds: bool,
    largest: usize,
    latest: Option<Latest>,
    memory: Memory,
}

/// The planes of the latest frame, padded to `side`.
struct Latest {
    shape: FrameShape,
    side: usize,
    tile: Vec<u8>,
    owner: Vec<u8>,
    army: Vec<i32>,
    header: Vec<i64>,
}

impl Latest {
    fn new(shape: FrameShape, side: usize) -> Latest {
        let cells = side * side;
        Latest {
            header: vec![0; 1 + 2 * shape.seats],
            shape,
            side,
            tile: vec![0; cells],
            owner: vec![0; cells],
            army: vec![0; cells],
        }
    }

    fn view(&self) -> View<'_> {
        View {
            side: self.side,
            height: self.shape.height,
            width: self.shape.width,
            tile: &self.tile,
            owner: &self.owner,
            army: &self.army,
            header: &self.header,
            layout: self.shape.layout,
            seat: self.shape.seat,
            allies: self.shape.allies,
        }
    }
}

impl Reader {
    fn new(board: BoardArgs, builds: bool, largest: usize) -> Reader {
        Reader {
            board,
            builds,
            largest,
            latest: None,
            memory: Memory::new(),
        }
    }

    /// The padded side for a board of `shape`.
    fn side_for(&self, shape: &FrameShape) -> Result<usize, AdapterError> {
        let (h, w) = (shape.height, shape.width);
        let side = match (self.board.rows, self.board.cols) {
            (None, None) => self.largest.max(h).max(w),
            (Some(r), Some(c)) if r == c => r,
            (Some(r), Some(c)) => {
                return Err(AdapterError::Board(format!(
                    "the graph fixes a {r}x{c} board; generals boards are padded to a square"
                )));
            }
            (Some(s), None) | (None, Some(s)) => s,
        };
        if h > side || w > side {
            return Err(AdapterError::Board(format!(
                "the board is {h}x{w}, larger than the graph's {side}x{side}"
            )));
        }
        if side > MAX_SIDE {
            return Err(AdapterError::Board(format!(
                "a side of {side} is more than {MAX_SIDE}"
            )));
        }
        Ok(side)
    }
}

fn frame_error(e: impl std::fmt::Display) -> AdapterError {
    AdapterError::Frame(e.to_string())
}

impl FrameReader for Reader {
    fn read(&mut self, message: &[u8]) -> Result<Box<dyn FrameView + '_>, AdapterError> {
        let frame = if self.latest.is_some() {
            message
        } else {
            // The first message starts with the handshake line.
            let cut = message
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| frame_error("the first message has no handshake line"))?;
            let shape = parse_handshake(&message[..cut]).map_err(frame_error)?;
            let side = self.side_for(&shape)?;
            self.latest = Some(Latest::new(shape, side));
            &message[cut + 1..]
        };
        let latest = self
            .latest
            .as_mut()
            .ok_or_else(|| frame_error("no handshake"))?;
        parse_frame(
            frame,
            &latest.shape,
            latest.side,
            &mut latest.tile,
            &mut latest.owner,
            &mut latest.army,
            &mut latest.header,
        )
        .map_err(frame_error)?;
        self.memory.update(&latest.view()).map_err(frame_error)?;
        Ok(Box::new(GeneralsView {
            latest,
            memory: &self.memory,
            builds: self.builds,
        }))
    }
}

/// The latest frame of a [`Reader`], with its memory.
struct GeneralsView<'a> {
    latest: &'a Latest,
    memory: &'a Memory,
    builds: bool,
}

impl GeneralsView<'_> {
    fn space(&self) -> ActionSpace {
        ActionSpace {
            side: self.latest.side,
            builds: self.builds,
        }
    }
}

impl FrameView for GeneralsView<'_> {
    fn head_rows(&self) -> usize {
        self.latest.side * self.latest.side
    }

    fn board(&self) -> (usize, usize) {
        (self.latest.side, self.latest.side)
    }

    fn input(&self, adapter: &str, args: &InputArgs) -> Result<InputTensor, AdapterError> {
        let view = self.latest.view();
        let side = view.side;
        let cells = side * side;
        let planes = |channels: usize| InputTensor {
            shape: vec![1, channels, side, side],
            data: vec![0.0; channels * cells],
        };
        let wrong_mode = |name: &'static str, mode: &str| AdapterError::Args {
            adapter: name,
            problem: format!("plays {mode} only"),
        };
        let tensor = match adapter {
            "compact" => {
                let mut t = planes(3);
                let (tiles, rest) = t.data.split_at_mut(cells);
                let (owners, armies) = rest.split_at_mut(cells);
                for cell in 0..cells {
                    tiles[cell] = f32::from(view.tile[cell]);
                    owners[cell] = f32::from(view.owner[cell]);
                    armies[cell] = view.army[cell] as f32;
                }
                t
            }
            "reference" | "reference_seats" => {
                let (name, layout, channels, mode) = if adapter == "reference" {
                    ("reference", HeaderLayout::Duel, DUEL_CHANNELS.len(), "1v1")
                } else {
                    (
                        "reference_seats",
                        HeaderLayout::Seats,
                        SEATS_CHANNELS.len(),
                        "2v2 and free-for-all",
                    )
                };
                if view.layout != layout {
                    return Err(wrong_mode(name, mode));
                }
                let mut t = planes(channels);
                write_reference(&view, &mut t.data).map_err(frame_error)?;
                t
            }
            "memory" => {
                let mut t = planes(MEMORY_CHANNELS.len());
                self.memory
                    .write_planes(side, &mut t.data)
                    .map_err(frame_error)?;
                t
            }
            "history" => {
                let turns = usize::try_from(args.param("turns"))
                    .ok()
                    .filter(|t| (1..=MAX_HISTORY).contains(t))
                    .ok_or_else(|| AdapterError::Args {
                        adapter: "history",
                        problem: format!("turns must be 1..={MAX_HISTORY}"),
                    })?;
                let mut t = InputTensor {
                    shape: vec![1, turns, 2],
                    data: vec![0.0; 2 * turns],
                };
                self.memory
                    .write_history(turns, &mut t.data)
                    .map_err(frame_error)?;
                t
            }
            "totals" => InputTensor {
                shape: vec![1, TOTALS_FIELDS.len()],
                data: totals(&view).to_vec(),
            },
            other => return Err(AdapterError::UnknownAdapter(other.to_owned())),
        };
        Ok(tensor)
    }

    fn reply(&self, scores: &[f32]) -> Result<Vec<u8>, AdapterError> {
        Ok(self.answer(scores)?.line)
    }

    fn answer(&self, scores: &[f32]) -> Result<HeadAnswer, AdapterError> {
        let choice = choose(&self.latest.view(), &self.space(), scores)?;
        Ok(HeadAnswer {
            line: reply_line(&choice.action),
            best_was_illegal: choice.best_was_illegal,
        })
    }
}

/// What the head chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The highest-scoring legal entry's flat index.
    pub index: usize,
    pub action: Action,
    /// The highest-scoring entry of all was illegal (and so not played).
    pub best_was_illegal: bool,
}

/// The highest-scoring legal action of a head for `view`: scores are
/// `side × side × per_cell` (see [`super::actions`]), every one finite; on
/// equal scores the lowest flat index wins. A pass (any cell's entry 0) is
/// always legal, so something is always chosen.
pub fn choose(
    view: &View<'_>,
    space: &ActionSpace,
    scores: &[f32],
) -> Result<Choice, AdapterError> {
    if scores.len() != space.len() {
        return Err(AdapterError::HeadSize {
            got: scores.len(),
            want: space.len(),
        });
    }
    let mut mask = vec![0u8; space.len()];
    legal_mask(view, space, Params::default().build_base_cost, &mut mask).map_err(frame_error)?;
    let best = |legal_only: bool| {
        let mut best: Option<(usize, f32)> = None;
        for (i, (&s, &m)) in scores.iter().zip(&mask).enumerate() {
            if (m == 1 || !legal_only) && best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
        best.map_or(0, |(i, _)| i)
    };
    let index = best(true);
    let overall = best(false);
    let action = space.decode(index).unwrap_or(Action::PASS);
    Ok(Choice {
        index,
        action,
        best_was_illegal: mask[overall] == 0,
    })
}

/// The reply line of an action: its five fields.
pub fn reply_line(action: &Action) -> Vec<u8> {
    let [k, r, c, d, s] = action.fields();
    format!("{k} {r} {c} {d} {s}").into_bytes()
}
