//! Group commit: operations hand their changes to one writer thread, which
//! writes everything handed in since its last commit in one transaction
//! and then says how far the file is durable.
//!
//! A batch is numbered when it is handed in, under the state's lock, so
//! batches are numbered in the order their operations ran; an operation
//! returns once the file is durable up to the last batch numbered before
//! it returned, which includes its own changes and everything it could
//! have seen. Batching is what lets many concurrent operations share one
//! `fsync` (see `arena bench coordinator --store embedded`).
//!
//! A failed commit is final: the writer stops, every waiting and later
//! operation gets the error, and the store must be opened again, which
//! reads back the last state that did reach the disk.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use redb::Database;
use tokio::sync::watch;

use super::file;
use crate::store::error::{Result, StoreError};
use crate::store::memory::Changes;

/// How far the file is durable, or why it never will be again.
#[derive(Clone, Debug, Default)]
struct Durable {
    /// Every batch numbered up to this one is on disk.
    through: u64,
    /// Set when a commit failed; nothing is written after it.
    failed: Option<Arc<str>>,
}

/// Batches waiting for the writer thread.
#[derive(Default)]
struct Pending {
    batches: Vec<Changes>,
    /// The number of the last batch handed in.
    last: u64,
    /// Set when the store is dropped: write what is left, then stop.
    closing: bool,
}

struct Shared {
    path: PathBuf,
    db: Arc<Database>,
    pending: Mutex<Pending>,
    wake: Condvar,
    durable: watch::Sender<Durable>,
}

/// The writer thread and the way to it; dropping it writes what is still
/// pending and joins the thread.
pub(super) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

impl Writer {
    pub(super) fn start(path: PathBuf, db: Arc<Database>) -> Result<Writer> {
        let (durable, _) = watch::channel(Durable::default());
        let shared = Arc::new(Shared {
            path,
            db,
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            durable,
        });
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("arena-store-writer".to_owned())
                .spawn(move || write_loop(&shared))
        }
        .map_err(|e| file::disk_error(&shared.path, e))?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    pub(super) fn database(&self) -> &Database {
        &self.shared.db
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.shared.path
    }

    /// Hands `changes` in (if there are any) and returns the number the
    /// caller must wait for. Called under the state's lock.
    pub(super) fn hand_in(&self, changes: Changes) -> u64 {
        let mut pending = lock(&self.shared.pending);
        if !changes.is_empty() {
            pending.last += 1;
            pending.batches.push(changes);
            self.shared.wake.notify_one();
        }
        pending.last
    }

    /// Waits until batch `number` is on disk.
    pub(super) async fn durable(&self, number: u64) -> Result<()> {
        let mut durable = self.shared.durable.subscribe();
        let reached = durable
            .wait_for(|d| d.through >= number || d.failed.is_some())
            .await
            .map_err(|_| file::disk_error(&self.shared.path, "the writer thread is gone"))?;
        match &reached.failed {
            Some(why) => Err(StoreError::Disk {
                path: self.shared.path.clone(),
                what: format!("an earlier write failed, so nothing more is kept: {why}"),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        lock(&self.shared.pending).closing = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!(path = %self.shared.path.display(), "the store's writer thread panicked");
        }
    }
}

fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    // The critical sections only move batches; a panic cannot leave them
    // half done.
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes batches as they come until the store closes or a write fails.
fn write_loop(shared: &Shared) {
    loop {
        let (batches, through, closing) = {
            let mut pending = lock(&shared.pending);
            while pending.batches.is_empty() && !pending.closing {
                pending = shared
                    .wake
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            (
                std::mem::take(&mut pending.batches),
                pending.last,
                pending.closing,
            )
        };
        if !batches.is_empty() {
            match file::write(&shared.path, &shared.db, &batches) {
                Ok(()) => {
                    shared.durable.send_modify(|d| d.through = through);
                }
                Err(e) => {
                    tracing::error!(error = %e, "writing the store failed; it keeps nothing more");
                    shared
                        .durable
                        .send_modify(|d| d.failed = Some(Arc::from(e.to_string())));
                    return;
                }
            }
        }
        if closing {
            return;
        }
    }
}
