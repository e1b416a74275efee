//! The WebAssembly seat host.
//!
//! A WebAssembly bot is a WASI command module that reads one frame per turn
//! on stdin and writes one reply line on stdout, like a process bot. What
//! differs is the budget: each turn it may execute a number of WebAssembly
//! instructions (fuel), and a guest that runs dry is suspended where it is,
//! to resume with the next turn's fuel, instead of being killed.
//!
//! - [`config`]: the one wasmtime configuration every worker uses, and the
//!   fingerprint that names it.
//! - [`compile`]: checking a module (imports, limits) and compiling it once
//!   into the cache.
//! - [`session`]: a guest played turn by turn, with its fuel, its wall
//!   backstop and its virtual stdio.
//! - [`wasi`]: the deterministic subset of WASI preview 1 the guest sees.
//! - [`wire`]: the lines the worker and the host process exchange (the
//!   `arena-host-wire` crate's wasm messages), and [`host`]: the host
//!   process's loop (`arena wasm-host`).
//! - [`test_modules`]: assembles the test modules of `bots/test/wasm` for
//!   the tests of this crate and the CLI's.
//!
//! Nothing here knows any game: frames and replies are bytes.

pub mod compile;
pub mod config;
pub mod host;
pub mod session;
pub mod test_modules;
pub mod wasi;
pub mod wire;

pub use compile::{CompileError, ModuleCache};
pub use config::{HostLimits, WASMTIME_VERSION, engine, fingerprint};
pub use session::{Session, SessionError, TurnEnd};
/// The pinned wasmtime, for callers that measure it (`arena bench wasm`).
pub use wasmtime;
