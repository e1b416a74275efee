//! The model-graph seat host.
//!
//! A model bot is a directory holding `model.onnx` and a `bot.toml` that
//! names, for each graph input, an adapter of the game's adapter set, and
//! the output that is the head. Each turn the host turns the frame into
//! input tensors through those adapters, evaluates the graph once with a
//! pinned tract on one thread, and turns the head's scores into the reply
//! a process bot would have sent.
//!
//! Layout: [`config`] reads and checks `bot.toml`; [`check`] loads,
//! types and costs the graph (typing and costing in `cost`) (the build-time check, also run by the host
//! before it plays); [`policy`] evaluates one frame; [`wire`] is what the
//! worker and [`host`] (`arena model-host`) say to each other.
//!
//! Nothing here knows any game: frames and adapters come through
//! [`arena_engine::registry::model::ModelInterface`].

pub mod check;
pub mod config;
mod cost;
pub mod host;
pub mod policy;
pub mod wire;

pub use check::{HeadReport, InputReport, Refusal, Report, check};
pub use config::{BOT_TOML, BotToml, ConfigError, MODEL_FILE, ModelConfig};
pub use policy::{Answer, Policy, Strike};

/// The tract every cost estimate and operator list refers to (the
/// dependency is pinned to it exactly).
pub const TRACT_VERSION: &str = "0.23.9";

/// The runtime's name, as workers announce it: a different tract may
/// evaluate the same graph differently, so results name it.
pub fn runtime_id() -> &'static str {
    "tract-onnx-0.23.9"
}

#[cfg(test)]
mod tests;
