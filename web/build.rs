//! Embeds every file under `assets/` in the binary: writes a table of
//! `(path, bytes, etag)` entries into `OUT_DIR/assets.rs`, which
//! `src/assets.rs` includes. The files are read at compile time only, so
//! the server never touches the file system for them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("assets");
    // A directory here makes cargo rerun this script when anything under it changes.
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut table = String::from("&[\n");
    for (path, file) in &files {
        let bytes =
            std::fs::read(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let _ = writeln!(
            table,
            "    ({path:?}, include_bytes!({:?}) as &[u8], \"\\\"{:016x}\\\"\"),",
            file.display().to_string(),
            fnv1a(&bytes),
        );
    }
    table.push_str("]\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("assets.rs");
    std::fs::write(&out, table).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

/// Every regular file under `dir`, as (path relative to `root` with `/`
/// separators, full path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.is_file()
            && let Ok(relative) = path.strip_prefix(root)
        {
            let name: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push((name.join("/"), path));
        }
    }
}

/// A content fingerprint for the ETag: FNV-1a 64.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
