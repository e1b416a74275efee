//! The store's one error enum. Outcomes a caller expects in normal operation
//! (a duplicate result, a stale lease, an empty queue) are values in the
//! return types instead, so an `Err` here always means something is wrong
//! with the request or with the backend.

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // Invalid requests.
    /// `create_tournament` with an id that is already taken.
    #[error("tournament {0:?} already exists")]
    AlreadyExists(String),
    /// An operation named a tournament the store has never seen.
    #[error("unknown tournament {0:?}")]
    UnknownTournament(String),
    /// `schedule_round` on a cancelled tournament.
    #[error("tournament {0:?} is cancelled")]
    Cancelled(String),
    /// `schedule_round` skipped ahead: rounds are scheduled in order.
    #[error("tournament {tournament:?}: round {got} scheduled before round {expected}")]
    RoundOutOfOrder {
        /// The tournament.
        tournament: String,
        /// The next round the store would accept.
        expected: u32,
        /// The round that was passed.
        got: u32,
    },
    /// `schedule_round` with a match id some scheduled match already has.
    #[error("match id {0:?} is already in use")]
    DuplicateMatch(String),
    /// `complete` with a record whose `match_id` is not the match reported on.
    #[error("record for match {record:?} reported as the result of match {match_id:?}")]
    MismatchedRecord {
        /// The match the result was reported for.
        match_id: String,
        /// The match the record names.
        record: String,
    },
    /// A lease call from a worker other than the one the lease was granted to.
    #[error("lease {lease_id} belongs to another worker, not {worker:?}")]
    NotLeaseHolder {
        /// The lease quoted.
        lease_id: String,
        /// The worker that quoted it.
        worker: String,
    },
    /// `lease` with a lease id some lease already has.
    #[error("lease id {0:?} is already in use")]
    DuplicateLease(String),
    /// An operation named a match the store has never scheduled.
    #[error("unknown match {0:?}")]
    UnknownMatch(String),
    /// `put_submission` with bytes whose sha256 is not the given hash.
    #[error("submission bytes hash to {actual}, not {expected}")]
    HashMismatch {
        /// The hash the caller named the blob by.
        expected: String,
        /// The sha256 of the bytes, lowercase hex.
        actual: String,
    },

    // Backend failures.
    /// Redis could not be reached, or refused a command or script.
    #[error("redis")]
    Redis(#[source] redis::RedisError),
    /// A value could not be encoded for, or decoded from, the backend.
    #[error("(de)serializing {what}")]
    Serialization {
        /// Which value, e.g. "tournament spec t1".
        what: String,
        /// The underlying serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The on-disk store's file could not be opened, read or written.
    #[error("state file {}: {what}", path.display())]
    Disk {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong, in words.
        what: String,
    },
    /// Data read back from the backend breaks an invariant the store keeps
    /// (a missing field, an unknown state). Only a bug or a hand-edited
    /// database produces this.
    #[error("corrupt store: {0}")]
    Corrupt(String),
}

impl From<redis::RedisError> for StoreError {
    fn from(err: redis::RedisError) -> Self {
        StoreError::Redis(err)
    }
}

/// Shorthand for store results.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Encodes `value` as JSON, naming `what` in the error.
pub(crate) fn to_json<T: serde::Serialize>(value: &T, what: impl Into<String>) -> Result<String> {
    serde_json::to_string(value).map_err(|source| StoreError::Serialization {
        what: what.into(),
        source,
    })
}

/// Decodes JSON read back from the backend, naming `what` in the error.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: impl Into<String>,
) -> Result<T> {
    serde_json::from_str(text).map_err(|source| StoreError::Serialization {
        what: what.into(),
        source,
    })
}
