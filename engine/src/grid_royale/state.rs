//! The state of a match: parameters, the ore plane, bases, banks, units.
//!
//! [`GridRoyale::new`] builds a match from a hand-made [`Layout`] (the map
//! generator's output is one too) and checks it; the serialised form is read
//! back through [`State`], which checks the same things plus the progress
//! fields, so a forged replay is an error, never a panic or an overflow.

use serde::{Deserialize, Serialize};

use super::params::{Params, Zone};
use crate::game::Outcome;

/// Most ore a state may hold in total (cells, cargo and banks). The rules
/// only move ore around or destroy it, and their few additions saturate.
pub const MAX_TOTAL: u64 = 1 << 40;

/// A cell, by column and row (row 0 is the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cell {
    pub x: usize,
    pub y: usize,
}

/// One unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// Unique in the match; assigned in creation order.
    pub id: u32,
    /// The seat that commands it.
    pub owner: usize,
    pub x: usize,
    pub y: usize,
    /// Ore carried, `0..=cargo_cap`.
    pub cargo: u32,
}

/// A unit of a hand-made position, before it has an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub owner: usize,
    pub x: usize,
    pub y: usize,
    pub cargo: u32,
}

/// An unchecked starting position: the generator's output or a test's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Row-major ore, `side × side`.
    pub ore: Vec<u32>,
    /// Each seat's base.
    pub bases: Vec<Cell>,
    /// The units, given ids `0, 1, ...` in this order.
    pub units: Vec<Placed>,
}

/// Buffers reused every turn, never serialised and ignored by `==`.
#[derive(Clone, Default)]
pub(crate) struct Scratch {
    /// Per unit (aligned with `units`): its order this turn, `None` unordered.
    pub(crate) orders: Vec<Option<super::orders::Dir>>,
    /// Per unit: it may harvest this turn (it stayed by order or default).
    pub(crate) harvests: Vec<bool>,
    /// Per cell: units on it after the move phase (saturating).
    pub(crate) count: Vec<u8>,
    /// Per cell: bit `s` set when a unit of seat `s` is on it.
    pub(crate) owners: Vec<u8>,
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

/// A match of grid-royale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "State")]
pub struct GridRoyale {
    pub(crate) params: Params,
    /// Steps applied so far; the next turn to play is `turn + 1`.
    pub(crate) turn: u32,
    pub(crate) zone: Zone,
    /// Row-major ore: `ore[y * side + x]`.
    pub(crate) ore: Vec<u32>,
    /// `bases[seat]`.
    pub(crate) bases: Vec<Cell>,
    /// `banks[seat]`: the score.
    pub(crate) banks: Vec<u64>,
    /// `bank_turns[seat]`: the turn the bank last changed (0: never), for
    /// the "banked earlier" tie-break.
    pub(crate) bank_turns: Vec<u32>,
    /// `forfeited[seat]`: left the match; out, and ranked below the rest.
    pub(crate) forfeited: Vec<bool>,
    /// Every living unit, in increasing id order.
    pub(crate) units: Vec<Unit>,
    /// The id the next unit gets.
    pub(crate) next_id: u32,
    pub(crate) outcome: Option<Outcome>,
    #[serde(skip)]
    pub(crate) scratch: Scratch,
}

/// Why parameters, a layout or a serialised state were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("params out of range: {0}")]
    Params(&'static str),
    #[error("the ore plane has {got} cells, expected {expected}")]
    OreLength { got: usize, expected: usize },
    #[error("{got} {what} for {seats} seats")]
    PerSeat {
        what: &'static str,
        got: usize,
        seats: usize,
    },
    #[error("base of seat {seat} is off the grid or shared")]
    Base { seat: usize },
    #[error("unit {id}: {problem}")]
    Unit { id: u32, problem: &'static str },
    #[error("the zone is not a square inside the grid")]
    Zone,
    #[error("more than {MAX_TOTAL} ore in the state")]
    Total,
    #[error("turn {turn} is past max_turns {max_turns}, or at it with no outcome")]
    Turn { turn: u32, max_turns: u32 },
    #[error("the outcome must rank and score every seat")]
    Outcome,
}

impl GridRoyale {
    /// A fresh match on `layout`: turn 0, the whole grid safe, banks 0.
    pub fn new(params: Params, layout: Layout) -> Result<GridRoyale, StateError> {
        params.check()?;
        let seats = params.seats;
        let units = layout
            .units
            .iter()
            .zip(0u32..)
            .map(|(p, id)| Unit {
                id,
                owner: p.owner,
                x: p.x,
                y: p.y,
                cargo: p.cargo,
            })
            .collect::<Vec<_>>();
        let game = GridRoyale {
            params,
            turn: 0,
            zone: Zone::inset(params.side, 0),
            ore: layout.ore,
            bases: layout.bases,
            banks: vec![0; seats],
            bank_turns: vec![0; seats],
            forfeited: vec![false; seats],
            next_id: u32::try_from(units.len()).map_err(|_| StateError::Total)?,
            units,
            outcome: None,
            scratch: Scratch::default(),
        };
        game.check()?;
        Ok(game)
    }

    /// The match named by `seed`: the generated map, one unit per base.
    pub fn from_seed(seed: u64, params: Params) -> Result<GridRoyale, StateError> {
        params.check()?;
        GridRoyale::new(params, super::mapgen::generate(seed, &params)?)
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The safe zone now.
    pub fn zone(&self) -> Zone {
        self.zone
    }

    /// Ore on `(x, y)`; 0 off the grid.
    pub fn ore(&self, x: usize, y: usize) -> u32 {
        if x >= self.params.side {
            return 0;
        }
        self.ore.get(y * self.params.side + x).copied().unwrap_or(0)
    }

    /// The whole ore plane, row-major.
    pub fn ore_plane(&self) -> &[u32] {
        &self.ore
    }

    /// `bases[seat]`.
    pub fn bases(&self) -> &[Cell] {
        &self.bases
    }

    /// `banks[seat]`.
    pub fn banks(&self) -> &[u64] {
        &self.banks
    }

    /// The living units, by increasing id.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// The unit with `id`, if it is alive.
    pub fn unit(&self, id: u32) -> Option<&Unit> {
        self.index_of(id).map(|i| &self.units[i])
    }

    /// Where the unit with `id` sits in `units`.
    pub(crate) fn index_of(&self, id: u32) -> Option<usize> {
        self.units.binary_search_by_key(&id, |u| u.id).ok()
    }

    /// Units `seat` has alive.
    pub fn units_of(&self, seat: usize) -> usize {
        self.units.iter().filter(|u| u.owner == seat).count()
    }

    /// Out of the match: forfeited, or no units and a bank below the spawn
    /// cost (it can never act again).
    pub fn is_eliminated(&self, seat: usize) -> bool {
        self.forfeited.get(seat).is_none_or(|&f| f)
            || (self.banks[seat] < u64::from(self.params.spawn_cost)
                && !self.units.iter().any(|u| u.owner == seat))
    }

    /// Whether the match is over.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// Every invariant the rules index with or add up; also the sim guard's
    /// check after each step.
    pub(crate) fn check(&self) -> Result<(), StateError> {
        let p = &self.params;
        p.check()?;
        if self.ore.len() != p.cells() {
            return Err(StateError::OreLength {
                got: self.ore.len(),
                expected: p.cells(),
            });
        }
        for (what, got) in [
            ("bases", self.bases.len()),
            ("banks", self.banks.len()),
            ("bank turns", self.bank_turns.len()),
            ("forfeit flags", self.forfeited.len()),
        ] {
            if got != p.seats {
                return Err(StateError::PerSeat {
                    what,
                    got,
                    seats: p.seats,
                });
            }
        }
        for (seat, base) in self.bases.iter().enumerate() {
            if base.x >= p.side || base.y >= p.side || self.bases[..seat].contains(base) {
                return Err(StateError::Base { seat });
            }
        }
        let z = self.zone;
        if z.x1 >= p.side || z.y1 >= p.side || z.x0 > z.x1 || z.x1 - z.x0 != z.y1 - z.y0 {
            return Err(StateError::Zone);
        }
        let mut last = None;
        for u in &self.units {
            let problem = if last.is_some_and(|l| u.id <= l) {
                Some("ids are not increasing")
            } else if u.id >= self.next_id {
                Some("id is not below next_id")
            } else if u.owner >= p.seats {
                Some("owner is not a seat")
            } else if u.x >= p.side || u.y >= p.side {
                Some("off the grid")
            } else if u.cargo > p.cargo_cap {
                Some("carries more than cargo_cap")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(StateError::Unit { id: u.id, problem });
            }
            last = Some(u.id);
        }
        let total = self.ore.iter().map(|&o| u64::from(o)).sum::<u64>()
            + self.units.iter().map(|u| u64::from(u.cargo)).sum::<u64>()
            + self.banks.iter().fold(0u64, |a, &b| a.saturating_add(b));
        if total > MAX_TOTAL {
            return Err(StateError::Total);
        }
        if self.turn > p.max_turns || (self.turn == p.max_turns && self.outcome.is_none()) {
            return Err(StateError::Turn {
                turn: self.turn,
                max_turns: p.max_turns,
            });
        }
        if let Some(o) = &self.outcome
            && (o.ranks.len() != p.seats || o.scores.len() != p.seats)
        {
            return Err(StateError::Outcome);
        }
        Ok(())
    }
}

/// The fields of a [`GridRoyale`] exactly as serialised; unchecked.
#[derive(Deserialize)]
pub(crate) struct State {
    params: Params,
    turn: u32,
    zone: Zone,
    ore: Vec<u32>,
    bases: Vec<Cell>,
    banks: Vec<u64>,
    bank_turns: Vec<u32>,
    forfeited: Vec<bool>,
    units: Vec<Unit>,
    next_id: u32,
    outcome: Option<Outcome>,
}

impl TryFrom<State> for GridRoyale {
    type Error = StateError;

    fn try_from(s: State) -> Result<GridRoyale, StateError> {
        let game = GridRoyale {
            params: s.params,
            turn: s.turn,
            zone: s.zone,
            ore: s.ore,
            bases: s.bases,
            banks: s.banks,
            bank_turns: s.bank_turns,
            forfeited: s.forfeited,
            units: s.units,
            next_id: s.next_id,
            outcome: s.outcome,
            scratch: Scratch::default(),
        };
        game.check()?;
        Ok(game)
    }
}
