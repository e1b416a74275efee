//! Ants: colonies on a wrapping grid gather food, grow and raze each
//! other's hills; an adaptation of the 2011 AI Challenge game (the seed:
//! `shared/games/ants.md`; for participants: `docs/games/ants.md`).
//!
//! Layout: [`geometry`] is the torus (squares, moves, wrapped distances,
//! discs); [`params`] the numbers; [`map`] the map-file format and the
//! checks every board passes; [`mapgen`] the shift-symmetric board a seed
//! names and [`maps`] the shipped ones; [`state`] the match [`Ants`];
//! [`rules`] the six steps of a turn, [`food`] the symmetric random food,
//! [`vision`] sight and knowledge, [`end`] the endings and the placement;
//! [`orders`] a seat's positional orders; [`protocol`] the handshake,
//! frame, reply and dump; [`baseline`] the in-engine `hold` and `forage`;
//! [`adapters`] the tensors model-graph seats see (the `ants/1` set).
//! [`ENTRY`] registers the game.
//!
//! # Points the rules leave open, pinned here
//!
//! * The six steps are 2011's: moves and collisions, combat, razing,
//!   spawning, gathering, food placement; then vision is folded into what
//!   each colony knows, the turn count advances and the endings are checked.
//! * Turns count from 1: the frame before turn `t` says `"turn": t`.
//! * Vision radius² 77, attack 5, gathering 1 (2011's defaults). A colony
//!   knows its own hill squares from the start.
//! * A hill is touched by its own ant standing on it after combat, and by
//!   spawning; untouched hills have touched-turn 0. Listing order: seat 0's
//!   hills row-major, seat `s`'s hill `k` the image of seat 0's hill `k`.
//! * Ants spawned this turn count for this turn's gathering (2011's order).
//! * Endings ([`end::reason`]): `extermination`, `lone_survivor` (with the
//!   standing enemy hills credited), `rank_stabilized` (2011's test: only a
//!   colony with a standing hill of its own may overtake, its best case
//!   weighed against each rival's worst),
//!   `turn_limit`, `forfeit`. 2011's "food not being gathered" and "ants
//!   not razing hills" cutoffs are not played.
//! * A forfeited seat's ants vanish; its hills stay standing and can be
//!   razed; it ranks below every seat that did not forfeit.
//! * Random food: `food_rate` hundredths of a symmetric placement per turn
//!   (one food per colony each), drawn from the match seed; a placement
//!   that finds no free orbit in 8 tries is dropped.
//! * A colony without ants after a turn is out for good (it can gather
//!   nothing more), so it is never asked again.

pub mod adapters;
pub mod baseline;
pub mod end;
pub mod food;
pub mod geometry;
pub mod map;
pub mod mapgen;
pub mod maps;
pub mod orders;
pub mod params;
pub mod protocol;
pub mod rules;
pub mod state;
pub mod vision;

pub use geometry::{Dir, Torus};
pub use map::{Map, MapError};
pub use orders::Orders;
pub use params::Params;
pub use state::{Ant, Ants, Cause, Death, Hill, Razed, Razing, StateError};

use crate::game::{Game, Malformed, Outcome, Seat};
use crate::registry::{
    self, FrameFormat, GameEntry, Limits, ModelLimits, OptionKind, OptionSpec, RuntimeKind,
};
use crate::session::Session;

/// The ruleset options.
const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "map",
        help: "a shipped map (duel: 2 players, quartet: 4, octet: 8) or random, drawn from the seed",
        kind: OptionKind::Choice {
            default: maps::RANDOM,
            choices: &maps::CHOICES,
        },
    },
    OptionSpec {
        name: "max_turns",
        help: "the match ends after this many turns",
        kind: OptionKind::Int {
            default: 1000,
            min: 1,
            max: params::MAX_TURNS_LIMIT as i64,
        },
    },
    OptionSpec {
        name: "food_rate",
        help: "random food per colony per turn, in hundredths (0: only the map's food)",
        kind: OptionKind::Int {
            default: 25,
            min: 0,
            max: params::MAX_FOOD_RATE as i64,
        },
    },
];

/// The registry entry: 2 to 8 seats, JSON lines, processes, baselines and
/// model graphs.
pub static ENTRY: GameEntry = GameEntry {
    name: "ants",
    summary: "Colonies on a wrapping grid gather food, fight by focus and raze hills (AI Challenge 2011)",
    seats: &[2, 3, 4, 5, 6, 7, 8],
    teams: &[],
    options: OPTIONS,
    limits: Limits {
        first_move_ms: 10_000,
        move_ms: 500,
        fault_limit: 10,
        reply_cap: 65_536,
        fuel: None,
        model: Some(ModelLimits {
            max_bytes: 64 << 20,
            max_macs: 500_000_000,
        }),
    },
    frames: FrameFormat::JsonLines,
    runtimes: &[
        RuntimeKind::Process,
        RuntimeKind::Baseline,
        RuntimeKind::Model,
    ],
    baselines: &baseline::NAMES,
    model: Some(&adapters::INTERFACE),
    new_match: |setup| {
        from_rules(setup.seed, setup.seats, setup.rules)
            .map(Session::boxed)
            .map_err(|e| registry::SetupError::Invalid {
                game: "ants",
                reason: e.to_string(),
            })
    },
    open_replay: crate::replay::open::<Ants>,
};

/// The match resolved rules describe for `seats` seats and `seed`.
pub fn from_rules(seed: u64, seats: usize, rules: &registry::Rules) -> Result<Ants, StateError> {
    let mut params = Params::standard(seats);
    if let Some(turns) = rules.int("max_turns") {
        params.max_turns = u32::try_from(turns).map_err(|_| StateError::Params("max_turns"))?;
    }
    if let Some(rate) = rules.int("food_rate") {
        params.food_rate = u32::try_from(rate).map_err(|_| StateError::Params("food_rate"))?;
    }
    let map = maps::choose(rules.word("map").unwrap_or(maps::RANDOM), seats, seed)?;
    Ants::new(params, map, seed)
}

impl Game for Ants {
    type Action = Orders;

    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn seats(&self) -> usize {
        self.params.players
    }

    fn turn(&self) -> u32 {
        self.turn
    }

    /// Every colony still playing; one without ants is out for good.
    fn is_due(&self, seat: Seat) -> bool {
        self.outcome.is_none() && self.is_alive(seat)
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        protocol::write_handshake(self, seat, out);
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        protocol::write_frame(self, seat, out);
    }

    fn parse_action(&self, seat: Seat, line: &[u8]) -> Result<Orders, Malformed> {
        protocol::parse_reply(self, seat, line)
    }

    /// Every ant stays.
    fn fallback_action(&self, _seat: Seat) -> Orders {
        Orders::default()
    }

    fn step(&mut self, actions: &[Option<Orders>]) -> Option<Outcome> {
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

    fn write_baseline_reply(&self, name: &str, seat: Seat, out: &mut Vec<u8>) -> bool {
        let Some(orders) = baseline::orders(self, name, seat) else {
            return false;
        };
        let start = out.len();
        let reply = serde_json::json!({ "orders": orders.letters() });
        if serde_json::to_writer(&mut *out, &reply).is_ok() {
            out.push(b'\n');
            true
        } else {
            out.truncate(start);
            false
        }
    }

    fn invariant_violation(&self) -> Option<String> {
        self.check().err().map(|e| e.to_string())
    }

    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)> {
        let stats = self.stats.get(seat).copied().unwrap_or_default();
        vec![
            // The colony's own points (never below zero: a colony loses one
            // per hill of its own razed, and starts with one per hill).
            (
                "points",
                self.scores()
                    .get(seat)
                    .map_or(0, |&s| u64::try_from(s).unwrap_or(0)),
            ),
            ("ants", self.ant_count(seat) as u64),
            ("ants_spawned", stats.ants_spawned),
            ("food_gathered", stats.food_gathered),
            ("hills_razed", stats.hills_razed),
        ]
    }
}
