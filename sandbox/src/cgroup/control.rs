//! Control-file I/O shared by the v1 and v2 backends: reading, writing without creating,
//! creating and removing cgroup directories with bounded retries, signalling, and the small
//! parsers for the kernel's flat formats.
//!
//! Reads are done here rather than through cgroups-rs because its readers turn every error
//! into 0 or an empty list (`unwrap_or_default`), and some (`parse_oom_control`) panic on
//! unexpected text; a sandbox must tell "zero" from "could not read".

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::error::CgroupError;

/// Every cgroup directory (v1 and v2) lists its member processes here.
pub(crate) const CGROUP_PROCS: &str = "cgroup.procs";

/// How long removing a leaf's directories (all of them together) keeps retrying EBUSY: right
/// after a kill the kernel may still be tearing down the last task or its css.
pub(crate) const RMDIR_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a kill waits for a leaf to become empty.
pub(crate) const KILL_TIMEOUT: Duration = Duration::from_secs(2);

/// Stand-in for the kernel on a fake tree (tests only).
///
/// On cgroupfs `mkdir` fills a directory with control files and `rmdir` works on a directory
/// full of them. A temporary directory does neither, so unit tests plug in a fixture that does
/// it (youki's `set_fixture`). Outside `cfg(test)` this struct is empty and both hooks are
/// no-ops, so production code takes exactly the same path.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FakeKernel {
    /// Called after `mkdir` to create the control files the kernel would.
    #[cfg(test)]
    pub(crate) populate: Option<fn(&Path)>,
    /// Called before `rmdir` to delete the control files the kernel would drop itself.
    #[cfg(test)]
    pub(crate) depopulate: Option<fn(&Path)>,
}

impl FakeKernel {
    #[cfg_attr(not(test), allow(unused_variables, clippy::unused_self))]
    fn after_mkdir(&self, dir: &Path) {
        #[cfg(test)]
        if let Some(populate) = self.populate {
            populate(dir);
        }
    }

    #[cfg_attr(not(test), allow(unused_variables, clippy::unused_self))]
    fn before_rmdir(&self, dir: &Path) {
        #[cfg(test)]
        if let Some(depopulate) = self.depopulate {
            depopulate(dir);
        }
    }
}

/// Reads a whole control file.
pub(crate) fn read(path: &Path) -> io::Result<String> {
    fs::read_to_string(path)
}

/// Writes `value` into an existing control file with one write(2).
///
/// Opens without `O_CREAT`, so a control file that doesn't exist fails the way it does on
/// the kernel, also on a fake tree (youki `common.rs` `write_cgroup_file_str`). `O_TRUNC` is
/// ignored by cgroupfs (it is what a shell's `>` sends) and keeps a fake file exact.
pub(crate) fn write(path: &Path, value: &str) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).truncate(true).open(path)?;
    file.write_all(value.as_bytes())
}

/// Creates one cgroup directory (not its parents: a missing parent is a setup bug).
pub(crate) fn make_dir(dir: &Path, fake: &FakeKernel) -> io::Result<()> {
    fs::create_dir(dir)?;
    fake.after_mkdir(dir);
    Ok(())
}

/// Creates a leaf's directory; one that exists already is [`CgroupError::LeafExists`], since
/// it may belong to someone else and is never shared.
pub(crate) fn make_leaf_dir(dir: &Path, fake: &FakeKernel) -> Result<(), CgroupError> {
    make_dir(dir, fake).map_err(|source| {
        if source.kind() == io::ErrorKind::AlreadyExists {
            CgroupError::LeafExists {
                path: dir.to_path_buf(),
            }
        } else {
            CgroupError::CreateLeaf {
                path: dir.to_path_buf(),
                source,
            }
        }
    })
}

/// Creates a cgroup directory unless it exists already (shared parents: another runner may
/// win the race to create it).
pub(crate) fn ensure_dir(dir: &Path, fake: &FakeKernel) -> io::Result<()> {
    match make_dir(dir, fake) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        other => other,
    }
}

/// Removes a cgroup directory, retrying EBUSY until `deadline`. A directory that is already
/// gone counts as removed.
pub(crate) fn remove_dir(dir: &Path, fake: &FakeKernel, deadline: Instant) -> io::Result<()> {
    let mut backoff = Backoff::new();
    loop {
        if !dir.exists() {
            return Ok(());
        }
        fake.before_rmdir(dir);
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                backoff.sleep();
            }
            Err(e) => return Err(e),
        }
    }
}

/// Opens a `cgroup.procs` for the child to join with a plain `write(2)` of `"0"`:
/// `O_WRONLY|O_CLOEXEC` so the fd doesn't leak into the bot after exec.
pub(crate) fn open_for_join(procs: &Path) -> io::Result<OwnedFd> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(procs)?;
    Ok(OwnedFd::from(file))
}

/// Reads the pids listed in a `cgroup.procs` file; a group that does not exist (partially
/// created or already removed) has none.
pub(crate) fn read_procs(procs: &Path) -> io::Result<Vec<i32>> {
    match read(procs) {
        Ok(text) => parse_procs(&text).ok_or_else(|| invalid_data("cgroup.procs", procs)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(e),
    }
}

/// Names of the subdirectories of `dir`; none if `dir` does not exist (a parent group not
/// created yet, or a hierarchy that lacks it).
pub(crate) fn child_dirs(dir: &Path) -> io::Result<Vec<String>> {
    let mut names = vec![];
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(names),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir()
            && let Some(name) = entry.file_name().to_str()
        {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Sends SIGKILL to `pid`; a process that is already gone (ESRCH) is not an error.
///
/// Refuses pids ≤ 0: `kill(0)` and `kill(-1)` would hit our own process group or every
/// process we may signal.
pub(crate) fn sigkill(pid: i32) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal pid {pid}"),
        ));
    }
    // SAFETY: kill(2) with a positive pid and a valid signal has no memory-safety impact.
    let rc = unsafe { libc::kill(pid, libc::SIGKILL) };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        return Ok(());
    }
    Err(err)
}

/// The error for kernel text that doesn't parse: `InvalidData` naming what and where.
pub(crate) fn invalid_data(what: &str, path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unexpected {what} contents in {}", path.display()),
    )
}

/// Reads `path` and parses it with `parse`, mapping unparsable text to `InvalidData`.
pub(crate) fn read_u64(path: &Path, parse: impl Fn(&str) -> Option<u64>) -> io::Result<u64> {
    let text = read(path)?;
    parse(&text).ok_or_else(|| invalid_data("counter", path))
}

/// [`read_u64`], with a missing file (older kernel, or a group already removed) as `None`.
pub(crate) fn read_u64_if_present(
    path: &Path,
    parse: impl Fn(&str) -> Option<u64>,
) -> io::Result<Option<u64>> {
    match read_u64(path, parse) {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Parses `cgroup.procs`: one decimal pid per line.
pub(crate) fn parse_procs(text: &str) -> Option<Vec<i32>> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.parse().ok())
        .collect()
}

/// Finds `key` in a flat-keyed file (`key value` per line: `memory.events`, `cpu.stat`,
/// `memory.oom_control`, `cgroup.events`).
pub(crate) fn flat_keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        if parts.next() == Some(key) {
            parts.next()?.parse().ok()
        } else {
            None
        }
    })
}

/// Parses a single-number file (`memory.peak`, `cpuacct.usage`, `memory.limit_in_bytes`).
pub(crate) fn single_u64(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// Exponential sleep from 100 µs up to 10 ms, for polling kernel state that has no cheap
/// notification (or whose notification would need an epoll set per leaf).
pub(crate) struct Backoff {
    /// The next sleep.
    next: Duration,
}

impl Backoff {
    /// Starts at the shortest sleep.
    pub(crate) fn new() -> Self {
        Self {
            next: Duration::from_micros(100),
        }
    }

    /// Sleeps, then doubles the next sleep up to the cap.
    pub(crate) fn sleep(&mut self) {
        thread::sleep(self.next);
        self.next = (self.next * 2).min(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procs_parse_one_pid_per_line() {
        assert_eq!(parse_procs(""), Some(vec![]));
        assert_eq!(parse_procs("12\n345\n"), Some(vec![12, 345]));
        assert_eq!(parse_procs("12\nx\n"), None);
    }

    #[test]
    fn flat_keyed_finds_exact_keys() {
        let events = "low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(flat_keyed(events, "oom_kill"), Some(1));
        assert_eq!(flat_keyed(events, "oom"), Some(2));
        assert_eq!(flat_keyed(events, "oom_group_kill"), Some(0));
        assert_eq!(flat_keyed(events, "missing"), None);
        assert_eq!(flat_keyed("oom_kill x\n", "oom_kill"), None);
    }

    #[test]
    fn write_does_not_create_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("memory.max");
        let err = write(&missing, "1").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!missing.exists());
        fs::write(&missing, "max\n").unwrap();
        write(&missing, "64").unwrap();
        assert_eq!(read(&missing).unwrap(), "64");
    }

    #[test]
    fn remove_dir_accepts_missing_and_reports_other_errors() {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeKernel::default();
        let deadline = Instant::now() + Duration::from_millis(10);
        remove_dir(&dir.path().join("gone"), &fake, deadline).unwrap();
        let full = dir.path().join("full");
        fs::create_dir(&full).unwrap();
        fs::write(full.join("f"), "").unwrap();
        // Without the fake kernel's depopulate hook a non-empty directory stays non-empty.
        assert!(remove_dir(&full, &fake, deadline).is_err());
    }

    #[test]
    fn sigkill_refuses_group_and_broadcast_pids() {
        assert!(sigkill(0).is_err());
        assert!(sigkill(-1).is_err());
    }
}
