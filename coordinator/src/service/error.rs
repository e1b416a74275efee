//! What a coordinator operation can fail with.

use arena_engine::registry::limits::LimitError;
use arena_engine::registry::{RulesError, SetupError};

use crate::attachments::AttachmentError;
use crate::report::ResultError;
use crate::schedule::ScheduleError;
use crate::standings::StandingsError;
use crate::store::StoreError;
use crate::teams::TeamError;

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    #[error("store")]
    Store(#[from] StoreError),
    #[error("scheduling")]
    Schedule(#[from] ScheduleError),
    #[error("standings")]
    Standings(#[from] StandingsError),
    #[error("no tournament {0:?}")]
    UnknownTournament(String),
    #[error("no match {0:?}")]
    UnknownMatch(String),
    #[error(
        "tournament {0} was cancelled; its results stay, and a tournament with the same \
         definition cannot be created again (change its name to run it anew)"
    )]
    Cancelled(String),
    #[error("submission {0} was never uploaded")]
    UnknownSubmission(String),
    #[error("the same submission is entered twice ({0}); enter each bot once")]
    DuplicateSubmission(String),
    #[error("invalid tournament: {0}")]
    Invalid(String),
    #[error("invalid tournament")]
    Game(#[from] SetupError),
    #[error("invalid tournament")]
    Rules(#[from] RulesError),
    #[error("invalid tournament")]
    Limits(#[from] LimitError),
    #[error("invalid team layout")]
    Teams(#[from] TeamError),
    #[error("result refused")]
    InvalidResult(#[from] ResultError),
    #[error(
        "worker {0:?} is not registered, or has not been heard from within three heartbeat \
         intervals; register first"
    )]
    UnregisteredWorker(String),
    #[error(
        "worker {0:?} is quarantined after too many leases ended without a result; an \
         organiser can release it (arena tournament release-worker)"
    )]
    Quarantined(String),
    #[error("match {0} is not stuck; only a stuck match can be requeued")]
    NotStuck(String),
    #[error("reading the kernel's randomness for a lease id")]
    Entropy(#[source] getrandom::Error),
    #[error("the scheduling task failed")]
    SchedulingTask(#[source] tokio::task::JoinError),
    #[error("replays and logs")]
    Attachments(#[from] AttachmentError),
    #[error("match {0} has no result to rejudge")]
    NotDone(String),
    #[error("match {match_id} cannot be played again: {reason}")]
    Unplayable { match_id: String, reason: String },
}
