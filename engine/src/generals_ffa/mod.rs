//! Four-player free-for-all generals: plans every 8 turns, an in-engine
//! captain moves (the rules: `shared/games/generals-ffa.md`).
//!
//! Layout: [`board`] holds the parameters, the unchecked [`Board`] layout and
//! the checked game [`GeneralsFfa`]; [`state`] reads a serialised game back
//! and checks it; [`mapgen`] draws the four-fold symmetric board from a seed;
//! [`rules`] is the turn (install, compile, resolve, grow, remember, guard,
//! hash, end); [`vision`] computes sight, memory and each seat's [`View`];
//! [`score`] ranks the seats; [`guard`] is the sim guard's invariants.
//! [`view`] is a seat's fogged view and the captain's [`Move`]; [`plan`] the
//! plan bots send, its parser and validator; [`captain`] turns a plan and a
//! view into at most one move a turn. [`ENTRY`] registers the game.
//!
//! # Decisions the rules leave open
//!
//! * **Crown position**: drawn from the seed, offset 0 or 1 from each edge
//!   of the corner (see [`mapgen`]); every seat's is the mirror image.
//! * **Citadels**: the city farther from the crown in each quadrant holds
//!   50, the other 40.
//! * **Seats** sit clockwise from the top-left corner.
//! * **Turn numbering**: the rotation `order[k] = (turn + k) mod 4` uses the
//!   0-based number of steps applied before the step (so seat 0 moves first
//!   on turn 0); plans are installed when that number is a multiple of 8;
//!   see [`rules`].
//! * **Endings** ([`rules::reason`]): `last_crown_standing` (at most one
//!   crown left), `turn_limit` (`max_turns` played), `all_forfeited` (every
//!   seat forfeited; until then forfeited seats are played by `sprawl`).
//! * **Ranking** ([`score`]): forfeited seats below the rest, then the five
//!   criteria; "most cities" counts cities plus crowns.
//! * **Sim guard**: see [`guard`].

pub mod board;
pub mod captain;
pub mod guard;
pub mod mapgen;
pub mod plan;
pub mod rules;
pub mod score;
pub mod state;
pub mod view;
pub mod vision;

pub use board::{Board, Event, EventKind, GeneralsFfa, Memory, Params, SeatState, StateError};
pub use plan::Plan;
pub use score::Standing;
pub use view::{CellKind, CellView, Move, View};

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::registry::{self, FrameFormat, GameEntry, Limits, OptionKind, OptionSpec, RuntimeKind};
use crate::session::Session;

/// The ruleset options.
const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "blitz",
        help: "12x8 board and 160 turns instead of 16x10 and 240",
        kind: OptionKind::Bool { default: false },
    },
    OptionSpec {
        name: "max_turns",
        help: "turn limit; 0 keeps the board's own (240, or 160 in blitz)",
        kind: OptionKind::Int {
            default: 0,
            min: 0,
            max: board::MAX_TURNS_LIMIT as i64,
        },
    },
    OptionSpec {
        name: "growth_period",
        help: "every owned cell gains +1 on each turn that is a multiple of this",
        kind: OptionKind::Int {
            default: 25,
            min: 1,
            max: 10_000,
        },
    },
];

/// The registry entry: four seats, plans as JSON lines, two baselines.
pub static ENTRY: GameEntry = GameEntry {
    name: "generals-ffa",
    summary: "Four-player FFA generals: plans every 8 turns, an in-engine captain moves",
    seats: &[4],
    teams: &[],
    options: OPTIONS,
    limits: Limits {
        first_move_ms: 10_000,
        move_ms: 10_000,
        fault_limit: 10,
        reply_cap: 65_536,
        fuel: None,
        model: None,
    },
    frames: FrameFormat::JsonLines,
    runtimes: &[RuntimeKind::Process, RuntimeKind::Baseline],
    baselines: &["sprawl", "crown"],
    model: None,
    new_match: |setup| {
        GeneralsFfa::from_seed(setup.seed, params_of(setup.rules))
            .map(Session::boxed)
            .map_err(|e| registry::SetupError::Invalid {
                game: "generals-ffa",
                reason: e.to_string(),
            })
    },
    open_replay: crate::replay::open::<GeneralsFfa>,
};

/// The parameters resolved rules describe.
pub fn params_of(rules: &registry::Rules) -> Params {
    let mut params = if rules.flag("blitz") {
        Params::BLITZ
    } else {
        Params::STANDARD
    };
    if let Some(turns) = rules.int("max_turns").filter(|&t| t > 0) {
        params.max_turns = u32::try_from(turns).unwrap_or(board::MAX_TURNS_LIMIT);
    }
    if let Some(period) = rules.int("growth_period") {
        params.growth_period = u32::try_from(period).unwrap_or(params.growth_period);
    }
    params
}

/// The line a seat receives before its first frame.
#[derive(serde::Serialize)]
struct Handshake {
    /// Always `generals-ffa`.
    game: &'static str,
    /// The seat the bot plays.
    seat: Seat,
    /// Board width in cells.
    width: usize,
    /// Board height in cells.
    height: usize,
    /// The turn limit.
    max_turns: u32,
    /// Plans are asked for every this many turns.
    plan_every: u32,
}

impl Game for GeneralsFfa {
    type Action = Plan;

    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn seats(&self) -> usize {
        board::SEATS
    }

    fn turn(&self) -> u32 {
        self.turn
    }

    fn is_due(&self, seat: Seat) -> bool {
        self.is_due_seat(seat)
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        let handshake = Handshake {
            game: ENTRY.name,
            seat,
            width: self.params.width,
            height: self.params.height,
            max_turns: self.params.max_turns,
            plan_every: board::PLAN_EVERY,
        };
        if serde_json::to_writer(&mut *out, &handshake).is_ok() {
            out.push(b'\n');
        }
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        if serde_json::to_writer(&mut *out, &self.view(seat)).is_ok() {
            out.push(b'\n');
        }
    }

    fn parse_action(&self, _seat: Seat, line: &[u8]) -> Result<Plan, Malformed> {
        plan::parse(line)
    }

    fn fallback_action(&self, _seat: Seat) -> Plan {
        plan::sprawl()
    }

    fn step(&mut self, actions: &[Option<Plan>]) -> Option<Outcome> {
        self.step_plans(actions)
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        for &seat in seats {
            if let Some(state) = self.seats.get_mut(seat)
                && !state.forfeited
            {
                state.forfeited = true;
                state.plan = plan::sprawl();
                if self.ranking_version >= 2 {
                    state.forfeit_turn = Some(self.turn);
                }
            }
        }
        if self.seats.iter().all(|s| s.forfeited) {
            self.finish(rules::reason::ALL_FORFEITED);
        }
        self.outcome.clone()
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    fn write_baseline_reply(&self, name: &str, _seat: Seat, out: &mut Vec<u8>) -> bool {
        let plan = match name {
            "sprawl" => plan::sprawl(),
            "crown" => plan::crown(),
            _ => return false,
        };
        let start = out.len();
        if serde_json::to_writer(&mut *out, &plan).is_ok() {
            out.push(b'\n');
            true
        } else {
            out.truncate(start);
            false
        }
    }

    fn invariant_violation(&self) -> Option<String> {
        self.scratch
            .violation
            .clone()
            .or_else(|| self.check_invariants())
    }

    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)> {
        let invalid = self.seats.get(seat).map_or(0, |s| s.invalid_moves);
        vec![("invalid_moves", invalid)]
    }
}
