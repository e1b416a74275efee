//! The stored form of a blob: a small header, then the content as one zstd
//! frame.
//!
//! ```text
//! offset  size  field
//! 0       4     magic b"ABLB" (Arena blob)
//! 4       1     format version (1 = zstd)
//! 5       8     uncompressed length, little-endian u64
//! 13      …     zstd frame
//! ```
//!
//! The magic and version make a future format (another codec, a dictionary)
//! detectable rather than mistaken for damage, and the length lets a reader
//! refuse an oversized blob before inflating any of it.

use std::io::Read;

use crate::error::{BlobError, Result};
use crate::id::blob_id;

const MAGIC: [u8; 4] = *b"ABLB";
const VERSION_ZSTD: u8 = 1;
const HEADER_LEN: usize = MAGIC.len() + 1 + 8;

/// The largest content a blob may hold. Replays are at most ~10 MB and logs
/// 1 MiB per seat, so this is generous; it also bounds what a corrupt or
/// hostile blob can make a reader inflate.
pub const MAX_BLOB_BYTES: u64 = 256 * 1024 * 1024;

/// The largest stored form a reader accepts before even looking at it: the
/// biggest blob, incompressible, plus zstd's worst-case overhead and ours.
pub const MAX_STORED_BYTES: u64 = MAX_BLOB_BYTES + MAX_BLOB_BYTES / 128 + 1024;

/// zstd's level: 6 squeezes JSON replays noticeably better than the default
/// 3 while still compressing a 10 MB replay in well under a second.
const ZSTD_LEVEL: i32 = 6;

/// The most the decoder allocates up front, whatever the header claims, so a
/// lying header costs nothing until real data backs it.
const INITIAL_CAPACITY_CAP: usize = 4 * 1024 * 1024;

/// Compresses `content` into its stored form.
pub fn encode(content: &[u8]) -> Result<Vec<u8>> {
    let size = content.len() as u64;
    if size > MAX_BLOB_BYTES {
        return Err(BlobError::TooLarge {
            size,
            limit: MAX_BLOB_BYTES,
        });
    }
    let frame = zstd::bulk::compress(content, ZSTD_LEVEL).map_err(BlobError::Compress)?;
    let mut stored = Vec::with_capacity(HEADER_LEN + frame.len());
    stored.extend_from_slice(&MAGIC);
    stored.push(VERSION_ZSTD);
    stored.extend_from_slice(&size.to_le_bytes());
    stored.extend_from_slice(&frame);
    Ok(stored)
}

/// Turns a stored blob back into its content and checks it against `id`.
/// Anything unexpected is [`BlobError::Corrupt`], never a panic.
pub fn decode(id: &str, stored: &[u8]) -> Result<Vec<u8>> {
    let corrupt = |reason: String| BlobError::Corrupt {
        id: id.to_owned(),
        reason,
    };
    let Some((header, frame)) = stored.split_at_checked(HEADER_LEN) else {
        return Err(corrupt(format!(
            "{} bytes is too short for the header",
            stored.len()
        )));
    };
    let (magic, rest) = header.split_at(MAGIC.len());
    if magic != MAGIC {
        return Err(corrupt("not an Arena blob (bad magic)".to_owned()));
    }
    let (version, length) = rest.split_at(1);
    if version[0] != VERSION_ZSTD {
        return Err(corrupt(format!("unknown format version {}", version[0])));
    }
    let mut length_bytes = [0u8; 8];
    length_bytes.copy_from_slice(length);
    let length = u64::from_le_bytes(length_bytes);
    if length > MAX_BLOB_BYTES {
        return Err(corrupt(format!(
            "header claims {length} bytes, over the {MAX_BLOB_BYTES}-byte limit"
        )));
    }

    let decoder = zstd::stream::read::Decoder::new(frame)
        .map_err(|error| corrupt(format!("zstd: {error}")))?;
    // Read one byte past the claimed length, so a frame that inflates to more
    // is caught without inflating all of it.
    let mut content = Vec::with_capacity((length as usize).min(INITIAL_CAPACITY_CAP));
    decoder
        .take(length + 1)
        .read_to_end(&mut content)
        .map_err(|error| corrupt(format!("zstd: {error}")))?;
    if content.len() as u64 != length {
        return Err(corrupt(format!(
            "inflated to {} bytes where the header says {length}",
            content.len()
        )));
    }
    if blob_id(&content) != id {
        return Err(corrupt("content does not match its id".to_owned()));
    }
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_corrupt(id: &str, stored: &[u8], expected: &str) {
        match decode(id, stored) {
            Err(BlobError::Corrupt { reason, .. }) => {
                assert!(reason.contains(expected), "{reason:?} lacks {expected:?}")
            }
            other => panic!("expected corrupt ({expected}), got {other:?}"),
        }
    }

    #[test]
    fn round_trip() {
        for content in [&b""[..], b"x", &[7u8; 100_000]] {
            let stored = encode(content).unwrap();
            assert_eq!(&stored[..4], b"ABLB");
            assert_eq!(decode(&blob_id(content), &stored).unwrap(), content);
        }
    }

    #[test]
    fn damage_is_detected() {
        let content = b"{\"turns\": [1, 2, 3]}".repeat(50);
        let id = blob_id(&content);
        let stored = encode(&content).unwrap();

        assert_corrupt(&id, &stored[..5], "too short");
        assert_corrupt(&id, b"PK\x03\x04 not ours at all", "bad magic");

        let mut future = stored.clone();
        future[4] = 2;
        assert_corrupt(&id, &future, "unknown format version 2");

        let mut huge = stored.clone();
        huge[5..13].copy_from_slice(&(MAX_BLOB_BYTES + 1).to_le_bytes());
        assert_corrupt(&id, &huge, "over the");

        // A header that understates the length: the frame inflates past it.
        let mut short = stored.clone();
        short[5..13].copy_from_slice(&10u64.to_le_bytes());
        assert_corrupt(&id, &short, "inflated to 11 bytes");

        let mut truncated = stored.clone();
        truncated.truncate(stored.len() - 3);
        assert_corrupt(&id, &truncated, "zstd");

        assert_corrupt(&blob_id(b"other"), &stored, "does not match its id");
    }

    #[test]
    fn oversized_content_is_refused() {
        // Checked by size alone, so no 256 MiB buffer is needed: a zeroed
        // buffer is allocated lazily by the OS.
        let content = vec![0u8; MAX_BLOB_BYTES as usize + 1];
        assert!(matches!(encode(&content), Err(BlobError::TooLarge { .. })));
    }
}
