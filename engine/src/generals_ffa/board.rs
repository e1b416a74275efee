//! The state of a game: parameters, the cell planes, the four seats, the logs.
//!
//! [`Params`] are the ruleset's numbers; [`Board`] is an unchecked layout (what
//! the map generator draws and what tests write by hand); [`GeneralsFfa`] is
//! the checked game built from both by [`GeneralsFfa::new`]. The serialised
//! form is read back through [`super::state`], which refuses inconsistent
//! sizes and indices, so a forged file is an error, never a panic.
//!
//! Seats sit clockwise from the top-left corner: seat 0 top-left, 1
//! top-right, 2 bottom-right, 3 bottom-left.

use serde::{Deserialize, Serialize};

use super::plan::{self, Plan};
use super::view::{CellKind, View};
use crate::game::Outcome;

/// Seats in every game.
pub const SEATS: usize = 4;
/// Plans are installed on every turn that is a multiple of this.
pub const PLAN_EVERY: u32 = 8;
/// Army on a neutral city at the start.
pub const CITY_ARMY: u32 = 40;
/// Army on a neutral citadel (the farther city of each quadrant) at the start.
pub const CITADEL_ARMY: u32 = 50;
/// Army on each crown at the start.
pub const CROWN_ARMY: u32 = 1;
/// Longest board side accepted (keeps every army sum far inside `u32`).
pub const MAX_SIDE: usize = 64;
/// Most turns a game may be configured for.
pub const MAX_TURNS_LIMIT: u32 = 50_000;
/// Most army a state read from a file may hold in total.
pub const MAX_TOTAL_ARMY: u64 = 1_000_000_000;

/// The ruleset's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Board width in cells (even: four mirrored quadrants).
    pub width: usize,
    /// Board height in cells (even).
    pub height: usize,
    /// The game ends after this many turns.
    pub max_turns: u32,
    /// Every owned cell gains +1 on each turn that is a multiple of this.
    pub growth_period: u32,
}

impl Params {
    /// The standard board: 16 × 10, 240 turns, growth every 25.
    pub const STANDARD: Params = Params {
        width: 16,
        height: 10,
        max_turns: 240,
        growth_period: 25,
    };
    /// The blitz board: 12 × 8, 160 turns, growth every 25.
    pub const BLITZ: Params = Params {
        width: 12,
        height: 8,
        max_turns: 160,
        growth_period: 25,
    };

    /// Checks the ranges the engine's arithmetic and the generator rely on.
    pub fn check(&self) -> Result<(), StateError> {
        let side = |s: usize| (4..=MAX_SIDE).contains(&s) && s.is_multiple_of(2);
        if !side(self.width) || !side(self.height) {
            return Err(StateError::Size {
                width: self.width,
                height: self.height,
            });
        }
        if self.max_turns == 0 || self.max_turns > MAX_TURNS_LIMIT {
            return Err(StateError::Params("max_turns must be 1..=50000"));
        }
        if self.growth_period == 0 {
            return Err(StateError::Params("growth_period must be at least 1"));
        }
        Ok(())
    }

    /// Cells on the board.
    pub fn cells(&self) -> usize {
        self.width * self.height
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::STANDARD
    }
}

/// An unchecked layout: the generator's output, or a hand-made test position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// Row-major cell kinds.
    pub kind: Vec<CellKind>,
    /// Row-major owners: `None` neutral, else the seat.
    pub owner: Vec<Option<u8>>,
    /// Row-major armies.
    pub army: Vec<u32>,
    /// Each seat's crown cell.
    pub crowns: [usize; SEATS],
}

impl Board {
    /// An all-plain, all-neutral board of `params`' size with the crowns placed
    /// (kind crown, owned by their seat, [`CROWN_ARMY`] each): a canvas for
    /// hand-made positions.
    pub fn blank(params: &Params, crowns: [usize; SEATS]) -> Board {
        let cells = params.cells();
        let mut board = Board {
            kind: vec![CellKind::Plain; cells],
            owner: vec![None; cells],
            army: vec![0; cells],
            crowns,
        };
        for (seat, &cell) in crowns.iter().enumerate() {
            if cell < cells {
                board.kind[cell] = CellKind::Crown;
                board.owner[cell] = Some(seat as u8);
                board.army[cell] = CROWN_ARMY;
            }
        }
        board
    }
}

/// What a seat last saw of one cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// The kind when last seen; `None`: never seen.
    pub kind: Option<CellKind>,
    /// The owner when last seen; `None`: neutral or never seen.
    pub owner: Option<u8>,
    /// The turn it was last seen (`turn()` at the time).
    pub seen: Option<u32>,
}

/// One seat's standing and knowledge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeatState {
    /// Still holds its crown.
    pub alive: bool,
    /// `turn()` right after the step that took its crown; `None` while alive.
    pub death_turn: Option<u32>,
    /// Its crown cell (a city of the captor's once taken).
    pub crown: usize,
    /// The plan its captain follows until the next install.
    pub plan: Plan,
    /// Left the match; driven by [`plan::sprawl`] and ranked below every
    /// seat that did not forfeit.
    pub forfeited: bool,
    /// `turn()` when it forfeited (ranking version 2 on; absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forfeit_turn: Option<u32>,
    /// Moves discarded by the resolution rules.
    pub invalid_moves: u64,
    /// Per cell, what this seat last saw there.
    pub memory: Vec<Memory>,
}

/// Something that happened to a seat, for the logs and the viewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// `seat` took `other`'s crown.
    #[serde(rename = "generalcaptured")]
    GeneralCaptured,
    /// `seat` lost its crown to `other`.
    #[serde(rename = "eliminated")]
    Eliminated,
}

/// One logged event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `turn()` right after the step it happened in.
    pub turn: u32,
    /// What happened.
    pub kind: EventKind,
    /// The seat the event is for.
    pub seat: usize,
    /// The other seat involved.
    pub other: usize,
}

/// Buffers reused every turn, never serialised and ignored by `==`: they are
/// a function of the rest of the state, or a guard finding about it.
#[derive(Clone, Default)]
pub(crate) struct Scratch {
    /// Per seat, the view built at the start of the turn.
    pub(crate) views: Vec<View>,
    /// Per cell, bit `s` set when seat `s` sees it.
    pub(crate) vis: Vec<u8>,
    /// `vis` matches the board as it is now (cleared whenever a step starts
    /// changing it; false after a clone from a file).
    pub(crate) vis_current: bool,
    /// The first broken invariant the sim guard found in a step.
    pub(crate) violation: Option<String>,
    /// [`plan::sprawl`], built once: the captains' fallback every turn.
    pub(crate) sprawl: Option<Plan>,
}

impl PartialEq for Scratch {
    fn eq(&self, _: &Scratch) -> bool {
        true
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

/// A game of generals-ffa.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "super::state::State")]
pub struct GeneralsFfa {
    /// The ruleset's numbers.
    pub(crate) params: Params,
    /// Row-major cell kinds; only crown → city ever changes.
    pub(crate) kind: Vec<CellKind>,
    /// Row-major owners: `None` neutral, else the seat.
    pub(crate) owner: Vec<Option<u8>>,
    /// Row-major armies.
    pub(crate) army: Vec<u32>,
    /// The four seats.
    pub(crate) seats: [SeatState; SEATS],
    /// Steps applied so far.
    pub(crate) turn: u32,
    /// `hashes[t]`: [`GeneralsFfa::board_hash`] after step `t + 1`.
    pub(crate) hashes: Vec<u64>,
    /// Every event so far, in order.
    pub(crate) events: Vec<Event>,
    /// Set once the game is over.
    pub(crate) outcome: Option<Outcome>,
    /// How forfeited seats rank among themselves: from version 2 the later
    /// forfeit first; version 1 (states written before it, which carry no
    /// field) by the game's criteria alone, so their replays still verify.
    #[serde(skip_serializing_if = "is_first_ranking")]
    pub(crate) ranking_version: u32,
    /// Per-turn buffers and guard findings.
    #[serde(skip)]
    pub(crate) scratch: Scratch,
}

/// The ranking of games created now.
pub const RANKING_VERSION: u32 = 2;

fn is_first_ranking(version: &u32) -> bool {
    *version == 1
}

/// Why a board, parameters or a serialised state were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A board side is odd or outside 4..=64.
    #[error("board is {width}x{height}; each side must be even and 4..=64")]
    Size { width: usize, height: usize },
    /// `max_turns` or `growth_period` is out of range.
    #[error("params out of range: {0}")]
    Params(&'static str),
    /// A per-cell plane (or a seat's memory) has the wrong length.
    #[error("the {plane} plane has {got} cells, expected {expected}")]
    PlaneLength {
        plane: &'static str,
        got: usize,
        expected: usize,
    },
    /// A seat's crown is off the board, or (for a new game) not a crown it owns.
    #[error("crown of seat {seat} is not a crown cell it owns")]
    Crown { seat: usize },
    /// A cell names an owner that is not a seat.
    #[error("cell {cell} has owner {owner}; seats are 0..=3")]
    Owner { cell: usize, owner: u8 },
    /// A seat's own fields disagree (death turn, remembered owners).
    #[error("seat {seat}: {problem}")]
    Seat { seat: usize, problem: &'static str },
    /// More army than the engine's sums are sized for.
    #[error("the armies add up to {total}, more than {MAX_TOTAL_ARMY}")]
    Army { total: u64 },
    /// The hash log is not one entry per turn played.
    #[error("{hashes} hashes logged after {turn} turns")]
    Hashes { hashes: usize, turn: u32 },
    /// The turn is past the limit, or at it without an outcome.
    #[error("turn {turn} is past max_turns {max_turns}, or at it with no outcome")]
    Turn { turn: u32, max_turns: u32 },
    /// An event names a seat that does not exist.
    #[error("event {index} names a seat outside 0..=3")]
    Event { index: usize },
    /// The outcome does not cover exactly four seats.
    #[error("the outcome must rank and score exactly four seats")]
    Outcome,
}

impl GeneralsFfa {
    /// The game on the board named by `seed` (see [`super::mapgen`]).
    pub fn from_seed(seed: u64, params: Params) -> Result<GeneralsFfa, StateError> {
        params.check()?;
        GeneralsFfa::new(super::mapgen::generate(seed, &params), params)
    }

    /// A fresh game on `board`: every seat alive with [`plan::sprawl`]
    /// installed, turn 0, and the turn-0 vision remembered.
    pub fn new(board: Board, params: Params) -> Result<GeneralsFfa, StateError> {
        params.check()?;
        let cells = params.cells();
        for (plane, got) in [
            ("kind", board.kind.len()),
            ("owner", board.owner.len()),
            ("army", board.army.len()),
        ] {
            if got != cells {
                return Err(StateError::PlaneLength {
                    plane,
                    got,
                    expected: cells,
                });
            }
        }
        for (seat, &cell) in board.crowns.iter().enumerate() {
            let ok = board.kind.get(cell) == Some(&CellKind::Crown)
                && board.owner.get(cell) == Some(&Some(seat as u8));
            if !ok {
                return Err(StateError::Crown { seat });
            }
        }
        let seat = |s: usize| SeatState {
            alive: true,
            death_turn: None,
            crown: board.crowns[s],
            plan: plan::sprawl(),
            forfeited: false,
            forfeit_turn: None,
            invalid_moves: 0,
            memory: vec![Memory::default(); cells],
        };
        let mut game = GeneralsFfa {
            params,
            kind: board.kind,
            owner: board.owner,
            army: board.army,
            seats: [seat(0), seat(1), seat(2), seat(3)],
            turn: 0,
            hashes: Vec::new(),
            events: Vec::new(),
            outcome: None,
            ranking_version: RANKING_VERSION,
            scratch: Scratch::default(),
        };
        super::state::check_planes(&game)?;
        game.remember(0);
        Ok(game)
    }

    /// The ruleset's numbers.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Board width.
    pub fn width(&self) -> usize {
        self.params.width
    }

    /// Board height.
    pub fn height(&self) -> usize {
        self.params.height
    }

    /// The kind of `cell`, `None` off the board.
    pub fn kind(&self, cell: usize) -> Option<CellKind> {
        self.kind.get(cell).copied()
    }

    /// The owner of `cell` (`None` neutral or off the board).
    pub fn owner(&self, cell: usize) -> Option<usize> {
        self.owner.get(cell).copied().flatten().map(usize::from)
    }

    /// The army on `cell` (0 off the board).
    pub fn army(&self, cell: usize) -> u32 {
        self.army.get(cell).copied().unwrap_or(0)
    }

    /// One seat's standing and memory; `None` for a seat outside 0..=3.
    pub fn seat(&self, seat: usize) -> Option<&SeatState> {
        self.seats.get(seat)
    }

    /// Every event so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The board hash after each turn so far.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// Row-major index of `(row, col)`.
    pub fn cell(&self, row: usize, col: usize) -> usize {
        row * self.params.width + col
    }

    /// The four cells `cell` maps to under the board's mirror symmetries, in
    /// the order identity, left-right, top-bottom, both.
    pub fn mirrors(&self, cell: usize) -> [usize; 4] {
        mirrors(self.params.width, self.params.height, cell)
    }

    /// Land, army and cities-plus-crowns a seat owns.
    pub fn totals(&self, seat: usize) -> (u64, u64, u64) {
        let mut totals = (0, 0, 0);
        for cell in 0..self.kind.len() {
            if self.owner[cell].map(usize::from) == Some(seat) {
                totals.0 += 1;
                totals.1 += u64::from(self.army[cell]);
                if matches!(self.kind[cell], CellKind::City | CellKind::Crown) {
                    totals.2 += 1;
                }
            }
        }
        totals
    }

    /// Army on the whole board.
    pub(crate) fn total_army(&self) -> u64 {
        let mut total = 0;
        for &army in &self.army[..] {
            total += u64::from(army);
        }
        total
    }

    /// A stable FNV-1a-style 64-bit digest of the board: per cell, the word
    /// `kind | owner << 8 | army << 16` (owner `0xFF` for neutral) is folded
    /// in with an xor and a multiply by the FNV-1a 64 prime.
    pub fn board_hash(&self) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let (kinds, owners, armies) = (&self.kind[..], &self.owner[..], &self.army[..]);
        for cell in 0..kinds.len().min(owners.len()).min(armies.len()) {
            let owner = match owners[cell] {
                Some(seat) => u64::from(seat),
                None => 0xFF,
            };
            let word =
                u64::from(kind_code(kinds[cell])) | owner << 8 | u64::from(armies[cell]) << 16;
            hash = (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3);
        }
        hash
    }
}

/// A kind's byte in [`GeneralsFfa::board_hash`].
fn kind_code(kind: CellKind) -> u8 {
    match kind {
        CellKind::Plain => 0,
        CellKind::Mountain => 1,
        CellKind::City => 2,
        CellKind::Crown => 3,
    }
}

/// The images of `cell` under the board's symmetries (identity, left-right,
/// top-bottom, both); a cell off the board maps to itself four times.
pub fn mirrors(width: usize, height: usize, cell: usize) -> [usize; 4] {
    if cell >= width * height {
        return [cell; 4];
    }
    let (row, col) = (cell / width, cell % width);
    let (mrow, mcol) = (height - 1 - row, width - 1 - col);
    [
        cell,
        row * width + mcol,
        mrow * width + col,
        mrow * width + mcol,
    ]
}
