//! The free-for-all and 2v2 formats. This module holds their state: plain
//! data ([`MultiState`]) and the validated game ([`GeneralsClassicMulti`])
//! it becomes. [`rules`] has the move order, step, captures and placements,
//! [`frame`] the N-seat handshake and frame, [`game`] the
//! [`Game`](crate::Game) impl and a random legal player.
//!
//! The 1v1 game is the exact competition engine; these formats are not
//! covered by the reference's fixtures and have their own, simpler engine
//! that shares the board codes ([`Kind`]), the reply
//! ([`Action`](crate::generals::Action)) and the frame codes. The state is
//! the defining fields only, every one checked when read back (a replay's
//! initial state can come from anyone): sizes, owner codes, the seats'
//! records, the generals.
//!
//! Owner codes on the board: 0 neutral, `s + 1` seat `s`.
//!
//! Every state names the rules version it is played under
//! ([`RULES_VERSION`]). A state without one was written before the field
//! existed, under the rotating move order (version 1); that order is gone,
//! so such a state, and a replay that starts from one, is refused by name
//! rather than re-simulated under rules it was not played by.

pub mod frame;
pub mod game;
pub mod rules;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use super::mapgen::ClassicMap;
use super::start::StartError;
use crate::game::Outcome;
use crate::generals::Kind;
use crate::generals::state::{MAX_TOTAL_ARMY, MAX_TURNS_LIMIT, side_ok};

/// The rules version this engine plays: moves in the 1v1 priority order
/// (chasing, reinforcing, smaller source army, lower seat).
pub const RULES_VERSION: u32 = 2;

/// The first version, which moved the seats in a rotating order (seat
/// `t mod N` first at time `t`); what a state without the field was played by.
pub const ROTATION_RULES_VERSION: u32 = 1;

/// What a state written before [`MultiState::rules_version`] existed reads as.
fn rotation_rules_version() -> u32 {
    ROTATION_RULES_VERSION
}

/// Fewest and most seats the multi-player engine takes.
pub const MIN_SEATS: usize = 2;
pub const MAX_SEATS: usize = 8;

/// The two multi-player formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Every seat for itself, 2..=8 seats.
    #[serde(rename = "ffa")]
    Ffa,
    /// Four seats, teams {0, 2} and {1, 3}.
    #[serde(rename = "2v2")]
    Teams,
}

impl Mode {
    /// The option word (`ffa`, `2v2`).
    pub fn word(self) -> &'static str {
        match self {
            Mode::Ffa => "ffa",
            Mode::Teams => "2v2",
        }
    }

    /// Whether this format is played by `seats` seats.
    pub fn accepts(self, seats: usize) -> bool {
        match self {
            Mode::Ffa => (MIN_SEATS..=MAX_SEATS).contains(&seats),
            Mode::Teams => seats == 4,
        }
    }

    /// The team of `seat`: itself in FFA, `seat % 2` in 2v2.
    pub fn team_of(self, seat: usize) -> u8 {
        match self {
            Mode::Ffa => seat as u8,
            Mode::Teams => (seat % 2) as u8,
        }
    }
}

/// One seat's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatState {
    /// The seat's team ([`Mode::team_of`]); stored so the JSON is readable alone.
    pub team: u8,
    /// The seat's general still stands. An eliminated seat owns nothing.
    pub alive: bool,
    /// The time after the step its general fell; `Some` exactly when not alive.
    pub eliminated_at: Option<u32>,
    /// The seat forfeited: it stays on the board, passes, and ranks last.
    pub forfeited: bool,
}

/// The defining fields of a multi-player game: what is written to JSON and
/// checked when read (see [`GeneralsClassicMulti::try_from`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultiState {
    /// `ffa` or `2v2`; its presence is what tells a multi-player state from
    /// a 1v1 one in a replay.
    pub mode: Mode,
    /// The rules the game is played under; only [`RULES_VERSION`] is
    /// accepted. Absent means [`ROTATION_RULES_VERSION`], so that files
    /// from before the field are recognised and refused by name.
    #[serde(default = "rotation_rules_version")]
    pub rules_version: u32,
    pub height: usize,
    pub width: usize,
    /// The turn limit: the game ends (`turn_limit`) when time reaches it.
    pub max_turns: u32,
    /// Row-major; a captured general's cell turns into a castle.
    pub kind: Vec<Kind>,
    /// Row-major; 0 neutral, `s + 1` seat `s`.
    pub owner: Vec<u8>,
    pub army: Vec<u32>,
    /// Cell index of each seat's general (its castle, once captured).
    pub generals: Vec<usize>,
    /// One record per seat.
    pub seats: Vec<SeatState>,
    pub time: u32,
    pub outcome: Option<Outcome>,
}

/// Why a [`MultiState`] or a map cannot be a multi-player game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MultiStateError {
    /// The map is not a start position (see [`StartError`]).
    #[error(transparent)]
    Start(#[from] StartError),
    #[error("mode {mode} is played by {accepted} seats, not {seats}")]
    Seats {
        mode: &'static str,
        accepted: &'static str,
        seats: usize,
    },
    #[error(
        "the state is played under rules version {found}{}; this engine plays only \
         version {RULES_VERSION} (moves by priority: chasing, reinforcing, smaller army, seat)",
        version_name(*.found)
    )]
    RulesVersion { found: u32 },
    #[error("board is {height}x{width}; each side must be 1..=255")]
    Size { height: usize, width: usize },
    #[error("the {plane} plane has {got} cells, expected {expected}")]
    PlaneLength {
        plane: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("{got} {what} for {seats} seats")]
    PerSeat {
        what: &'static str,
        got: usize,
        seats: usize,
    },
    #[error("seat {seat}'s general at cell {cell} is off the board or shared")]
    GeneralCell { seat: usize, cell: usize },
    #[error("seat {seat}: {problem}")]
    Seat { seat: usize, problem: &'static str },
    #[error("cell {cell} has owner code {owner}; only 0..={max} exist")]
    Owner { cell: usize, owner: u8, max: usize },
    #[error("cell {cell} is a general but no standing seat's")]
    StrayGeneral { cell: usize },
    #[error("mountain cell {cell} is owned or holds an army")]
    Mountain { cell: usize },
    #[error("the start board's cell {cell} ({kind:?}) holds {army}")]
    StartArmy { cell: usize, kind: Kind, army: u32 },
    #[error("the armies add up to {total}, more than {MAX_TOTAL_ARMY}")]
    Army { total: u64 },
    #[error("max_turns {max_turns} is outside 1..={MAX_TURNS_LIMIT}")]
    MaxTurns { max_turns: u32 },
    #[error("time {time} is past max_turns {max_turns}")]
    Time { time: u32, max_turns: u32 },
    #[error("the outcome must rank every seat")]
    Outcome,
}

/// A free-for-all or 2v2 game in progress: a [`MultiState`] that passed
/// every check. Read it through [`Deref`](std::ops::Deref); it changes only
/// by stepping and forfeits.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "MultiState")]
pub struct GeneralsClassicMulti(pub(crate) MultiState);

impl std::ops::Deref for GeneralsClassicMulti {
    type Target = MultiState;

    fn deref(&self) -> &MultiState {
        &self.0
    }
}

/// Serialised as the plain state, without a clone.
impl Serialize for GeneralsClassicMulti {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl TryFrom<MultiState> for GeneralsClassicMulti {
    type Error = MultiStateError;

    fn try_from(state: MultiState) -> Result<Self, MultiStateError> {
        check_state(&state)?;
        Ok(GeneralsClassicMulti(state))
    }
}

impl GeneralsClassicMulti {
    /// The game at time 0 on a generated (or hand-made) map with one general
    /// per seat: each general owned by its seat with army 1, castles neutral
    /// with their garrisons, everything else neutral and empty.
    pub fn from_map(
        map: ClassicMap,
        mode: Mode,
        max_turns: u32,
    ) -> Result<GeneralsClassicMulti, MultiStateError> {
        let seats = map.generals.len();
        check_seats(mode, seats)?;
        let start = map.start()?;
        let seat_states = (0..seats)
            .map(|seat| SeatState {
                team: mode.team_of(seat),
                alive: true,
                eliminated_at: None,
                forfeited: false,
            })
            .collect();
        GeneralsClassicMulti::try_from(MultiState {
            mode,
            rules_version: RULES_VERSION,
            height: start.height,
            width: start.width,
            max_turns,
            kind: start.kind,
            owner: start.owner,
            army: start.army,
            generals: start.generals,
            seats: seat_states,
            time: 0,
            outcome: None,
        })
    }

    /// The state, for building a changed copy (tests, tools); it becomes a
    /// game again only through [`GeneralsClassicMulti::try_from`].
    pub fn into_state(self) -> MultiState {
        self.0
    }

    /// The number of seats.
    pub fn seat_count(&self) -> usize {
        self.0.seats.len()
    }

    /// `(land, army)` of `seat`: its cells and the army on them.
    pub fn totals(&self, seat: usize) -> (u32, u64) {
        let code = seat as u8 + 1;
        let mut land = 0u32;
        let mut army = 0u64;
        for (owner, a) in self.0.owner.iter().zip(&self.0.army) {
            if *owner == code {
                land += 1;
                army += u64::from(*a);
            }
        }
        (land, army)
    }

    /// Whether two seats play for the same team (a seat is its own ally).
    pub fn allied(&self, a: usize, b: usize) -> bool {
        self.0.seats[a].team == self.0.seats[b].team
    }

    pub fn cell_index(&self, row: usize, col: usize) -> usize {
        row * self.0.width + col
    }

    pub fn owner_at(&self, row: usize, col: usize) -> u8 {
        self.0.owner[self.cell_index(row, col)]
    }

    pub fn army_at(&self, row: usize, col: usize) -> u32 {
        self.0.army[self.cell_index(row, col)]
    }

    pub fn kind_at(&self, row: usize, col: usize) -> Kind {
        self.0.kind[self.cell_index(row, col)]
    }

    pub fn is_over(&self) -> bool {
        self.0.outcome.is_some()
    }
}

/// How an error names a version other than the current one.
fn version_name(version: u32) -> &'static str {
    if version == ROTATION_RULES_VERSION {
        " (moves in a rotating seat order)"
    } else {
        ""
    }
}

fn check_seats(mode: Mode, seats: usize) -> Result<(), MultiStateError> {
    if mode.accepts(seats) {
        return Ok(());
    }
    Err(MultiStateError::Seats {
        mode: mode.word(),
        accepted: match mode {
            Mode::Ffa => "2..=8",
            Mode::Teams => "4",
        },
        seats,
    })
}

fn check_plane(plane: &'static str, got: usize, expected: usize) -> Result<(), MultiStateError> {
    if got == expected {
        Ok(())
    } else {
        Err(MultiStateError::PlaneLength {
            plane,
            got,
            expected,
        })
    }
}

/// Every value a file could get wrong, in the order a reader would check
/// them: the shape first, so later checks can index freely.
pub(crate) fn check_state(s: &MultiState) -> Result<(), MultiStateError> {
    // First: under other rules nothing else about the state means the same.
    if s.rules_version != RULES_VERSION {
        return Err(MultiStateError::RulesVersion {
            found: s.rules_version,
        });
    }
    let seats = s.seats.len();
    check_seats(s.mode, seats)?;
    if !side_ok(s.height) || !side_ok(s.width) {
        return Err(MultiStateError::Size {
            height: s.height,
            width: s.width,
        });
    }
    let cells = s.height * s.width;
    check_plane("kind", s.kind.len(), cells)?;
    check_plane("owner", s.owner.len(), cells)?;
    check_plane("army", s.army.len(), cells)?;
    if s.generals.len() != seats {
        return Err(MultiStateError::PerSeat {
            what: "generals",
            got: s.generals.len(),
            seats,
        });
    }
    if !(1..=MAX_TURNS_LIMIT).contains(&s.max_turns) {
        return Err(MultiStateError::MaxTurns {
            max_turns: s.max_turns,
        });
    }
    if s.time > s.max_turns {
        return Err(MultiStateError::Time {
            time: s.time,
            max_turns: s.max_turns,
        });
    }
    for (seat, (record, &cell)) in s.seats.iter().zip(&s.generals).enumerate() {
        if cell >= cells || s.generals[..seat].contains(&cell) {
            return Err(MultiStateError::GeneralCell { seat, cell });
        }
        let problem = if record.team != s.mode.team_of(seat) {
            Some("its team does not match the mode")
        } else if record.alive == record.eliminated_at.is_some() {
            Some("it must be alive exactly when it has no elimination turn")
        } else if record.eliminated_at.is_some_and(|t| t == 0 || t > s.time) {
            Some("its elimination turn is not a past step")
        } else if record.alive && (s.kind[cell] != Kind::General || s.owner[cell] != seat as u8 + 1)
        {
            Some("it is alive but does not hold a general on its cell")
        } else if !record.alive && s.kind[cell] != Kind::Castle {
            Some("its general fell but its cell is not a castle")
        } else if !record.alive && s.owner.contains(&(seat as u8 + 1)) {
            Some("it is eliminated but still owns cells")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(MultiStateError::Seat { seat, problem });
        }
    }
    let mut total = 0u64;
    for cell in 0..cells {
        let owner = s.owner[cell];
        if usize::from(owner) > seats {
            return Err(MultiStateError::Owner {
                cell,
                owner,
                max: seats,
            });
        }
        match s.kind[cell] {
            Kind::Mountain if owner != 0 || s.army[cell] != 0 => {
                return Err(MultiStateError::Mountain { cell });
            }
            Kind::General
                if !s
                    .generals
                    .iter()
                    .zip(&s.seats)
                    .any(|(&g, r)| g == cell && r.alive) =>
            {
                return Err(MultiStateError::StrayGeneral { cell });
            }
            _ => {}
        }
        total += u64::from(s.army[cell]);
    }
    if total > MAX_TOTAL_ARMY {
        return Err(MultiStateError::Army { total });
    }
    if let Some(outcome) = &s.outcome
        && (outcome.ranks.len() != seats || outcome.scores.len() != seats)
    {
        return Err(MultiStateError::Outcome);
    }
    Ok(())
}
