//! Replay files: the engine re-simulates replays from bytes
//! ([`arena_engine::replay`]); this module reads and writes them.

use std::path::Path;

pub use arena_engine::replay::{
    AnyReplay, REPLAY_FORMAT, Replay, ReplayError, ReplayResult, ReplayTurn, SeatForfeit,
    VerifyError,
};

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
    let bytes = std::fs::read(path).map_err(|source| ReplayFileError::Read {
        path: show(),
        source,
    })?;
    arena_engine::replay::open_any(&bytes).map_err(|source| ReplayFileError::Parse {
        path: show(),
        source,
    })
}
