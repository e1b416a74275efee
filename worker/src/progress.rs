//! Where a running match publishes how far it has got, for whoever reports
//! it to the coordinator (the worker's heartbeats and progress reports).
//!
//! The turn is published after every step (one atomic store). The board is
//! written only when asked for: a reporter calls [`Progress::take_board`],
//! which hands over the board written since its last call and asks for a
//! fresh one, which the referee writes after its next step. So a board
//! costs one JSON dump per report interval, not one per turn, and is at
//! most one interval old when sent.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// One running match's published progress.
#[derive(Debug, Default)]
pub struct Progress {
    turn: AtomicU32,
    board_wanted: AtomicBool,
    board: Mutex<Option<(u32, Vec<u8>)>>,
}

impl Progress {
    /// Turns played so far.
    pub fn turn(&self) -> u32 {
        self.turn.load(Ordering::Relaxed)
    }

    /// The referee's side: `turn` steps are applied; `board` writes the
    /// match's live view, called only when a board was asked for.
    pub fn publish(&self, turn: u32, board: impl FnOnce() -> Vec<u8>) {
        self.turn.store(turn, Ordering::Relaxed);
        if self.board_wanted.swap(false, Ordering::Relaxed) {
            let board = board();
            *self.board.lock().unwrap_or_else(|p| p.into_inner()) = Some((turn, board));
        }
    }

    /// The reporter's side: the board written since the last call (with
    /// its turn), if any; a new one is asked for either way.
    pub fn take_board(&self) -> Option<(u32, Vec<u8>)> {
        let board = self.board.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.board_wanted.store(true, Ordering::Relaxed);
        board
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_is_written_only_after_it_was_asked_for_and_handed_over_once() {
        let progress = Progress::default();
        let mut written = 0;
        progress.publish(1, || {
            written += 1;
            b"one".to_vec()
        });
        assert_eq!((progress.turn(), written), (1, 0));
        assert_eq!(progress.take_board(), None);
        progress.publish(2, || {
            written += 1;
            b"two".to_vec()
        });
        progress.publish(3, || {
            written += 1;
            b"three".to_vec()
        });
        assert_eq!(written, 1);
        assert_eq!(progress.turn(), 3);
        assert_eq!(progress.take_board(), Some((2, b"two".to_vec())));
        assert_eq!(progress.take_board(), None);
    }
}
