//! The coordinator calls this crate makes that the coordinator is still
//! gaining (replays, seat logs, entrant tokens, running-match progress,
//! rejudging, and which worker played a record), in one place so the
//! rest of the crate reads them through one small interface.
//!
//! TEMPORARY: until those land on main these are stand-ins: replays come
//! from the store directly, everything else is empty.

use arena_coordinator::model::MatchRecord;
use arena_coordinator::service::{Coordinator, CoordinatorError};

/// The raw replay file of a finished match.
pub async fn replay(
    coordinator: &Coordinator,
    match_id: &str,
) -> Result<Option<Vec<u8>>, CoordinatorError> {
    Ok(coordinator.store().replay(match_id).await?)
}

/// One seat's bot log (its stderr, capped by the worker).
pub async fn seat_log(
    _coordinator: &Coordinator,
    _match_id: &str,
    _seat: usize,
) -> Result<Option<Vec<u8>>, CoordinatorError> {
    Ok(None)
}

/// The submission id an entrant token stands for.
pub async fn entrant_of_token(
    _coordinator: &Coordinator,
    _token: &str,
) -> Result<Option<String>, CoordinatorError> {
    Ok(None)
}

/// The turn a running match has reached, from its worker's heartbeats.
pub fn progress(_coordinator: &Coordinator, _match_id: &str) -> Option<u32> {
    None
}

/// Requeues a finished match, dropping its result.
pub async fn rejudge(_coordinator: &Coordinator, _match_id: &str) -> Result<(), CoordinatorError> {
    Ok(())
}

/// The worker that played a recorded match; empty if unknown.
pub fn record_worker(_record: &MatchRecord) -> &str {
    ""
}
