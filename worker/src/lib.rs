//! Arena's match runner.
//!
//! Layout: [`launcher`] is the seam between the runner and whatever starts bot
//! processes ([`process`] runs them as plain child processes; the sandbox crate
//! confines them). [`referee`] plays one match: frames out, reply lines in
//! (split by [`lines`] under a length cap), deadlines, faults and forfeits, with
//! non-blocking pipe I/O from [`fd`] and stderr kept in a [`capped_log`]. It
//! produces a [`report`] and a [`replay`], which can be re-simulated.

pub mod capped_log;
pub mod daemon;
pub mod fd;
pub mod launcher;
pub mod lines;
pub mod metrics;
pub mod process;
pub mod referee;
pub mod replay;
pub mod report;
pub mod sandboxed;
pub mod submission;

pub use launcher::{BotSpec, Launcher};
pub use process::ProcessLauncher;
pub use referee::{MatchOutput, RunnerConfig, RunnerError, play_match};
pub use replay::Replay;
pub use report::{Forfeit, MatchReport};
pub use sandboxed::SandboxLauncher;
