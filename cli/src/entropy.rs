//! Fresh randomness from the kernel, for match seeds and one-run tokens.

use std::io::Read;

/// `N` bytes from `/dev/urandom`.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}
