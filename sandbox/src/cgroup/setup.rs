//! Which cgroup layout a host has: `statfs(2)` gives a filesystem type per path, and a pure
//! function decides (youki `get_cgroup_setup_with_root`). The split exists because a temporary
//! directory cannot fake a filesystem magic, but the decision can be tested on its own.

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::error::CgroupError;

/// Where the kernel's cgroup filesystems are mounted on a normal host.
pub const DEFAULT_ROOT: &str = "/sys/fs/cgroup";
/// The cgroup2 mount inside the root on a hybrid host (systemd's layout).
pub const UNIFIED_DIR: &str = "unified";

/// `CGROUP2_SUPER_MAGIC` from `linux/magic.h`.
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;
/// `CGROUP_SUPER_MAGIC` (cgroup v1) from `linux/magic.h`.
const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;
/// `TMPFS_MAGIC` from `linux/magic.h`: systemd mounts a tmpfs at the root to hold v1 mounts.
const TMPFS_MAGIC: i64 = 0x0102_1994;

/// Which cgroup layout a host has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CgroupSetup {
    /// Only cgroup v1: one mount per controller under the root.
    Legacy,
    /// v1 controllers plus a cgroup2 mount at `<root>/unified` that has (almost) no
    /// controllers but offers `cgroup.kill` and `cgroup.events`.
    Hybrid,
    /// Pure cgroup v2 mounted at the root.
    Unified,
}

/// What `statfs` said about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FsKind {
    /// cgroup2.
    Cgroup2,
    /// cgroup v1.
    Cgroup1,
    /// tmpfs (the directory holding v1 mounts).
    Tmpfs,
    /// Some other filesystem, by magic.
    Other(i64),
    /// The path does not exist.
    Missing,
}

impl FsKind {
    fn from_magic(magic: i64) -> Self {
        match magic {
            CGROUP2_SUPER_MAGIC => Self::Cgroup2,
            CGROUP_SUPER_MAGIC => Self::Cgroup1,
            TMPFS_MAGIC => Self::Tmpfs,
            other => Self::Other(other),
        }
    }

    fn magic(self) -> i64 {
        match self {
            Self::Cgroup2 => CGROUP2_SUPER_MAGIC,
            Self::Cgroup1 => CGROUP_SUPER_MAGIC,
            Self::Tmpfs => TMPFS_MAGIC,
            Self::Other(magic) => magic,
            Self::Missing => 0,
        }
    }
}

/// Detects the layout under `/sys/fs/cgroup`.
pub fn detect() -> Result<CgroupSetup, CgroupError> {
    detect_with_root(Path::new(DEFAULT_ROOT))
}

/// Detects the layout under `root` (statfs on `root` and `root/unified`).
pub fn detect_with_root(root: &Path) -> Result<CgroupSetup, CgroupError> {
    let root_kind = fs_kind(root)?;
    // Only a tmpfs root can hold a unified mount next to v1 ones; don't statfs otherwise.
    let unified_kind = match root_kind {
        FsKind::Tmpfs => fs_kind(&root.join(UNIFIED_DIR))?,
        _ => FsKind::Missing,
    };
    classify(root, root_kind, unified_kind)
}

/// Decides the layout from the filesystem types of `root` and `root/unified`.
pub(crate) fn classify(
    root: &Path,
    root_kind: FsKind,
    unified_kind: FsKind,
) -> Result<CgroupSetup, CgroupError> {
    match (root_kind, unified_kind) {
        (FsKind::Cgroup2, _) => Ok(CgroupSetup::Unified),
        (FsKind::Tmpfs, FsKind::Cgroup2) => Ok(CgroupSetup::Hybrid),
        // A tmpfs without a cgroup2 mount below it holds only v1 mounts; a v1 hierarchy
        // mounted directly at the root (rare, but legal) is also legacy.
        (FsKind::Tmpfs, _) | (FsKind::Cgroup1, _) => Ok(CgroupSetup::Legacy),
        (kind, _) => Err(CgroupError::NotCgroupFs {
            path: root.to_path_buf(),
            magic: kind.magic(),
        }),
    }
}

/// `statfs(2)` on `path`; a missing path is a value, not an error, because a legacy host has
/// no `unified` directory.
fn fs_kind(path: &Path) -> Result<FsKind, CgroupError> {
    let statfs_err = |source| CgroupError::Statfs {
        path: path.to_path_buf(),
        source,
    };
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| statfs_err(io::Error::from(io::ErrorKind::InvalidInput)))?;
    let mut buf = MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c_path` is a valid NUL-terminated string and `buf` points to writable memory
    // of the right size for the kernel to fill.
    let rc = unsafe { libc::statfs(c_path.as_ptr(), buf.as_mut_ptr()) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::NotFound {
            return Ok(FsKind::Missing);
        }
        return Err(statfs_err(err));
    }
    // SAFETY: statfs returned 0, so it initialised the whole struct.
    let stat = unsafe { buf.assume_init() };
    // `f_type` is a signed word whose width differs per architecture; magics fit in 32 bits.
    #[allow(clippy::unnecessary_cast)]
    Ok(FsKind::from_magic(stat.f_type as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXT4_MAGIC: i64 = 0xef53;

    #[test]
    fn cgroup2_root_is_unified_whatever_is_below() {
        for below in [FsKind::Missing, FsKind::Cgroup2, FsKind::Tmpfs] {
            let got = classify(Path::new("/r"), FsKind::Cgroup2, below).unwrap();
            assert_eq!(got, CgroupSetup::Unified);
        }
    }

    #[test]
    fn tmpfs_root_with_cgroup2_below_is_hybrid() {
        let got = classify(Path::new("/r"), FsKind::Tmpfs, FsKind::Cgroup2).unwrap();
        assert_eq!(got, CgroupSetup::Hybrid);
    }

    #[test]
    fn tmpfs_root_without_cgroup2_below_is_legacy() {
        for below in [FsKind::Missing, FsKind::Tmpfs, FsKind::Cgroup1] {
            let got = classify(Path::new("/r"), FsKind::Tmpfs, below).unwrap();
            assert_eq!(got, CgroupSetup::Legacy);
        }
        let got = classify(Path::new("/r"), FsKind::Cgroup1, FsKind::Missing).unwrap();
        assert_eq!(got, CgroupSetup::Legacy);
    }

    #[test]
    fn other_filesystems_are_rejected_with_their_magic() {
        let err =
            classify(Path::new("/r"), FsKind::Other(EXT4_MAGIC), FsKind::Missing).unwrap_err();
        assert!(
            matches!(err, CgroupError::NotCgroupFs { magic, .. } if magic == EXT4_MAGIC),
            "{err}"
        );
        let err = classify(Path::new("/r"), FsKind::Missing, FsKind::Missing).unwrap_err();
        assert!(matches!(err, CgroupError::NotCgroupFs { .. }), "{err}");
    }

    #[test]
    fn magics_map_to_kinds() {
        assert_eq!(FsKind::from_magic(CGROUP2_SUPER_MAGIC), FsKind::Cgroup2);
        assert_eq!(FsKind::from_magic(CGROUP_SUPER_MAGIC), FsKind::Cgroup1);
        assert_eq!(FsKind::from_magic(TMPFS_MAGIC), FsKind::Tmpfs);
        assert_eq!(FsKind::from_magic(EXT4_MAGIC), FsKind::Other(EXT4_MAGIC));
    }

    #[test]
    fn missing_path_is_a_value() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(fs_kind(&dir.path().join("nope")).unwrap(), FsKind::Missing);
    }
}
