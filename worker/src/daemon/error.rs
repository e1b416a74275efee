//! Why a job could not play its match. Each is the worker's failure (the
//! coordinator requeues the match), reported with this text; a submission
//! that is not a runnable bot is not an error but its seat's forfeit.

use std::path::PathBuf;

use crate::runner::RunnerError;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("this worker cannot play: {0}")]
    UnknownGame(String),
    #[error("the lease's rules are not a JSON table: {0}")]
    Rules(String),
    #[error("cannot set up the match: {0}")]
    Setup(String),
    #[error("{game} has no baseline {baseline:?}")]
    NoBaseline { game: String, baseline: String },
    #[error("invalid submission hash {0:?}")]
    InvalidHash(String),
    #[error("creating {}: {source}", path.display())]
    Cache {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("fetching submission {hash}: {status}")]
    FetchRefused { hash: String, status: tonic::Status },
    #[error("fetching submission {hash}: the lease is gone ({why}){}", last_error(last.as_ref()))]
    FetchLeaseGone {
        hash: String,
        why: &'static str,
        last: Option<tonic::Status>,
    },
    #[error("submission {hash} arrived with hash {actual}")]
    HashMismatch { hash: String, actual: String },
    #[error("unpacking {hash}: {reason}")]
    Unpack { hash: String, reason: String },
    #[error("the worker is shutting down")]
    ShuttingDown,
    #[error("the match thread died: {0}")]
    ThreadDied(String),
    #[error("{}", arena_proto::error_chain(.0))]
    Runner(RunnerError),
}

/// `; last error: ...` when a call failed before the lease went.
fn last_error(last: Option<&tonic::Status>) -> String {
    last.map(|s| format!("; last error: {s}"))
        .unwrap_or_default()
}
