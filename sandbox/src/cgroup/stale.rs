//! Leaf ownership: a leaf name starts with `r<pid>-<starttime>-` naming the runner process
//! that created it. A leaf is stale when that process is gone or the pid now belongs to a
//! process with another start time (pid reuse). Parsing and the decision are pure; only
//! [`probe_with_proc`] reads `/proc`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::CgroupError;

/// Where the kernel publishes processes.
const PROC_ROOT: &str = "/proc";
/// Per-process status line; field 22 is the start time in clock ticks since boot.
const STAT_FILE: &str = "stat";
/// 1-based index of `starttime` in `/proc/<pid>/stat` (proc(5)).
const STARTTIME_FIELD: usize = 22;
/// Fields are counted from here after the `(comm)` field, which may contain spaces.
const FIRST_FIELD_AFTER_COMM: usize = 3;

/// The runner that owns a leaf, as encoded in its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The runner's pid.
    pub(crate) pid: i32,
    /// The runner's start time (clock ticks since boot), telling reused pids apart.
    pub(crate) start_time: u64,
}

/// What `/proc` says about a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcState {
    /// No such process.
    Gone,
    /// A process with this start time holds the pid.
    Running {
        /// Its start time in clock ticks since boot.
        start_time: u64,
    },
    /// `/proc` could not be read or parsed; treated as alive so nothing live is killed.
    Unknown,
}

/// Parses `r<pid>-<starttime>-<suffix>`; names in any other shape are not ours and are
/// never touched.
pub(crate) fn parse_owner(leaf_name: &str) -> Option<Owner> {
    let rest = leaf_name.strip_prefix('r')?;
    let (pid, rest) = rest.split_once('-')?;
    let (start_time, _suffix) = rest.split_once('-')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(pid) || !all_digits(start_time) {
        return None;
    }
    let pid: i32 = pid.parse().ok()?;
    if pid <= 0 {
        return None;
    }
    Some(Owner {
        pid,
        start_time: start_time.parse().ok()?,
    })
}

/// The stale decision: the owner is gone, or its pid now names a different process.
pub(crate) fn is_stale(owner: Owner, state: ProcState) -> bool {
    match state {
        ProcState::Gone => true,
        ProcState::Running { start_time } => start_time != owner.start_time,
        ProcState::Unknown => false,
    }
}

/// Extracts `starttime` (field 22) from a `/proc/<pid>/stat` line. The command name in
/// field 2 is parenthesised and may itself contain spaces and `)`, so counting starts after
/// the last `)`.
pub(crate) fn parse_start_time(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    after_comm
        .split_whitespace()
        .nth(STARTTIME_FIELD - FIRST_FIELD_AFTER_COMM)?
        .parse()
        .ok()
}

/// Reads the state of `pid` from a `/proc` mounted at `proc_root`.
pub(crate) fn probe_with_proc(proc_root: &Path, pid: i32) -> ProcState {
    let path = proc_root.join(pid.to_string()).join(STAT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => match parse_start_time(&text) {
            Some(start_time) => ProcState::Running { start_time },
            None => ProcState::Unknown,
        },
        // ESRCH shows up when the process exits between open and read.
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => {
            ProcState::Gone
        }
        Err(_) => ProcState::Unknown,
    }
}

/// Reads the state of `pid` from the real `/proc`.
pub(crate) fn probe(pid: i32) -> ProcState {
    probe_with_proc(Path::new(PROC_ROOT), pid)
}

/// This process's start time, read once (it cannot change).
pub(crate) fn own_start_time() -> Result<u64, CgroupError> {
    static START_TIME: OnceLock<u64> = OnceLock::new();
    if let Some(t) = START_TIME.get() {
        return Ok(*t);
    }
    let path = PathBuf::from(PROC_ROOT).join("self").join(STAT_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| CgroupError::ReadStartTime {
        path: path.clone(),
        source,
    })?;
    let t = parse_start_time(&text).ok_or_else(|| CgroupError::ReadStartTime {
        source: super::control::invalid_data("stat", &path),
        path,
    })?;
    Ok(*START_TIME.get_or_init(|| t))
}

/// `r<pid>-<starttime>-<suffix>` for this process.
pub(crate) fn try_owned_name(suffix: &str) -> Result<String, CgroupError> {
    Ok(format!(
        "r{}-{}-{suffix}",
        std::process::id(),
        own_start_time()?
    ))
}

/// [`try_owned_name`], falling back to `u<pid>-<suffix>` if `/proc/self/stat` is unreadable.
/// The fallback deliberately does not parse as owned, so no other runner ever judges it
/// stale and kills a live bot; the cost is that it is never cleaned up automatically.
pub(crate) fn owned_name(suffix: &str) -> String {
    try_owned_name(suffix).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cgroup leaf named without its owner's start time");
        format!("u{}-{suffix}", std::process::id())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: Owner = Owner {
        pid: 42,
        start_time: 1000,
    };

    #[test]
    fn owner_names_parse() {
        assert_eq!(parse_owner("r42-1000-7"), Some(OWNER));
        assert_eq!(parse_owner("r42-1000-a-b-c"), Some(OWNER));
        assert_eq!(parse_owner("r42-1000-"), Some(OWNER));
    }

    #[test]
    fn foreign_names_are_not_owned() {
        for name in [
            "",
            "arena",
            "r42",
            "r42-1000",
            "x42-1000-1",
            "r-1000-1",
            "r42--1",
            "r+42-1000-1",
            "r0-1000-1",
            "r-4-1000-1",
            "r42-10a0-1",
            "u42-x",
            "r99999999999-1-x",
        ] {
            assert_eq!(parse_owner(name), None, "{name}");
        }
    }

    #[test]
    fn stale_when_gone_or_reused_never_when_unknown() {
        assert!(is_stale(OWNER, ProcState::Gone));
        assert!(is_stale(OWNER, ProcState::Running { start_time: 999 }));
        assert!(!is_stale(OWNER, ProcState::Running { start_time: 1000 }));
        assert!(!is_stale(OWNER, ProcState::Unknown));
    }

    #[test]
    fn start_time_survives_hostile_comm() {
        let tail = "S 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 100";
        assert_eq!(
            parse_start_time(&format!("42 (sleep) {tail}")),
            Some(123_456)
        );
        assert_eq!(
            parse_start_time(&format!("42 (a) b) 1 2 3) {tail}")),
            Some(123_456)
        );
        assert_eq!(parse_start_time("42 (sleep) S 1 1"), None);
        assert_eq!(parse_start_time("garbage"), None);
    }

    #[test]
    fn probe_reads_a_fake_proc() {
        let proc_root = tempfile::tempdir().unwrap();
        let dir = proc_root.path().join("42");
        std::fs::create_dir(&dir).unwrap();
        let tail = "S 1 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 1000 1000 100";
        std::fs::write(dir.join("stat"), format!("42 (runner) {tail}\n")).unwrap();
        assert_eq!(
            probe_with_proc(proc_root.path(), 42),
            ProcState::Running { start_time: 1000 }
        );
        assert_eq!(probe_with_proc(proc_root.path(), 43), ProcState::Gone);
        std::fs::write(dir.join("stat"), "42 (runner)\n").unwrap();
        assert_eq!(probe_with_proc(proc_root.path(), 42), ProcState::Unknown);
    }

    #[test]
    fn own_name_is_owned_by_a_live_process() {
        let name = try_owned_name("t").unwrap();
        let owner = parse_owner(&name).unwrap();
        assert_eq!(owner.pid, std::process::id() as i32);
        assert!(!is_stale(owner, probe(owner.pid)));
        assert_eq!(owned_name("t"), name);
    }
}
