//! The contract between a game's rules and the match runner.

use std::fmt;

use crate::verdict::FaultKind;

/// A player's position in a match, counted from 0.
pub type Seat = usize;

/// A reply line that is not an action at all. This is a runner fault (pass plus
/// one fault), unlike a well-formed but illegal action, which the rules turn
/// into a silent pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply: {reason}")]
pub struct Malformed {
    /// What is wrong, for the participant's log.
    pub reason: String,
}

impl Malformed {
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

/// How a finished game places its seats.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// `ranks[seat]` is 0 for the best placement; equal ranks are a tie, so a
    /// draw between two seats is `[0, 0]`.
    pub ranks: Vec<u32>,
    /// `scores[seat]`: the game's own points for the placement (higher is
    /// better). Games without a scoring rule of their own use
    /// [`placement_points`].
    pub scores: Vec<f64>,
    /// `teams[seat]`: the team a seat played for; empty when every seat plays
    /// for itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<u32>,
    /// Why the game ended, as a stable snake_case word (`general_captured`,
    /// `turn_cap_draw`, `forfeit`, ...).
    pub reason: String,
}

impl Outcome {
    /// An outcome scored by [`placement_points`], every seat on its own.
    pub fn ranked(ranks: Vec<u32>, reason: &str) -> Self {
        Self {
            scores: placement_points(&ranks),
            ranks,
            teams: Vec::new(),
            reason: reason.to_owned(),
        }
    }

    /// The single seat ranked first, or `None` on a shared first place. A
    /// display convenience: results travel as `ranks` and `scores`.
    pub fn winner(&self) -> Option<Seat> {
        let mut best = self.ranks.iter().enumerate().filter(|(_, r)| **r == 0);
        match (best.next(), best.next()) {
            (Some((seat, _)), None) => Some(seat),
            _ => None,
        }
    }
}

/// Points for each seat's placement: with `N` seats, the places are worth
/// `(N - 1 - p) / (N - 1)` (1 for first, 0 for last), and a tie group gets
/// the average of the places it covers. They add up to `N / 2` in every
/// game; with two seats that is 1 for a win, ½ for a draw, 0 for a loss.
/// Only the order of `ranks` matters.
pub fn placement_points(ranks: &[u32]) -> Vec<f64> {
    let n = ranks.len();
    if n < 2 {
        return vec![1.0; n];
    }
    let last = (n - 1) as f64;
    ranks
        .iter()
        .map(|&r| {
            let ahead = ranks.iter().filter(|&&o| o < r).count();
            let tied = ranks.iter().filter(|&&o| o == r).count();
            // The group covers places ahead ..= ahead + tied - 1.
            let place = ahead as f64 + (tied as f64 - 1.0) / 2.0;
            (last - place) / last
        })
        .collect()
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner() {
            Some(seat) => write!(f, "seat {seat} wins ({})", self.reason),
            None => write!(f, "no single winner ({})", self.reason),
        }
    }
}

/// A game the match runner can referee: frames out, one reply line per due
/// seat in, one pure step per turn.
///
/// The state is plain data: cloning it, comparing it and serialising it are how
/// replays are written and verified.
pub trait Game:
    Clone + fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned + Send + 'static
{
    /// One seat's decoded reply: a move, a plan, a batch of orders.
    type Action: Clone
        + fmt::Debug
        + PartialEq
        + serde::Serialize
        + serde::de::DeserializeOwned
        + Send
        + 'static;

    /// The game's registered name (see [`crate::registry`]).
    fn name(&self) -> &'static str;

    /// How many seats the game was created with.
    fn seats(&self) -> usize;

    /// The game time: how many steps have been applied.
    fn turn(&self) -> u32;

    /// Whether `seat` is asked for an action before the next step. A plan
    /// game asks every k turns and steps with what is installed in between;
    /// a seat that is out of the game is never due.
    fn is_due(&self, seat: Seat) -> bool {
        let _ = seat;
        true
    }

    /// Appends the line a seat receives once, before its first frame.
    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>);

    /// Appends the frame a due seat receives before choosing its next action.
    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>);

    /// [`Game::write_frame`] for a seat metered by fuel, which the frame of
    /// a game with WebAssembly seats reports; other games ignore it.
    fn write_frame_fuel(&self, seat: Seat, fuel: Option<Fuel>, out: &mut Vec<u8>) {
        let _ = fuel;
        self.write_frame(seat, out);
    }

    /// Decodes one reply line (without its newline) from `seat`. `Err` only
    /// for text that is not an action; legality is the step's business.
    fn parse_action(&self, seat: Seat, line: &[u8]) -> Result<Self::Action, Malformed>;

    /// The fault to record for a reply that parsed into `action` but that
    /// the rules refuse as a whole (the action then stands as the seat's
    /// no-action turn). Most games have none: their illegal actions are
    /// silent passes, decided in the step.
    fn reply_fault(&self, seat: Seat, action: &Self::Action) -> Option<FaultKind> {
        let _ = (seat, action);
        None
    }

    /// What a due seat does when it sent nothing usable.
    fn fallback_action(&self, seat: Seat) -> Self::Action;

    /// Applies one step. `actions[seat]` is the seat's action when it was
    /// due, `None` otherwise (`actions.len() == seats()`). Returns the
    /// outcome once the game is over; stepping a finished game does nothing.
    fn step(&mut self, actions: &[Option<Self::Action>]) -> Option<Outcome>;

    /// Takes `seats` (every seat forfeited so far) out of the bots' hands;
    /// returns the outcome if that ends the game. Games that play on drive
    /// those seats themselves and rank them below every other seat.
    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome>;

    /// The outcome, once the game is over.
    fn outcome(&self) -> Option<&Outcome>;

    /// The state as `arena replay dump` prints it: the serialised state
    /// unless the game publishes a friendlier projection (its observation).
    fn dump_state(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// One seat's applied action as `arena replay dump` prints it (`None`:
    /// the seat was not due); the serialised action unless the game says
    /// otherwise.
    fn dump_action(action: Option<&Self::Action>) -> serde_json::Value
    where
        Self: Sized,
    {
        serde_json::to_value(action).unwrap_or(serde_json::Value::Null)
    }

    /// Appends the reply line the in-engine baseline `name` gives `seat`
    /// now, computed from that seat's own view only; `false` when the game
    /// has no such baseline. The line goes through [`Game::parse_action`]
    /// like any bot's.
    fn write_baseline_reply(&self, name: &str, seat: Seat, out: &mut Vec<u8>) -> bool {
        let _ = (name, seat, out);
        false
    }

    /// `teams[seat]`: the side each seat plays for, known from the start
    /// (empty when every seat plays for itself). Tournaments use it to seat a
    /// team entrant on all of its side's seats.
    fn teams(&self) -> Vec<u32> {
        Vec::new()
    }

    /// A broken invariant the game detected in its own state (a bug in the
    /// engine, never a result): the runner stops the match and reports an
    /// engine error instead of an outcome.
    fn invariant_violation(&self) -> Option<String> {
        None
    }

    /// Per-seat counters the game keeps beyond faults (`invalid_moves`, ...),
    /// reported with the result.
    fn seat_stats(&self, seat: Seat) -> Vec<(&'static str, u64)> {
        let _ = seat;
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_points_average_tie_groups() {
        assert_eq!(placement_points(&[0, 1]), vec![1.0, 0.0]);
        assert_eq!(placement_points(&[0, 0]), vec![0.5, 0.5]);
        let four = placement_points(&[2, 0, 3, 1]);
        let expected = [1.0 / 3.0, 1.0, 0.0, 2.0 / 3.0];
        for (got, want) in four.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{four:?}");
        }
        // Two seats share first: each gets the average of 1 and 2/3.
        let shared = placement_points(&[0, 0, 1, 2]);
        assert!((shared[0] - 5.0 / 6.0).abs() < 1e-12);
        assert!((shared.iter().sum::<f64>() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn winner_is_only_a_sole_first_place() {
        assert_eq!(Outcome::ranked(vec![1, 0], "x").winner(), Some(1));
        assert_eq!(Outcome::ranked(vec![0, 0, 1], "x").winner(), None);
    }
}

/// A fuel-metered seat's budget for the coming turn, as its frame reports
/// it: `allowance + bank` is exactly what the turn may spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fuel {
    /// What this turn adds (the per-turn allowance, capped so the total
    /// stays within the bank's cap; plus the start-up allowance on the
    /// first turn).
    pub allowance: u64,
    /// Fuel banked from earlier turns.
    pub bank: u64,
}
