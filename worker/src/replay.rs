//! Replay files: the engine re-simulates replays from bytes
//! ([`arena_engine::replay`]); this module reads and writes them.

use std::path::Path;

pub use arena_engine::replay::{
    AnyReplay, REPLAY_FORMAT, Replay, ReplayError, ReplayResult, ReplayTurn, SeatForfeit,
    VerifyError,
};

/// The largest replay file read: 64 MiB. The largest a match can write is
/// under half of that (a 50,000-turn four-seat free-for-all re-planning
/// with sixteen-rule plans every 8 turns is about 28 MiB; an 8-player classic
/// game of 50,000 turns about 12 MiB). Parsing holds the file and its parse,
/// about 5.5 times the file's size, so the cap is also the memory bound:
/// about 350 MiB at the cap, whatever the size of a larger file (refused
/// before it is read).
pub const MAX_REPLAY_BYTES: u64 = 64 << 20;

/// Reading, writing or parsing a replay file failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a valid replay")]
    Parse { path: String, source: ReplayError },
    #[error("{path} is {bytes} bytes, more than the {MAX_REPLAY_BYTES} a replay may be")]
    TooLarge { path: String, bytes: u64 },
}

/// Writes a replay document.
pub fn save(path: &Path, replay: &[u8]) -> Result<(), ReplayFileError> {
    std::fs::write(path, replay).map_err(|source| ReplayFileError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Reads a replay of any registered game: the game comes from the file.
pub fn load(path: &Path) -> Result<Box<dyn AnyReplay>, ReplayFileError> {
    let show = || path.display().to_string();
    let read_error = |source| ReplayFileError::Read {
        path: show(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read_error)?.len();
    if size > MAX_REPLAY_BYTES {
        return Err(ReplayFileError::TooLarge {
            path: show(),
            bytes: size,
        });
    }
    let mut bytes = Vec::new();
    // Read at most one byte past the cap: a file that grows meanwhile is
    // still refused rather than read whole.
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::fs::File::open(path).map_err(read_error)?,
            MAX_REPLAY_BYTES + 1,
        ),
        &mut bytes,
    )
    .map_err(read_error)?;
    if bytes.len() as u64 > MAX_REPLAY_BYTES {
        return Err(ReplayFileError::TooLarge {
            path: show(),
            bytes: bytes.len() as u64,
        });
    }
    arena_engine::replay::open_any(&bytes).map_err(|source| ReplayFileError::Parse {
        path: show(),
        source,
    })
}
