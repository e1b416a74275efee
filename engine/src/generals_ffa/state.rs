//! The serialised form of a game, checked on the way in.
//!
//! Replays carry their initial state, so a state can come from a file anyone
//! could have edited. `State` is what JSON holds; turning it into a
//! [`GeneralsFfa`] checks every size, index and range the engine indexes
//! with or sums over, so stepping a state read from a file can never panic
//! or overflow. Rule-level consistency (a mountain with an army, a dead seat
//! that still owns land) is the sim guard's business ([`super::guard`]):
//! such a state loads, and the guard reports it.

use serde::Deserialize;

use super::board::{GeneralsFfa, MAX_TOTAL_ARMY, Params, SEATS, Scratch, SeatState, StateError};
use super::view::CellKind;
use crate::game::Outcome;

/// The fields of a [`GeneralsFfa`] exactly as serialised; unchecked.
#[derive(Deserialize)]
pub(crate) struct State {
    params: Params,
    kind: Vec<CellKind>,
    owner: Vec<Option<u8>>,
    army: Vec<u32>,
    seats: [SeatState; SEATS],
    turn: u32,
    hashes: Vec<u64>,
    events: Vec<super::board::Event>,
    outcome: Option<Outcome>,
    #[serde(default = "first_ranking")]
    ranking_version: u32,
}

/// States written before the ranking had a version.
fn first_ranking() -> u32 {
    1
}

impl TryFrom<State> for GeneralsFfa {
    type Error = StateError;

    fn try_from(state: State) -> Result<GeneralsFfa, StateError> {
        state.params.check()?;
        let game = GeneralsFfa {
            params: state.params,
            kind: state.kind,
            owner: state.owner,
            army: state.army,
            seats: state.seats,
            turn: state.turn,
            hashes: state.hashes,
            events: state.events,
            outcome: state.outcome,
            ranking_version: state.ranking_version,
            scratch: Scratch::default(),
        };
        check_planes(&game)?;
        check_progress(&game)?;
        Ok(game)
    }
}

/// Plane lengths, owners, crowns, memories and the army total: everything the
/// engine indexes with or adds up.
pub(crate) fn check_planes(game: &GeneralsFfa) -> Result<(), StateError> {
    let cells = game.params.cells();
    for (plane, got) in [
        ("kind", game.kind.len()),
        ("owner", game.owner.len()),
        ("army", game.army.len()),
    ] {
        if got != cells {
            return Err(StateError::PlaneLength {
                plane,
                got,
                expected: cells,
            });
        }
    }
    for (cell, owner) in game.owner.iter().enumerate() {
        if let Some(owner) = *owner
            && usize::from(owner) >= SEATS
        {
            return Err(StateError::Owner { cell, owner });
        }
    }
    for (seat, s) in game.seats.iter().enumerate() {
        if s.crown >= cells {
            return Err(StateError::Crown { seat });
        }
        if s.memory.len() != cells {
            return Err(StateError::PlaneLength {
                plane: "memory",
                got: s.memory.len(),
                expected: cells,
            });
        }
        if s.memory
            .iter()
            .any(|m| m.owner.is_some_and(|o| usize::from(o) >= SEATS))
        {
            return Err(StateError::Seat {
                seat,
                problem: "remembers an owner outside 0..=3",
            });
        }
        if s.alive != s.death_turn.is_none() {
            return Err(StateError::Seat {
                seat,
                problem: "a death turn is set exactly when the seat is dead",
            });
        }
    }
    let total = game.total_army();
    if total > MAX_TOTAL_ARMY {
        return Err(StateError::Army { total });
    }
    Ok(())
}

/// Turn, hash log, events and outcome agree with each other.
fn check_progress(game: &GeneralsFfa) -> Result<(), StateError> {
    let max_turns = game.params.max_turns;
    if game.turn > max_turns || (game.turn == max_turns && game.outcome.is_none()) {
        return Err(StateError::Turn {
            turn: game.turn,
            max_turns,
        });
    }
    if game.hashes.len() != game.turn as usize {
        return Err(StateError::Hashes {
            hashes: game.hashes.len(),
            turn: game.turn,
        });
    }
    for (index, event) in game.events.iter().enumerate() {
        if event.seat >= SEATS || event.other >= SEATS {
            return Err(StateError::Event { index });
        }
    }
    if let Some(outcome) = &game.outcome
        && (outcome.ranks.len() != SEATS || outcome.scores.len() != SEATS)
    {
        return Err(StateError::Outcome);
    }
    if !(1..=super::board::RANKING_VERSION).contains(&game.ranking_version) {
        return Err(StateError::Params("ranking_version must be 1 or 2"));
    }
    for (seat, s) in game.seats.iter().enumerate() {
        if s.death_turn.is_some_and(|t| t > game.turn) {
            return Err(StateError::Seat {
                seat,
                problem: "died after the current turn",
            });
        }
        if s.forfeit_turn.is_some_and(|t| t > game.turn) {
            return Err(StateError::Seat {
                seat,
                problem: "forfeited after the current turn",
            });
        }
        if s.forfeit_turn.is_some() && !s.forfeited {
            return Err(StateError::Seat {
                seat,
                problem: "has a forfeit turn without having forfeited",
            });
        }
    }
    Ok(())
}
