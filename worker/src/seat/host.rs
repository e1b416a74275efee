//! A seat played by a platform host: a program of ours (the wasm host, the
//! model host) started in the seat's sandbox where a bot's `run.sh` would
//! run, spoken to over a [`ProcessSeat`]'s pipes.
//!
//! The two hosts differ in what a turn's message holds and what their
//! answer lines mean, which is a [`HostProtocol`]; the rest is the same and
//! lives here: the margin a host has past the turn's budget to say it ran
//! out, and what a host that says nothing readable, hangs or dies means for
//! the seat (it can no longer play: a crash, or a wall-clock breach).

use std::time::{Duration, Instant};

use arena_engine::{FaultKind, Forfeit, Fuel};

use super::bot_process::ProcessSeat;
use super::{Answer, Budget, Offer, SeatRuntime};
use crate::fd::Interest;
use crate::runner::RunnerError;

/// How long past a turn's budget a host may take to say it ran out.
pub const HOST_MARGIN: Duration = Duration::from_secs(2);
/// Room for a host's words around a reply line.
const HOST_LINE_OVERHEAD: usize = 64;

/// The line cap a host's process seat needs for replies of `line_cap`.
pub fn host_line_cap(line_cap: usize) -> usize {
    line_cap.saturating_add(HOST_LINE_OVERHEAD)
}

/// What one kind of host says and hears.
pub trait HostProtocol: Send {
    /// Names the host in log lines.
    const HOST: &'static str;

    /// Appends this turn's message for `frame` (the handshake included on
    /// the first) to `out`; returns the wall time the host has for it.
    fn write_turn(&mut self, frame: &[u8], budget: Duration, out: &mut Vec<u8>) -> Duration;

    /// What the host's answer `line` means for the seat; `None` when it is
    /// not an answer at all.
    fn settle(&mut self, line: &[u8], seat: usize) -> Option<Answer>;

    /// The turn ended without an answer (the host hung or died).
    fn abandon_turn(&mut self) {}

    /// Lines the guest wrote that answered no turn, as the host counted them.
    fn take_stray_lines(&mut self) -> u32 {
        0
    }

    fn fuel(&self) -> Option<Fuel> {
        None
    }

    fn fuel_per_turn(&self) -> &[u64] {
        &[]
    }

    fn evaluations(&self) -> &[u64] {
        &[]
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A seat whose host speaks `P`.
pub struct HostSeat<P> {
    host: ProcessSeat,
    protocol: P,
    message: Vec<u8>,
    seat: usize,
}

impl<P: HostProtocol> HostSeat<P> {
    /// A seat over a started host.
    pub fn new(host: ProcessSeat, protocol: P, seat: usize) -> HostSeat<P> {
        HostSeat {
            host,
            protocol,
            message: Vec::new(),
            seat,
        }
    }

    fn gone(&mut self, reason: Forfeit) -> Answer {
        self.protocol.abandon_turn();
        Answer::Gone(reason)
    }
}

impl<P: HostProtocol> SeatRuntime for HostSeat<P> {
    fn offer(&mut self, offer: Offer<'_>) -> Result<(), RunnerError> {
        let Budget::Wall(budget) = offer.budget;
        self.message.clear();
        let wall = self
            .protocol
            .write_turn(offer.frame, budget, &mut self.message);
        let message = std::mem::take(&mut self.message);
        let sent = self.host.offer(Offer {
            seat: offer.seat,
            frame: &message,
            budget: Budget::Wall(wall + HOST_MARGIN),
            game: offer.game,
        });
        self.message = message;
        sent
    }

    fn poll(&mut self) -> Result<Option<Answer>, RunnerError> {
        Ok(match self.host.poll()? {
            None => None,
            Some(Answer::Reply(line)) => Some(match self.protocol.settle(&line, self.seat) {
                Some(answer) => answer,
                None => {
                    tracing::error!(
                        seat = self.seat,
                        host = P::HOST,
                        "the host wrote something unreadable"
                    );
                    self.gone(Forfeit::Crash)
                }
            }),
            // Silent past the budget and the margin: the host hung.
            Some(Answer::Fault(FaultKind::Timeout)) => Some(self.gone(Forfeit::WallBackstop)),
            Some(Answer::Fault(_)) => Some(self.gone(Forfeit::Crash)),
            Some(Answer::Gone(reason)) => Some(self.gone(reason)),
        })
    }

    fn deadline(&self) -> Option<Instant> {
        self.host.deadline()
    }

    fn wait_on(&self, interests: &mut Vec<Interest>) {
        self.host.wait_on(interests);
    }

    fn take_stray_lines(&mut self) -> u32 {
        self.host.take_stray_lines() + self.protocol.take_stray_lines()
    }

    fn close_input(&mut self) {
        self.host.close_input();
    }

    fn stop(&mut self, grace_until: Instant) {
        self.host.stop(grace_until);
    }

    fn log(&mut self) -> Vec<u8> {
        self.host.log()
    }

    fn latencies(&self) -> &[u64] {
        self.host.latencies()
    }

    fn fuel(&self) -> Option<Fuel> {
        self.protocol.fuel()
    }

    fn fuel_per_turn(&self) -> &[u64] {
        self.protocol.fuel_per_turn()
    }

    fn evaluations(&self) -> &[u64] {
        self.protocol.evaluations()
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        self.protocol.stats()
    }
}
