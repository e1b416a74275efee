//! A submission as a tree of files: its content address, and a faithful copy
//! that never follows a link.
//!
//! Participants control every byte here, so the host side only ever looks at
//! entries with `lstat`: a symlink is hashed and copied as a link (its target
//! is only ever resolved inside the sandbox), and special files (fifos,
//! sockets, devices) are refused.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Largest tree accepted, to bound what a hostile submission can cost.
pub const MAX_ENTRIES: usize = 100_000;
pub const MAX_BYTES: u64 = 2 << 30;

#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error(
        "{path} is a special file (fifo, socket or device); submissions hold only files, directories and symlinks"
    )]
    SpecialFile { path: PathBuf },
    #[error("{path} leaves the submission's directory (an absolute path or `..`)")]
    UnsafePath { path: PathBuf },
    #[error("the tree has more than {MAX_ENTRIES} entries")]
    TooManyEntries,
    #[error("the tree holds more than {MAX_BYTES} bytes")]
    TooLarge,
    #[error("cannot {what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl TreeError {
    /// The same error with its path relative to `root` (`.` for `root`).
    fn relative_to(self, root: &Path) -> TreeError {
        let strip = |path: PathBuf| match path.strip_prefix(root) {
            Ok(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
            Ok(rel) => rel.to_path_buf(),
            Err(_) => path,
        };
        match self {
            TreeError::SpecialFile { path } => TreeError::SpecialFile { path: strip(path) },
            TreeError::UnsafePath { path } => TreeError::UnsafePath { path: strip(path) },
            TreeError::Io { what, path, source } => TreeError::Io {
                what,
                path: strip(path),
                source,
            },
            other => other,
        }
    }

    /// The tree (or archive) itself is unusable, so the submission is at
    /// fault and no other host would do better: a refused entry, a size or
    /// count over the caps, a path too long for the filesystem, a name that
    /// appears twice, an archive that does not parse. Everything else (no
    /// space left, an I/O error, a permission problem in the cache) is the
    /// host's.
    pub fn is_submissions_fault(&self) -> bool {
        match self {
            TreeError::SpecialFile { .. }
            | TreeError::UnsafePath { .. }
            | TreeError::TooManyEntries
            | TreeError::TooLarge => true,
            TreeError::Io { what, source, .. } => match source.raw_os_error() {
                Some(code) => matches!(
                    code,
                    libc::ENAMETOOLONG | libc::ELOOP | libc::EEXIST | libc::ENOTDIR | libc::EILSEQ
                ),
                // Errors without an OS code come from the tar parser.
                None => *what == READ_ARCHIVE,
            },
        }
    }
}

/// What [`unpack`] was doing when the archive itself failed to parse.
const READ_ARCHIVE: &str = "read archive for";

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TreeError {
    let path = path.to_owned();
    move |source| TreeError::Io { what, path, source }
}

/// One entry, relative to the tree's root, in sorted walk order.
enum Entry {
    Dir(PathBuf),
    File { path: PathBuf, executable: bool },
    Symlink { path: PathBuf, target: PathBuf },
}

/// Lists the tree below `root` in a stable order without following links.
fn walk(root: &Path) -> Result<Vec<Entry>, TreeError> {
    let mut entries = Vec::new();
    let mut bytes = 0u64;
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = root.join(&relative);
        let mut names: Vec<_> = fs::read_dir(&dir)
            .map_err(io("list", &dir))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(io("list", &dir))?;
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            let path = relative.join(&name);
            let full = root.join(&path);
            let meta = fs::symlink_metadata(&full).map_err(io("inspect", &full))?;
            let kind = meta.file_type();
            if kind.is_symlink() {
                let target = fs::read_link(&full).map_err(io("read link", &full))?;
                entries.push(Entry::Symlink { path, target });
            } else if kind.is_dir() {
                entries.push(Entry::Dir(path.clone()));
                subdirs.push(path);
            } else if kind.is_file() {
                bytes += meta.size();
                if bytes > MAX_BYTES {
                    return Err(TreeError::TooLarge);
                }
                entries.push(Entry::File {
                    path,
                    executable: meta.mode() & 0o111 != 0,
                });
            } else {
                return Err(TreeError::SpecialFile { path: full });
            }
            if entries.len() > MAX_ENTRIES {
                return Err(TreeError::TooManyEntries);
            }
        }
        // Reverse so the stack pops them in sorted order.
        pending.extend(subdirs.into_iter().rev());
    }
    Ok(entries)
}

/// The sha256 of a tree, in hex: names, kinds, the executable bit, file
/// contents and link targets. Timestamps and owners do not count.
pub fn tree_hash(root: &Path) -> Result<String, TreeError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    for entry in walk(root)? {
        match entry {
            Entry::Dir(path) => {
                hasher.update(b"d\0");
                hasher.update(path.as_os_str().as_encoded_bytes());
                hasher.update(b"\0");
            }
            Entry::Symlink { path, target } => {
                hasher.update(b"l\0");
                hasher.update(path.as_os_str().as_encoded_bytes());
                hasher.update(b"\0");
                hasher.update(target.as_os_str().as_encoded_bytes());
                hasher.update(b"\0");
            }
            Entry::File { path, executable } => {
                hasher.update(if executable { b"x\0" } else { b"f\0" });
                hasher.update(path.as_os_str().as_encoded_bytes());
                hasher.update(b"\0");
                let full = root.join(&path);
                let mut file = open_no_follow(&full)?;
                let mut length = 0u64;
                let mut content = Sha256::new();
                loop {
                    let n = file.read(&mut buf).map_err(io("read", &full))?;
                    if n == 0 {
                        break;
                    }
                    length += n as u64;
                    content.update(&buf[..n]);
                }
                hasher.update(length.to_le_bytes());
                hasher.update(content.finalize());
            }
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// Copies the tree at `from` into the new directory `to` (files, directories,
/// links as links), keeping only the executable bit of each file's mode.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), TreeError> {
    let entries = walk(from)?;
    fs::create_dir(to).map_err(io("create", to))?;
    for entry in entries {
        match entry {
            Entry::Dir(path) => {
                let target = to.join(&path);
                fs::create_dir(&target).map_err(io("create", &target))?;
            }
            Entry::Symlink { path, target } => {
                let link = to.join(&path);
                std::os::unix::fs::symlink(&target, &link).map_err(io("link", &link))?;
            }
            Entry::File { path, executable } => {
                let source = from.join(&path);
                let target = to.join(&path);
                let mut reader = open_no_follow(&source)?;
                let mut writer = fs::File::create(&target).map_err(io("create", &target))?;
                copy_sparse(&mut reader, &mut writer).map_err(io("copy", &source))?;
                let mode = if executable { 0o755 } else { 0o644 };
                fs::set_permissions(&target, fs::Permissions::from_mode(mode))
                    .map_err(io("set mode of", &target))?;
            }
        }
    }
    Ok(())
}

/// Copies a file's data and keeps its holes: only the ranges the source
/// has data in are written, and the length is set at the end, so a sparse
/// file stays sparse (its apparent size is what the caps count). A
/// filesystem without `SEEK_DATA` gets a plain copy.
fn copy_sparse(reader: &mut fs::File, writer: &mut fs::File) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsRawFd;
    let length = reader.metadata()?.len();
    let end = i64::try_from(length).map_err(|_| std::io::Error::other("file too large"))?;
    let mut offset: i64 = 0;
    while offset < end {
        // SAFETY: lseek on a descriptor we own; it touches no memory.
        let data = unsafe { libc::lseek(reader.as_raw_fd(), offset, libc::SEEK_DATA) };
        let (data, hole) = if data < 0 {
            let error = std::io::Error::last_os_error();
            match error.raw_os_error() {
                // Only a hole is left.
                Some(libc::ENXIO) => break,
                Some(libc::EINVAL) => (offset, end),
                _ => return Err(error),
            }
        } else {
            // SAFETY: as above.
            let hole = unsafe { libc::lseek(reader.as_raw_fd(), data, libc::SEEK_HOLE) };
            if hole < 0 {
                return Err(std::io::Error::last_os_error());
            }
            (data, hole.min(end))
        };
        let start = u64::try_from(data).map_err(|_| std::io::Error::other("negative offset"))?;
        let len = u64::try_from(hole - data).map_err(|_| std::io::Error::other("bad extent"))?;
        reader.seek(SeekFrom::Start(start))?;
        writer.seek(SeekFrom::Start(start))?;
        let copied = std::io::copy(&mut reader.by_ref().take(len), writer)?;
        if copied != len {
            return Err(std::io::Error::other("the file shrank while it was copied"));
        }
        offset = hole;
    }
    writer.set_len(length)
}

/// The apparent size of the regular files below `root` (a sparse file
/// counts at its full length), without following links. The walk stops as
/// soon as the sum passes `stop_above`, so a huge tree costs no more than a
/// small one to refuse.
pub fn apparent_size(root: &Path, stop_above: u64) -> Result<u64, TreeError> {
    let mut total = 0u64;
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).map_err(io("list", &dir))? {
            let path = entry.map_err(io("list", &dir))?.path();
            let meta = fs::symlink_metadata(&path).map_err(io("inspect", &path))?;
            if meta.file_type().is_dir() {
                pending.push(path);
            } else if meta.file_type().is_file() {
                total = total.saturating_add(meta.size());
                if total > stop_above {
                    return Ok(total);
                }
            }
        }
    }
    Ok(total)
}

/// Applies `apply` to every directory and regular file below `root` (links
/// and special files are skipped, never followed).
pub fn for_each_plain_entry(
    root: &Path,
    mut apply: impl FnMut(&Path, &fs::Metadata) -> std::io::Result<()>,
) -> Result<(), TreeError> {
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let meta = fs::symlink_metadata(&dir).map_err(io("inspect", &dir))?;
        apply(&dir, &meta).map_err(io("update", &dir))?;
        for entry in fs::read_dir(&dir).map_err(io("list", &dir))? {
            let path = entry.map_err(io("list", &dir))?.path();
            let meta = fs::symlink_metadata(&path).map_err(io("inspect", &path))?;
            if meta.file_type().is_dir() {
                pending.push(path);
            } else if meta.file_type().is_file() {
                apply(&path, &meta).map_err(io("update", &path))?;
            }
        }
    }
    Ok(())
}

fn open_no_follow(path: &Path) -> Result<fs::File, TreeError> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(io("open", path))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.sh"), "exec ./bot\n").unwrap();
        fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", dir.path().join("sneaky")).unwrap();
        dir
    }

    #[test]
    fn the_hash_covers_content_names_modes_and_links() {
        let dir = tree();
        let base = tree_hash(dir.path()).unwrap();
        assert_eq!(base, tree_hash(dir.path()).unwrap());
        fs::write(dir.path().join("src/main.rs"), "fn main() { }\n").unwrap();
        let edited = tree_hash(dir.path()).unwrap();
        assert_ne!(base, edited);
        fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
        let mode = tree_hash(dir.path()).unwrap();
        assert_ne!(edited, mode);
        fs::remove_file(dir.path().join("sneaky")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("sneaky")).unwrap();
        assert_ne!(mode, tree_hash(dir.path()).unwrap());
    }

    #[test]
    fn a_copy_keeps_links_as_links_and_hashes_the_same() {
        let dir = tree();
        let out = tempfile::tempdir().unwrap();
        let copy = out.path().join("copy");
        copy_tree(dir.path(), &copy).unwrap();
        assert_eq!(tree_hash(dir.path()).unwrap(), tree_hash(&copy).unwrap());
        let link = fs::symlink_metadata(copy.join("sneaky")).unwrap();
        assert!(link.file_type().is_symlink(), "the link was followed");
    }

    #[test]
    fn a_sparse_file_is_copied_with_its_holes_and_counted_at_its_length() {
        let dir = tree();
        let sparse = dir.path().join("sparse");
        let file = fs::File::create(&sparse).unwrap();
        file.set_len(64 << 20).unwrap();
        {
            use std::os::unix::fs::FileExt;
            file.write_all_at(b"middle", 32 << 20).unwrap();
        }
        drop(file);
        let out = tempfile::tempdir().unwrap();
        let copy = out.path().join("copy");
        copy_tree(dir.path(), &copy).unwrap();
        let meta = fs::metadata(copy.join("sparse")).unwrap();
        assert_eq!(meta.len(), 64 << 20);
        assert!(
            meta.blocks() * 512 < 1 << 20,
            "the copy allocates {} bytes",
            meta.blocks() * 512
        );
        assert_eq!(tree_hash(dir.path()).unwrap(), tree_hash(&copy).unwrap());
        assert!(apparent_size(&copy, u64::MAX).unwrap() >= 64 << 20);
        assert!(apparent_size(&copy, 10).unwrap() > 10);
    }

    #[test]
    fn unusable_trees_are_the_submissions_fault_and_host_errors_are_not() {
        let too_long = TreeError::Io {
            what: "create",
            path: PathBuf::from("x"),
            source: std::io::Error::from_raw_os_error(libc::ENAMETOOLONG),
        };
        assert!(too_long.is_submissions_fault());
        let full = TreeError::Io {
            what: "write",
            path: PathBuf::from("x"),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(!full.is_submissions_fault());
        assert!(TreeError::TooLarge.is_submissions_fault());
        let out = tempfile::tempdir().unwrap();
        let garbage = unpack(&[1u8; 1024], &out.path().join("g"));
        assert!(garbage.is_err_and(|e| e.is_submissions_fault()));
    }

    #[test]
    fn special_files_are_refused() {
        let dir = tree();
        let fifo = std::ffi::CString::new(dir.path().join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: creates a fifo at a path in our temp dir.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            tree_hash(dir.path()),
            Err(TreeError::SpecialFile { .. })
        ));
    }
}

/// Packs a tree into a tar archive that depends only on the tree's content:
/// entries in sorted order, owners, times and modes normalised (0755 for
/// directories and executables, 0644 otherwise). The archive's sha256 is the
/// submission's id, so the same bot uploaded twice is stored once.
pub fn pack(root: &Path) -> Result<Vec<u8>, TreeError> {
    let mut builder = tar::Builder::new(Vec::new());
    for entry in walk(root)? {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        let (path, kind) = match &entry {
            Entry::Dir(path) => (path, tar::EntryType::Directory),
            Entry::File { path, .. } => (path, tar::EntryType::Regular),
            Entry::Symlink { path, .. } => (path, tar::EntryType::Symlink),
        };
        header.set_entry_type(kind);
        let full = root.join(path);
        let appended = match entry {
            Entry::Dir(_) => {
                header.set_mode(0o755);
                header.set_size(0);
                builder.append_data(&mut header, path, std::io::empty())
            }
            Entry::Symlink { ref target, .. } => {
                header.set_mode(0o777);
                header.set_size(0);
                builder.append_link(&mut header, path, target)
            }
            Entry::File { executable, .. } => {
                header.set_mode(if executable { 0o755 } else { 0o644 });
                let file = open_no_follow(&full)?;
                let size = file.metadata().map_err(io("inspect", &full))?.len();
                header.set_size(size);
                builder.append_data(&mut header, path, file.take(size))
            }
        };
        appended.map_err(io("archive", &full))?;
    }
    builder.into_inner().map_err(io("finish archive of", root))
}

/// The id of a packed submission: the sha256 of its archive, in hex.
pub fn archive_id(archive: &[u8]) -> String {
    hex(&Sha256::digest(archive))
}

/// Unpacks an archive into the new directory `dest`: one made by [`pack`],
/// or by `tar` itself, which may name entries `./x`, list the root `./`, and
/// leave out the entries of the directories its files are in (they are
/// made). Anything that could write outside `dest` (absolute paths, `..`,
/// links used as directories) or is not a file, directory or symlink is
/// refused.
///
/// Paths in its errors are relative to `dest`: they reach the entrant's
/// build log, which has no business showing the worker's directories.
pub fn unpack(archive: &[u8], dest: &Path) -> Result<(), TreeError> {
    unpack_into(archive, dest).map_err(|e| e.relative_to(dest))
}

fn unpack_into(archive: &[u8], dest: &Path) -> Result<(), TreeError> {
    fs::create_dir(dest).map_err(io("create", dest))?;
    let mut reader = tar::Archive::new(archive);
    let entries = reader.entries().map_err(io(READ_ARCHIVE, dest))?;
    let mut count = 0usize;
    let mut bytes = 0u64;
    for entry in entries {
        let mut entry = entry.map_err(io(READ_ARCHIVE, dest))?;
        count += 1;
        if count > MAX_ENTRIES {
            return Err(TreeError::TooManyEntries);
        }
        let raw = entry.path().map_err(io(READ_ARCHIVE, dest))?.into_owned();
        // `./x` is `x`; anything but plain names could leave `dest`.
        let mut path = PathBuf::new();
        for component in raw.components() {
            match component {
                std::path::Component::CurDir => {}
                std::path::Component::Normal(name) => path.push(name),
                _ => return Err(TreeError::UnsafePath { path: raw }),
            }
        }
        let kind = entry.header().entry_type();
        if path.as_os_str().is_empty() {
            // The root itself (`./`) is `dest`.
            if kind == tar::EntryType::Directory {
                continue;
            }
            return Err(TreeError::UnsafePath { path: raw });
        }
        let target = dest.join(&path);
        // Every parent must be a real directory, never a link: made by an
        // earlier entry, or here when the archive lists no entry for it.
        if let Some(parent) = path.parent() {
            let mut at = dest.to_owned();
            for component in parent.components() {
                at.push(component);
                match fs::symlink_metadata(&at) {
                    Ok(meta) if meta.is_dir() => {}
                    Ok(_) => return Err(TreeError::SpecialFile { path: at }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        fs::create_dir(&at).map_err(io("create", &at))?;
                    }
                    Err(e) => return Err(io("inspect", &at)(e)),
                }
            }
        }
        match kind {
            tar::EntryType::Directory => match fs::create_dir(&target) {
                Ok(()) => {}
                // Already made for a file listed before it.
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists
                        && fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) => {}
                Err(e) => return Err(io("create", &target)(e)),
            },
            tar::EntryType::Symlink => {
                let link = entry
                    .link_name()
                    .map_err(io("read link in archive for", &target))?
                    .ok_or_else(|| TreeError::SpecialFile {
                        path: target.clone(),
                    })?;
                std::os::unix::fs::symlink(&link, &target).map_err(io("link", &target))?;
            }
            tar::EntryType::Regular => {
                bytes += entry.size();
                if bytes > MAX_BYTES {
                    return Err(TreeError::TooLarge);
                }
                let executable = entry
                    .header()
                    .mode()
                    .map(|m| m & 0o111 != 0)
                    .unwrap_or(false);
                let mut file = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                    .map_err(io("create", &target))?;
                std::io::copy(&mut entry, &mut file).map_err(io("write", &target))?;
                let mode = if executable { 0o755 } else { 0o644 };
                fs::set_permissions(&target, fs::Permissions::from_mode(mode))
                    .map_err(io("set mode of", &target))?;
            }
            _ => return Err(TreeError::SpecialFile { path: target }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod archive_tests {
    use super::*;

    #[test]
    fn packing_is_deterministic_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.sh"), "exec ./bot\n").unwrap();
        fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o700)).unwrap();
        fs::create_dir(dir.path().join("lib")).unwrap();
        fs::write(dir.path().join("lib/data"), vec![7u8; 10_000]).unwrap();
        std::os::unix::fs::symlink("lib/data", dir.path().join("link")).unwrap();
        let a = pack(dir.path()).unwrap();
        let b = pack(dir.path()).unwrap();
        assert_eq!(archive_id(&a), archive_id(&b));

        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("bot");
        unpack(&a, &dest).unwrap();
        assert_eq!(tree_hash(dir.path()).unwrap(), tree_hash(&dest).unwrap());
        assert!(
            fs::symlink_metadata(dest.join("link"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn hostile_archives_are_refused() {
        let out = tempfile::tempdir().unwrap();
        // An entry climbing out of the destination.
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(1);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        let name = b"../escape";
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_cksum();
        builder.append(&header, &b"x"[..]).unwrap();
        let archive = builder.into_inner().unwrap();
        assert!(unpack(&archive, &out.path().join("a")).is_err());
        assert!(!out.path().join("escape").exists());

        // A symlink then a file written through it.
        let mut builder = tar::Builder::new(Vec::new());
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Symlink);
        link.set_size(0);
        builder.append_link(&mut link, "dir", out.path()).unwrap();
        let mut file = tar::Header::new_gnu();
        file.set_entry_type(tar::EntryType::Regular);
        file.set_size(1);
        file.set_mode(0o644);
        builder
            .append_data(&mut file, "dir/planted", &b"x"[..])
            .unwrap();
        let archive = builder.into_inner().unwrap();
        assert!(unpack(&archive, &out.path().join("b")).is_err());
        assert!(!out.path().join("planted").exists());

        assert!(
            unpack(b"not a tar archive at all", &out.path().join("c")).is_err()
                || fs::read_dir(out.path().join("c"))
                    .map(|d| d.count() == 0)
                    .unwrap_or(true)
        );
    }
    /// A tar with raw names, as the `tar` command writes them (the `tar`
    /// crate's builder would refuse some): `(name, kind, contents)`.
    fn raw_tar(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o755);
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_cksum();
            builder.append(&header, *data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    #[test]
    fn archives_as_tar_writes_them_unpack() {
        use tar::EntryType::{Directory, Regular};
        let out = tempfile::tempdir().unwrap();
        // `tar cf x.tar run.sh lib/u.py`: no entry for `lib/`.
        let flat = raw_tar(&[
            ("run.sh", Regular, b"exec python3 lib/u.py\n"),
            ("lib/deep/u.py", Regular, b"print(1)\n"),
        ]);
        let dest = out.path().join("flat");
        unpack(&flat, &dest).unwrap();
        assert_eq!(fs::read(dest.join("lib/deep/u.py")).unwrap(), b"print(1)\n");
        assert!(dest.join("run.sh").is_file());

        // `tar cf x.tar .`: `./` first, `./`-prefixed names, and a
        // directory's entry after a file inside it.
        let dotted = raw_tar(&[
            ("./", Directory, b""),
            ("./lib/u.py", Regular, b"x"),
            ("./lib/", Directory, b""),
            ("./run.sh", Regular, b"y"),
        ]);
        let dest = out.path().join("dotted");
        unpack(&dotted, &dest).unwrap();
        assert_eq!(fs::read(dest.join("lib/u.py")).unwrap(), b"x");
        assert_eq!(fs::read(dest.join("run.sh")).unwrap(), b"y");

        // An absolute path is the submission's fault, named as such.
        let absolute = raw_tar(&[("/etc/planted", Regular, b"x")]);
        let err = unpack(&absolute, &out.path().join("abs")).unwrap_err();
        assert!(matches!(err, TreeError::UnsafePath { .. }), "{err}");
        assert!(err.is_submissions_fault());
        assert!(err.to_string().contains("leaves the submission"), "{err}");

        // A file and then a directory of the same name: the submission's.
        let clash = raw_tar(&[("lib", Regular, b"x"), ("lib/u.py", Regular, b"y")]);
        let err = unpack(&clash, &out.path().join("clash")).unwrap_err();
        assert!(err.is_submissions_fault(), "{err}");
        // The message names the entry, never where the worker unpacks it.
        assert!(err.to_string().contains("lib"), "{err}");
        assert!(
            !err.to_string().contains(&out.path().display().to_string()),
            "{err}"
        );
    }
}
