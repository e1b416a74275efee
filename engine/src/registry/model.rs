//! How a game lets model graphs play: its frames become named input
//! tensors through versioned adapters, and a head of scores becomes the
//! reply a process bot would have sent.
//!
//! The model host (a platform program, game-blind) finds the game's
//! [`ModelInterface`] in the registry; everything game-specific about
//! tensors lives with the game's engine module.

/// A game's adapters and heads for model-graph seats.
#[derive(Debug)]
pub struct ModelInterface {
    /// The adapter set's versioned name (`ants/1`); a `bot.toml` names the
    /// set it was trained against, and only that exact version plays.
    pub adapter_set: &'static str,
}
