//! Arena's wire protocol. `arena.proto` documents every call and field; this
//! crate only holds the code generated from it. Conversion into domain types
//! happens in the coordinator and the worker.

#![allow(clippy::all)]

/// The largest submission archive (a tar of the bot directory) accepted
/// anywhere: by `arena run`, and by a coordinator over
/// `Admin.UploadSubmissionChunks`. 2 GiB.
pub const MAX_SUBMISSION_BYTES: u64 = 2 << 30;

/// An error and its causes on one line, each said once, as error texts go
/// over the wire (a `Status` message, a failure reason). A cause whose text
/// the line already ends with (some errors print their source in their own
/// message) is not repeated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let cause = s.to_string();
        if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
        source = s.source();
    }
    text
}

pub mod v1 {
    tonic::include_proto!("arena.v1");
}
