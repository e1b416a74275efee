//! Arena's blob store: where match replays (JSON, 20 KB – 10 MB) and bot
//! logs (text, up to 1 MiB per seat) are kept, out of Redis.
//!
//! # Layout
//!
//! [`BlobStore`] is the one interface; it is an enum over the two backends
//! (as the coordinator's `Store` is), because async methods in a `dyn` trait
//! would need boxing and there are only two:
//!
//! - [`FsBlobs`] (in `fs`), the default: files under a directory, fanned out
//!   as `ROOT/ab/cdef…` by the id's first two hex digits, written atomically
//!   (temporary file in the same directory, fsync, rename).
//! - [`S3Blobs`] (in `s3`): objects `PREFIX/abcdef…` in a bucket on any
//!   S3-compatible server, through the `object_store` crate.
//!
//! `id` computes and validates ids, `codec` turns content into its stored
//! form and back, `location` parses location strings, `retention` parses how
//! long blobs are kept, and `error` has the one error enum.
//! `tests/conformance.rs` runs one suite against both backends (S3 against a
//! real moto server on loopback).
//!
//! # Design
//!
//! **Content-addressed.** A blob's id is the sha256 of its uncompressed
//! content ([`blob_id`]). Storing the same replay or log twice costs nothing
//! extra, a put needs no coordination between writers (same content, same
//! id, same bytes), and every read is checked: `get` hashes what it inflated
//! and reports [`BlobError::Corrupt`] on any mismatch, so damage is never
//! handed out as data. Ids are validated (exactly 64 lowercase hex digits)
//! before anything touches storage, so an id taken from a URL can never
//! become a path traversal or an odd S3 key.
//!
//! **Compressed, behind a header.** Content is stored as one zstd frame
//! (level 6: replays are repetitive JSON and shrink many times over) after a
//! 13-byte header: the magic `ABLB`, a format version, and the uncompressed
//! length. The version makes a future format change detectable instead of
//! looking like damage; the length lets a reader refuse anything claiming to
//! be over [`MAX_BLOB_BYTES`] (256 MiB) before inflating, and inflation
//! stops one byte past the claimed length, so a corrupt or hostile blob
//! cannot exhaust memory.
//!
//! **Retention.** Each blob's timestamp is when it was stored or last
//! re-put: the file's mtime (a re-put of existing content touches it) or the
//! object's Last-Modified (a re-put uploads it again, S3 having no other way
//! to refresh it). [`BlobStore::sweep`] deletes every blob whose timestamp is
//! before a cutoff, and [`Retention`] ("30d", "12h", "forever") turns a
//! configured max age into that cutoff. So a replay that is still being
//! referenced can be kept alive by putting it again. S3 timestamps have
//! one-second resolution (listed times are truncated to match).
//!
//! **Runtime.** The methods are async and run blocking work (file I/O,
//! compression, hashing) on tokio's blocking pool, so they must be called
//! inside a tokio runtime, as everything in Arena is. S3 goes over reqwest
//! with rustls and the ring crypto library (the one tonic uses here); opening
//! an S3 store installs ring as rustls's process-wide provider unless the
//! program has already installed one.
//!
//! # Locations
//!
//! - a plain path, or `file:///abs/dir`: the filesystem backend (the
//!   directory is created if missing);
//! - `s3://BUCKET[/PREFIX]?endpoint=http://127.0.0.1:PORT&region=R&allow_http=true`:
//!   S3. Every query key is optional (`region` defaults to us-east-1; no
//!   `endpoint` means AWS). Credentials come from AWS_ACCESS_KEY_ID and
//!   AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN if set), or from
//!   `access_key_id=` and `secret_access_key=` query keys (for tests).

mod codec;
mod error;
mod fs;
mod id;
mod location;
mod retention;
mod s3;

use std::time::SystemTime;

pub use self::codec::{MAX_BLOB_BYTES, MAX_STORED_BYTES};
pub use self::error::{BlobError, Result};
pub use self::fs::FsBlobs;
pub use self::id::{ID_LEN, blob_id, is_valid_id};
pub use self::location::{DEFAULT_REGION, Location, S3Credentials, S3Location};
pub use self::retention::Retention;
pub use self::s3::S3Blobs;

/// A blob store: one of the two backends, with the same behaviour (the
/// conformance suite checks that). Clones share the backend.
#[derive(Clone, Debug)]
pub enum BlobStore {
    /// Files under a local directory.
    Fs(FsBlobs),
    /// Objects in an S3-compatible bucket.
    S3(S3Blobs),
}

/// Calls the same async method on whichever backend `self` holds.
macro_rules! dispatch {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            BlobStore::Fs(store) => store.$method($($arg),*).await,
            BlobStore::S3(store) => store.$method($($arg),*).await,
        }
    };
}

impl BlobStore {
    /// Opens the store at `location` (see the crate docs for the forms).
    /// Malformed locations, and S3 without credentials, are errors.
    pub async fn open(location: &str) -> Result<BlobStore> {
        match Location::parse(location)? {
            Location::Fs(root) => Ok(BlobStore::Fs(FsBlobs::open(root).await?)),
            Location::S3(s3) => Ok(BlobStore::S3(S3Blobs::open(s3)?)),
        }
    }

    /// Stores `bytes` compressed and returns their id. Idempotent: the same
    /// content is stored once, and putting it again refreshes its timestamp
    /// for retention.
    pub async fn put(&self, bytes: &[u8]) -> Result<String> {
        dispatch!(self.put(bytes))
    }

    /// The decompressed content of blob `id`, checked against the id; `None`
    /// when absent. Damaged data is [`BlobError::Corrupt`].
    pub async fn get(&self, id: &str) -> Result<Option<Vec<u8>>> {
        dispatch!(self.get(id))
    }

    /// Deletes blob `id`; `false` when it was not there.
    pub async fn delete(&self, id: &str) -> Result<bool> {
        dispatch!(self.delete(id))
    }

    /// When blob `id` was stored or last re-put, by the backend's own clock
    /// (the one `sweep` compares); `None` when absent.
    pub async fn stored_at(&self, id: &str) -> Result<Option<SystemTime>> {
        dispatch!(self.stored_at(id))
    }

    /// Retention: deletes every blob stored (or last re-put) before
    /// `cutoff`; returns how many.
    pub async fn sweep(&self, cutoff: SystemTime) -> Result<usize> {
        dispatch!(self.sweep(cutoff))
    }

    /// A short description for logs, e.g. "filesystem /var/lib/arena/blobs"
    /// or "s3 bucket replays at http://127.0.0.1:9000"; never credentials.
    pub fn describe(&self) -> String {
        match self {
            BlobStore::Fs(store) => format!("filesystem {}", store.root().display()),
            BlobStore::S3(store) => store.describe(),
        }
    }
}
