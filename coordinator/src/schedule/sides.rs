//! The schedulers over sides: one entry point per format that the service
//! calls for every game, played in teams or not (see [`crate::teams`]).
//!
//! Each pairs the entrants as the plain scheduler does with `seats` = the
//! number of sides (2 in a 2v2 game), filling with `baseline` where the game
//! has one, and then seats each pairing ([`Sides::expand`]): seat `s` goes to
//! the pairing's entrant for the side of `teams[s]`. The two-seat
//! alternation of the plain schedulers thereby swaps sides from game to game
//! of a pairing (`[A, B, A, B]`, then `[B, A, B, A]`), byes fall to whole
//! entrants, and Swiss reads its history one seat per side
//! ([`Sides::collapse`]), so teammates are never counted as having met.
//! Without teams all of this is exactly the plain scheduler.

use super::{
    ScheduleError, round_robin, round_robin_round_count, round_robin_round_count_with_baseline,
    round_robin_with_baseline, swiss_round, swiss_round_with_baseline,
};
use crate::domain::{EntrantId, MatchRecord, Round};
use crate::teams::Sides;

/// A round-robin of the sides, seated: [`round_robin`], or
/// [`round_robin_with_baseline`] when `baseline` is given, over
/// `sides.count()` seats, each pairing expanded to the match's seats.
pub fn round_robin_by_side(
    entrants: &[EntrantId],
    sides: &Sides,
    cycles: u32,
    games_per_pairing: u32,
    base_seed: u64,
    baseline: Option<&str>,
) -> Result<Vec<Round>, ScheduleError> {
    let seats = sides.count();
    let rounds = match baseline {
        Some(baseline) => round_robin_with_baseline(
            entrants,
            seats,
            cycles,
            games_per_pairing,
            base_seed,
            baseline,
        )?,
        None => round_robin(entrants, seats, cycles, games_per_pairing, base_seed)?,
    };
    rounds
        .into_iter()
        .map(|round| Ok(sides.expand_round(round)?))
        .collect()
}

/// How many rounds [`round_robin_by_side`] would return, without building
/// them.
pub fn round_robin_round_count_by_side(
    entrants: &[EntrantId],
    sides: &Sides,
    cycles: u32,
    games_per_pairing: u32,
    baseline: Option<&str>,
) -> Result<usize, ScheduleError> {
    let seats = sides.count();
    match baseline {
        Some(_) => {
            round_robin_round_count_with_baseline(entrants, seats, cycles, games_per_pairing)
        }
        None => round_robin_round_count(entrants, seats, cycles, games_per_pairing),
    }
}

/// Swiss round `round` of the sides, seated: [`swiss_round`], or
/// [`swiss_round_with_baseline`] when `baseline` is given, over
/// `sides.count()` seats and the `history` collapsed to one seat per side
/// (records as reported, one seat per seat of the match).
pub fn swiss_round_by_side(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    sides: &Sides,
    base_seed: u64,
    baseline: Option<&str>,
) -> Result<Round, ScheduleError> {
    let seats = sides.count();
    let history = sides.collapse_all(history)?;
    let paired = match baseline {
        Some(baseline) => {
            swiss_round_with_baseline(round, entrants, &history, seats, base_seed, baseline)?
        }
        None => swiss_round(round, entrants, &history, seats, base_seed)?,
    };
    Ok(sides.expand_round(paired)?)
}
