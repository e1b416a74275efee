//! Arena's games as pure, deterministic rules.
//!
//! Layout: [`game`] defines the [`Game`] trait the match runner is generic over
//! (N seats, text frames in, one reply line per seat out) and the [`Outcome`] a
//! finished game reports. [`rng`] is the only source of randomness: a small
//! seeded generator whose output is fixed forever, so a seed names one map on
//! every machine and every version. [`generals`] is the Generals Competition
//! ruleset: board state, action parsing, the step function, fog-of-war frames
//! and the map generator.
//!
//! Nothing here touches files, clocks, threads or the network, and iteration
//! never depends on hash order: the same inputs give the same bytes.

pub mod game;
pub mod generals;
pub mod rng;

pub use game::{Game, Malformed, Outcome, Seat};
