//! A contiguous run of environments, owned by one thread.

use crate::vec_env::{Actions, EnvError};

/// What a caller may ask about one environment between steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// An episode as an Arena replay (JSON): the last one that finished, or
    /// the one in progress.
    Replay { finished: bool },
    /// The whole board, fog-free, as the engine serialises it (JSON).
    State,
    /// The text frame the referee would send `seat` now.
    Frame { seat: usize },
    /// The handshake line `seat` is sent before its first frame.
    Handshake { seat: usize },
    /// Why the last finished episode ended (`general_captured`, ...).
    Reason,
}

/// The work one thread does for its environments. Global environment
/// indices are used throughout; a slice answers only for its own.
pub trait Slice: Send {
    /// Starts a new episode everywhere. With `seed`, each environment's
    /// stream of boards restarts from it; without, the streams go on.
    fn reset(&mut self, seed: Option<u64>) -> Result<(), EnvError>;
    /// One step of every environment, with the actions already checked.
    fn step(&mut self, actions: &Actions<'_>) -> Result<(), EnvError>;
    fn query(&self, env: usize, query: &Query) -> Result<Vec<u8>, EnvError>;
    /// Replaces environment `env`'s board with a state (the engine's JSON,
    /// as [`Query::State`] gives it) and starts a new episode from it.
    fn load(&mut self, env: usize, state: &[u8]) -> Result<(), EnvError>;
}
