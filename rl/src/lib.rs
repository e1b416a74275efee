//! Arena's training environments: the referee's own engine, stepped for
//! many boards at once, each seat's observation written in place into
//! buffers the caller owns. The Python package `arena_rl` (folder
//! `python/`) is a thin binding over this crate; everything that decides a
//! number lives here or in the engine, so it is tested in Rust.
//!
//! # Layout
//!
//! - [`spec`]: what a configured environment looks like from outside: seats,
//!   the padded side, the arrays it writes and their shapes.
//! - [`buffers`]: the caller's arrays as raw parts, each environment's rows
//!   reachable by exactly one thread.
//! - [`games`]: one module per game family. [`games::generals`] plays the
//!   Generals Competition and classic generals.io (1v1, 2v2, free-for-all)
//!   through the engine's shared observation encoder
//!   (`arena_engine::generals::observe`), which the model host uses too.
//! - [`slice`]: a contiguous run of environments and the episode loop over
//!   them: auto-reset, rewards, the scripted seats, episode records.
//! - [`pool`]: persistent worker threads, each owning one slice.
//! - [`vec_env`]: the environment the binding exposes: checks the actions,
//!   hands every slice its work, and answers questions about one board.
//!
//! Results never depend on the number of threads: each environment draws
//! its boards from its own seeded stream and is stepped by one thread.

pub mod buffers;
pub mod games;
pub mod pool;
pub mod slice;
pub mod spec;
pub mod vec_env;

pub use spec::{ArraySpec, Dtype, EnvSpec, ObsLayout};
pub use vec_env::{Actions, Config, EnvError, VecEnv};
