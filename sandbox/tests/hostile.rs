//! Hostile bots against the real sandbox: every test spawns a real confined
//! process through [`Sandbox::spawn`] and asserts, as precisely as the kernel
//! allows, that an attack fails the way the confinement promises.
//!
//! Needs root on a Linux host with cgroups (this one: v1 controllers plus a
//! unified mount), `/usr/bin/python3` and `/usr/bin/gcc` (the host's `/usr`
//! is what the sandbox sees). The programs the bots run live in
//! `tests/hostile/`: Python scripts passed with `-c`, and C sources compiled
//! into a temporary directory that is then mounted at `/bot`.
//!
//! Every test uses its own uid (see [`uid`]), so tests run in parallel and a
//! leftover process of a test is attributable. Every leaf cgroup is made
//! under [`PARENT`] (the stale-cleanup, runner-crash and thread-churn tests
//! use their own parents), and the last user of a parent removes it from
//! every hierarchy, so nothing is left in `/sys/fs/cgroup`. Anything a test
//! starts on the host is killed when it is dropped, including on failure.
//! Two tests need a runner process of their own: they re-execute this test
//! binary with an environment variable that turns a helper "test" into that
//! runner (it returns at once in a normal run).
//!
//! These tests guard fixes of earlier sandbox bugs:
//! `spawn_succeeds_while_the_runner_creates_threads`,
//! `read_only_binds_cover_submounts`,
//! `runner_crash_kills_the_bot_and_the_next_runner_collects_its_leaf` and
//! `bot_outlives_the_thread_that_spawned_it`; and the init at pid 1 of every
//! sandbox: `a_bot_that_signals_itself_dies_of_that_signal`,
//! `orphaned_grandchildren_are_reaped`,
//! `signals_to_the_sandbox_are_forwarded_to_the_bot` and
//! `an_unreadable_oom_counter_is_an_error`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use arena_sandbox::cgroup::{self, CgroupLimits, CgroupManager};
use arena_sandbox::child::Stage;
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::env::HOST_DEFAULT_PATHS;
use arena_sandbox::{
    Limits, RuntimeEnv, Sandbox, SandboxCommand, SandboxConfig, SandboxError, SandboxedChild,
    Verdict, WaitError,
};

/// The cgroup parent of every leaf this file makes (except the stale test's).
const PARENT: &str = "arena-hostile-test";
/// The stale-cleanup test's own parent, so no other test's `Sandbox::new`
/// collects its planted leaves first.
const STALE_PARENT: &str = "arena-hostile-test-stale";
/// The runner-crash test's parent (its fake runner is another process).
const CRASH_PARENT: &str = "arena-hostile-test-crash";
/// Set in the environment of the re-executed test binary that plays a runner.
const FAKE_RUNNER_ENV: &str = "ARENA_HOSTILE_FAKE_RUNNER";
/// The thread-churn test's parent (its runner is another process).
const CHURN_PARENT: &str = "arena-hostile-test-churn";
/// Set in the environment of the re-executed test binary that churns threads.
const CHURN_ENV: &str = "ARENA_HOSTILE_CHURN";
const CGROUP_ROOT: &str = "/sys/fs/cgroup";
const PYTHON: &str = "/usr/bin/python3";
const GCC: &str = "/usr/bin/gcc";
const MIB: u64 = 1 << 20;
const SIGSYS: i32 = libc::SIGSYS;

/// One uid per test (and per host-side control run), so concurrent tests
/// never share an identity and leftovers can be traced to their test.
mod uid {
    pub const MEMORY_HOG: u32 = 62_001;
    pub const FORK_BOMB: u32 = 62_002;
    pub const NETWORK: u32 = 62_003;
    pub const FS_MATCH: u32 = 62_004;
    pub const FS_BUILD: u32 = 62_005;
    pub const FS_INVISIBLE: u32 = 62_006;
    pub const IDENTITY: u32 = 62_007;
    pub const SETUID_BINARY: u32 = 62_008;
    pub const SECCOMP: u32 = 62_009;
    pub const X32: u32 = 62_010;
    pub const INT80: u32 = 62_011;
    pub const KILL_MINUS_ONE: u32 = 62_012;
    pub const PROC_VIEW: u32 = 62_013;
    pub const DAEMON: u32 = 62_014;
    pub const CORE: u32 = 62_015;
    pub const FSIZE: u32 = 62_016;
    pub const NOFILE: u32 = 62_017;
    pub const CPUSET: u32 = 62_018;
    pub const EXEC_MISSING: u32 = 62_019;
    pub const STDIO: u32 = 62_020;
    pub const TEARDOWN: u32 = 62_021;
    pub const LATENCY: u32 = 62_022;
    pub const THREAD_CHURN: u32 = 62_023;
    pub const SUBMOUNT: u32 = 62_024;
    pub const CRASH: u32 = 62_025;
    pub const IPC: u32 = 62_026;
    pub const THREAD_EXIT: u32 = 62_027;
    pub const SELF_SIGNAL: u32 = 62_028;
    pub const ORPHANS: u32 = 62_029;
    pub const FORWARD: u32 = 62_030;
    pub const OOM_COUNTER: u32 = 62_031;
    pub const NETNS_PEER: u32 = 62_032;
    // Host-side control runs (unconfined, same programs).
    pub const SECCOMP_CONTROL: u32 = 62_090;
    pub const X32_CONTROL: u32 = 62_091;
    pub const INT80_CONTROL: u32 = 62_092;
    pub const SETUID_CONTROL: u32 = 62_093;
    pub const SELF_SIGNAL_CONTROL: u32 = 62_094;
}

// ---------------------------------------------------------------------------
// Harness: sandboxes, commands, output collection, host-side inspection.
// ---------------------------------------------------------------------------

/// How many live tests use each cgroup parent; the last one out removes it.
static ACTIVE_PARENTS: Mutex<BTreeMap<&'static str, usize>> = Mutex::new(BTreeMap::new());

/// Counts a test as a user of `parent`; dropping the last one removes the
/// parent (and any leaf directories left in it) from every hierarchy.
struct ParentGuard {
    parent: &'static str,
}

impl ParentGuard {
    fn new(parent: &'static str) -> ParentGuard {
        let mut active = ACTIVE_PARENTS.lock().unwrap_or_else(|p| p.into_inner());
        *active.entry(parent).or_default() += 1;
        ParentGuard { parent }
    }
}

impl Drop for ParentGuard {
    fn drop(&mut self) {
        let mut active = ACTIVE_PARENTS.lock().unwrap_or_else(|p| p.into_inner());
        let count = active.entry(self.parent).or_default();
        *count -= 1;
        if *count > 0 {
            return;
        }
        // Still holding the lock: no test can be creating the parent now.
        for hierarchy in hierarchies() {
            let dir = hierarchy.join(self.parent);
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for leaf in entries.flatten().filter(|e| e.path().is_dir()) {
                eprintln!("hostile: removing leftover leaf {}", leaf.path().display());
                if let Err(e) = fs::remove_dir(leaf.path()) {
                    eprintln!("hostile: cannot remove {}: {e}", leaf.path().display());
                }
            }
            if let Err(e) = fs::remove_dir(&dir) {
                eprintln!("hostile: cannot remove {}: {e}", dir.display());
            }
        }
    }
}

/// A sandbox for one test. Fields drop in order: the sandbox, then the guard.
struct Hostile {
    sandbox: Sandbox,
    _guard: ParentGuard,
}

/// Small limits that make the attacks hit the walls quickly.
fn small_limits() -> Limits {
    Limits {
        memory_bytes: 128 * MIB,
        pids: 64,
        tmp_bytes: 8 * MIB,
        open_files: 64,
        file_bytes: 4 * MIB,
    }
}

fn hostile(limits: Limits) -> Hostile {
    let guard = ParentGuard::new(PARENT);
    let sandbox = new_sandbox(PARENT, limits);
    Hostile {
        sandbox,
        _guard: guard,
    }
}

fn new_sandbox(parent: &str, limits: Limits) -> Sandbox {
    let config = SandboxConfig {
        limits,
        cgroup_parent: parent.to_owned(),
        // As a worker's: every spawn after a test's first runs in a process
        // started ahead, so the attacks meet that path too.
        spare_leaf: true,
        ..SandboxConfig::default()
    };
    Sandbox::new(config).unwrap_or_else(|e| panic!("Sandbox::new: {}", chain(&e)))
}

/// An error with its sources, one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

fn all_cores() -> Vec<usize> {
    CoreAllocator::available().expect("the test's CPU affinity")
}

/// A host directory to show at `/bot`: world-readable, owned by `owner` if
/// given (so a read-only mount, not file permissions, is what stops writes).
fn app_dir(owner: Option<u32>) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("arena-hostile-")
        .tempdir()
        .expect("temp dir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod app dir");
    if let Some(uid) = owner {
        chown(dir.path(), Some(uid), Some(uid)).expect("chown app dir");
    }
    dir
}

/// A command with the sandbox's search path and every core.
fn command(program: &str, app: &Path, uid: u32, label: &str) -> SandboxCommand {
    SandboxCommand::new(program, app, uid)
        .env("PATH", RuntimeEnv::host_default().search_path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .cpus(all_cores())
        .label(label)
}

/// `python3 -c <script>`; further `.arg`s become `sys.argv[1..]`.
fn python(script: &str, app: &Path, uid: u32, label: &str) -> SandboxCommand {
    command(PYTHON, app, uid, label).arg("-c").arg(script)
}

fn sh(script: &str, app: &Path, uid: u32, label: &str) -> SandboxCommand {
    command("/bin/sh", app, uid, label).arg("-c").arg(script)
}

fn spawn(sandbox: &Sandbox, cmd: &SandboxCommand) -> SandboxedChild {
    sandbox
        .spawn(cmd)
        .unwrap_or_else(|e| panic!("spawn {:?}: {}", cmd.program, chain(&e)))
}

/// What a confined run produced.
struct Output {
    stdout: String,
    stderr: String,
    verdict: Verdict,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\n--- stdout ---\n{}--- stderr ---\n{}--- verdict ---\n{:?}",
            self.stdout, self.stderr, self.verdict
        )
    }
}

impl Output {
    /// The `key=value` lines of stdout.
    fn values(&self) -> BTreeMap<String, String> {
        parse_values(&self.stdout)
    }

    /// One value; panics with the whole output when it is missing.
    fn value(&self, key: &str) -> String {
        self.values()
            .remove(key)
            .unwrap_or_else(|| panic!("no {key}= in the output{self}"))
    }
}

fn parse_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The child's stdout and stderr, read together with poll so neither pipe
/// can fill up and block the child.
struct Streams {
    files: [Option<File>; 2],
    bufs: [Vec<u8>; 2],
}

impl Streams {
    fn take(child: &mut SandboxedChild) -> Streams {
        Streams {
            files: [
                child.stdout.take().map(File::from),
                child.stderr.take().map(File::from),
            ],
            bufs: [Vec::new(), Vec::new()],
        }
    }

    /// Reads until both streams are at EOF or `stop(stdout so far)` holds
    /// (true), or the deadline passes (false).
    fn pump(&mut self, deadline: Instant, stop: impl Fn(&str) -> bool) -> bool {
        loop {
            if stop(&String::from_utf8_lossy(&self.bufs[0])) {
                return true;
            }
            let open: Vec<usize> = (0..2).filter(|&i| self.files[i].is_some()).collect();
            if open.is_empty() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let wait_ms = (deadline - now).as_millis().clamp(1, 100) as i32;
            let mut polls: Vec<libc::pollfd> = open
                .iter()
                .map(|&i| libc::pollfd {
                    fd: self.files[i].as_ref().map_or(-1, |f| f.as_raw_fd()),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: `polls` is a valid array of pollfd of the given length.
            let rc =
                unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, wait_ms) };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                assert_eq!(err.kind(), std::io::ErrorKind::Interrupted, "poll: {err}");
                continue;
            }
            for (poll, &i) in polls.iter().zip(&open) {
                if poll.revents == 0 {
                    continue;
                }
                let mut chunk = [0u8; 1 << 16];
                let file = self.files[i].as_mut().expect("open stream");
                match file.read(&mut chunk) {
                    Ok(0) => self.files[i] = None,
                    Ok(n) => self.bufs[i].extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => panic!("reading the child's output: {e}"),
                }
            }
        }
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.bufs[0]).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.bufs[1]).into_owned()
    }
}

/// Writes `data` to the child's stdin and closes it (small data only: it
/// must fit in the pipe).
fn feed(child: &mut SandboxedChild, data: &[u8]) {
    let mut stdin = File::from(child.stdin.take().expect("stdin"));
    if !data.is_empty() {
        stdin.write_all(data).expect("writing the child's stdin");
    }
}

/// Waits for pid 1 of the sandbox to exit on its own before `deadline`,
/// then tears down with `finish()`: the verdict is the program's own end.
fn exit_verdict(child: &mut SandboxedChild, deadline: Instant) -> Verdict {
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let verdict = child.finish();
                panic!("the confined process did not exit in time; killed: {verdict:?}");
            }
            Err(e) => panic!("try_wait: {e}"),
        }
    }
    child
        .finish()
        .unwrap_or_else(|e| panic!("finish: {}", chain(&e)))
}

/// Runs `cmd` to completion with `stdin` as input.
fn run(sandbox: &Sandbox, cmd: &SandboxCommand, stdin: &[u8], timeout: Duration) -> Output {
    let deadline = Instant::now() + timeout;
    let mut child = spawn(sandbox, cmd);
    feed(&mut child, stdin);
    let mut streams = Streams::take(&mut child);
    if !streams.pump(deadline, |_| false) {
        let verdict = child.finish();
        panic!(
            "timed out after {timeout:?}; killed: {verdict:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            streams.stdout(),
            streams.stderr()
        );
    }
    let verdict = exit_verdict(&mut child, deadline);
    Output {
        stdout: streams.stdout(),
        stderr: streams.stderr(),
        verdict,
    }
}

/// Processes on the host (any of real, effective, saved, fs uid) with `uid`,
/// as "pid name".
///
/// Panics when `/proc` cannot be scanned, or when the scan does not see this
/// test's own process: an empty answer must mean "none left", never "could
/// not look".
fn host_processes_of(uid: u32) -> Vec<String> {
    let own_pid = std::process::id().to_string();
    let mut seen_self = false;
    let mut found = Vec::new();
    let entries = fs::read_dir("/proc")
        .unwrap_or_else(|e| panic!("cannot list /proc to find processes of uid {uid}: {e}"));
    for entry in entries {
        let entry =
            entry.unwrap_or_else(|e| panic!("cannot read /proc while looking for uid {uid}: {e}"));
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        // A process may exit between the listing and this read.
        let Ok(status) = fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        seen_self |= pid == own_pid;
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
                .unwrap_or("")
                .to_owned()
        };
        let uids = field("Uid:");
        if uids.split_whitespace().any(|u| u == uid.to_string()) {
            found.push(format!(
                "{pid} {} (state {})",
                field("Name:"),
                field("State:")
            ));
        }
    }
    assert!(
        seen_self,
        "the /proc scan for uid {uid} did not see this test's own process {own_pid}, \
         so it cannot show that none is left"
    );
    found
}

/// Whether `/sys/fs/cgroup` is one pure cgroup v2 hierarchy (most production
/// hosts; CI's QEMU guest) rather than v1 controllers beside a unified mount
/// (this machine): leaves, control files and `/proc/<pid>/cgroup` lines are
/// found differently on each.
fn pure_v2() -> bool {
    matches!(cgroup::detect(), Ok(cgroup::CgroupSetup::Unified))
}

/// The line of `/proc/<pid>/cgroup` (as read into `cgroups`) that names the
/// group holding the memory limit: `N:memory:/path` with v1 controllers,
/// `0::/path` on a pure v2 host.
fn memory_line(cgroups: &str) -> Option<&str> {
    let prefix = if pure_v2() { "0::" } else { ":memory:" };
    cgroups
        .lines()
        .find_map(|l| l.split_once(prefix).map(|(_, path)| path))
}

/// Every mounted cgroup hierarchy: `/sys/fs/cgroup/*` (including `unified`)
/// with v1 controllers, `/sys/fs/cgroup` itself on a pure v2 host.
fn hierarchies() -> Vec<PathBuf> {
    if pure_v2() {
        return vec![PathBuf::from(CGROUP_ROOT)];
    }
    let mut dirs: Vec<PathBuf> = fs::read_dir(CGROUP_ROOT)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The leaf directories (in every hierarchy) whose name ends in `-<label>`.
fn leaf_dirs(parent: &str, label: &str) -> Vec<PathBuf> {
    let suffix = format!("-{label}");
    let mut found = Vec::new();
    for hierarchy in hierarchies() {
        let Ok(entries) = fs::read_dir(hierarchy.join(parent)) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.path().is_dir() && entry.file_name().to_string_lossy().ends_with(&suffix) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// The leaf directory in one controller's hierarchy (on a pure v2 host, the
/// one leaf, which has every controller's files).
fn leaf_dir_in(parent: &str, label: &str, controller: &str) -> PathBuf {
    let dirs = leaf_dirs(parent, label);
    let hierarchy = if pure_v2() {
        PathBuf::from(CGROUP_ROOT)
    } else {
        Path::new(CGROUP_ROOT).join(controller)
    };
    dirs.iter()
        .find(|d| d.starts_with(&hierarchy))
        .cloned()
        .unwrap_or_else(|| panic!("no {controller} leaf for {label}: {dirs:?}"))
}

fn read_trimmed(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .trim()
        .to_owned()
}

/// A process started on the host; killed and reaped when dropped.
struct HostProcess(Child);

impl Drop for HostProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kills, when dropped, every host process of a test's uid: the bots a
/// crashed (fake) runner may have left behind if the sandbox fails to.
struct UidReaper(u32);

impl Drop for UidReaper {
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = host_processes_of(self.0);
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            for process in &left {
                if let Some(pid) = process.split(' ').next().and_then(|p| p.parse().ok()) {
                    // SAFETY: signals a process of this test's own uid.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Runs a program on the host as `uid` (no supplementary groups), unconfined:
/// the control showing what an attack does without the sandbox.
fn host_control(program: &str, args: &[&str], uid: u32) -> (String, std::process::ExitStatus) {
    let child = Command::new(program)
        .args(args)
        .uid(uid)
        .gid(uid)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("running {program} on the host: {e}"));
    let mut guard = HostProcess(child);
    let mut stdout = String::new();
    guard
        .0
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("reading the control's stdout");
    let status = guard.0.wait().expect("waiting for the control");
    (stdout, status)
}

/// Compiles a C source from `tests/hostile/` into `dir/name` with the host's
/// gcc, statically if the host can, dynamically otherwise (the sandbox sees
/// the host's `/usr/lib`).
fn compile(source: &str, dir: &Path, name: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    fs::write(&src, source).expect("writing the C source");
    let out = dir.join(name);
    for flags in [&["-static", "-O1"][..], &["-O1"][..]] {
        let status = Command::new(GCC)
            .args(flags)
            .arg("-o")
            .arg(&out)
            .arg(&src)
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("running {GCC}: {e}"));
        if status.success() {
            fs::set_permissions(&out, fs::Permissions::from_mode(0o755)).expect("chmod");
            return out;
        }
    }
    panic!("{GCC} could not compile {name}.c");
}

fn mountinfo_lines(path: &str) -> BTreeSet<String> {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {path}: {e}"))
        .lines()
        .map(str::to_owned)
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

const MEMORY_HOG: &str = include_str!("hostile/memory_hog.py");
const FORK_BOMB: &str = include_str!("hostile/fork_bomb.py");
const NETWORK: &str = include_str!("hostile/network.py");
const FILESYSTEM: &str = include_str!("hostile/filesystem.py");
const IDENTITY: &str = include_str!("hostile/identity.py");
const SECCOMP: &str = include_str!("hostile/seccomp.py");
const X32: &str = include_str!("hostile/x32.py");
const INT80_C: &str = include_str!("hostile/int80.c");
const EUID_C: &str = include_str!("hostile/euid.c");
const PID_NAMESPACE: &str = include_str!("hostile/pid_namespace.py");
const DAEMON: &str = include_str!("hostile/daemon.py");
const SYSV_IPC: &str = include_str!("hostile/sysv_ipc.py");
const SELF_SIGNAL: &str = include_str!("hostile/self_signal.py");
const ORPHANS: &str = include_str!("hostile/orphans.py");
const FORWARDED: &str = include_str!("hostile/forwarded.py");

const SHORT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------
// 1. Memory.
// ---------------------------------------------------------------------------

/// Allocating and touching 4x the memory cap gets the process OOM-killed
/// inside its own cgroup (SIGKILL, `oom_killed`), its peak stays under the
/// cap (no swap), and the host and the sandbox keep working.
#[test]
fn memory_hog_is_oom_killed() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cap = h.sandbox.config().limits.memory_bytes;
    let cmd = python(MEMORY_HOG, app.path(), uid::MEMORY_HOG, "hostile-memhog")
        .arg((4 * cap).to_string());
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert!(out.verdict.oom_killed, "not OOM-killed{out}");
    assert_eq!(out.verdict.signal, Some(libc::SIGKILL), "{out}");
    assert_eq!(out.verdict.code, None, "{out}");
    assert!(!out.stdout.contains("survived"), "{out}");
    // It really filled its allowance before dying.
    let reached = out
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("allocated="))
        .filter_map(|v| v.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    assert!(reached >= cap / 2, "only {reached} bytes allocated{out}");
    if let Some(peak) = out.verdict.peak_memory_bytes {
        assert!(peak <= cap, "peak {peak} above the cap {cap}{out}");
    }

    // The host is fine: the same sandbox still runs a program normally.
    let after = run(
        &h.sandbox,
        &command(
            "/bin/true",
            app.path(),
            uid::MEMORY_HOG,
            "hostile-memhog-after",
        ),
        b"",
        SHORT,
    );
    assert_eq!(after.verdict.code, Some(0), "{after}");
    assert!(!after.verdict.oom_killed, "{after}");
    assert_eq!(host_processes_of(uid::MEMORY_HOG), Vec::<String>::new());
}

// ---------------------------------------------------------------------------
// 2. Processes.
// ---------------------------------------------------------------------------

/// A fork bomb never has more than `pids` processes (seen from inside via
/// /proc, and from the host via `pids.current` and the uid's processes),
/// fork fails with EAGAIN inside, `finish()` kills the live bomb, and no
/// process of its uid remains on the host.
#[test]
fn fork_bomb_is_capped_by_the_pids_limit() {
    let limits = Limits {
        // Python children are big; memory must not be what stops the bomb.
        memory_bytes: 768 * MIB,
        ..small_limits()
    };
    let pids_max = limits.pids;
    let h = hostile(limits);
    let app = app_dir(None);
    let label = "hostile-forkbomb";
    let cmd = python(FORK_BOMB, app.path(), uid::FORK_BOMB, label).arg("1.5");
    let mut child = spawn(&h.sandbox, &cmd);
    feed(&mut child, b"");

    let pids_leaf = leaf_dir_in(PARENT, label, "pids");
    assert_eq!(
        read_trimmed(&pids_leaf.join("pids.max")),
        pids_max.to_string()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        let current = pids_leaf.join("pids.current");
        thread::spawn(move || {
            let mut most = 0u64;
            let mut host_most = 0usize;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(text) = fs::read_to_string(&current) {
                    most = most.max(text.trim().parse().unwrap_or(0));
                }
                host_most = host_most.max(host_processes_of(uid::FORK_BOMB).len());
                thread::sleep(Duration::from_millis(5));
            }
            (most, host_most)
        })
    };

    let mut streams = Streams::take(&mut child);
    let reported = streams.pump(Instant::now() + SHORT, |out| out.contains("done\n"));
    let events = fs::read_to_string(pids_leaf.join("pids.events")).unwrap_or_default();
    stop.store(true, Ordering::Relaxed);
    let (cgroup_most, host_most) = sampler.join().expect("sampler thread");
    // The bomb is still running: finish() must kill all of it.
    let verdict = child
        .finish()
        .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
    let out = Output {
        stdout: streams.stdout(),
        stderr: streams.stderr(),
        verdict,
    };

    assert!(reported, "the supervisor never reported{out}");
    let inside_most: u64 = out.value("max_procs").parse().expect("max_procs");
    assert!(
        inside_most <= pids_max,
        "{inside_most} processes inside{out}"
    );
    assert!(
        inside_most >= pids_max / 2,
        "the bomb never grew ({inside_most}){out}"
    );
    assert!(
        out.value("fork_errors").split(',').any(|e| e == "EAGAIN"),
        "fork never failed with EAGAIN{out}"
    );
    assert!(
        cgroup_most <= pids_max,
        "pids.current reached {cgroup_most}{out}"
    );
    assert!(
        host_most as u64 <= pids_max,
        "{host_most} host processes of the uid{out}"
    );
    let max_events: u64 = events
        .lines()
        .find_map(|l| l.strip_prefix("max "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        max_events > 0,
        "pids.events never counted a refusal: {events:?}{out}"
    );
    assert_eq!(out.verdict.signal, Some(libc::SIGKILL), "{out}");
    assert_eq!(
        host_processes_of(uid::FORK_BOMB),
        Vec::<String>::new(),
        "{out}"
    );
    eprintln!(
        "fork bomb: {inside_most} procs inside, pids.current max {cgroup_most}, \
         {host_most} on the host, pids.events max {max_events}"
    );
}

// ---------------------------------------------------------------------------
// 3. Network.
// ---------------------------------------------------------------------------

/// Outside addresses are unreachable (no route: ENETUNREACH, immediately),
/// raw and packet sockets are refused, `lo` is the only interface, and TCP
/// over loopback works.
#[test]
fn network_reaches_nothing_but_loopback() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    // A host service on an abstract unix socket (no file to hide): reachable
    // from the host, but abstract names belong to the network namespace.
    let name = format!("arena-hostile-{}", std::process::id());
    let address = SocketAddr::from_abstract_name(name.as_bytes()).expect("abstract address");
    let listener = UnixListener::bind_addr(&address).expect("abstract listener");
    UnixStream::connect_addr(&address).expect("the host reaches its own abstract socket");
    let cmd = python(NETWORK, app.path(), uid::NETWORK, "hostile-network").arg(&name);
    let out = run(&h.sandbox, &cmd, b"", SHORT);
    drop(listener);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    for key in ["tcp_1.1.1.1", "tcp_8.8.8.8", "udp_1.1.1.1"] {
        assert_eq!(out.value(key), "ENETUNREACH", "{key}{out}");
    }
    let v6 = out.value("tcp6_outside");
    assert!(
        ["ENETUNREACH", "EAFNOSUPPORT", "EADDRNOTAVAIL"].contains(&v6.as_str()),
        "IPv6 outside: {v6}{out}"
    );
    assert_eq!(out.value("packet_socket"), "EPERM", "{out}");
    assert_eq!(out.value("raw_socket"), "EPERM", "{out}");
    assert_eq!(out.value("if_nameindex"), "lo", "{out}");
    assert_eq!(out.value("proc_net_dev"), "lo", "{out}");
    assert_eq!(out.value("loopback_echo"), "PING", "{out}");
    assert_eq!(out.value("abstract_unix"), "ECONNREFUSED", "{out}");
}

/// Two bots running at once are in network namespaces of their own (the
/// sandbox makes them ahead of time, see `arena_sandbox::netns`): one
/// listening on loopback cannot be reached by the other.
#[test]
fn concurrent_bots_do_not_share_loopback() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let listener = python(
        "import os, socket, sys\n\
         s = socket.socket()\n\
         s.bind(('127.0.0.1', 47113))\n\
         s.listen(1)\n\
         print('netns=' + os.readlink('/proc/self/ns/net'), flush=True)\n\
         sys.stdin.read()\n",
        app.path(),
        uid::NETWORK,
        "netns-listener",
    );
    let mut first = spawn(&h.sandbox, &listener);
    let mut first_out = Streams::take(&mut first);
    let listening = first_out.pump(Instant::now() + SHORT, |out| out.contains('\n'));
    assert!(
        listening,
        "the listener never started: {}",
        first_out.stderr()
    );

    let peer = python(
        "import errno, os, socket\n\
         print('netns=' + os.readlink('/proc/self/ns/net'))\n\
         try:\n\
         \x20   socket.create_connection(('127.0.0.1', 47113), timeout=5)\n\
         \x20   print('connect=connected')\n\
         except OSError as e:\n\
         \x20   print('connect=' + errno.errorcode.get(e.errno, str(e.errno)))\n",
        app.path(),
        uid::NETNS_PEER,
        "netns-peer",
    );
    let out = run(&h.sandbox, &peer, b"", SHORT);
    feed(&mut first, b"");
    let first_verdict = exit_verdict(&mut first, Instant::now() + SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("connect"), "ECONNREFUSED", "{out}");
    let first_netns = parse_values(&first_out.stdout()).remove("netns");
    let host_netns = std::fs::read_link("/proc/self/ns/net")
        .map(|p| p.display().to_string())
        .ok();
    assert!(first_netns.is_some(), "{}", first_out.stdout());
    assert_ne!(first_netns, Some(out.value("netns")), "{out}");
    assert_ne!(first_netns, host_netns);
    assert_ne!(Some(out.value("netns")), host_netns);
    assert_eq!(first_verdict.code, Some(0), "{first_verdict:?}");
}

// ---------------------------------------------------------------------------
// 4. Filesystem.
// ---------------------------------------------------------------------------

/// A match (app directory not writable) can write nowhere but /tmp and
/// /dev/shm: /bot, /, /dev and the bound host paths are read-only mounts (EROFS even
/// though the uid owns the app directory), /proc/sys is not writable, and
/// /tmp is capped at `tmp_bytes` (ENOSPC).
#[test]
fn filesystem_match_cannot_write_outside_tmp() {
    let h = hostile(small_limits());
    let tmp_cap = h.sandbox.config().limits.tmp_bytes;
    let app = app_dir(Some(uid::FS_MATCH));
    let cmd = python(FILESYSTEM, app.path(), uid::FS_MATCH, "hostile-fs-match");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    for key in [
        "write_bot",
        "mkdir_bot",
        "write_root",
        "mkdir_root",
        "write_usr",
        "write_etc_passwd",
        "write_dev",
    ] {
        assert_eq!(out.value(key), "EROFS", "{key}{out}");
    }
    assert_eq!(out.value("write_proc_sys"), "EACCES", "{out}");
    for key in ["write_tmp", "write_dev_shm", "write_dev_null"] {
        assert_eq!(out.value(key), "OK", "{key}{out}");
    }
    assert_eq!(out.value("tmp_fill"), "ENOSPC", "{out}");
    let filled: u64 = out.value("tmp_filled").parse().expect("tmp_filled");
    assert!(
        filled <= tmp_cap && filled >= tmp_cap / 2,
        "filled {filled}{out}"
    );
    assert_eq!(out.value("tmp_size"), tmp_cap.to_string(), "{out}");
    let host_entries: Vec<_> = fs::read_dir(app.path()).expect("app dir").collect();
    assert!(
        host_entries.is_empty(),
        "the match wrote into its directory{out}"
    );
}

/// A build (`writable(true)`) may write into its directory, and the files
/// appear on the host owned by its uid; the rest of the root stays read-only.
#[test]
fn filesystem_build_may_write_its_directory_only() {
    let h = hostile(small_limits());
    let app = app_dir(Some(uid::FS_BUILD));
    let cmd = python(FILESYSTEM, app.path(), uid::FS_BUILD, "hostile-fs-build").writable(true);
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("write_bot"), "OK", "{out}");
    assert_eq!(out.value("mkdir_bot"), "OK", "{out}");
    for key in ["write_root", "mkdir_root", "write_usr", "write_etc_passwd"] {
        assert_eq!(out.value(key), "EROFS", "{key}{out}");
    }
    let written = app.path().join("written-inside.txt");
    assert_eq!(
        fs::read_to_string(&written).expect("the build's file on the host"),
        "built inside"
    );
    assert_eq!(fs::metadata(&written).expect("stat").uid(), uid::FS_BUILD);
    assert!(app.path().join("dir-inside").is_dir());
}

/// The root holds exactly the bound host paths plus /bot, /dev, /proc and
/// /tmp: no /sys, no /root, /home, /work, /etc/shadow, nor the test's own
/// temporary directory; /etc has only the listed files; /dev is minimal.
#[test]
fn filesystem_host_paths_are_invisible() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let own_tmp = app.path().to_string_lossy().into_owned();
    let cwd = std::env::current_dir()
        .expect("cwd")
        .to_string_lossy()
        .into_owned();
    let cmd = python(FILESYSTEM, app.path(), uid::FS_INVISIBLE, "hostile-fs-view")
        .arg(&own_tmp)
        .arg(&cwd)
        .arg("/etc/hostname")
        .arg("/var/log");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    for path in [
        "/sys",
        "/root",
        "/home",
        "/work",
        "/etc/shadow",
        "/etc/gshadow",
        "/run",
        "/var",
        "/boot",
        "/.old-root",
        &own_tmp,
        &cwd,
        "/etc/hostname",
        "/var/log",
    ] {
        assert_eq!(
            out.value(&format!("exists:{path}")),
            "False",
            "{path} is visible{out}"
        );
    }

    let exists = |p: &str| fs::symlink_metadata(p).is_ok();
    let mut root: BTreeSet<String> = ["bot", "dev", "proc", "tmp"].map(String::from).into();
    let mut etc = BTreeSet::new();
    for path in HOST_DEFAULT_PATHS.iter().filter(|p| exists(p)) {
        let mut parts = path.trim_start_matches('/').split('/');
        let top = parts.next().expect("a component").to_owned();
        if top == "etc" {
            etc.insert(parts.next().expect("an /etc entry").to_owned());
        }
        root.insert(top);
    }
    // The stand-ins for documented command names the host lacks (`python`
    // for `python3`) live in a directory of the sandbox's own root.
    let alias_dir = std::path::Path::new(arena_sandbox::env::ALIAS_DIR);
    if RuntimeEnv::host_default()
        .links
        .iter()
        .any(|(link, _)| link.starts_with(alias_dir))
    {
        let top = alias_dir.iter().nth(1).expect("a top-level directory");
        root.insert(top.to_string_lossy().into_owned());
    }
    let listed = |key: &str| -> BTreeSet<String> {
        out.value(key)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(listed("ls_root"), root, "{out}");
    assert_eq!(listed("ls_etc"), etc, "{out}");
    let dev: BTreeSet<String> = [
        "null", "zero", "full", "random", "urandom", "fd", "stdin", "stdout", "stderr", "shm",
    ]
    .map(String::from)
    .into();
    assert_eq!(listed("ls_dev"), dev, "{out}");
}

// ---------------------------------------------------------------------------
// 5. Identity and privilege.
// ---------------------------------------------------------------------------

/// The process runs as the configured uid/gid with no supplementary groups,
/// every capability set empty, no_new_privs, two seccomp filters, cannot
/// become root or rename the host, and the hostname is "arena".
#[test]
fn identity_is_unprivileged() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = python(IDENTITY, app.path(), uid::IDENTITY, "hostile-identity");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    let id = uid::IDENTITY.to_string();
    let four = [id.as_str(); 4].join(" ");
    assert_eq!(out.value("Uid"), four, "{out}");
    assert_eq!(out.value("Gid"), four, "{out}");
    assert_eq!(out.value("Groups"), "", "{out}");
    assert_eq!(out.value("getgroups"), "", "{out}");
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(out.value(cap), "0000000000000000", "{cap}{out}");
    }
    assert_eq!(out.value("NoNewPrivs"), "1", "{out}");
    assert_eq!(out.value("Seccomp"), "2", "{out}");
    assert_eq!(out.value("Seccomp_filters"), "2", "{out}");
    for key in ["setuid0", "setgid0", "setgroups0", "sethostname"] {
        assert_eq!(out.value(key), "EPERM", "{key}{out}");
    }
    assert_eq!(out.value("hostname"), "arena", "{out}");
    assert_eq!(out.value("proc_hostname"), "arena", "{out}");
    // Nothing of the runner's reaches the program: only stdio is open (3 is
    // the directory listing /proc/self/fd itself), the environment is
    // exactly the command's, and the cgroup paths are hidden.
    assert_eq!(out.value("open_fds"), "0,1,2,3", "{out}");
    assert_eq!(
        out.value("environ"),
        format!(
            "PATH={}|PYTHONDONTWRITEBYTECODE=1",
            RuntimeEnv::host_default().search_path()
        ),
        "{out}"
    );
    assert_eq!(out.value("cgroup_paths"), "/", "{out}");
}

/// A setuid-root binary planted in the app directory (as a build could
/// leave one) gives nothing: the control shows it makes the uid root on the
/// host; inside (nosuid mount, no_new_privs) it runs as the bot's uid.
#[test]
fn setuid_root_binary_gains_nothing() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let binary = compile(EUID_C, app.path(), "euid");
    chown(&binary, Some(0), Some(0)).expect("chown root");
    fs::set_permissions(&binary, fs::Permissions::from_mode(0o4755)).expect("chmod u+s");

    let control = uid::SETUID_CONTROL;
    let (host_out, status) = host_control(binary.to_str().expect("path"), &[], control);
    assert!(status.success(), "{host_out}");
    assert_eq!(
        host_out,
        format!("ruid={control} euid=0\nsetuid0=OK\n"),
        "the control binary is not a working setuid-root binary"
    );

    // A match mounts /bot nosuid; a build's writable /bot is not, so there
    // no_new_privs alone must hold.
    for writable in [false, true] {
        let cmd = command(
            "/bot/euid",
            app.path(),
            uid::SETUID_BINARY,
            "hostile-setuid",
        )
        .writable(writable);
        let out = run(&h.sandbox, &cmd, b"", SHORT);
        let id = uid::SETUID_BINARY;
        assert_eq!(out.verdict.code, Some(0), "writable {writable}{out}");
        assert_eq!(
            out.value("ruid"),
            format!("{id} euid={id}"),
            "writable {writable}{out}"
        );
        assert_eq!(out.value("setuid0"), "EPERM", "writable {writable}{out}");
    }
}

// ---------------------------------------------------------------------------
// 6. Seccomp.
// ---------------------------------------------------------------------------

/// Every call that reaches across the sandbox's walls gets EPERM from the
/// filter (clone with CLONE_NEWUSER included) and clone3 gets ENOSYS, while
/// threads and fork still work. The same script run unconfined on the host
/// as an unprivileged uid (the control) gets something else for each call
/// whose privilege check does not come first, so there the EPERM can only
/// come from seccomp.
#[test]
fn seccomp_denies_escape_syscalls() {
    /// Calls whose unconfined answer may be EPERM too, because the kernel
    /// checks the caller's privilege before its arguments: always for
    /// pivot_root; for the others on a kernel built with kexec and modules
    /// (Debian's, in CI's cgroup v2 guest; without them they are ENOSYS) or,
    /// for open_by_handle_at, one that checks CAP_DAC_READ_SEARCH first
    /// (6.1).
    const PRIVILEGE_FIRST: [&str; 7] = [
        "pivot_root",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "open_by_handle_at",
    ];
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = python(SECCOMP, app.path(), uid::SECCOMP, "hostile-seccomp");
    let out = run(&h.sandbox, &cmd, b"", SHORT);
    let (control_out, control_status) =
        host_control(PYTHON, &["-c", SECCOMP], uid::SECCOMP_CONTROL);
    let control = parse_values(&control_out);
    assert!(control_status.success(), "control failed: {control_out}");

    assert_eq!(out.verdict.code, Some(0), "{out}");
    let denied = [
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "unshare",
        "setns",
        "kexec_load",
        "kexec_file_load",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "init_module",
        "finit_module",
        "delete_module",
        "open_by_handle_at",
        "name_to_handle_at",
        "open_tree",
        "mount_setattr",
        "personality",
        "iopl",
        "ioperm",
        "lookup_dcookie",
        "clone_newuser",
    ];
    for name in denied {
        let unconfined = control.get(name).map_or("?", String::as_str);
        assert_eq!(
            out.value(name),
            "EPERM",
            "{name} (unconfined: {unconfined}){out}"
        );
        // Every probe but those is built to differ from EPERM unconfined.
        if !PRIVILEGE_FIRST.contains(&name) {
            assert_ne!(
                unconfined, "EPERM",
                "{name}: the control cannot tell seccomp from the kernel"
            );
        }
    }
    assert_eq!(out.value("clone3"), "ENOSYS", "{out}");
    assert_ne!(control.get("clone3").map(String::as_str), Some("ENOSYS"));
    assert_eq!(out.value("threads"), "[0, 1, 4, 9]", "{out}");
    assert_eq!(out.value("fork_status"), "7", "{out}");
    eprintln!(
        "seccomp control (unconfined, uid {}): {control:?}",
        uid::SECCOMP_CONTROL
    );
}

/// An x32-ABI system call (getpid | 0x40000000) kills the process with
/// SIGSYS; unconfined it just fails with ENOSYS (x32 is off in this kernel).
#[test]
fn seccomp_x32_syscall_kills_with_sigsys() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = python(X32, app.path(), uid::X32, "hostile-x32");
    let out = run(&h.sandbox, &cmd, b"", SHORT);
    assert_eq!(out.verdict.signal, Some(SIGSYS), "{out}");
    assert_eq!(out.stdout, "before\n", "{out}");

    let (control, status) = host_control(PYTHON, &["-c", X32], uid::X32_CONTROL);
    assert!(status.success(), "{control}");
    assert!(
        control.contains("after rc=-1"),
        "unconfined x32 call: {control}"
    );
}

/// A 32-bit system call through `int $0x80` from a 64-bit program (a
/// non-native audit architecture) kills the process with SIGSYS; the same
/// binary on the host gets its pid back.
#[test]
fn seccomp_int80_syscall_kills_with_sigsys() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let binary = compile(INT80_C, app.path(), "int80");

    let (control, status) = host_control(binary.to_str().expect("path"), &[], uid::INT80_CONTROL);
    assert!(status.success(), "unconfined int80: {control} {status:?}");
    let ret: i64 = control
        .lines()
        .find_map(|l| l.strip_prefix("after ret="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unconfined int80 output: {control}"));
    assert!(ret > 0, "unconfined int $0x80 getpid returned {ret}");

    let cmd = command("/bot/int80", app.path(), uid::INT80, "hostile-int80");
    let out = run(&h.sandbox, &cmd, b"", SHORT);
    assert_eq!(out.verdict.signal, Some(SIGSYS), "{out}");
    assert_eq!(out.stdout, "before\n", "{out}");
}

// ---------------------------------------------------------------------------
// 7. Pid namespace.
// ---------------------------------------------------------------------------

/// `kill -9 -1` inside kills the sandbox's own processes but cannot reach a
/// process on the host, even one running as the very same uid.
#[test]
fn kill_minus_one_cannot_reach_the_host() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let victim = HostProcess(
        Command::new("/bin/sleep")
            .arg("300")
            .uid(uid::KILL_MINUS_ONE)
            .gid(uid::KILL_MINUS_ONE)
            .stdin(Stdio::null())
            .spawn()
            .expect("host sleep"),
    );
    let victim_pid = victim.0.id();
    let script =
        "sleep 100 & inner=$!; kill -9 -1; echo kill_rc=$?; wait $inner; echo inner_status=$?";
    let cmd = sh(script, app.path(), uid::KILL_MINUS_ONE, "hostile-kill-1");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("kill_rc"), "0", "{out}");
    assert_eq!(
        out.value("inner_status"),
        "137",
        "the sandbox's own sleep survived{out}"
    );
    let mut victim = victim;
    assert!(
        victim.0.try_wait().expect("try_wait").is_none(),
        "the host process of the same uid was killed{out}"
    );
    let left = host_processes_of(uid::KILL_MINUS_ONE);
    assert!(
        left.len() == 1 && left[0].starts_with(&format!("{victim_pid} sleep ")),
        "only the host sleep may remain: {left:?}{out}"
    );
}

/// /proc inside is the sandbox's own: it lists only the sandbox's processes
/// (the sandbox's init as pid 1, the bot as pid 2, its child as pid 3). The
/// init, a copy of the runner, shows neither the runner's command line nor
/// its environment.
#[test]
fn proc_shows_only_the_sandbox() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = python(PID_NAMESPACE, app.path(), uid::PROC_VIEW, "hostile-proc");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("self"), "2", "{out}");
    assert_eq!(out.value("child"), "3", "{out}");
    assert_eq!(out.value("pids"), "1,2,3", "{out}");
    assert_eq!(out.value("pid1_cmdline"), "arena-init", "{out}");
    assert_eq!(out.value("pid1_name"), "arena-init", "{out}");
    assert_eq!(out.value("pid1_environ"), "EACCES", "{out}");
    assert_eq!(out.value("pid1_fds"), "EACCES", "{out}");
}

/// A setsid + double-fork daemon that ignores SIGTERM and SIGHUP and
/// detaches its stdio is alive on the host while the bot runs, and gone once
/// the bot exits and `finish()` returns.
#[test]
fn setsid_double_fork_daemon_dies_with_the_sandbox() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = python(DAEMON, app.path(), uid::DAEMON, "hostile-daemon");
    let deadline = Instant::now() + SHORT;
    let mut child = spawn(&h.sandbox, &cmd);
    let stdin = child.stdin.take().map(File::from);
    let mut streams = Streams::take(&mut child);
    assert!(
        streams.pump(deadline, |out| out.contains("ready\n")),
        "no daemon reported: {}{}",
        streams.stdout(),
        streams.stderr()
    );
    let during = host_processes_of(uid::DAEMON);
    assert_eq!(
        during.len(),
        3,
        "the sandbox's init, the bot and the daemon on the host: {during:?}"
    );
    let mut stdin = stdin.expect("stdin");
    stdin.write_all(b"go\n").expect("releasing the bot");
    drop(stdin);
    assert!(streams.pump(deadline, |_| false), "the bot did not exit");
    let verdict = exit_verdict(&mut child, deadline);
    let out = Output {
        stdout: streams.stdout(),
        stderr: streams.stderr(),
        verdict,
    };
    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert!(out.stdout.contains("leaving"), "{out}");
    assert_eq!(
        host_processes_of(uid::DAEMON),
        Vec::<String>::new(),
        "the daemon survived{out}"
    );
}

// ---------------------------------------------------------------------------
// 8. Resource limits.
// ---------------------------------------------------------------------------

/// Core dumps are off: `ulimit -c` is 0 (soft and hard), it cannot be
/// raised, and a SIGSEGV in a writable app directory leaves no core file.
#[test]
fn rlimit_core_dumps_are_disabled() {
    let h = hostile(small_limits());
    let app = app_dir(Some(uid::CORE));
    let script = "echo core_soft=$(ulimit -c); echo core_hard=$(ulimit -H -c); \
                  (ulimit -c unlimited) 2>/dev/null; echo raise_rc=$?; \
                  sleep 30 & victim=$!; kill -SEGV $victim; wait $victim; echo segv_status=$?";
    let cmd = sh(script, app.path(), uid::CORE, "hostile-core").writable(true);
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("core_soft"), "0", "{out}");
    assert_eq!(out.value("core_hard"), "0", "{out}");
    assert_ne!(
        out.value("raise_rc"),
        "0",
        "RLIMIT_CORE could be raised{out}"
    );
    assert_eq!(
        out.value("segv_status"),
        (128 + libc::SIGSEGV).to_string(),
        "{out}"
    );
    let files: Vec<_> = fs::read_dir(app.path())
        .expect("app dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        files,
        Vec::<OsString>::new(),
        "a core file was written{out}"
    );
}

/// Writing past `file_bytes` raises SIGXFSZ in a process with the default
/// disposition (the file stops at exactly the limit), and EFBIG in one that
/// ignores it (Python does).
#[test]
fn rlimit_file_size_raises_sigxfsz() {
    let h = hostile(small_limits());
    let cap = h.sandbox.config().limits.file_bytes;
    let app = app_dir(None);
    let script = format!(
        "echo fsize_blocks=$(ulimit -f); \
         head -c {} /dev/zero > /tmp/big; echo head_status=$?; echo size=$(wc -c < /tmp/big); \
         rm /tmp/big; \
         {PYTHON} -c 'import errno\ntry:\n open(\"/tmp/big\", \"wb\").write(bytes({}))\n print(\"python=OK\")\nexcept OSError as e:\n print(\"python=\" + errno.errorcode[e.errno])'",
        cap + MIB,
        cap + MIB
    );
    let cmd = sh(&script, app.path(), uid::FSIZE, "hostile-fsize");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("fsize_blocks"), (cap / 512).to_string(), "{out}");
    assert_eq!(
        out.value("head_status"),
        (128 + libc::SIGXFSZ).to_string(),
        "{out}"
    );
    assert_eq!(out.value("size"), cap.to_string(), "{out}");
    assert_eq!(out.value("python"), "EFBIG", "{out}");
}

/// Opening more than `open_files` descriptors fails with EMFILE, and the
/// limit cannot be raised.
#[test]
fn rlimit_open_files_gives_emfile() {
    let h = hostile(small_limits());
    let cap = h.sandbox.config().limits.open_files;
    let app = app_dir(None);
    let script = "import errno, os, resource\n\
                  print('nofile=%d,%d' % resource.getrlimit(resource.RLIMIT_NOFILE))\n\
                  fds = []\n\
                  try:\n    while True: fds.append(os.open('/dev/null', os.O_RDONLY))\n\
                  except OSError as e: print('open=' + errno.errorcode[e.errno])\n\
                  print('highest=%d' % max(fds))\n\
                  try:\n    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096)); print('raise=OK')\n\
                  except (ValueError, OSError) as e: print('raise=refused')\n";
    let cmd = python(script, app.path(), uid::NOFILE, "hostile-nofile");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("nofile"), format!("{cap},{cap}"), "{out}");
    assert_eq!(out.value("open"), "EMFILE", "{out}");
    assert_eq!(out.value("highest"), (cap - 1).to_string(), "{out}");
    assert_eq!(out.value("raise"), "refused", "{out}");
}

// ---------------------------------------------------------------------------
// 9. Cpuset.
// ---------------------------------------------------------------------------

/// With one core, the process may run only there: Cpus_allowed_list is that
/// core, nproc prints 1, widening the affinity mask changes nothing, and the
/// leaf's cpuset.cpus says so on the host.
#[test]
fn cpuset_pins_to_one_core() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let core = *all_cores().last().expect("a core");
    let label = "hostile-cpuset";
    let script = format!(
        "grep Cpus_allowed_list /proc/self/status | tr -d ' \\t' | tr : =; \
         echo nproc=$(nproc); \
         {PYTHON} -c 'import os; os.sched_setaffinity(0, set(range(8))); print(\"widened=\" + \",\".join(map(str, sorted(os.sched_getaffinity(0)))))'; \
         cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null; \
         sleep 30"
    );
    let cmd = sh(&script, app.path(), uid::CPUSET, label).cpus(vec![core]);
    let mut child = spawn(&h.sandbox, &cmd);
    feed(&mut child, b"");
    let mut streams = Streams::take(&mut child);
    let seen = streams.pump(Instant::now() + SHORT, |out| out.contains("widened="));
    let leaf_cpus = read_trimmed(&leaf_dir_in(PARENT, label, "cpuset").join("cpuset.cpus"));
    let verdict = child
        .finish()
        .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
    let out = Output {
        stdout: streams.stdout(),
        stderr: streams.stderr(),
        verdict,
    };

    assert!(seen, "{out}");
    assert_eq!(out.value("Cpus_allowed_list"), core.to_string(), "{out}");
    assert_eq!(out.value("nproc"), "1", "{out}");
    assert_eq!(out.value("widened"), core.to_string(), "{out}");
    assert_eq!(leaf_cpus, core.to_string());
}

// ---------------------------------------------------------------------------
// 10. Exec errors and stdio.
// ---------------------------------------------------------------------------

/// A program that does not exist inside fails the spawn at the Exec stage
/// with ENOENT (a non-executable file with EACCES), and leaves no cgroup.
#[test]
fn exec_of_a_missing_program_fails_with_enoent() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    fs::write(app.path().join("not-executable"), "#!/bin/sh\necho hi\n").expect("write");
    for (program, errno, label) in [
        ("/no/such/program", libc::ENOENT, "hostile-exec-missing"),
        ("/bot/not-executable", libc::EACCES, "hostile-exec-noexec"),
    ] {
        let cmd = command(program, app.path(), uid::EXEC_MISSING, label);
        match h.sandbox.spawn(&cmd) {
            Err(SandboxError::Child {
                stage: Stage::Exec,
                source,
            }) => assert_eq!(source.raw_os_error(), Some(errno), "{program}: {source}"),
            Err(other) => panic!("{program}: wrong error: {}", chain(&other)),
            Ok(mut child) => {
                let verdict = child.finish();
                panic!("{program} was spawned: {verdict:?}");
            }
        }
        assert_eq!(leaf_dirs(PARENT, label), Vec::<PathBuf>::new(), "{program}");
    }
    assert_eq!(host_processes_of(uid::EXEC_MISSING), Vec::<String>::new());
}

/// Lines written to stdin come back unchanged on stdout through `cat`.
#[test]
fn stdin_round_trips_through_cat() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let input = "hello sandbox\nsecond line \u{263a}\n";
    let cmd = command("/bin/cat", app.path(), uid::STDIO, "hostile-cat");
    let out = run(&h.sandbox, &cmd, input.as_bytes(), SHORT);
    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.stdout, input, "{out}");
    assert_eq!(out.stderr, "", "{out}");
}

// ---------------------------------------------------------------------------
// 11. Teardown.
// ---------------------------------------------------------------------------

/// While the bot runs its leaf exists in every hierarchy and its mounts live
/// only in its own namespace (the host's mount table does not change); after
/// `finish()` the leaf directories, the processes and the mounts are gone.
#[test]
fn teardown_leaves_no_cgroup_mount_or_process() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let label = "hostile-teardown";
    let root_dir = h.sandbox.config().root_dir.to_string_lossy().into_owned();
    let mounts_before = mountinfo_lines("/proc/self/mountinfo");

    let cmd = sh("sleep 60 & sleep 60", app.path(), uid::TEARDOWN, label);
    let mut child = spawn(&h.sandbox, &cmd);
    feed(&mut child, b"");
    let dirs = leaf_dirs(PARENT, label);
    let hierarchies_with_leaf: BTreeSet<PathBuf> = dirs
        .iter()
        .filter_map(|d| Some(d.parent()?.parent()?.to_path_buf()))
        .collect();
    // One leaf per v1 controller and in the unified mount; on a pure v2
    // host, one leaf in the one hierarchy.
    let needed: &[&str] = if pure_v2() {
        &[""]
    } else {
        &["memory", "pids", "cpuset", "freezer", "unified"]
    };
    for needed in needed {
        assert!(
            hierarchies_with_leaf.contains(&Path::new(CGROUP_ROOT).join(needed)),
            "no {needed} leaf: {dirs:?}"
        );
    }
    let host_cgroups = read_trimmed(Path::new(&format!("/proc/{}/cgroup", child.pid())));
    assert!(
        memory_line(&host_cgroups).is_some_and(|path| path.starts_with(&format!("/{PARENT}/"))),
        "the bot is not in its memory leaf: {host_cgroups}"
    );
    let inside = mountinfo_lines(&format!("/proc/{}/mountinfo", child.pid()));
    assert!(
        inside.iter().any(|l| l.contains(" /bot ")),
        "no /bot inside: {inside:?}"
    );
    let mounts_during = mountinfo_lines("/proc/self/mountinfo");
    let new_during: Vec<&String> = mounts_during.difference(&mounts_before).collect();
    assert_eq!(
        new_during,
        Vec::<&String>::new(),
        "mounts appeared on the host"
    );
    assert!(!mounts_during.iter().any(|l| l.contains(&root_dir)));
    let deadline = Instant::now() + SHORT;
    while host_processes_of(uid::TEARDOWN).len() < 4 {
        assert!(Instant::now() < deadline, "sh and two sleeps never ran");
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        host_processes_of(uid::TEARDOWN).len(),
        4,
        "the sandbox's init, sh and two sleeps"
    );

    let verdict = child
        .finish()
        .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
    assert_eq!(verdict.signal, Some(libc::SIGKILL), "{verdict:?}");
    for dir in &dirs {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
    assert_eq!(leaf_dirs(PARENT, label), Vec::<PathBuf>::new());
    assert_eq!(host_processes_of(uid::TEARDOWN), Vec::<String>::new());
    let mounts_after = mountinfo_lines("/proc/self/mountinfo");
    let new_after: Vec<&String> = mounts_after.difference(&mounts_before).collect();
    assert_eq!(new_after, Vec::<&String>::new(), "mounts left on the host");
    assert!(!mounts_after.iter().any(|l| l.contains(&root_dir)));
}

// ---------------------------------------------------------------------------
// 12. Stale cleanup after a runner crash; more namespaces and mounts.
// ---------------------------------------------------------------------------

/// Leaves of a dead runner (pid gone, or pid reused by a process with
/// another start time) are killed and removed by the next `Sandbox::new`
/// with the same parent, process inside included; a live runner's leaf is
/// left alone.
#[test]
fn stale_leaves_of_a_dead_runner_are_removed() {
    let _guard = ParentGuard::new(STALE_PARENT);
    let setup = cgroup::detect().expect("cgroup layout");
    let manager = CgroupManager::new(setup, STALE_PARENT).expect("cgroup manager");
    let limits = CgroupLimits {
        memory_bytes: 64 * MIB,
        pids: 8,
        cpus: vec![all_cores()[0]],
        cpu_quota: None,
    };
    let dead = "r999999999-1-x";
    let reused = format!("r{}-1-reused", std::process::id());
    let live_name = CgroupManager::owned_name("live");

    // The crashed runner's leaf, with a process still in it.
    let dead_leaf = manager.create(dead, &limits).expect("dead runner's leaf");
    let dead_paths = dead_leaf.paths();
    let orphan = HostProcess(
        Command::new("/bin/sleep")
            .arg("300")
            .stdin(Stdio::null())
            .spawn()
            .expect("host sleep"),
    );
    let orphan_pid = orphan.0.id();
    for procs in dead_leaf.open_procs_files().expect("cgroup.procs") {
        File::from(procs)
            .write_all(orphan_pid.to_string().as_bytes())
            .expect("moving the orphan into the dead leaf");
    }
    assert!(
        read_trimmed(Path::new(&format!("/proc/{orphan_pid}/cgroup"))).contains(dead),
        "the orphan is not in the dead leaf"
    );
    // A runner crash: nothing removes the leaf.
    std::mem::forget(dead_leaf);
    let reused_leaf = manager.create(&reused, &limits).expect("reused pid's leaf");
    let reused_paths = reused_leaf.paths();
    std::mem::forget(reused_leaf);
    let live_leaf = manager.create(&live_name, &limits).expect("live leaf");
    for path in dead_paths.iter().chain(&reused_paths) {
        assert!(path.is_dir(), "{} missing before cleanup", path.display());
    }

    let sandbox = new_sandbox(STALE_PARENT, small_limits());

    for path in dead_paths.iter().chain(&reused_paths) {
        assert!(!path.exists(), "{} survived Sandbox::new", path.display());
    }
    let mut orphan = orphan;
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = orphan.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the orphan in the stale leaf is alive"
        );
        thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    for path in live_leaf.paths() {
        assert!(
            path.is_dir(),
            "the live runner's leaf {} was removed",
            path.display()
        );
    }
    live_leaf.remove().expect("removing the live leaf");
    drop(sandbox);
}

/// A file system mounted below a read-only bind (here a tmpfs on a
/// subdirectory of the app directory; on other hosts e.g. a separate
/// `/usr/local` under `/usr`) must be read-only inside too: the bind is
/// recursive, so the read-only remount must be as well.
///
/// The host-side mount is made in a private mount namespace of this test's
/// own thread (`unshare(CLONE_NEWNS)` on one thread), so the host's mount
/// table never sees it and it vanishes with the thread.
///
/// Guards against remounting only the top mount read-only
/// (`MS_REMOUNT | MS_BIND | MS_RDONLY` does not recurse), which left every
/// submount writable; `rootfs.rs` now uses a recursive `mount_setattr`.
#[test]
fn read_only_binds_cover_submounts() {
    let app = app_dir(Some(uid::SUBMOUNT));
    let app_path = app.path().to_owned();
    let out = thread::spawn(move || {
        private_mounts_for_this_thread();
        let sub = app_path.join("sub");
        fs::create_dir(&sub).expect("mkdir sub");
        let target = std::ffi::CString::new(sub.to_str().expect("utf-8 path")).expect("path");
        // SAFETY: mounts a tmpfs in this thread's private mount namespace.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"size=1m,mode=1777".as_ptr().cast(),
            )
        };
        assert_eq!(rc, 0, "mount tmpfs: {}", std::io::Error::last_os_error());
        let h = hostile(small_limits());
        let script = "import errno\n\
                      for path in ['/bot/top.txt', '/bot/sub/inner.txt']:\n\
                      \x20   try:\n\
                      \x20       open(path, 'w').write('x')\n\
                      \x20       print(path + '=OK')\n\
                      \x20   except OSError as e:\n\
                      \x20       print(path + '=' + errno.errorcode[e.errno])\n";
        let cmd = python(script, &app_path, uid::SUBMOUNT, "hostile-submount");
        run(&h.sandbox, &cmd, b"", SHORT)
    })
    .join()
    .expect("the submount thread");

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("/bot/top.txt"), "EROFS", "{out}");
    assert_eq!(
        out.value("/bot/sub/inner.txt"),
        "EROFS",
        "a submount of the read-only /bot is writable{out}"
    );
}

/// SysV IPC objects of the host are invisible: the IPC namespace is new.
#[test]
fn ipc_namespace_hides_host_sysv_objects() {
    /// Removes the segment when dropped.
    struct Segment(i32);
    impl Drop for Segment {
        fn drop(&mut self) {
            // SAFETY: removes a segment this test created.
            unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
        }
    }
    let h = hostile(small_limits());
    let app = app_dir(None);
    let key = 0x4152_0000 | (std::process::id() as i32 & 0xffff);
    // SAFETY: creates a world-readable 4 KiB segment; removed on drop.
    let id = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666) };
    assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
    let _segment = Segment(id);
    let cmd = python(SYSV_IPC, app.path(), uid::IPC, "hostile-ipc").arg(key.to_string());
    let out = run(&h.sandbox, &cmd, b"", SHORT);
    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("shmget"), "ENOENT", "{out}");
    assert_eq!(out.value("sysvipc_shm_entries"), "0", "{out}");
}

// ---------------------------------------------------------------------------
// 13. Runner crash, and the runner's own threads.
// ---------------------------------------------------------------------------

/// The runner dies (SIGKILL, no cleanup at all): its confined process dies
/// with it (parent-death signal) instead of running on unsupervised, its
/// leaf is left behind, and the next `Sandbox::new` with the same parent
/// removes it. The runner is this test binary re-executed with
/// [`FAKE_RUNNER_ENV`] set, running [`fake_runner_for_the_crash_test`].
#[test]
fn runner_crash_kills_the_bot_and_the_next_runner_collects_its_leaf() {
    let _guard = ParentGuard::new(CRASH_PARENT);
    let _reaper = UidReaper(uid::CRASH);
    // Made here: the runner is killed and could not remove it.
    let app = app_dir(None);
    let exe = std::env::current_exe().expect("test binary");
    let mut runner = HostProcess(
        Command::new(exe)
            .args([
                "--exact",
                "fake_runner_for_the_crash_test",
                "--ignored",
                "--nocapture",
            ])
            .env(FAKE_RUNNER_ENV, app.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("fake runner"),
    );
    let stdout = runner.0.stdout.take().expect("runner stdout");
    let (lines, received) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + SHORT;
    let mut report = BTreeMap::new();
    while !report.contains_key("leaf") {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = received
            .recv_timeout(left)
            .expect("the fake runner never reported its bot");
        if let Some((k, v)) = line.split_once('=') {
            report.insert(k.to_owned(), v.to_owned());
        }
    }
    let leaf = report["leaf"].clone();
    let bots = host_processes_of(uid::CRASH);
    assert_eq!(
        bots.len(),
        3,
        "the sandbox's init and the bot (sh and sleep) are not running: {bots:?}"
    );

    // The crash.
    runner.0.kill().expect("SIGKILL the runner");
    runner.0.wait().expect("reaping the runner");

    let deadline = Instant::now() + Duration::from_secs(5);
    while !host_processes_of(uid::CRASH).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the bot outlived its runner: {:?}",
            host_processes_of(uid::CRASH)
        );
        thread::sleep(Duration::from_millis(5));
    }
    let left: Vec<PathBuf> = hierarchies()
        .into_iter()
        .map(|h| h.join(CRASH_PARENT).join(&leaf))
        .filter(|d| d.is_dir())
        .collect();
    // Five v1 controllers and the unified mount, or the one v2 hierarchy.
    let expected = if pure_v2() { 1 } else { 5 };
    assert!(
        left.len() >= expected,
        "the crashed runner's leaf {leaf} is not in every hierarchy: {left:?}"
    );

    let next = new_sandbox(CRASH_PARENT, small_limits());
    for dir in &left {
        assert!(
            !dir.exists(),
            "{} survived the next runner's start",
            dir.display()
        );
    }
    drop(next);
}

/// Not a test on its own: the runner process of
/// [`runner_crash_kills_the_bot_and_the_next_runner_collects_its_leaf`],
/// which runs it with `--ignored` (so a plain run lists it as ignored, never
/// as passed). It spawns a confined `sleep`, reports its leaf, and waits to
/// be killed.
#[test]
#[ignore = "a helper process, run only by runner_crash_kills_the_bot_and_the_next_runner_collects_its_leaf"]
fn fake_runner_for_the_crash_test() {
    let app = std::env::var_os(FAKE_RUNNER_ENV)
        .expect("run by the crash test, which names the app directory");
    let sandbox = new_sandbox(CRASH_PARENT, small_limits());
    let cmd = sh("sleep 300; true", Path::new(&app), uid::CRASH, "crash");
    let child = spawn(&sandbox, &cmd);
    let cgroups = read_trimmed(Path::new(&format!("/proc/{}/cgroup", child.pid())));
    let leaf = memory_line(&cgroups)
        .and_then(|path| path.rsplit('/').next())
        .expect("the bot's memory leaf")
        .to_owned();
    // Let sh start its sleep before reporting.
    let deadline = Instant::now() + SHORT;
    while host_processes_of(uid::CRASH).len() < 3 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    println!("pid={}", child.pid());
    println!("leaf={leaf}");
    std::io::stdout().flush().expect("flush");
    thread::sleep(Duration::from_secs(120));
    drop(child);
}

/// A runner may spawn a bot on one thread and supervise it from another
/// (`SandboxedChild` is `Send`; worker pools retire idle threads). The bot
/// must live until it is finished, not die when the spawning thread exits.
///
/// Guards against the parent-death signal firing early: the kernel sends it
/// when the *thread* that cloned the child exits, not the process
/// (prctl(2)), which is why every clone happens on the sandbox's own
/// spawner thread.
#[test]
fn bot_outlives_the_thread_that_spawned_it() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = sh(
        "sleep 1; echo alive",
        app.path(),
        uid::THREAD_EXIT,
        "hostile-thread-exit",
    );
    let mut child = thread::scope(|scope| {
        scope
            .spawn(|| spawn(&h.sandbox, &cmd))
            .join()
            .expect("spawning thread")
    });
    feed(&mut child, b"");
    let deadline = Instant::now() + SHORT;
    let mut streams = Streams::take(&mut child);
    assert!(streams.pump(deadline, |_| false), "no EOF");
    let verdict = exit_verdict(&mut child, deadline);
    let out = Output {
        stdout: streams.stdout(),
        stderr: streams.stderr(),
        verdict,
    };
    assert_eq!(
        out.verdict.code,
        Some(0),
        "the bot died with the thread that spawned it{out}"
    );
    assert_eq!(out.stdout, "alive\n", "{out}");
}

/// Sets the flag when dropped, so helper threads stop even if the test fails.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The runner is multi-threaded and creates threads while it spawns (this
/// test binary does too). Every spawn must still reach exec: the child
/// between clone and exec is a copy of one thread of the parent and may not
/// wait for any other. A runner process (this binary re-executed, running
/// [`churning_runner_for_the_thread_test`], so the churn cannot disturb the
/// other tests) has two threads create and join threads in a loop while it
/// spawns `/bin/true` for 3 seconds; every spawn must succeed.
///
/// Guards against glibc's `setgroups`, `setresgid` and `setresuid`: they go
/// through `__nptl_setxid` and wait for every thread glibc believes exists;
/// a thread that was mid-`pthread_create` at clone time never starts in the
/// child, which then hung as uid 0 until `SetupTimeout`. `child.rs` now makes
/// the raw system calls.
#[test]
fn spawn_succeeds_while_the_runner_creates_threads() {
    let _guard = ParentGuard::new(CHURN_PARENT);
    let _reaper = UidReaper(uid::THREAD_CHURN);
    let exe = std::env::current_exe().expect("test binary");
    let output = Command::new(exe)
        .args([
            "--exact",
            "churning_runner_for_the_thread_test",
            "--ignored",
            "--nocapture",
        ])
        .env(CHURN_ENV, "1")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("churning runner");
    let text = String::from_utf8_lossy(&output.stdout);
    let report = parse_values(&text);
    let value = |key: &str| {
        report
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("no {key}= from the churning runner: {text}"))
    };
    eprintln!(
        "thread churn: {} spawns while {} threads were created",
        value("spawned"),
        value("created")
    );
    assert_eq!(
        value("failure"),
        "none",
        "spawn #{} failed while the runner was creating threads",
        value("spawned").parse::<u64>().unwrap_or(0) + 1
    );
    assert!(output.status.success(), "{text}");
    assert_eq!(host_processes_of(uid::THREAD_CHURN), Vec::<String>::new());
}

/// Not a test on its own: the runner process of
/// [`spawn_succeeds_while_the_runner_creates_threads`], which runs it with
/// `--ignored` (so a plain run lists it as ignored, never as passed).
/// Reports `spawned=`, `created=`, `failure=`.
#[test]
#[ignore = "a helper process, run only by spawn_succeeds_while_the_runner_creates_threads"]
fn churning_runner_for_the_thread_test() {
    assert!(
        std::env::var_os(CHURN_ENV).is_some(),
        "run by the thread test, which sets {CHURN_ENV}"
    );
    let sandbox = new_sandbox(CHURN_PARENT, small_limits());
    let app = app_dir(None);
    let cmd = command("/bin/true", app.path(), uid::THREAD_CHURN, "churn");
    let stop = Arc::new(AtomicBool::new(false));
    let churners: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut created = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    thread::spawn(|| ()).join().expect("empty thread");
                    created += 1;
                }
                created
            })
        })
        .collect();
    let stopper = StopOnDrop(Arc::clone(&stop));

    let until = Instant::now() + Duration::from_secs(3);
    let mut spawned = 0;
    let mut failure = None;
    while Instant::now() < until {
        let started = Instant::now();
        match sandbox.spawn(&cmd) {
            Ok(mut child) => {
                child.stdin = None;
                child
                    .finish()
                    .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
                spawned += 1;
            }
            Err(e) => {
                failure = Some(format!("{} (after {:?})", chain(&e), started.elapsed()));
                break;
            }
        }
    }
    drop(stopper);
    let created: u64 = churners
        .into_iter()
        .map(|t| t.join().expect("churner"))
        .sum();
    println!("spawned={spawned}");
    println!("created={created}");
    println!("failure={}", failure.as_deref().unwrap_or("none"));
}

// ---------------------------------------------------------------------------
// 13. The init at pid 1: the bot's own end, orphans reaped, signals forwarded.
// ---------------------------------------------------------------------------

/// A bot that sends itself SIGSEGV, SIGABRT, SIGKILL or SIGTERM is reported
/// as killed by exactly that signal, as the same program is on the host.
///
/// Guards against the bot being pid 1 of its namespace, where the kernel
/// drops every signal a process of the namespace sends it (it ran on,
/// printed `survived` and exited 3).
#[test]
fn a_bot_that_signals_itself_dies_of_that_signal() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    for (name, signal) in [
        ("SIGSEGV", libc::SIGSEGV),
        ("SIGABRT", libc::SIGABRT),
        ("SIGKILL", libc::SIGKILL),
        ("SIGTERM", libc::SIGTERM),
    ] {
        let cmd = python(
            SELF_SIGNAL,
            app.path(),
            uid::SELF_SIGNAL,
            "hostile-self-signal",
        )
        .arg(name);
        let out = run(&h.sandbox, &cmd, b"", SHORT);
        assert_eq!(out.verdict.signal, Some(signal), "{name}{out}");
        assert_eq!(out.verdict.code, None, "{name}{out}");
        assert!(!out.verdict.oom_killed, "{name}{out}");
        assert!(!out.stdout.contains("survived"), "{name}{out}");

        let (stdout, status) =
            host_control(PYTHON, &["-c", SELF_SIGNAL, name], uid::SELF_SIGNAL_CONTROL);
        assert_eq!(
            status.signal(),
            Some(signal),
            "the host control of {name} ended otherwise: {status:?} {stdout:?}"
        );
    }
    assert_eq!(host_processes_of(uid::SELF_SIGNAL), Vec::<String>::new());
}

/// A hundred grandchildren that exit after their parent are orphans; the
/// sandbox's init reaps every one while the bot runs (the bot watches its
/// /proc empty out), and nothing of the uid is left once the sandbox ends.
///
/// Guards against the bot being pid 1: orphans were reparented to it and,
/// since a bot never waits for processes it did not start, stayed zombies.
#[test]
fn orphaned_grandchildren_are_reaped() {
    const GRANDCHILDREN: u32 = 100;
    let limits = Limits {
        // A hundred forked Pythons, besides the bot, its child and the init.
        pids: 256,
        memory_bytes: 512 * MIB,
        ..small_limits()
    };
    let h = hostile(limits);
    let app = app_dir(None);
    let cmd = python(ORPHANS, app.path(), uid::ORPHANS, "hostile-orphans")
        .arg(GRANDCHILDREN.to_string())
        .arg("10");
    let out = run(&h.sandbox, &cmd, b"", SHORT);

    assert_eq!(out.verdict.code, Some(0), "{out}");
    assert_eq!(out.value("forked"), GRANDCHILDREN.to_string(), "{out}");
    assert_eq!(out.value("zombies"), "0", "orphans left unreaped{out}");
    assert_eq!(out.value("left"), "0", "{out}");
    assert_eq!(
        host_processes_of(uid::ORPHANS),
        Vec::<String>::new(),
        "{out}"
    );
}

/// Signals sent to the sandbox reach the bot: one with handlers sees each
/// forwarded signal, and one that keeps the default disposition is killed
/// by the SIGTERM, with that verdict.
///
/// Guards against the bot being pid 1: a SIGTERM from the runner to a bot
/// without a handler was dropped by the kernel, and the bot ran on.
#[test]
fn signals_to_the_sandbox_are_forwarded_to_the_bot() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let forwarded = [
        ("SIGTERM", libc::SIGTERM),
        ("SIGINT", libc::SIGINT),
        ("SIGHUP", libc::SIGHUP),
        ("SIGQUIT", libc::SIGQUIT),
        ("SIGUSR1", libc::SIGUSR1),
        ("SIGUSR2", libc::SIGUSR2),
    ];
    let mut cmd = python(FORWARDED, app.path(), uid::FORWARD, "hostile-forward");
    for (name, _) in forwarded {
        cmd = cmd.arg(name);
    }
    let deadline = Instant::now() + SHORT;
    let mut child = spawn(&h.sandbox, &cmd);
    feed(&mut child, b"");
    let mut streams = Streams::take(&mut child);
    assert!(
        streams.pump(deadline, |out| out.contains("ready\n")),
        "the bot never got ready: {}{}",
        streams.stdout(),
        streams.stderr()
    );
    for (name, signal) in forwarded {
        child
            .signal(signal)
            .unwrap_or_else(|e| panic!("sending {name}: {e}"));
        let seen = format!("got={signal}\n");
        assert!(
            streams.pump(deadline, |out| out.contains(&seen)),
            "{name} did not reach the bot: {}{}",
            streams.stdout(),
            streams.stderr()
        );
    }
    assert!(streams.pump(deadline, |_| false), "the bot did not exit");
    let verdict = exit_verdict(&mut child, deadline);
    assert_eq!(verdict.code, Some(0), "{verdict:?} {}", streams.stderr());
    assert!(streams.stdout().contains("all\n"), "{}", streams.stdout());

    let sleeper = command(
        "/bin/sleep",
        app.path(),
        uid::FORWARD,
        "hostile-forward-dfl",
    )
    .arg("60");
    let mut child = spawn(&h.sandbox, &sleeper);
    feed(&mut child, b"");
    child.signal(libc::SIGTERM).expect("sending SIGTERM");
    let verdict = exit_verdict(&mut child, Instant::now() + SHORT);
    assert_eq!(verdict.signal, Some(libc::SIGTERM), "{verdict:?}");
    assert_eq!(verdict.code, None, "{verdict:?}");
    assert_eq!(host_processes_of(uid::FORWARD), Vec::<String>::new());
}

/// An OOM-kill counter that cannot be read makes the verdict an error,
/// never "not OOM-killed": a memory kill must not pass for a crash. The
/// counter is hidden from one thread only: that thread moves to a mount
/// namespace of its own and binds an empty file over the leaf's counter, so
/// nothing changes on the host and the mount ends with the thread.
///
/// Guards against the verdict reading an unreadable counter as 0.
#[test]
fn an_unreadable_oom_counter_is_an_error() {
    let h = hostile(small_limits());
    let app = app_dir(None);
    let label = "hostile-oom-counter";
    let cmd = command("/bin/true", app.path(), uid::OOM_COUNTER, label);
    let mut child = spawn(&h.sandbox, &cmd);
    feed(&mut child, b"");
    let memory = leaf_dir_in(PARENT, label, "memory");
    // cgroup v1 and hybrid hosts count in memory.oom_control, v2 in memory.events.
    let counter = ["memory.oom_control", "memory.events"]
        .iter()
        .map(|name| memory.join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("no OOM counter in {}", memory.display()));

    let hidden = thread::scope(|scope| {
        scope
            .spawn(|| {
                hide_from_this_thread(&counter);
                let deadline = Instant::now() + SHORT;
                loop {
                    match child.try_wait() {
                        Ok(None) if Instant::now() < deadline => {
                            thread::sleep(Duration::from_millis(2))
                        }
                        other => return other,
                    }
                }
            })
            .join()
            .expect("the hiding thread")
    });
    match hidden {
        Err(WaitError::OomCounter(_)) => {}
        other => panic!("an unreadable OOM counter gave {other:?}"),
    }
    // Seen from the host's mount namespace the counter is fine again.
    let verdict = child
        .finish()
        .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
    assert_eq!(verdict.code, Some(0), "{verdict:?}");
    assert!(!verdict.oom_killed, "{verdict:?}");
}

/// Moves the calling thread into a mount namespace of its own, with every
/// mount private, so nothing it mounts propagates back to the host.
fn private_mounts_for_this_thread() {
    // SAFETY: unshare affects only this thread (CLONE_NEWNS implies CLONE_FS,
    // which a thread may unshare); the mount takes valid C strings.
    unsafe {
        assert_eq!(
            libc::unshare(libc::CLONE_NEWNS),
            0,
            "unshare: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ),
            0,
            "making this thread's mounts private: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Moves the calling thread into a mount namespace of its own (no mount
/// event propagates back to the host) and binds `/dev/null` over `path`.
fn hide_from_this_thread(path: &Path) {
    let target = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL");
    private_mounts_for_this_thread();
    // SAFETY: the mount takes valid C strings and affects only this
    // thread's own mount namespace.
    unsafe {
        assert_eq!(
            libc::mount(
                c"/dev/null".as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ),
            0,
            "binding /dev/null over {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
    }
}

// ---------------------------------------------------------------------------
// Measurement.
// ---------------------------------------------------------------------------

/// Spawn-to-exit time of a confined `/bin/true` against a plain one, median
/// of 50 (printed, not asserted: other tests run at the same time).
#[test]
fn spawn_latency_of_true() {
    const RUNS: usize = 50;
    let h = hostile(small_limits());
    let app = app_dir(None);
    let cmd = command("/bin/true", app.path(), uid::LATENCY, "hostile-latency");
    let mut to_exit = Vec::with_capacity(RUNS);
    let mut with_teardown = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let mut child = spawn(&h.sandbox, &cmd);
        child.stdin = None;
        let verdict = child.wait().expect("wait");
        to_exit.push(started.elapsed());
        child
            .finish()
            .unwrap_or_else(|e| panic!("finish: {}", chain(&e)));
        with_teardown.push(started.elapsed());
        assert_eq!(verdict.code, Some(0), "{verdict:?}");
    }
    let mut plain = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let status = Command::new("/bin/true").status().expect("/bin/true");
        plain.push(started.elapsed());
        assert!(status.success());
    }
    eprintln!(
        "spawn latency, median of {RUNS}: confined /bin/true spawn-to-exit {:?} \
         (with finish() teardown {:?}); plain std::process::Command {:?}",
        median(to_exit),
        median(with_teardown),
        median(plain)
    );
}
