//! Blob ids: the lowercase hex sha256 of a blob's uncompressed content.

use sha2::{Digest, Sha256};

use crate::error::{BlobError, Result};

/// The number of characters in an id (hex of a 32-byte digest).
pub const ID_LEN: usize = 64;

/// A blob's id: the lowercase hex sha256 of its UNCOMPRESSED content, so
/// the id does not depend on how the blob happens to be stored.
pub fn blob_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(ID_LEN);
    for byte in digest.iter() {
        hex.push(hex_digit(byte >> 4));
        hex.push(hex_digit(byte & 0x0f));
    }
    hex
}

fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16).unwrap_or('0')
}

/// Whether `id` has the shape of a blob id: exactly 64 lowercase hex digits.
pub fn is_valid_id(id: &str) -> bool {
    id.len() == ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Refuses anything that is not a blob id, before it reaches a path or key.
pub(crate) fn check_id(id: &str) -> Result<()> {
    if is_valid_id(id) {
        Ok(())
    } else {
        // Cap what is echoed back: the id may be an arbitrary URL segment.
        Err(BlobError::InvalidId(id.chars().take(80).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_of_known_content() {
        assert_eq!(
            blob_id(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            blob_id(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn ids_are_validated() {
        assert!(is_valid_id(&blob_id(b"x")));
        let upper = blob_id(b"x").to_uppercase();
        for bad in [
            "",
            "abc",
            upper.as_str(),
            "../../../../etc/passwd",
            &format!("{}0", blob_id(b"x")),
            &"g".repeat(64),
            &format!("{}/", &blob_id(b"x")[..63]),
        ] {
            assert!(!is_valid_id(bad), "{bad:?} accepted");
            assert!(matches!(check_id(bad), Err(BlobError::InvalidId(_))));
        }
    }
}
