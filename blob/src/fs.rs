//! The filesystem backend: one file per blob under a root directory.
//!
//! A blob `abcdef…` lives at `ROOT/ab/cdef…` (the first two hex digits name
//! a fan-out directory, so no directory grows past ~1/256 of the blobs).
//! Writes go to a temporary file in the same directory, are fsynced and then
//! renamed into place, so a reader sees either nothing or the whole blob.
//! The file's mtime is when the blob was stored or last re-put; retention
//! sweeps by it.

use std::fs::{self, File};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::codec::{self, MAX_STORED_BYTES};
use crate::error::{BlobError, Result};
use crate::id::{blob_id, check_id, is_valid_id};

/// Temporary files start with this, which no blob file name (hex) can.
const TEMP_PREFIX: &str = ".tmp-";

/// A temporary file older than this is left over from a crashed write (no
/// write takes this long), so a sweep may delete it.
const STALE_TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// Tells apart temporary files of concurrent puts within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Blobs in a directory on the local filesystem.
#[derive(Clone, Debug)]
pub struct FsBlobs {
    /// The directory holding the fan-out directories.
    root: PathBuf,
}

impl FsBlobs {
    /// A store rooted at `root`, created if missing.
    pub async fn open(root: PathBuf) -> Result<FsBlobs> {
        let root = blocking(move || {
            fs::create_dir_all(&root).map_err(io_error("create directory", &root))?;
            Ok(root)
        })
        .await?;
        Ok(FsBlobs { root })
    }

    /// The directory the blobs live in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the blob with a (valid) id lives.
    pub fn path_of(&self, id: &str) -> Result<PathBuf> {
        check_id(id)?;
        let (fan_out, rest) = id.split_at(2);
        Ok(self.root.join(fan_out).join(rest))
    }

    /// Stores `bytes` compressed and returns the id. Content already present
    /// is not rewritten; only its mtime is refreshed.
    pub async fn put(&self, bytes: &[u8]) -> Result<String> {
        // Hashing and compressing are CPU work and the rest is blocking I/O,
        // so all of it runs on the blocking pool, on a copy of the content.
        let content = bytes.to_vec();
        let store = self.clone();
        blocking(move || {
            let id = blob_id(&content);
            let path = store.path_of(&id)?;
            if !refresh_mtime(&path)? {
                write_atomically(&path, &codec::encode(&content)?)?;
            }
            Ok(id)
        })
        .await
    }

    /// The stored (still compressed) bytes, or `None` when absent.
    async fn read_stored(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path_of(id)?;
        let id = id.to_owned();
        blocking(move || {
            let file = match File::open(&path) {
                Ok(file) => file,
                Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
                Err(error) => return Err(io_error("open", &path)(error)),
            };
            // Refuse before reading anything no blob of ours could be; the
            // `take` also bounds a file that grows while being read.
            let size = file.metadata().map_err(io_error("stat", &path))?.len();
            if size > MAX_STORED_BYTES {
                return Err(BlobError::Corrupt {
                    id,
                    reason: format!("stored file is {size} bytes"),
                });
            }
            let mut stored = Vec::with_capacity(size as usize);
            file.take(MAX_STORED_BYTES + 1)
                .read_to_end(&mut stored)
                .map_err(io_error("read", &path))?;
            Ok(Some(stored))
        })
        .await
    }

    /// The content of blob `id`, checked against the id.
    pub async fn get(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let Some(stored) = self.read_stored(id).await? else {
            return Ok(None);
        };
        let id = id.to_owned();
        // Inflating a large blob and hashing it is CPU work: keep it off the
        // async workers.
        blocking(move || codec::decode(&id, &stored).map(Some)).await
    }

    /// When blob `id` was stored or last re-put; `None` when absent.
    pub async fn stored_at(&self, id: &str) -> Result<Option<SystemTime>> {
        let path = self.path_of(id)?;
        blocking(move || match fs::metadata(&path) {
            Ok(meta) => meta
                .modified()
                .map(Some)
                .map_err(io_error("read the mtime of", &path)),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io_error("stat", &path)(error)),
        })
        .await
    }

    /// Deletes blob `id`; `false` when it was not there.
    pub async fn delete(&self, id: &str) -> Result<bool> {
        let path = self.path_of(id)?;
        blocking(move || match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
            Err(error) => Err(io_error("delete", &path)(error)),
        })
        .await
    }

    /// Deletes every blob whose mtime is before `cutoff`; returns how many.
    /// Temporary files left by crashed writes go too, once they are both
    /// past the cutoff and over an hour old (so no write in progress loses
    /// its file); any other file is left alone.
    pub async fn sweep(&self, cutoff: SystemTime) -> Result<usize> {
        let root = self.root.clone();
        blocking(move || sweep_dir(&root, cutoff)).await
    }
}

/// Sets the mtime of an existing blob file to now. `false` when there is no
/// such file (so it must be written).
fn refresh_mtime(path: &Path) -> Result<bool> {
    // Opening for writing (without truncating) is what `set_modified` needs;
    // a missing file is the ordinary first-put case.
    match File::options().write(true).open(path) {
        Ok(file) => {
            file.set_modified(SystemTime::now())
                .map_err(io_error("set the mtime of", path))?;
            Ok(true)
        }
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error("open", path)(error)),
    }
}

/// Writes `stored` to `path` so that `path` never holds a partial blob: a
/// temporary file in the same directory (so the rename cannot cross
/// filesystems), fsynced before the rename, and the directory fsynced after
/// it so the new name survives a crash.
fn write_atomically(path: &Path, stored: &[u8]) -> Result<()> {
    let dir = path.parent().ok_or_else(|| BlobError::Io {
        action: "find the directory of",
        path: path.to_owned(),
        source: ErrorKind::InvalidInput.into(),
    })?;
    fs::create_dir_all(dir).map_err(io_error("create directory", dir))?;
    let temp = dir.join(format!(
        "{TEMP_PREFIX}{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = File::create_new(&temp).map_err(io_error("create", &temp))?;
        file.write_all(stored).map_err(io_error("write", &temp))?;
        file.sync_all().map_err(io_error("fsync", &temp))?;
        fs::rename(&temp, path).map_err(io_error("rename into place", &temp))
    })();
    if written.is_err() {
        // Best effort: the write already failed, and that error is the one
        // worth reporting.
        let _ = fs::remove_file(&temp);
    }
    written?;
    File::open(dir)
        .and_then(|dir_file| dir_file.sync_all())
        .map_err(io_error("fsync directory", dir))
}

/// The walk behind [`FsBlobs::sweep`]: two levels, fan-out then blob files.
fn sweep_dir(root: &Path, cutoff: SystemTime) -> Result<usize> {
    let mut deleted = 0;
    for fan_out in fs::read_dir(root).map_err(io_error("list", root))? {
        let fan_out = fan_out.map_err(io_error("list", root))?;
        let fan_out_name = fan_out.file_name();
        let Some(prefix) = fan_out_name.to_str().filter(|name| name.len() == 2) else {
            continue;
        };
        let fan_out_path = fan_out.path();
        if !fan_out_path.is_dir() {
            continue;
        }
        for entry in fs::read_dir(&fan_out_path).map_err(io_error("list", &fan_out_path))? {
            let entry = entry.map_err(io_error("list", &fan_out_path))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let is_blob = is_valid_id(&format!("{prefix}{name}"));
            let is_temp = name.starts_with(TEMP_PREFIX);
            if !is_blob && !is_temp {
                continue;
            }
            let path = entry.path();
            let modified = match entry.metadata().and_then(|meta| meta.modified()) {
                Ok(modified) => modified,
                // Deleted by someone else since the listing.
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(error) => return Err(io_error("stat", &path)(error)),
            };
            if modified >= cutoff {
                continue;
            }
            if is_temp {
                remove_stale_temp(&path, modified)?;
                continue;
            }
            match fs::remove_file(&path) {
                Ok(()) => deleted += 1,
                Err(error) if error.kind() == ErrorKind::NotFound => {}
                Err(error) => return Err(io_error("delete", &path)(error)),
            }
        }
    }
    Ok(deleted)
}

/// Deletes a temporary file if it is over [`STALE_TEMP_AGE`] old.
fn remove_stale_temp(path: &Path, modified: SystemTime) -> Result<()> {
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or_default();
    if age < STALE_TEMP_AGE {
        return Ok(());
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io_error("delete", path)(error)),
    }
}

/// Runs blocking filesystem work on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work).await?
}

/// Builds the `Io` error for `action` on `path`.
fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BlobError {
    let path = path.to_owned();
    move |source| BlobError::Io {
        action,
        path,
        source,
    }
}
