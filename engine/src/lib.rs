//! Arena's games as pure, deterministic rules.
//!
//! Layout: [`game`] defines the [`Game`] trait the match runner is generic over
//! (N seats, frames out, one reply line per due seat in) and the [`Outcome`] a
//! finished game reports (placements, scores, teams). [`verdict`] names the
//! faults and forfeits the runner decides. [`session`] wraps any game as a
//! [`Match`] that takes and gives bytes and records what it applied, and
//! [`replay`] re-simulates that record. [`registry`] is the one list of
//! games: names, seats, options, limits, runtimes, constructors. [`rng`] is
//! the only source of randomness: a small seeded generator whose output is
//! fixed forever, so a seed names one map on every machine and every version.
//! [`grid`] is the board geometry the games share: a cell's four neighbours
//! (bounded or wrapping), Manhattan distance and breadth-first search.
//! [`prefetch`] is a cache hint for callers that step many boards in turn.
//!
//! Games, one module each, each registered by its `ENTRY`: [`generals`] (the
//! Generals Competition ruleset; its [`generals::observe`] is the observation
//! encoder and model adapters the training environment and the model host
//! share), [`generals_classic`] (classic generals.io: 1v1 on the same engine
//! under another ruleset, plus its 2v2 and free-for-all formats),
//! [`generals_ffa`] (four-player free-for-all with plans and a captain),
//! [`grid_royale`] (2 or 4 players harvesting ore on a shrinking grid) and
//! [`ants`] (2 to 8 colonies gathering food, fighting and razing hills on a
//! wrapping grid, with model-graph bots). How a game lets model graphs play
//! is in [`registry::model`].
//!
//! Nothing here touches files, clocks, threads or the network, and iteration
//! never depends on hash order: the same inputs give the same bytes.

pub mod ants;
pub mod game;
pub mod generals;
pub mod generals_classic;
pub mod generals_ffa;
pub mod grid;
pub mod grid_royale;
pub mod prefetch;
pub mod registry;
pub mod replay;
pub mod rng;
pub mod session;
pub mod verdict;

pub use game::{Fuel, Game, Malformed, Outcome, Seat, placement_points};
pub use registry::{GameEntry, Rules};
pub use session::{Match, Session};
pub use verdict::{FaultCounts, FaultKind, Forfeit};
