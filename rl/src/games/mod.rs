//! One module per game family. A family turns a game's name, seats and
//! options into an [`EnvSpec`](crate::EnvSpec) and the slices that play it;
//! adding a game is adding a module here and a line in [`open`].

pub mod generals;

use arena_engine::Outcome;
use arena_engine::registry::{self, Rules};

use crate::slice::Slice;
use crate::spec::{EnvSpec, ObsLayout};
use crate::vec_env::EnvError;

/// What the caller asked for.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub game: &'a str,
    pub seats: usize,
    pub rules: &'a Rules,
    pub envs: usize,
    pub side: Option<usize>,
    pub layout: ObsLayout,
    /// Seats played by a built-in player instead of the caller.
    pub builtin: &'a [(usize, Builtin)],
    /// Keep every episode's actions, so it can be written as a replay.
    pub record: bool,
}

/// A player the environment runs itself, for seats the caller does not
/// play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// The scripted opponent: at least as strong as the starter bots.
    Scripted,
    /// A random legal move each turn (benchmarks, a first curriculum step).
    Random,
}

impl Builtin {
    /// The name the binding accepts.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Scripted => "scripted",
            Builtin::Random => "random",
        }
    }

    pub fn from_name(name: &str) -> Option<Builtin> {
        [Builtin::Scripted, Builtin::Random]
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// A configured family: its spec, and a way to make the slices.
pub trait Family: Send + Sync {
    fn spec(&self) -> &EnvSpec;
    /// The slice of environments `range` (global indices).
    fn slice(
        &self,
        range: std::ops::Range<usize>,
        buffers: crate::buffers::Buffers,
    ) -> Box<dyn Slice>;
    /// Checks one seat's action in the form the caller sent; `Err` says
    /// what is wrong.
    fn check_action(
        &self,
        actions: &crate::Actions<'_>,
        env: usize,
        seat: usize,
    ) -> Result<(), String>;
}

/// The family that plays `request.game`, configured: the name, seats and
/// options checked through the engine's registry, with its messages.
pub fn open(request: &Request<'_>) -> Result<Box<dyn Family>, EnvError> {
    let entry = registry::find(request.game).map_err(|e| EnvError::Config(e.to_string()))?;
    if generals::plays(entry) {
        return Ok(Box::new(generals::GeneralsFamily::new(entry, request)?));
    }
    let supported: Vec<&str> = registry::games()
        .iter()
        .filter(|e| generals::plays(e))
        .map(|e| e.name)
        .collect();
    Err(EnvError::Config(format!(
        "game {:?} has no training environment yet (available: {})",
        entry.name,
        supported.join(", ")
    )))
}

/// The first seed of environment `env`'s stream of boards under `seed`: a
/// SplitMix64 finaliser over both, so neighbouring environments and
/// neighbouring seeds draw unrelated boards.
pub fn stream_seed(seed: u64, env: usize) -> u64 {
    let mut z = seed ^ (env as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seat's reward at the end of a game: its placement points (1 first,
/// 0 last, ties averaged; a team's seats share theirs) mapped onto
/// `[-1, 1]`, so a duel gives +1, −1 or 0 for a draw.
pub fn final_reward(outcome: &Outcome, seat: usize) -> f32 {
    outcome
        .scores
        .get(seat)
        .map_or(0.0, |score| (2.0 * score - 1.0) as f32)
}
