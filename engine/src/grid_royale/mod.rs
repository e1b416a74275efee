//! Grid Royale: harvest ore, carry it home, bank it, while the border
//! closes in (the rules: `shared/games/grid-royale.md`; for participants:
//! `docs/games/grid-royale.md`).
//!
//! Layout: [`params`] holds the ruleset's numbers and the zone;
//! [`state`] the match [`GridRoyale`], built from a hand-made or generated
//! [`Layout`] and checked when read back; [`mapgen`] draws the symmetric
//! map a seed names; [`orders`] is a seat's batch and why one is refused;
//! [`rules`] the six phases of a turn, elimination and the end; [`score`]
//! the placement; [`protocol`] the observation, the reply and the dump's
//! state line. [`ENTRY`] registers the game.
//!
//! # Points the rules leave open, pinned here
//!
//! * Turns count from 1: the observation before turn `t` says `"turn": t`.
//! * The border phase runs every turn: when `t % shrink_interval == 0` the
//!   zone first loses one ring while it is wider than `min_zone`, then every
//!   unit outside the zone dies with its cargo.
//! * A spawn is blocked by any unit on the base after banking, uncharged.
//! * A move off the grid is a stay without harvest and costs nothing.
//! * Unit ids are unique and grow in creation order: the starting units by
//!   seat (seat `s` starts with unit `s`), then each turn's spawns by seat.
//! * A batch that does not parse, names a unit its seat does not own (or a
//!   dead one), names a unit twice or has an unknown `do` is refused whole:
//!   a no-action turn with an `illegal` fault, which never forfeits.
//! * Two units swapping cells pass through each other: only sharing a cell
//!   after the moves is a collision.
//! * A forfeited seat's units vanish with their cargo; it is eliminated and
//!   ranks below every seat that stayed.

pub mod mapgen;
pub mod orders;
pub mod params;
pub mod protocol;
pub mod rules;
pub mod score;
pub mod state;

pub use orders::{Action, Dir, Illegal, Order, Orders};
pub use params::{Params, Zone};
pub use protocol::Fuel;
pub use state::{Cell, GridRoyale, Layout, Placed, StateError, Unit};

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::registry::limits::FuelLimits;
use crate::registry::{self, FrameFormat, GameEntry, Limits, OptionKind, OptionSpec, RuntimeKind};
use crate::session::Session;
use crate::verdict::FaultKind;

/// An integer option with the seed's default.
const fn int(
    name: &'static str,
    help: &'static str,
    default: i64,
    min: i64,
    max: i64,
) -> OptionSpec {
    OptionSpec {
        name,
        help,
        kind: OptionKind::Int { default, min, max },
    }
}

/// The ruleset options: the seed's parameter table.
const OPTIONS: &[OptionSpec] = &[
    int(
        "side",
        "grid side; 0 picks 24 for 2 players, 32 for 4 (must be even)",
        0,
        0,
        params::MAX_SIDE as i64,
    ),
    int(
        "cargo_cap",
        "most ore a unit carries",
        1000,
        1,
        params::MAX_AMOUNT as i64,
    ),
    int(
        "harvest_divisor",
        "a harvest takes floor(cell ore / this)",
        4,
        1,
        params::MAX_AMOUNT as i64,
    ),
    int(
        "move_cost_divisor",
        "a move costs floor(source cell ore / this) of cargo",
        10,
        1,
        params::MAX_AMOUNT as i64,
    ),
    int(
        "spawn_cost",
        "bank a new unit costs",
        500,
        0,
        params::MAX_AMOUNT as i64,
    ),
    int(
        "units_cap",
        "most units a player has at once",
        50,
        1,
        params::MAX_UNITS_CAP as i64,
    ),
    int(
        "max_turns",
        "the match ends after this many turns",
        400,
        1,
        params::MAX_TURNS_LIMIT as i64,
    ),
    int(
        "shrink_interval",
        "the zone shrinks by one ring on every turn that is a multiple of this",
        25,
        1,
        params::MAX_TURNS_LIMIT as i64,
    ),
    int(
        "min_zone",
        "the zone's side never shrinks below this (even; holds every base)",
        8,
        2,
        params::MAX_SIDE as i64,
    ),
];

/// The registry entry: 2 or 4 seats, JSON lines, process or WebAssembly bots.
pub static ENTRY: GameEntry = GameEntry {
    name: "grid-royale",
    summary: "Harvest, carry and bank ore on a shrinking grid; collisions destroy units",
    seats: &[2, 4],
    teams: &[],
    options: OPTIONS,
    // The seed's 2 s wall clock per turn, with room for a slow start; a
    // timeout or an unreadable line is an operational breach, so one forfeits.
    // Refused batches are `illegal` faults, which never count.
    limits: Limits {
        first_move_ms: 10_000,
        move_ms: 2_000,
        fault_limit: 1,
        reply_cap: 65_536,
        // The seed's budget: 5,000,000 instructions a turn, banked up to
        // 20,000,000; ten turns' worth once for start-up; the 2 s backstop.
        fuel: Some(FuelLimits {
            per_turn: 5_000_000,
            bank: 20_000_000,
            init: 50_000_000,
            wall_ms: 2_000,
        }),
        model: None,
    },
    frames: FrameFormat::JsonLines,
    runtimes: &[RuntimeKind::Process, RuntimeKind::Wasm],
    baselines: &[],
    model: None,
    new_match: |setup| {
        params_of(setup.seats, setup.rules)
            .and_then(|params| GridRoyale::from_seed(setup.seed, params))
            .map(Session::boxed)
            .map_err(|e| registry::SetupError::Invalid {
                game: "grid-royale",
                reason: e.to_string(),
            })
    },
    open_replay: crate::replay::open::<GridRoyale>,
};

/// The parameters resolved rules describe for `seats` players.
pub fn params_of(seats: usize, rules: &registry::Rules) -> Result<Params, StateError> {
    let standard = Params::standard(seats);
    let get = |name: &str, default: u32| {
        rules.int(name).map_or(Ok(default), |v| {
            u32::try_from(v).map_err(|_| StateError::Params("negative option"))
        })
    };
    let side = match get("side", 0)? {
        0 => standard.side,
        s => s as usize,
    };
    let params = Params {
        seats,
        side,
        cargo_cap: get("cargo_cap", standard.cargo_cap)?,
        harvest_divisor: get("harvest_divisor", standard.harvest_divisor)?,
        move_cost_divisor: get("move_cost_divisor", standard.move_cost_divisor)?,
        spawn_cost: get("spawn_cost", standard.spawn_cost)?,
        units_cap: get("units_cap", standard.units_cap)?,
        max_turns: get("max_turns", standard.max_turns)?,
        shrink_interval: get("shrink_interval", standard.shrink_interval)?,
        min_zone: get("min_zone", standard.min_zone as u32)? as usize,
    };
    params.check()?;
    Ok(params)
}

impl Game for GridRoyale {
    type Action = Action;

    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn seats(&self) -> usize {
        self.params.seats
    }

    fn turn(&self) -> u32 {
        self.turn
    }

    /// Every player still in; an eliminated one can never act again.
    fn is_due(&self, seat: Seat) -> bool {
        self.outcome.is_none() && !self.is_eliminated(seat)
    }

    /// None: every line a bot reads is an observation.
    fn write_handshake(&self, _seat: Seat, _out: &mut Vec<u8>) {}

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        protocol::write_observation(self, seat, None, out);
    }

    fn write_frame_fuel(&self, seat: Seat, fuel: Option<crate::Fuel>, out: &mut Vec<u8>) {
        protocol::write_observation(self, seat, fuel, out);
    }

    /// Never `Err`: a line that is no batch is refused by the rules, as
    /// an `illegal` fault (see [`Game::reply_fault`]), not a malformed one.
    fn parse_action(&self, seat: Seat, line: &[u8]) -> Result<Action, Malformed> {
        Ok(Action(protocol::parse_reply(self, seat, line).ok()))
    }

    /// A parsed reply is `None` only when the batch was refused.
    fn reply_fault(&self, _seat: Seat, action: &Action) -> Option<FaultKind> {
        action.0.is_none().then_some(FaultKind::Illegal)
    }

    fn fallback_action(&self, _seat: Seat) -> Action {
        Action::NONE
    }

    fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        self.step_orders(actions)
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        self.forfeit_seats(seats)
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    fn dump_state(&self) -> serde_json::Value {
        protocol::state_value(self)
    }

    fn dump_action(action: Option<&Action>) -> serde_json::Value {
        Action::dump(action)
    }

    fn invariant_violation(&self) -> Option<String> {
        self.check().err().map(|e| e.to_string())
    }

    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)> {
        let bank = self.banks.get(seat).copied().unwrap_or(0);
        vec![("bank", bank), ("units", self.units_of(seat) as u64)]
    }
}
