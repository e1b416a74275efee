//! The on-disk embedded store: `arena run`'s default, so a local tournament
//! survives Ctrl-C, a crash or a reboot without a database server.
//!
//! It is the memory store, run in its tracking mode, plus a redb file
//! ([`file`]) that every change is written to before the operation that
//! made it returns. Each operation still runs in one critical section on
//! the in-memory state, exactly as in [`MemoryStore`], so both backends
//! share one implementation of every rule; what an operation changed
//! (noted by the tracked collections) is then written in one redb
//! transaction, committed durably (`fsync`) before the call returns. The
//! [`writer`] lets concurrent operations share a commit. Reads are served
//! from memory, after waiting for the writes they could have seen.
//!
//! Opening reads the whole file back (checking its integrity first), so
//! the state after a crash is exactly the state of the last commit: every
//! operation either reached the disk whole or not at all, and none that
//! returned is lost.
//!
//! # Why redb
//!
//! redb is a pure-Rust B-tree store with ACID transactions and
//! copy-on-write pages with checksums: a commit is durable when it returns,
//! a torn write is detected and rolled back to the last commit on open, and
//! nothing needs a C toolchain or a background compaction thread. The
//! store's workload (small keyed rows, whole-state reads only on open) is
//! what a B-tree does well; an LSM (fjall) would add compaction for no gain,
//! and SQLite would add a C build and a SQL layer over what is a key-value
//! layout.

mod file;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use self::file::FILE_NAME;
use self::writer::Writer;
use super::error::{Result, StoreError};
use super::types::{
    ExpiredLease, FailedLease, MatchInfo, QuarantineRule, Reported, ScheduledMatch, Status,
    TournamentSpec, WorkerInfo,
};
use super::{LeaseGrant, MemoryStore};
use crate::domain::{EntrantId, MatchRecord, Pairing};

/// The on-disk backend. Clones share one state and one file; the file is
/// closed when the last clone is dropped, after everything is written.
#[derive(Clone, Debug)]
pub struct DiskStore {
    memory: MemoryStore,
    writer: Arc<Writer>,
}

impl DiskStore {
    /// Opens the store in `dir` (created if missing), reading back what an
    /// earlier run left there. Only one process may have it open.
    pub fn open(dir: &Path) -> Result<DiskStore> {
        std::fs::create_dir_all(dir).map_err(|e| file::disk_error(dir, e))?;
        let path = dir.join(FILE_NAME);
        let db = file::open(&path)?;
        let memory = file::load(&path, &db)?;
        let writer = Writer::start(path, Arc::new(db))?;
        Ok(DiskStore {
            memory,
            writer: Arc::new(writer),
        })
    }

    /// A copy, in memory, of the state in `dir`, as of its last commit;
    /// changes to the copy are not written anywhere. It reads beside a
    /// process that may be writing the file, through redb's read-only
    /// handle, and never takes the write lock (which would keep a run from
    /// starting). Only a file left unclean by a process that died (which a
    /// read-only handle cannot read) is opened as [`DiskStore::open`] opens
    /// it, repaired to its last commit and checked.
    pub fn snapshot(dir: &Path) -> Result<MemoryStore> {
        let path = dir.join(FILE_NAME);
        if !path.exists() {
            return Err(file::disk_error(&path, "no such file"));
        }
        match file::load_beside_writer(&path) {
            Err(e) if file::needs_repair(&e) => file::load(&path, &file::open(&path)?),
            read => read,
        }
    }

    /// The state file.
    pub fn path(&self) -> PathBuf {
        self.writer.path().to_owned()
    }

    /// Checks that the file holds exactly the state in memory (for tests:
    /// a change the tracking missed would be lost on reopening).
    pub async fn verify_against_disk(&self) -> Result<()> {
        self.settle().await?;
        let read_back = file::load(self.writer.path(), self.writer.database())?;
        if read_back.same_state(&self.memory) {
            Ok(())
        } else {
            Err(StoreError::Corrupt(format!(
                "{} holds another state than the store in memory",
                self.writer.path().display()
            )))
        }
    }

    /// Hands in what the last operations changed and waits until it, and
    /// everything handed in before it, is on disk.
    async fn settle(&self) -> Result<()> {
        let number = self
            .memory
            .hand_in_changes(|changes| self.writer.hand_in(changes))?;
        self.writer.durable(number).await
    }
}

/// Each store operation: run on the memory store, then settled to disk. A
/// failed write wins over the operation's own answer.
macro_rules! settled {
    ($(
        $(#[$doc:meta])*
        fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $out:ty;
    )*) => {
        impl DiskStore {
            $(
                $(#[$doc])*
                pub async fn $name(&self $(, $arg: $ty)*) -> Result<$out> {
                    let answer = self.memory.$name($($arg),*).await;
                    self.settle().await?;
                    answer
                }
            )*
        }
    };
}

settled! {
    fn create_tournament(&self, spec: TournamentSpec) -> ();
    fn tournament(&self, id: &str) -> Option<TournamentSpec>;
    fn tournaments(&self) -> Vec<String>;
    fn cancel(&self, id: &str) -> usize;
    fn schedule_round(
        &self,
        tournament: &str,
        round: u32,
        matches: Vec<ScheduledMatch>,
        byes: Vec<EntrantId>,
    ) -> bool;
    fn rounds_scheduled(&self, tournament: &str) -> u32;
    fn byes(&self, tournament: &str) -> Vec<(u32, EntrantId)>;
    fn lease_worker(
        &self,
        worker: &str,
        lease_id: &str,
        now_ms: u64,
        ttl_ms: u64,
        alive_since_ms: u64,
    ) -> LeaseGrant;
    fn expire(&self, now_ms: u64, max_attempts: u32) -> Vec<ExpiredLease>;
    fn pairing(&self, match_id: &str) -> Option<Pairing>;
    fn queue_len(&self) -> usize;
    fn next_expiry(&self) -> Option<u64>;
    fn report(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
        quarantine: Option<QuarantineRule>,
    ) -> Reported;
    fn fail_counted(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
        max_attempts: u32,
        quarantine: Option<QuarantineRule>,
    ) -> Option<FailedLease>;
    fn release_leases(&self, tournament: &str, reason: &str) -> usize;
    fn requeue(&self, match_id: &str) -> bool;
    fn rejudge(&self, match_id: &str) -> bool;
    fn results(&self, tournament: &str) -> Vec<MatchRecord>;
    fn replay(&self, match_id: &str) -> Option<Vec<u8>>;
    fn status(&self, tournament: &str) -> Status;
    fn matches(&self, tournament: &str) -> Vec<MatchInfo>;
    fn put_entrant_token(&self, digest: &str, submission: &str) -> ();
    fn entrant_token(&self, digest: &str) -> Option<String>;
    fn register_worker(&self, info: WorkerInfo, now_ms: u64) -> ();
    fn heartbeat_leases(
        &self,
        worker: &str,
        now_ms: u64,
        ttl_ms: u64,
        cached: Vec<EntrantId>,
        lease_ids: &[String],
    ) -> Option<Vec<String>>;
    fn worker(&self, id: &str) -> Option<WorkerInfo>;
    fn worker_seen(&self, id: &str) -> Option<u64>;
    fn workers(&self, now_ms: u64, alive_within_ms: u64) -> Vec<WorkerInfo>;
    fn record_lease_end(&self, worker: &str, failed: bool, window: u32) -> u32;
    fn set_quarantined(&self, worker: &str, quarantined: bool) -> ();
    fn quarantined(&self) -> Vec<String>;
    fn is_quarantined(&self, worker: &str) -> bool;
    fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> ();
    fn get_submission(&self, hash: &str) -> Option<Vec<u8>>;
    fn has_submission(&self, hash: &str) -> bool;
}
