//! Arena's match runner.
//!
//! Layout: [`referee`] plays one match of any registered game: the turn
//! loop over seats, faults and forfeits, the report and the replay, under
//! the limits and with the errors of [`runner`]. [`seat::setup`] builds
//! every bot and starts every seat before the first turn. How a seat
//! answers is a [`seat`] runtime: a bot process over pipes (split
//! into lines by [`lines`] under a length cap, non-blocking I/O from [`fd`],
//! stderr kept in a [`capped_log`]), an in-engine baseline, a WebAssembly
//! module in the wasm host ([`seat::wasm`]: `arena wasm-host`, metered by
//! fuel, the module compiled beforehand by `arena wasm-compile`, see
//! [`seat::wasm_compile`]) or a model graph in the model host
//! ([`seat::model`]: `arena model-host`). Both hosts and the compiler are
//! started through the launcher, confined exactly as the seat's bot would
//! be, and spoken to over the same pipes. [`launcher`] is
//! the seam between the runner and whatever starts bot processes
//! ([`plain_launcher`] runs them as plain child processes, [`sandboxed`] confines
//! them; [`programs`] reads which programs a `run.sh` starts). [`report`] is
//! the result document, [`replay`] reads and writes replay files, and
//! [`progress`] is where a running match publishes its turn and board.
//! [`daemon`] is the worker that leases matches from a coordinator,
//! fetching [`submission`]s, playing each through a [`leased`] launcher,
//! resending reports by the [`delivery`] policy and exporting [`metrics`].

pub mod capped_log;
pub mod daemon;
pub mod delivery;
pub mod fd;
pub mod launcher;
pub mod leased;
pub mod lines;
pub mod metrics;
pub mod plain_launcher;
pub mod programs;
pub mod progress;
pub mod referee;
pub mod replay;
pub mod report;
pub mod runner;
pub mod sandboxed;
pub mod seat;
pub mod submission;

pub use launcher::{BotSpec, Launcher};
pub use plain_launcher::ProcessLauncher;
pub use referee::play_match;
pub use report::{Forfeit, MatchReport};
pub use runner::{MatchOutput, RunnerConfig, RunnerError, SeatSpec};
pub use sandboxed::SandboxLauncher;
