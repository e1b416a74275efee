//! The contract between a game's rules and the match runner.

use std::fmt;

/// A player's position in a match, counted from 0.
pub type Seat = usize;

/// A reply line that is not an action at all. This is a runner fault (pass plus
/// one fault), unlike a well-formed but illegal action, which the rules turn
/// into a silent pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply: {reason}")]
pub struct Malformed {
    pub reason: &'static str,
}

/// How a finished game ranks its seats.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// `ranks[seat]` is 0 for the best placement; equal ranks are a tie, so a
    /// draw between two seats is `[0, 0]`.
    pub ranks: Vec<u32>,
    /// Why the game ended, as a stable snake_case word (`general_captured`,
    /// `turn_cap_draw`, `forfeit`, ...).
    pub reason: String,
}

impl Outcome {
    /// The single seat ranked first, or `None` on a shared first place.
    pub fn winner(&self) -> Option<Seat> {
        let mut best = self.ranks.iter().enumerate().filter(|(_, r)| **r == 0);
        match (best.next(), best.next()) {
            (Some((seat, _)), None) => Some(seat),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner() {
            Some(seat) => write!(f, "seat {seat} wins ({})", self.reason),
            None => write!(f, "draw ({})", self.reason),
        }
    }
}

/// A game the match runner can referee: text frames in, one reply line per
/// live seat out, one pure step per turn.
///
/// The state is plain data: cloning it, comparing it and serialising it are how
/// replays are written and verified.
pub trait Game:
    Clone + fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned
{
    /// One seat's decoded reply.
    type Action: Copy + fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned;

    /// The game's stable name (`generals`).
    fn name(&self) -> &'static str;

    /// How many seats the game was created with.
    fn seats(&self) -> usize;

    /// The game time: how many steps have been applied.
    fn turn(&self) -> u32;

    /// Appends the line a seat receives once, before its first frame.
    fn write_handshake(&self, seat: Seat, out: &mut Vec<u8>);

    /// Appends the frame a seat receives before choosing its next action.
    fn write_frame(&self, seat: Seat, out: &mut Vec<u8>);

    /// Decodes one reply line (without its newline). `Err` only for text that
    /// is not an action; legality is the step's business.
    fn parse_action(&self, line: &[u8]) -> Result<Self::Action, Malformed>;

    /// What a seat does when it sent nothing usable.
    fn idle_action(&self) -> Self::Action;

    /// Applies one action per seat (`actions.len() == seats()`); returns the
    /// outcome once the game is over. Stepping a finished game does nothing.
    fn step(&mut self, actions: &[Self::Action]) -> Option<Outcome>;

    /// Removes seats whose bots forfeited; returns the outcome if that ends the
    /// game.
    fn forfeit(&mut self, seats: &[Seat]) -> Option<Outcome>;

    /// The outcome, once the game is over.
    fn outcome(&self) -> Option<&Outcome>;
}
