//! What a finished match leaves besides its record: the replay and each
//! seat's bot log. They are kept in a blob store, not in the coordinator's
//! store (a replay can be megabytes; Redis should hold the small, hot
//! state), and the store keeps only a short manifest naming the blobs, in
//! the slot where it used to keep the replay itself.
//!
//! A slot written before the blob store existed holds a raw replay; it is
//! still read as one. Blobs are content-addressed, so putting the same
//! replay twice (a resent report) costs nothing, and a blob orphaned by a
//! report that was then refused is removed by the retention sweep.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// Where blobs go: a process-local map (tests, and coordinators given no
/// blob store) or one of the persistent stores of [`arena_blob`].
#[derive(Clone, Debug)]
pub enum Blobs {
    /// Gone when the process exits.
    Memory(MemoryBlobs),
    /// A filesystem directory or an S3-compatible bucket.
    Stored(arena_blob::BlobStore),
}

/// An in-process blob map, keyed like the persistent stores.
#[derive(Clone, Debug, Default)]
pub struct MemoryBlobs(Arc<Mutex<BlobMap>>);

/// Blob id → its content and when it was put.
type BlobMap = HashMap<String, (Vec<u8>, SystemTime)>;

#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    #[error("blob store")]
    Blob(#[from] arena_blob::BlobError),
    #[error("the stored attachment manifest is unreadable: {0}")]
    Manifest(String),
}

type Result<T> = std::result::Result<T, AttachmentError>;

impl Default for Blobs {
    fn default() -> Self {
        Blobs::Memory(MemoryBlobs::default())
    }
}

impl Blobs {
    pub async fn put(&self, bytes: &[u8]) -> Result<String> {
        match self {
            Blobs::Memory(map) => {
                let id = arena_blob::blob_id(bytes);
                lock(&map.0).insert(id.clone(), (bytes.to_vec(), SystemTime::now()));
                Ok(id)
            }
            Blobs::Stored(store) => Ok(store.put(bytes).await?),
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Vec<u8>>> {
        match self {
            Blobs::Memory(map) => Ok(lock(&map.0).get(id).map(|(bytes, _)| bytes.clone())),
            Blobs::Stored(store) => Ok(store.get(id).await?),
        }
    }

    /// Removes every blob put before `cutoff`; how many.
    pub async fn sweep(&self, cutoff: SystemTime) -> Result<usize> {
        match self {
            Blobs::Memory(map) => {
                let mut map = lock(&map.0);
                let before = map.len();
                map.retain(|_, (_, put)| *put >= cutoff);
                Ok(before - map.len())
            }
            Blobs::Stored(store) => Ok(store.sweep(cutoff).await?),
        }
    }

    /// For logs: where blobs are kept.
    pub fn describe(&self) -> String {
        match self {
            Blobs::Memory(_) => "process memory".to_owned(),
            Blobs::Stored(store) => store.describe(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How long blobs are kept, and where: the coordinator's attachment policy.
#[derive(Clone, Debug, Default)]
pub struct Attachments {
    pub blobs: Blobs,
    /// Blobs older than this are swept; `None` keeps them forever.
    pub retention: Option<Duration>,
}

/// The store's slot for a match: which blobs hold its replay and logs.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// The manifest's format, so a raw replay is never mistaken for one.
    attachments: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replay: Option<String>,
    /// Per seat, in seat order; `None` where a seat left no log.
    #[serde(default)]
    logs: Vec<Option<String>>,
}

const MANIFEST_FORMAT: u32 = 1;

/// What the store's slot for one match holds, read back.
#[derive(Debug)]
pub enum Slot {
    /// A manifest: the replay and logs are blobs.
    Manifest {
        replay: Option<String>,
        logs: Vec<Option<String>>,
    },
    /// A raw replay, stored before the blob store existed.
    Legacy(Vec<u8>),
}

impl Attachments {
    /// Puts the replay and the non-empty logs into the blob store and
    /// returns the manifest to keep in the store's slot; `None` when there
    /// is nothing to keep.
    pub async fn store(&self, replay: Option<&[u8]>, logs: &[Vec<u8>]) -> Result<Option<Vec<u8>>> {
        if replay.is_none() && logs.iter().all(Vec::is_empty) {
            return Ok(None);
        }
        let replay = match replay {
            Some(bytes) => Some(self.blobs.put(bytes).await?),
            None => None,
        };
        let mut ids = Vec::with_capacity(logs.len());
        for log in logs {
            ids.push(if log.is_empty() {
                None
            } else {
                Some(self.blobs.put(log).await?)
            });
        }
        let manifest = Manifest {
            attachments: MANIFEST_FORMAT,
            replay,
            logs: ids,
        };
        serde_json::to_vec(&manifest)
            .map(Some)
            .map_err(|e| AttachmentError::Manifest(e.to_string()))
    }

    /// Reads a store slot: a manifest, or else a raw replay.
    pub fn read_slot(bytes: Vec<u8>) -> Result<Slot> {
        // Every manifest starts so; a replay document never does.
        if !bytes.starts_with(b"{\"attachments\":") {
            return Ok(Slot::Legacy(bytes));
        }
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| AttachmentError::Manifest(e.to_string()))?;
        if manifest.attachments != MANIFEST_FORMAT {
            return Err(AttachmentError::Manifest(format!(
                "format {} is not one this coordinator reads",
                manifest.attachments
            )));
        }
        Ok(Slot::Manifest {
            replay: manifest.replay,
            logs: manifest.logs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn a_manifest_names_the_replay_and_each_seats_log() {
        runtime().block_on(async {
            let attachments = Attachments::default();
            let slot = attachments
                .store(
                    Some(b"{\"format\":\"replay\"}"),
                    &[b"log 0".to_vec(), Vec::new()],
                )
                .await
                .unwrap()
                .unwrap();
            let Slot::Manifest { replay, logs } = Attachments::read_slot(slot).unwrap() else {
                panic!("a manifest");
            };
            let replay = attachments.blobs.get(&replay.unwrap()).await.unwrap();
            assert_eq!(replay.as_deref(), Some(&b"{\"format\":\"replay\"}"[..]));
            assert_eq!(logs.len(), 2);
            assert_eq!(logs[1], None);
            let log = attachments
                .blobs
                .get(logs[0].as_ref().unwrap())
                .await
                .unwrap();
            assert_eq!(log.as_deref(), Some(&b"log 0"[..]));
        });
    }

    #[test]
    fn nothing_to_keep_keeps_nothing_and_raw_replays_still_read() {
        runtime().block_on(async {
            let attachments = Attachments::default();
            assert!(
                attachments
                    .store(None, &[Vec::new()])
                    .await
                    .unwrap()
                    .is_none()
            );
            let raw = b"{\"format\":\"arena-replay/1\"}".to_vec();
            assert!(matches!(
                Attachments::read_slot(raw.clone()).unwrap(),
                Slot::Legacy(bytes) if bytes == raw
            ));
            assert!(Attachments::read_slot(b"{\"attachments\":9}".to_vec()).is_err());
            assert!(Attachments::read_slot(b"{\"attachments\":".to_vec()).is_err());
        });
    }

    #[test]
    fn a_coordinator_sweeps_only_past_its_retention() {
        use crate::service::{Coordinator, CoordinatorConfig};
        use crate::store::Store;
        runtime().block_on(async {
            let keep_forever = Coordinator::new(Store::memory(), CoordinatorConfig::default());
            let id = keep_forever.attachments().blobs.put(b"kept").await.unwrap();
            assert_eq!(keep_forever.sweep_attachments().await.unwrap(), 0);
            assert!(
                keep_forever
                    .attachments()
                    .blobs
                    .get(&id)
                    .await
                    .unwrap()
                    .is_some()
            );

            let blobs = Blobs::default();
            let old = blobs.put(b"old").await.unwrap();
            let short = Attachments {
                blobs: blobs.clone(),
                retention: Some(Duration::from_secs(3600)),
            };
            let coordinator =
                Coordinator::with_attachments(Store::memory(), CoordinatorConfig::default(), short);
            assert_eq!(
                coordinator.sweep_attachments().await.unwrap(),
                0,
                "an hour has not passed"
            );
            let none = Attachments {
                blobs: blobs.clone(),
                retention: Some(Duration::ZERO),
            };
            let coordinator =
                Coordinator::with_attachments(Store::memory(), CoordinatorConfig::default(), none);
            assert_eq!(coordinator.sweep_attachments().await.unwrap(), 1);
            assert_eq!(blobs.get(&old).await.unwrap(), None);
        });
    }

    #[test]
    fn the_memory_sweep_removes_only_older_blobs() {
        runtime().block_on(async {
            let blobs = Blobs::default();
            let old = blobs.put(b"old").await.unwrap();
            let cutoff = SystemTime::now() + Duration::from_secs(1);
            assert_eq!(
                blobs
                    .sweep(cutoff - Duration::from_secs(3600))
                    .await
                    .unwrap(),
                0
            );
            assert_eq!(blobs.sweep(cutoff).await.unwrap(), 1);
            assert_eq!(blobs.get(&old).await.unwrap(), None);
        });
    }
}
