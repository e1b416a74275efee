//! A seat's submission fetched from the coordinator by its hash, checked
//! against it and unpacked into the worker's cache (once per worker).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use arena_proto::v1::FetchSubmissionRequest;

use super::heartbeat::Watch;
use super::job::Job;
use super::{JobError, MAX_ARCHIVE_BYTES, lock};
use crate::delivery::{self, Delivery};
use crate::submission;

/// A seat's submission as fetched.
pub(super) enum Fetched {
    /// Unpacked here, ready to build.
    Dir(PathBuf),
    /// It arrived intact but is not a runnable bot (see
    /// [`submission::TreeError::is_submissions_fault`]): its seat forfeits.
    Refused(String),
}

/// Submissions already unpacked in the cache.
pub(super) fn cached_submissions(cache_dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(cache_dir.join("submissions"))
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| !name.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

impl Job {
    /// One attempt at downloading submission `hash`: its archive, or `None`
    /// when it is larger than [`MAX_ARCHIVE_BYTES`].
    async fn fetch_archive(&self, hash: &str) -> Result<Option<Vec<u8>>, tonic::Status> {
        let mut client = self.client.clone();
        let mut stream = client
            .fetch_submission(FetchSubmissionRequest {
                hash: hash.to_owned(),
            })
            .await?
            .into_inner();
        let mut archive = Vec::new();
        while let Some(chunk) = stream.message().await? {
            if archive.len() + chunk.data.len() > MAX_ARCHIVE_BYTES {
                return Ok(None);
            }
            archive.extend_from_slice(&chunk.data);
        }
        Ok(Some(archive))
    }

    /// The unpacked submission `hash`, fetched from the coordinator if
    /// needed; `Fetched::Refused` when it arrived intact but cannot be a bot.
    pub(super) async fn submission_dir(
        &self,
        hash: &str,
        watch: &Watch<'_>,
    ) -> Result<Fetched, JobError> {
        if hash.is_empty() || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(JobError::InvalidHash(hash.to_owned()));
        }
        let root = self.options.cache_dir.join("submissions");
        let dir = root.join(hash);
        if dir.is_dir() {
            tracing::Span::current().record("cached", true);
            return Ok(Fetched::Dir(dir));
        }
        tracing::Span::current().record("cached", false);
        std::fs::create_dir_all(&root).map_err(|source| JobError::Cache {
            path: root.clone(),
            source,
        })?;
        // A transient error (the coordinator or its store restarting) is
        // waited out, as a report is, for as long as the lease stands.
        let fetched = delivery::deliver(
            watch,
            || self.fetch_archive(hash),
            Self::retrying(format!("FetchSubmission of {hash}")),
        )
        .await;
        let archive = match fetched {
            Delivery::Answered(Some(archive)) => archive,
            Delivery::Answered(None) => {
                // Every worker has this cap: no other would do better.
                return Ok(Fetched::Refused(format!(
                    "the submission's archive is larger than {MAX_ARCHIVE_BYTES} bytes"
                )));
            }
            Delivery::Refused(status) => {
                return Err(JobError::FetchRefused {
                    hash: hash.to_owned(),
                    status,
                });
            }
            Delivery::LeaseGone { why, last } => {
                return Err(JobError::FetchLeaseGone {
                    hash: hash.to_owned(),
                    why,
                    last,
                });
            }
        };
        let actual = submission::archive_id(&archive);
        if actual != hash {
            return Err(JobError::HashMismatch {
                hash: hash.to_owned(),
                actual,
            });
        }
        let scratch = root.join(format!(".{hash}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(e) = submission::unpack(&archive, &scratch) {
            if let Err(cleanup) = std::fs::remove_dir_all(&scratch) {
                tracing::warn!(path = %scratch.display(), error = %cleanup, "cannot remove a scratch directory");
            }
            let failure = JobError::Unpack {
                hash: hash.to_owned(),
                reason: arena_proto::error_chain(&e),
            };
            return if e.is_submissions_fault() {
                Ok(Fetched::Refused(failure.to_string()))
            } else {
                Err(failure)
            };
        }
        if std::fs::rename(&scratch, &dir).is_err() {
            // Another match unpacked it first.
            let _ = std::fs::remove_dir_all(&scratch);
        }
        lock(&self.cached).insert(hash.to_owned());
        Ok(Fetched::Dir(dir))
    }
}
