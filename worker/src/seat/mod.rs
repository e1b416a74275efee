//! Seat runtimes: how one seat answers a frame.
//!
//! The referee plays the turn loop; a seat answers through a [`SeatRuntime`]:
//! offer it a frame with a [`Budget`], poll it until it gives an [`Answer`].
//! [`bot_process`] is a bot process over pipes (plain or sandboxed, as the
//! launcher decides); [`baseline`] is an in-engine baseline, a pure function
//! of the seat's own view; [`wasm`] is a WebAssembly module in the wasm
//! host, a platform program started inside the seat's sandbox and spoken to
//! over the same pipes, with a fuel budget as well as wall time, so the
//! cgroup, namespaces and seccomp still hold if that host has a bug;
//! [`model`] is a model graph in the model host, started the same way.
//! Both hosts are [`host`] seats: one runtime over a process seat, with the
//! host's protocol the only difference. [`wasm_compile`] compiles a module
//! in the same confinement before its first match.

pub mod baseline;
pub mod bot_process;
pub mod host;
pub mod model;
pub mod setup;
pub mod wasm;
pub mod wasm_compile;

use std::time::{Duration, Instant};

use arena_engine::{FaultKind, Forfeit, Fuel, Match, Seat};

use crate::fd::Interest;
use crate::runner::RunnerError;

/// What a seat may spend on one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// A deadline on the monotonic clock, from the frame being written.
    Wall(Duration),
}

/// How a seat settled the frame it was offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A complete reply line within budget (not yet parsed).
    Reply(Vec<u8>),
    /// A late, over-long or otherwise unusable reply: the fallback plays.
    Fault(FaultKind),
    /// The seat can no longer play (exited, crashed, out of memory).
    Gone(Forfeit),
}

/// One frame handed to a seat.
pub struct Offer<'a> {
    pub seat: Seat,
    /// The bytes to deliver (handshake included on the first frame).
    pub frame: &'a [u8],
    pub budget: Budget,
    /// The match, for runtimes that live in the engine.
    pub game: &'a dyn Match,
}

/// How a seat answers frames.
pub trait SeatRuntime: Send {
    /// Hands the seat a frame; its budget starts now.
    fn offer(&mut self, offer: Offer<'_>) -> Result<(), RunnerError>;

    /// Makes progress without blocking. `Some` once the frame is settled;
    /// a settled seat keeps answering `None` until the next offer.
    fn poll(&mut self) -> Result<Option<Answer>, RunnerError>;

    /// The instant by which the seat must be polled again while a frame is
    /// outstanding (its deadline); `None` when nothing is outstanding.
    fn deadline(&self) -> Option<Instant>;

    /// Adds the descriptors to sleep on while the frame is outstanding.
    /// Called only when the referee is about to sleep, not while it spins.
    fn wait_on(&self, interests: &mut Vec<Interest>);

    /// Lines sent that answered no frame since the last call (each a fault).
    fn take_stray_lines(&mut self) -> u32;

    /// Tells the seat the game is over for it (EOF on its input), without
    /// waiting; the referee does this for every seat before stopping any.
    fn close_input(&mut self);

    /// Ends the seat: the game is over for it. Waits at most until
    /// `grace_until` for it to leave on its own, then forces it.
    fn stop(&mut self, grace_until: Instant);

    /// What the seat left for its participant (stderr, capped).
    fn log(&mut self) -> Vec<u8>;

    /// In-budget reply latencies, in nanoseconds, unsorted.
    fn latencies(&self) -> &[u64];

    /// What the coming frame may spend, for a seat metered by fuel (its
    /// frame reports it); `None` for every other seat.
    fn fuel(&self) -> Option<Fuel> {
        None
    }

    /// Fuel spent on each turn played, for a seat metered by fuel.
    fn fuel_per_turn(&self) -> &[u64] {
        &[]
    }

    /// How long each evaluation took, in nanoseconds, for a seat whose
    /// platform evaluates it (a model graph); empty for every other seat.
    fn evaluations(&self) -> &[u64] {
        &[]
    }

    /// Counters the runtime keeps of this seat, reported beside the game's
    /// own (a model seat's overridden heads).
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
