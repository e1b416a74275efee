//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong opening, reading or writing a blob store.
///
/// An absent blob is not an error: `get` returns `None` and `delete` returns
/// `false` for it.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    // Invalid input.
    /// An id that is not exactly 64 lowercase hex digits; refused before any
    /// storage is touched, so it can never name a path or key of its own.
    #[error("invalid blob id {0:?}: expected 64 lowercase hex digits")]
    InvalidId(String),
    /// A location string that cannot be understood.
    #[error("invalid blob store location {location:?}: {reason}")]
    InvalidLocation {
        /// The location as given, with any secret query values removed.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A retention string that is neither a duration nor "forever".
    #[error("invalid retention {input:?}: {reason}")]
    InvalidRetention {
        /// The retention as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Content larger than a blob may be.
    #[error("blob of {size} bytes is over the {limit}-byte limit")]
    TooLarge {
        /// The content's size in bytes.
        size: u64,
        /// The largest size a blob may have.
        limit: u64,
    },

    // Stored data that is not what it should be.
    /// The stored bytes are not a blob this crate wrote, or are damaged.
    #[error("blob {id} is corrupt: {reason}")]
    Corrupt {
        /// The blob's id.
        id: String,
        /// What was found wrong.
        reason: String,
    },

    // From the backends.
    /// A filesystem operation failed.
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being attempted ("read", "rename", …).
        action: &'static str,
        /// The file or directory it was attempted on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An S3 request failed.
    #[error("s3 {action} failed: {source}")]
    S3 {
        /// What was being attempted ("put", "list", …).
        action: &'static str,
        /// The client's error.
        #[source]
        source: object_store::Error,
    },
    /// Compressing content failed (zstd reported an error).
    #[error("could not compress blob: {0}")]
    Compress(#[source] std::io::Error),
    /// A blocking filesystem task did not finish (it panicked or was cancelled).
    #[error("filesystem task did not finish: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Shorthand for this crate's results.
pub type Result<T, E = BlobError> = std::result::Result<T, E>;
