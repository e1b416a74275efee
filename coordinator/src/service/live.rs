//! Running matches as their workers last reported them: the turn each has
//! reached (from heartbeats) and its board (from progress reports), for the
//! live pages. Kept in memory only: it is stale within a report anyway, and
//! a restarted coordinator hears again within one interval.
//!
//! A heartbeat that extended a match's lease makes its worker the one whose
//! boards are taken; a board from any other worker (one whose lease was
//! lost, say) is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::Coordinator;

/// Boards larger than this are dropped (the turn is still taken): a live
/// view is not worth megabytes of the coordinator's memory per match.
pub const MAX_BOARD_BYTES: usize = 1 << 20;

/// One running match as its worker last said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveMatch {
    /// Turns played.
    pub turn: u32,
    /// The engine's live view of the match (JSON, see
    /// `arena_engine::session::Match::live_json`), once a worker sent one.
    pub board: Option<Arc<[u8]>>,
}

struct Entry {
    worker: String,
    live: LiveMatch,
}

/// The running matches heard of, by match id.
#[derive(Default)]
pub(super) struct LiveMatches(Mutex<HashMap<String, Entry>>);

impl LiveMatches {
    /// The map, whatever a panicking holder left in it (it is only a cache
    /// of the latest reports).
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Coordinator {
    /// The turn a running match has reached, as its worker last said.
    pub fn progress(&self, match_id: &str) -> Option<u32> {
        self.live.lock().get(match_id).map(|e| e.live.turn)
    }

    /// A running match as its worker last reported it.
    pub fn live_match(&self, match_id: &str) -> Option<LiveMatch> {
        self.live.lock().get(match_id).map(|e| e.live.clone())
    }

    /// Records the turns reached by matches whose leases a heartbeat of
    /// `worker` has just extended (`(match id, turn)`); from now on that
    /// worker's boards of those matches are taken.
    pub fn record_progress(&self, worker: &str, reached: impl IntoIterator<Item = (String, u32)>) {
        let mut live = self.live.lock();
        for (match_id, turn) in reached {
            match live.get_mut(&match_id) {
                Some(entry) if entry.worker == worker => {
                    entry.live.turn = entry.live.turn.max(turn)
                }
                _ => {
                    live.insert(
                        match_id,
                        Entry {
                            worker: worker.to_owned(),
                            live: LiveMatch { turn, board: None },
                        },
                    );
                }
            }
        }
    }

    /// Records the boards `worker` reports (`(match id, turn, board)`; an
    /// empty board is none) for matches its heartbeats have extended; how
    /// many were taken.
    pub fn record_boards(
        &self,
        worker: &str,
        reports: impl IntoIterator<Item = (String, u32, Vec<u8>)>,
    ) -> usize {
        let mut live = self.live.lock();
        let mut taken = 0;
        for (match_id, turn, board) in reports {
            let Some(entry) = live.get_mut(&match_id) else {
                continue;
            };
            // Another worker's, or older than what is shown.
            if entry.worker != worker || turn < entry.live.turn {
                continue;
            }
            entry.live.turn = turn;
            if !board.is_empty() && board.len() <= MAX_BOARD_BYTES {
                entry.live.board = Some(board.into());
            }
            taken += 1;
        }
        taken
    }

    pub(super) fn forget_progress(&self, match_id: &str) {
        self.live.lock().remove(match_id);
    }
}
