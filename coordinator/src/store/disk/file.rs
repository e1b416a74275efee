//! The state file: a redb database with one table per tracked collection
//! (see `memory::rows`), the queue by position, and a format number.
//!
//! Opening checks every page's checksum (redb's integrity check), so a
//! torn or altered file is refused with an error naming it rather than
//! trusted; a file of another format version is refused too.

use std::path::Path;

use redb::{
    Builder, ConcurrencyMode, Database, DatabaseError, ReadTransaction, ReadableDatabase,
    ReadableTable, TableDefinition, TableError, WriteTransaction,
};

use crate::store::error::{Result, StoreError};
use crate::store::memory::{Changes, MemoryStore, Table};

/// The file's name in its state directory.
pub const FILE_NAME: &str = "store.redb";

/// The layout version written in [`META`]; a file with another one is
/// refused rather than misread.
const FORMAT: u64 = 1;

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const QUEUE: TableDefinition<i64, &str> = TableDefinition::new("queue");

fn table(table: Table) -> TableDefinition<'static, &'static str, &'static [u8]> {
    TableDefinition::new(table.name())
}

/// The error for `path`, saying what failed.
pub(super) fn disk_error(path: &Path, what: impl std::fmt::Display) -> StoreError {
    StoreError::Disk {
        path: path.to_owned(),
        what: what.to_string(),
    }
}

fn builder() -> Builder {
    let mut builder = Builder::new();
    // One process writes; `arena run --status` may read alongside it.
    builder.set_concurrency_mode(ConcurrencyMode::SingleWriter);
    builder
}

/// Opens (creating if need be) the state file at `path` for writing.
pub(super) fn open(path: &Path) -> Result<Database> {
    let mut builder = builder();
    builder.set_check_integrity_on_open(true);
    let db = builder.create(path).map_err(|e| open_error(path, e))?;
    let txn = db
        .begin_write()
        .map_err(|e| disk_error(path, format!("starting a transaction: {e}")))?;
    check_format(path, &txn)?;
    txn.commit()
        .map_err(|e| disk_error(path, format!("writing the format: {e}")))?;
    Ok(db)
}

/// The message of a file another process has open.
const IN_USE: &str =
    "it is open in another process (is another `arena run` using this state directory?)";

/// The message of a file a read-only handle cannot read before a repair.
const NEEDS_REPAIR: &str = "it was not closed cleanly and needs a repair to be read";

/// Whether `error` says the file needs a repair (a writable open) first.
pub(super) fn needs_repair(error: &StoreError) -> bool {
    matches!(error, StoreError::Disk { what, .. } if what == NEEDS_REPAIR)
}

/// Every row of the file at `path`, read through a read-only handle beside
/// the process that may be writing it. The writer checks the file's
/// integrity when it opens it; a read-only handle cannot, so should the
/// file be damaged, a panic in redb while reading it is turned into an
/// error naming the file.
pub(super) fn load_beside_writer(path: &Path) -> Result<MemoryStore> {
    let db = builder()
        .open_read_only(path)
        .map_err(|e| open_error(path, e))?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| load(path, &db)))
        .unwrap_or_else(|_| Err(disk_error(path, "the file is corrupt (reading it failed)")))
}

fn open_error(path: &Path, error: DatabaseError) -> StoreError {
    match error {
        DatabaseError::DatabaseAlreadyOpen => disk_error(path, IN_USE),
        DatabaseError::RepairAborted => disk_error(path, NEEDS_REPAIR),
        DatabaseError::Storage(redb::StorageError::Corrupted(why)) => disk_error(
            path,
            format!("the file is corrupt ({why}); move it aside to start afresh"),
        ),
        other => disk_error(path, format!("cannot open it: {other}")),
    }
}

/// Writes the format number into a new file, or checks an existing one's.
fn check_format(path: &Path, txn: &WriteTransaction) -> Result<()> {
    let mut meta = txn
        .open_table(META)
        .map_err(|e| disk_error(path, format!("opening the meta table: {e}")))?;
    let stored = meta
        .get("format")
        .map_err(|e| disk_error(path, format!("reading the format: {e}")))?
        .map(|v| v.value());
    match stored {
        Some(FORMAT) => Ok(()),
        Some(other) => Err(disk_error(
            path,
            format!("it has format {other}; this arena reads format {FORMAT}"),
        )),
        None => {
            meta.insert("format", FORMAT)
                .map_err(|e| disk_error(path, format!("writing the format: {e}")))?;
            Ok(())
        }
    }
}

/// Every row of the file, as a tracking store.
pub(super) fn load(path: &Path, db: &impl ReadableDatabase) -> Result<MemoryStore> {
    let txn = db
        .begin_read()
        .map_err(|e| disk_error(path, format!("starting a read: {e}")))?;
    let mut rows = Vec::new();
    for t in Table::ALL {
        read_table(path, &txn, t, &mut rows)?;
    }
    let queue = read_queue(path, &txn)?;
    MemoryStore::restore(rows, queue).map_err(|e| disk_error(path, e))
}

fn read_table(
    path: &Path,
    txn: &ReadTransaction,
    t: Table,
    rows: &mut Vec<(Table, String, Vec<u8>)>,
) -> Result<()> {
    let read = |e: &dyn std::fmt::Display| disk_error(path, format!("reading {}: {e}", t.name()));
    let opened = match txn.open_table(table(t)) {
        Ok(opened) => opened,
        // Never written: empty.
        Err(TableError::TableDoesNotExist(_)) => return Ok(()),
        Err(e) => return Err(read(&e)),
    };
    for entry in opened.iter().map_err(|e| read(&e))? {
        let (key, value) = entry.map_err(|e| read(&e))?;
        rows.push((t, key.value().to_owned(), value.value().to_vec()));
    }
    Ok(())
}

fn read_queue(path: &Path, txn: &ReadTransaction) -> Result<Vec<(i64, String)>> {
    let read = |e: &dyn std::fmt::Display| disk_error(path, format!("reading the queue: {e}"));
    let opened = match txn.open_table(QUEUE) {
        Ok(opened) => opened,
        Err(TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(read(&e)),
    };
    let mut queue = Vec::new();
    for entry in opened.iter().map_err(|e| read(&e))? {
        let (position, match_id) = entry.map_err(|e| read(&e))?;
        queue.push((position.value(), match_id.value().to_owned()));
    }
    Ok(queue)
}

/// Writes `batches`, oldest first, in one transaction, durable when this
/// returns.
pub(super) fn write(path: &Path, db: &Database, batches: &[Changes]) -> Result<()> {
    let fail = |what: &str, e: &dyn std::fmt::Display| disk_error(path, format!("{what}: {e}"));
    let txn = db
        .begin_write()
        .map_err(|e| fail("starting a transaction", &e))?;
    for t in Table::ALL {
        if !batches.iter().any(|b| b.rows.iter().any(|r| r.table == t)) {
            continue;
        }
        let mut opened = txn.open_table(table(t)).map_err(|e| fail(t.name(), &e))?;
        for row in batches
            .iter()
            .flat_map(|b| &b.rows)
            .filter(|r| r.table == t)
        {
            match &row.value {
                Some(value) => opened.insert(row.key.as_str(), value.as_slice()).map(drop),
                None => opened.remove(row.key.as_str()).map(drop),
            }
            .map_err(|e| fail(t.name(), &e))?;
        }
    }
    if batches.iter().any(|b| !b.queue.is_empty()) {
        let mut queue = txn.open_table(QUEUE).map_err(|e| fail("queue", &e))?;
        for (position, now) in batches.iter().flat_map(|b| &b.queue) {
            match now {
                Some(match_id) => queue.insert(*position, match_id.as_str()).map(drop),
                None => queue.remove(*position).map(drop),
            }
            .map_err(|e| fail("queue", &e))?;
        }
    }
    txn.commit().map_err(|e| fail("committing", &e))
}
