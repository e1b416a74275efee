//! The coordinator calls that serve the pages beyond the store's own
//! reads: replays and seat logs (kept in the blob store behind each
//! result), entrant tokens, running matches' turns and boards, rejudging, and which
//! worker played a record. One place, so the rest of the crate reads them
//! through one small interface.

use arena_coordinator::attachments::{Attachments, Slot};
use arena_coordinator::domain::MatchRecord;
use arena_coordinator::service::{Coordinator, CoordinatorError, LiveMatch};

/// The raw replay file of a finished match.
pub async fn replay(
    coordinator: &Coordinator,
    match_id: &str,
) -> Result<Option<Vec<u8>>, CoordinatorError> {
    coordinator.replay(match_id).await
}

/// Whether a finished match kept a replay, read off its store slot (the
/// manifest naming its blobs) without fetching the replay itself: a match
/// page needs only to know whether to show the viewer. A blob the
/// retention has swept still counts; the viewer then says it failed to load.
pub async fn has_replay(
    coordinator: &Coordinator,
    match_id: &str,
) -> Result<bool, CoordinatorError> {
    let Some(slot) = coordinator.store().replay(match_id).await? else {
        return Ok(false);
    };
    Ok(match Attachments::read_slot(slot)? {
        Slot::Manifest { replay, .. } => replay.is_some(),
        Slot::Legacy(_) => true,
    })
}

/// One seat's bot log (its stderr, capped by the worker).
pub async fn seat_log(
    coordinator: &Coordinator,
    match_id: &str,
    seat: usize,
) -> Result<Option<Vec<u8>>, CoordinatorError> {
    coordinator.seat_log(match_id, seat).await
}

/// The submission id an entrant token stands for.
pub async fn entrant_of_token(
    coordinator: &Coordinator,
    token: &str,
) -> Result<Option<String>, CoordinatorError> {
    coordinator.entrant_of_token(token).await
}

/// The turn a running match has reached, from its worker's heartbeats.
pub fn progress(coordinator: &Coordinator, match_id: &str) -> Option<u32> {
    coordinator.progress(match_id)
}

/// A running match as its worker last reported it: its turn and board.
pub fn live_match(coordinator: &Coordinator, match_id: &str) -> Option<LiveMatch> {
    coordinator.live_match(match_id)
}

/// Requeues a finished match; its result stands until the new one lands.
pub async fn rejudge(coordinator: &Coordinator, match_id: &str) -> Result<(), CoordinatorError> {
    coordinator.rejudge(match_id).await
}

/// Why a rejudge of a finished match would be refused now, if it would.
pub async fn rejudge_possible(
    coordinator: &Coordinator,
    match_id: &str,
) -> Result<(), CoordinatorError> {
    coordinator.rejudge_possible(match_id).await
}

/// The worker that played a recorded match; empty if unknown.
pub fn record_worker(record: &MatchRecord) -> &str {
    &record.worker
}
