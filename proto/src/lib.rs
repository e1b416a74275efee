//! Arena's wire protocol. `arena.proto` documents every call and field; this
//! crate only holds the code generated from it. Conversion into domain types
//! happens in the coordinator and the worker.

#![allow(clippy::all)]

/// The largest submission archive (a tar of the bot directory) accepted
/// anywhere: by `arena run`, and by a coordinator over
/// `Admin.UploadSubmissionChunks`. 2 GiB.
pub const MAX_SUBMISSION_BYTES: u64 = 2 << 30;

pub mod v1 {
    tonic::include_proto!("arena.v1");
}
