//! A match in progress, for runners that do not know which game they hold.
//!
//! [`Match`] is the object-safe face of a [`Game`]: replies go in as bytes,
//! frames come out as bytes, and the typed actions stay inside. [`Session`]
//! implements it for any game and records what it applies, so the replay is
//! a by-product of playing. The referee holds a `Box<dyn Match>` from the
//! registry; per-move cost is one virtual call per seat, far below a pipe
//! round trip, while engine benchmarks keep using the concrete types.

use crate::game::{Fuel, Game, Malformed, Outcome, Seat};
use crate::replay::{Replay, ReplayError, ReplayTurn, SeatForfeit};
use crate::verdict::{FaultKind, Forfeit};

/// A match of some registered game.
pub trait Match: Send {
    fn name(&self) -> &'static str;
    fn seats(&self) -> usize;
    /// Steps applied so far.
    fn turn(&self) -> u32;
    /// Whether `seat` is asked for an action before the next step.
    fn is_due(&self, seat: Seat) -> bool;
    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>);
    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>);
    /// The frame of a seat metered by fuel (see [`Game::write_frame_fuel`]).
    fn write_frame_fuel(&self, seat: Seat, fuel: Option<Fuel>, out: &mut Vec<u8>);
    /// The reply the in-engine baseline `name` gives `seat` now; `false`
    /// when the game has no such baseline.
    fn write_baseline_reply(&self, name: &str, seat: Seat, out: &mut Vec<u8>) -> bool;
    /// Parses `line` as `seat`'s action for the next step. On `Err` nothing
    /// is held: the caller decides the fault and calls [`Match::offer_fallback`].
    /// `Ok(Some(kind))`: the reply is held but the rules refused it as a
    /// whole (see [`Game::reply_fault`]); the fault is already recorded.
    fn offer(&mut self, seat: Seat, line: &[u8]) -> Result<Option<FaultKind>, Malformed>;
    /// Holds `seat`'s fallback action for the next step, noting the fault
    /// that replaced its reply, if any.
    fn offer_fallback(&mut self, seat: Seat, fault: Option<FaultKind>);
    /// Records that `seat` left the match; it takes effect before the next
    /// step, together with every other forfeit recorded until then.
    fn forfeit(&mut self, seat: Seat, reason: Forfeit);
    /// Applies forfeits recorded since the last step; the outcome if they end the game.
    fn apply_forfeits(&mut self) -> Option<Outcome>;
    /// Applies pending forfeits, then one step with the held actions (due
    /// seats with nothing held get their fallback). The outcome once over.
    fn step(&mut self) -> Option<Outcome>;
    fn outcome(&self) -> Option<&Outcome>;
    /// A broken engine invariant, if the last step found one.
    fn invariant_violation(&self) -> Option<String>;
    /// The side of each seat, for team games (see [`Game::teams`]).
    fn teams(&self) -> Vec<u32>;
    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)>;
    /// The replay so far, as the JSON document `arena replay` reads.
    fn replay_json(&self, seed: u64) -> Result<Vec<u8>, ReplayError>;
    /// The match as it stands, for a live view: `{"game", "turn", "state",
    /// "forfeits": [{"seat", "turn", "reason"}], "faults": [count per seat]}`,
    /// with `state` as a turn line of `arena replay dump` writes it.
    fn live_json(&self) -> serde_json::Value;
}

/// A [`Game`] being played, with its record.
pub struct Session<G: Game> {
    initial: G,
    game: G,
    held: Vec<Option<G::Action>>,
    held_faults: Vec<Option<FaultKind>>,
    turns: Vec<ReplayTurn<G::Action>>,
    forfeits: Vec<Option<SeatForfeit>>,
    /// Some forfeit was recorded since forfeits were last applied.
    forfeits_pending: bool,
}

impl<G: Game> Session<G> {
    pub fn new(game: G) -> Self {
        let seats = game.seats();
        Self {
            initial: game.clone(),
            game,
            held: vec![None; seats],
            held_faults: vec![None; seats],
            turns: Vec::new(),
            forfeits: vec![None; seats],
            forfeits_pending: false,
        }
    }

    /// Boxed as a [`Match`], as registry entries return it.
    pub fn boxed(game: G) -> Box<dyn Match> {
        Box::new(Self::new(game))
    }

    pub fn game(&self) -> &G {
        &self.game
    }
}

impl<G: Game> Match for Session<G> {
    fn name(&self) -> &'static str {
        self.game.name()
    }

    fn seats(&self) -> usize {
        self.game.seats()
    }

    fn turn(&self) -> u32 {
        u32::try_from(self.turns.len()).unwrap_or(u32::MAX)
    }

    fn is_due(&self, seat: Seat) -> bool {
        self.forfeits.get(seat).is_some_and(Option::is_none) && self.game.is_due(seat)
    }

    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>) {
        self.game.write_handshake(seat, out);
    }

    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>) {
        self.game.write_frame(seat, out);
    }

    fn write_frame_fuel(&self, seat: Seat, fuel: Option<Fuel>, out: &mut Vec<u8>) {
        self.game.write_frame_fuel(seat, fuel, out);
    }

    fn write_baseline_reply(&self, name: &str, seat: Seat, out: &mut Vec<u8>) -> bool {
        self.game.write_baseline_reply(name, seat, out)
    }

    fn offer(&mut self, seat: Seat, line: &[u8]) -> Result<Option<FaultKind>, Malformed> {
        let action = self.game.parse_action(seat, line)?;
        let refused = self.game.reply_fault(seat, &action);
        if let (Some(slot), Some(fault)) = (self.held.get_mut(seat), self.held_faults.get_mut(seat))
        {
            *slot = Some(action);
            *fault = refused;
        }
        Ok(refused)
    }

    fn offer_fallback(&mut self, seat: Seat, fault: Option<FaultKind>) {
        let action = self.game.fallback_action(seat);
        if let (Some(slot), Some(held_fault)) =
            (self.held.get_mut(seat), self.held_faults.get_mut(seat))
        {
            *slot = Some(action);
            *held_fault = fault;
        }
    }

    fn forfeit(&mut self, seat: Seat, reason: Forfeit) {
        let turn = self.turn();
        if let Some(slot @ None) = self.forfeits.get_mut(seat) {
            *slot = Some(SeatForfeit { reason, turn });
            self.forfeits_pending = true;
        }
    }

    fn apply_forfeits(&mut self) -> Option<Outcome> {
        if self.forfeits_pending {
            self.forfeits_pending = false;
            let seats: Vec<Seat> = (0..self.forfeits.len())
                .filter(|&s| self.forfeits[s].is_some())
                .collect();
            if let Some(outcome) = self.game.forfeit(&seats) {
                return Some(outcome);
            }
        }
        self.game.outcome().cloned()
    }

    fn step(&mut self) -> Option<Outcome> {
        if let Some(outcome) = self.apply_forfeits() {
            return Some(outcome);
        }
        let seats = self.game.seats();
        let mut actions = Vec::with_capacity(seats);
        let mut faults = Vec::with_capacity(seats);
        for seat in 0..seats {
            let due = self.is_due(seat);
            let held = self.held[seat].take();
            let fault = self.held_faults[seat].take();
            let action = match held {
                Some(a) if due => Some(a),
                None if due => Some(self.game.fallback_action(seat)),
                _ => None,
            };
            actions.push(action);
            faults.push(fault);
        }
        let outcome = self.game.step(&actions);
        self.turns.push(ReplayTurn { actions, faults });
        outcome
    }

    fn outcome(&self) -> Option<&Outcome> {
        self.game.outcome()
    }

    fn invariant_violation(&self) -> Option<String> {
        self.game.invariant_violation()
    }

    fn teams(&self) -> Vec<u32> {
        self.game.teams()
    }

    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)> {
        self.game.seat_stats(seat)
    }

    fn replay_json(&self, seed: u64) -> Result<Vec<u8>, ReplayError> {
        let replay = Replay::new(
            self.initial.clone(),
            seed,
            self.turns.clone(),
            self.forfeits.clone(),
            &self.game,
        );
        serde_json::to_vec(&replay).map_err(ReplayError::Serialize)
    }

    fn live_json(&self) -> serde_json::Value {
        let forfeits: Vec<_> = self
            .forfeits
            .iter()
            .enumerate()
            .filter_map(|(seat, f)| {
                f.map(|f| serde_json::json!({"seat": seat, "turn": f.turn, "reason": f.reason}))
            })
            .collect();
        let mut faults = vec![0u64; self.forfeits.len()];
        for record in &self.turns {
            for (seat, fault) in record.faults.iter().enumerate() {
                if let (Some(count), Some(_)) = (faults.get_mut(seat), fault) {
                    *count += 1;
                }
            }
        }
        serde_json::json!({
            "game": self.name(),
            "turn": self.turn(),
            "state": self.game.dump_state(),
            "forfeits": forfeits,
            "faults": faults,
        })
    }
}
