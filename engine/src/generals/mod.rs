//! The Generals Competition ruleset (1v1, fog of war, player-built castles).
//!
//! Layout: [`board`] holds the cell planes and the validated [`Setup`] →
//! [`Generals`] construction; [`action`] parses reply lines; [`rules`] is the
//! step function (builds, move order, moves, growth, deathtouch, outcome);
//! [`frame`] renders the fog-of-war text each bot reads; [`mapgen`] draws a
//! fresh board from a seed; [`ruleset`] names the switches that turn these
//! rules into classic generals.io's (played as [`crate::generals_classic`],
//! which shares every module here). [`state`] is the serialised form of a
//! game; [`observe`] encodes what a seat sees as numbers; [`random`] and
//! [`scripted`] are built-in players (random legal, rule-based). [`ENTRY`]
//! registers the competition.
//!
//! The encodings follow the competition's reference engine so fixtures compare
//! directly: kind 0 plain, 1 mountain, 2 castle, 3 general; owner 0 neutral,
//! 1 player 0, 2 player 1.

pub mod action;
pub mod board;
pub mod frame;
pub mod mapgen;
pub mod observe;
pub mod random;
pub mod rules;
pub mod ruleset;
pub mod scripted;
pub mod state;

pub use action::{Action, ActionKind, Direction};
pub use board::{Generals, Kind, Params, Setup, SetupError};
pub use ruleset::Ruleset;
pub use state::StateError;

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::registry::{self, FrameFormat, GameEntry, Limits, ModelLimits, RuntimeKind};
use crate::session::Session;

/// The competition's runner limits: 10 s for the first reply (bots may warm
/// up, a model host loads its graph), 150 ms for every later one (a model's
/// adapters and evaluation included), 50 faults, replies up to 4 KiB. The
/// classic ruleset plays under the same.
///
/// A model graph may be 256 MiB and cost 2.5 billion multiply-accumulates a
/// turn on the largest board: measured with `arena bench model`, a
/// transformer of 2.0 billion (16 layers of width 448) takes 37-39 ms at
/// p99 on one core of the reference machine, so the limit leaves about four
/// times the headroom to the deadline for a slower or busier host.
pub const LIMITS: Limits = Limits {
    first_move_ms: 10_000,
    move_ms: 150,
    fault_limit: 50,
    reply_cap: 4096,
    fuel: None,
    model: Some(ModelLimits {
        max_bytes: 256 << 20,
        max_macs: 2_500_000_000,
    }),
};

/// The registry entry: two seats, the competition's limits, no options (the
/// competition's parameters are fixed).
pub static ENTRY: GameEntry = GameEntry {
    name: "generals",
    summary: "Generals Competition: 1v1, fog of war, player-built castles, text protocol",
    seats: &[2],
    teams: &[],
    options: &[],
    limits: LIMITS,
    frames: FrameFormat::Text,
    runtimes: &[RuntimeKind::Process, RuntimeKind::Model],
    baselines: &[],
    model: Some(&observe::adapters::COMPETITION),
    new_match: |setup| {
        Generals::try_from_seed(setup.seed, Params::default())
            .map(Session::boxed)
            .map_err(|e| registry::SetupError::Invalid {
                game: "generals",
                reason: e.to_string(),
            })
    },
    open_replay: crate::replay::open::<Generals>,
};

impl Game for Generals {
    type Action = Action;

    /// The ruleset's game: a classic board read as plain `Generals` (from a
    /// file, say) still names itself `generals-classic`, so a replay filed
    /// under the wrong game fails verification instead of replaying.
    fn name(&self) -> &'static str {
        self.ruleset.game_name()
    }

    fn seats(&self) -> usize {
        2
    }

    fn turn(&self) -> u32 {
        self.time
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        frame::write_handshake(self, seat, out);
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        frame::write_frame(self, seat, out);
    }

    fn parse_action(&self, _seat: Seat, line: &[u8]) -> Result<Action, Malformed> {
        action::parse(line)
    }

    fn fallback_action(&self, _seat: Seat) -> Action {
        Action::PASS
    }

    fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        let pair = match actions {
            [a, b] => [a.unwrap_or(Action::PASS), b.unwrap_or(Action::PASS)],
            // A runner bug, not bot input: every step carries one slot per seat.
            _ => panic!("generals takes exactly two actions, got {}", actions.len()),
        };
        self.step_pair(pair).cloned()
    }

    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome> {
        if self.outcome.is_none() && !seats.is_empty() {
            let ranks = (0..2).map(|s| u32::from(seats.contains(&s))).collect();
            self.outcome = Some(Box::new(Outcome::ranked(ranks, "forfeit")));
        }
        self.outcome.as_deref().cloned()
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_deref()
    }
}
