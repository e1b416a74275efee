//! The entries at the root of a submission archive (a tar, as
//! `arena_worker::submission::pack` writes): what [`crate::wasm`] and
//! [`crate::model_graph`] read to tell a bot's runtime before any build.

use std::path::{Component, Path};

/// One entry at the archive's root.
pub struct RootEntry {
    /// Its name (`bot.wasm` for `bot.wasm` and `./bot.wasm`).
    pub name: String,
    /// A regular file (not a link, a directory or anything else).
    pub regular: bool,
}

/// The root entries of `archive`, in archive order; `None` when the
/// archive does not parse (the worker refuses it anyway, as the
/// submission's fault). Deeper entries are skipped.
pub fn root_entries(archive: &[u8]) -> Option<Vec<RootEntry>> {
    let mut reader = tar::Archive::new(archive);
    let mut found = Vec::new();
    for entry in reader.entries().ok()? {
        let entry = entry.ok()?;
        let path = entry.path().ok()?;
        if let Some(name) = root_name(&path) {
            found.push(RootEntry {
                name: name.to_owned(),
                regular: entry.header().entry_type() == tar::EntryType::Regular,
            });
        }
    }
    Some(found)
}

/// The name of an entry at the archive's root; `None` for anything deeper.
fn root_name(path: &Path) -> Option<&str> {
    let mut names = path.components().filter(|c| *c != Component::CurDir);
    match (names.next(), names.next()) {
        (Some(Component::Normal(name)), None) => name.to_str(),
        _ => None,
    }
}

/// A tar of `(path, kind)`, every file empty, for the runtime tests.
#[cfg(test)]
pub(crate) fn test_archive(entries: &[(&str, tar::EntryType)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, kind) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(*kind);
        header.set_size(0);
        header.set_mode(0o755);
        if *kind == tar::EntryType::Symlink {
            builder.append_link(&mut header, path, "elsewhere").unwrap();
        } else {
            builder
                .append_data(&mut header, path, std::io::empty())
                .unwrap();
        }
    }
    builder.into_inner().unwrap()
}
