//! The `ants/1` adapter set: how an Ants frame becomes a model graph's
//! input tensors, and how its head of scores becomes the orders line.
//!
//! This module reads the frame JSON with its own structs and depends on
//! nothing else in the Ants engine: the frame format is the contract, not
//! the engine's types. Participants' documentation: `docs/games/ants-models.md`.
//!
//! Channels, for `k` = the `enemy_channels` parameter (1 to 7):
//!
//! | index       | channel                                                  |
//! |-------------|----------------------------------------------------------|
//! | 0           | never seen (`?`)                                         |
//! | 1           | water (`%`)                                              |
//! | 2           | in view this turn (`.`)                                  |
//! | 3           | food                                                     |
//! | 4           | my ant                                                   |
//! | 5           | my hill                                                  |
//! | 6 .. 6+k    | enemy ant, relative owner `o` in channel `6 + min(o,k) - 1` |
//! | 6+k .. 6+2k | enemy hill, the same way                                 |
//!
//! Every value is 0 or 1. Land seen before but out of view (`,`) has all
//! three terrain channels at 0.

use serde::Deserialize;

use crate::registry::model::{
    AdapterError, AdapterSpec, BoardArgs, Dim, FrameReader, FrameView, HeadRows, HeadSpec,
    InputArgs, InputTensor, ModelInterface, ParamSpec, Stateless,
};

/// The contract between Ants and the model host.
pub static INTERFACE: ModelInterface = ModelInterface {
    adapter_set: "ants/1",
    adapters: &[LOCAL_WINDOW, WHOLE_MAP],
    head: HeadSpec {
        rows: HeadRows::PerFrame,
        width: 5,
        columns: &["N", "E", "S", "W", "stay"],
    },
    largest_board: LARGEST_BOARD,
    reference_rows: REFERENCE_ANTS,
    reader,
};

/// Every frame says all an adapter needs: nothing is remembered.
fn reader(_: BoardArgs) -> Box<dyn FrameReader> {
    Box::new(Stateless(decode))
}

/// The board size the cost estimate assumes: the largest map the game
/// accepts.
pub const LARGEST_BOARD: (usize, usize) = (200, 200);

/// The ants per colony the cost estimate assumes.
pub const REFERENCE_ANTS: usize = 200;

/// The largest board a frame may describe (rows times cols), so that a
/// corrupt frame cannot make an adapter allocate without bound.
const MAX_CELLS: usize = 1 << 20;

/// Channels before the per-enemy ones.
const BASE_CHANNELS: usize = 6;

const ENEMY_CHANNELS: ParamSpec = ParamSpec {
    name: "enemy_channels",
    min: 1,
    max: 7,
    default: 1,
    summary: "channels for enemy ants (and as many for enemy hills): 1 merges every enemy, \
              k keeps relative owners 1..k-1 apart and merges the rest into the last",
};

const CHANNELS: Dim = Dim::Param {
    param: "enemy_channels",
    times: 2,
    plus: BASE_CHANNELS,
};

const LOCAL_WINDOW: AdapterSpec = AdapterSpec {
    name: "local_window",
    summary: "per ant in mine order, the square of side 2*radius+1 centred on it, wrapping on the torus",
    params: &[
        ParamSpec {
            name: "radius",
            min: 0,
            max: 12,
            default: 5,
            summary: "squares seen on each side of the ant",
        },
        ENEMY_CHANNELS,
    ],
    shape: &[
        Dim::HeadRows,
        CHANNELS,
        Dim::Param {
            param: "radius",
            times: 2,
            plus: 1,
        },
        Dim::Param {
            param: "radius",
            times: 2,
            plus: 1,
        },
    ],
};

const WHOLE_MAP: AdapterSpec = AdapterSpec {
    name: "whole_map",
    summary: "the whole board as the colony knows it; a graph that fixes rows or cols gets the \
              board cropped to them from the top left, or padded below and right with water",
    params: &[ENEMY_CHANNELS],
    shape: &[Dim::Fixed(1), CHANNELS, Dim::BoardRows, Dim::BoardCols],
};

/// Score columns in tie-break order: on equal scores the earlier wins.
const TIE_BREAK: [usize; 5] = [4, 0, 1, 2, 3];
/// The order character of each score column.
const ORDER_CHARS: [u8; 5] = [b'N', b'E', b'S', b'W', b'-'];

/// The frame as the engine writes it; fields the adapters do not read are
/// accepted and ignored.
#[derive(Debug, Deserialize)]
struct RawFrame {
    rows: usize,
    cols: usize,
    map: Vec<String>,
    #[serde(default)]
    ants: Vec<[i64; 3]>,
    #[serde(default)]
    mine: Vec<[i64; 2]>,
    #[serde(default)]
    food: Vec<[i64; 2]>,
    #[serde(default)]
    hills: Vec<[i64; 3]>,
}

/// Terrain of one square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Terrain {
    NeverSeen,
    Water,
    Visible,
    Remembered,
}

/// One frame, checked and laid out by square.
#[derive(Debug)]
struct AntsView {
    rows: usize,
    cols: usize,
    terrain: Vec<Terrain>,
    /// Relative owner of the ant on each square.
    ant: Vec<Option<u32>>,
    food: Vec<bool>,
    /// Relative owner of the hill on each square.
    hill: Vec<Option<u32>>,
    /// My ants in mine order, `(row, col)`.
    mine: Vec<(usize, usize)>,
}

fn decode(bytes: &[u8]) -> Result<Box<dyn FrameView>, AdapterError> {
    Ok(Box::new(AntsView::decode(bytes)?))
}

fn bad(problem: impl Into<String>) -> AdapterError {
    AdapterError::Frame(problem.into())
}

impl AntsView {
    fn decode(bytes: &[u8]) -> Result<AntsView, AdapterError> {
        // A handshake line may come before the first frame: the frame is
        // the last line that is not blank.
        let line = bytes
            .split(|&b| b == b'\n')
            .rfind(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
            .ok_or_else(|| bad("empty"))?;
        let raw: RawFrame = serde_json::from_slice(line).map_err(|e| bad(e.to_string()))?;
        let (rows, cols) = (raw.rows, raw.cols);
        if rows == 0 || cols == 0 || rows.saturating_mul(cols) > MAX_CELLS {
            return Err(bad(format!("a board of {rows}x{cols}")));
        }
        if raw.map.len() != rows {
            return Err(bad(format!("{} map rows, not {rows}", raw.map.len())));
        }
        let mut terrain = Vec::with_capacity(rows * cols);
        for (r, line) in raw.map.iter().enumerate() {
            if line.len() != cols {
                return Err(bad(format!("map row {r} is not {cols} squares")));
            }
            for ch in line.bytes() {
                terrain.push(match ch {
                    b'?' => Terrain::NeverSeen,
                    b'%' => Terrain::Water,
                    b'.' => Terrain::Visible,
                    b',' => Terrain::Remembered,
                    _ => return Err(bad(format!("map row {r} has {:?}", ch as char))),
                });
            }
        }
        let square = |r: i64, c: i64| -> Result<usize, AdapterError> {
            match (usize::try_from(r), usize::try_from(c)) {
                (Ok(r), Ok(c)) if r < rows && c < cols => Ok(r * cols + c),
                _ => Err(bad(format!("square ({r}, {c}) is off the board"))),
            }
        };
        let owner = |o: i64| u32::try_from(o).map_err(|_| bad(format!("owner {o}")));
        let mut view = AntsView {
            rows,
            cols,
            terrain,
            ant: vec![None; rows * cols],
            food: vec![false; rows * cols],
            hill: vec![None; rows * cols],
            mine: Vec::with_capacity(raw.mine.len()),
        };
        for &[r, c, o] in &raw.ants {
            view.ant[square(r, c)?] = Some(owner(o)?);
        }
        for &[r, c] in &raw.food {
            view.food[square(r, c)?] = true;
        }
        for &[r, c, o] in &raw.hills {
            view.hill[square(r, c)?] = Some(owner(o)?);
        }
        for &[r, c] in &raw.mine {
            let at = square(r, c)?;
            view.ant[at] = Some(0);
            view.mine.push((at / cols, at % cols));
        }
        Ok(view)
    }

    /// Writes square `at`'s channels into `out`, where channel `ch` lives
    /// at `out[ch * stride]`.
    fn write_square(&self, at: usize, enemies: usize, out: &mut [f32], stride: usize) {
        let mut set = |ch: usize| out[ch * stride] = 1.0;
        match self.terrain[at] {
            Terrain::NeverSeen => set(0),
            Terrain::Water => set(1),
            Terrain::Visible => set(2),
            Terrain::Remembered => {}
        }
        if self.food[at] {
            set(3);
        }
        let enemy = |o: u32| (o as usize).min(enemies) - 1;
        match self.ant[at] {
            Some(0) => set(4),
            Some(o) => set(BASE_CHANNELS + enemy(o)),
            None => {}
        }
        match self.hill[at] {
            Some(0) => set(5),
            Some(o) => set(BASE_CHANNELS + enemies + enemy(o)),
            None => {}
        }
    }

    fn local_window(&self, args: &InputArgs) -> Result<InputTensor, AdapterError> {
        let radius = param(&LOCAL_WINDOW, args, "radius")?;
        let enemies = param(&LOCAL_WINDOW, args, "enemy_channels")?;
        let side = 2 * radius + 1;
        let channels = BASE_CHANNELS + 2 * enemies;
        let plane = side * side;
        let mut data = vec![0.0; self.mine.len() * channels * plane];
        for (i, &(r, c)) in self.mine.iter().enumerate() {
            let block = &mut data[i * channels * plane..(i + 1) * channels * plane];
            for dr in 0..side {
                // (r + dr - radius) on the torus, without going negative.
                let row = (r + self.rows * (radius / self.rows + 1) + dr - radius) % self.rows;
                for dc in 0..side {
                    let col = (c + self.cols * (radius / self.cols + 1) + dc - radius) % self.cols;
                    let cell = dr * side + dc;
                    self.write_square(row * self.cols + col, enemies, &mut block[cell..], plane);
                }
            }
        }
        Ok(InputTensor {
            shape: vec![self.mine.len(), channels, side, side],
            data,
        })
    }

    fn whole_map(&self, args: &InputArgs) -> Result<InputTensor, AdapterError> {
        let enemies = param(&WHOLE_MAP, args, "enemy_channels")?;
        let channels = BASE_CHANNELS + 2 * enemies;
        let rows = args.rows.unwrap_or(self.rows);
        let cols = args.cols.unwrap_or(self.cols);
        if rows == 0 || cols == 0 || rows.saturating_mul(cols) > MAX_CELLS {
            return Err(AdapterError::Args {
                adapter: WHOLE_MAP.name,
                problem: format!("a tensor of {rows}x{cols} squares"),
            });
        }
        let plane = rows * cols;
        let mut data = vec![0.0; channels * plane];
        for r in 0..rows {
            for c in 0..cols {
                let cell = r * cols + c;
                if r < self.rows && c < self.cols {
                    self.write_square(r * self.cols + c, enemies, &mut data[cell..], plane);
                } else {
                    // Padding reads as water: nothing there can be reached.
                    data[plane + cell] = 1.0;
                }
            }
        }
        Ok(InputTensor {
            shape: vec![1, channels, rows, cols],
            data,
        })
    }
}

/// The parameter `name` of `spec`, checked against its bounds.
fn param(spec: &AdapterSpec, args: &InputArgs, name: &str) -> Result<usize, AdapterError> {
    let declared = spec.params.iter().find(|p| p.name == name);
    let value = args
        .params
        .get(name)
        .copied()
        .or(declared.map(|p| p.default));
    match (declared, value) {
        (Some(p), Some(v)) if (p.min..=p.max).contains(&v) => {
            usize::try_from(v).map_err(|_| AdapterError::Args {
                adapter: spec.name,
                problem: format!("{name} = {v}"),
            })
        }
        _ => Err(AdapterError::Args {
            adapter: spec.name,
            problem: format!("{name} = {value:?} is out of bounds"),
        }),
    }
}

/// The order for one ant's scores: the highest, ties to the earliest in
/// [`TIE_BREAK`] (stay, then N, E, S, W).
fn order(scores: &[f32]) -> u8 {
    let mut best = TIE_BREAK[0];
    for &col in &TIE_BREAK[1..] {
        if scores[col] > scores[best] {
            best = col;
        }
    }
    ORDER_CHARS[best]
}

impl FrameView for AntsView {
    fn head_rows(&self) -> usize {
        self.mine.len()
    }

    fn board(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    fn input(&self, adapter: &str, args: &InputArgs) -> Result<InputTensor, AdapterError> {
        match adapter {
            "local_window" => self.local_window(args),
            "whole_map" => self.whole_map(args),
            other => Err(AdapterError::UnknownAdapter(other.to_owned())),
        }
    }

    fn reply(&self, scores: &[f32]) -> Result<Vec<u8>, AdapterError> {
        let width = INTERFACE.head.width;
        let want = self.mine.len() * width;
        if scores.len() != want {
            return Err(AdapterError::HeadSize {
                got: scores.len(),
                want,
            });
        }
        let mut line = b"{\"orders\":\"".to_vec();
        line.extend(scores.chunks_exact(width).map(order));
        line.extend_from_slice(b"\"}");
        Ok(line)
    }
}

#[cfg(test)]
mod tests;
