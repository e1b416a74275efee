//! A long-lived sandbox keeps cgroup leaves made ahead, each with a
//! confined process started ahead in it. The next spawn with the same
//! limits takes one; a spawn that uses one must be exactly as confined as a
//! cold one, run exactly its own command, and leave nothing of the runner's
//! open in the waiting process; nothing is left once the sandbox is gone.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use arena_sandbox::child::Stage;
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{
    RuntimeEnv, Sandbox, SandboxCommand, SandboxConfig, SandboxError, SandboxedChild,
};

/// Removes the test's cgroup parent from every hierarchy, also when the
/// test fails (the sandbox, dropped first, has removed its leaves).
struct ParentGuard(String);

impl Drop for ParentGuard {
    fn drop(&mut self) {
        let Ok(mounts) = std::fs::read_dir("/sys/fs/cgroup") else {
            return;
        };
        for mount in mounts.flatten() {
            let _ = std::fs::remove_dir(mount.path().join(&self.0));
        }
        let _ = std::fs::remove_dir(Path::new("/sys/fs/cgroup").join(&self.0));
    }
}

fn long_lived(parent: &str) -> Sandbox {
    Sandbox::new(SandboxConfig {
        cgroup_parent: parent.to_owned(),
        spare_leaf: true,
        ..SandboxConfig::default()
    })
    .expect("the sandbox needs root and cgroups")
}

/// Waits until `count` processes started ahead are waiting.
fn wait_for_ready(sandbox: &Sandbox, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while sandbox.ready_processes() != count {
        assert!(
            Instant::now() < deadline,
            "{} processes started ahead, not {count}",
            sandbox.ready_processes()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn app_dir(marker: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join("marker"), marker).unwrap();
    dir
}

/// Everything the bot saw that confinement decides, one `key=value` a line.
const REPORT: &str = r#"
echo "args=$#:$1:$2"
echo "marker=$(cat /bot/marker)"
echo "secret=${SECRET-unset}"
echo "only=${ONLY_HERE-unset}"
echo "ids=$(id -u):$(id -g)"
echo "pid=$$"
echo "host=$(cat /proc/sys/kernel/hostname)"
echo "caps=$(grep CapEff /proc/self/status | tr -d '\t')"
echo "bnd=$(grep CapBnd /proc/self/status | tr -d '\t')"
echo "nnp=$(grep NoNewPrivs /proc/self/status | tr -d '\t')"
echo "seccomp=$(grep '^Seccomp:' /proc/self/status | tr -d '\t')"
echo "fds=$(ls /proc/self/fd | tr '\n' ' ')"
if touch /bot/written 2>/dev/null; then echo "bot=writable"; else echo "bot=read-only"; fi
echo "tmp=$(ls -A /tmp | wc -l)"
echo "net=$(ls /sys/class/net 2>/dev/null | tr '\n' ' ')"
"#;

fn run_to_end(mut child: SandboxedChild) -> (String, Option<i32>) {
    let mut out = String::new();
    let stdout = child.stdout.take().unwrap();
    std::fs::File::from(stdout)
        .read_to_string(&mut out)
        .unwrap();
    let verdict = child.wait().unwrap();
    (out, verdict.code)
}

fn value<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

fn report_command(app: &Path, uid: u32, cpus: Vec<usize>) -> SandboxCommand {
    SandboxCommand::new("/bin/sh", app, uid)
        .arg("-c")
        .arg(REPORT)
        .arg("report")
        .arg("first")
        .arg("second word")
        .env("PATH", RuntimeEnv::host_default().search_path())
        .cpus(cpus)
        .label("ready")
}

#[test]
fn a_process_started_ahead_runs_exactly_the_next_command_fully_confined() {
    let parent = format!("arena-ready-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = long_lived(&parent);
    let cores = CoreAllocator::available().unwrap();

    // Cold: nothing was started ahead yet.
    let first_app = app_dir("first");
    assert_eq!(sandbox.ready_processes(), 0);
    let cold = report_command(first_app.path(), 65_534, vec![cores[0]]).env("SECRET", "cold");
    let (cold_out, code) = run_to_end(sandbox.spawn(&cold).unwrap());
    assert_eq!(code, Some(0), "{cold_out}");

    // Another directory, identity, environment and writability, through
    // the process started ahead for these limits.
    wait_for_ready(&sandbox, 1);
    let second_app = app_dir("second");
    std::os::unix::fs::chown(second_app.path(), Some(60_123), Some(60_123)).unwrap();
    let mut warm = report_command(second_app.path(), 60_123, vec![cores[0]])
        .env("ONLY_HERE", "yes")
        .writable(true);
    warm.gid = 60_124;
    let (warm_out, code) = run_to_end(sandbox.spawn(&warm).unwrap());
    assert_eq!(code, Some(0), "{warm_out}");
    let counts = sandbox.spawn_counts();
    assert_eq!(
        (counts.cold, counts.prestarted),
        (1, 1),
        "the waiting process was used"
    );

    assert_eq!(value(&warm_out, "args"), "2:first:second word");
    assert_eq!(value(&warm_out, "marker"), "second");
    assert_eq!(value(&warm_out, "secret"), "unset", "{warm_out}");
    assert_eq!(value(&warm_out, "only"), "yes");
    assert_eq!(value(&warm_out, "ids"), "60123:60124");
    assert_eq!(value(&warm_out, "bot"), "writable");
    assert!(second_app.path().join("written").exists());
    assert_eq!(value(&cold_out, "bot"), "read-only");
    assert!(!first_app.path().join("written").exists());
    assert_eq!(value(&cold_out, "ids"), "65534:65534");
    // Whatever confinement does not depend on the command is the same.
    for key in [
        "pid", "host", "caps", "bnd", "nnp", "seccomp", "tmp", "net", "fds",
    ] {
        assert_eq!(
            value(&warm_out, key),
            value(&cold_out, key),
            "{key}: cold\n{cold_out}\nwarm\n{warm_out}"
        );
    }
    assert_eq!(value(&warm_out, "caps"), "CapEff:0000000000000000");
    assert_eq!(value(&warm_out, "nnp"), "NoNewPrivs:1");

    // A match after the build: read-only again, nothing of the build left.
    wait_for_ready(&sandbox, 1);
    let (again, code) = run_to_end(
        sandbox
            .spawn(&report_command(first_app.path(), 65_534, vec![cores[0]]))
            .unwrap(),
    );
    assert_eq!(code, Some(0), "{again}");
    assert_eq!(value(&again, "marker"), "first");
    assert_eq!(value(&again, "bot"), "read-only");
    assert_eq!(value(&again, "tmp"), "0");
    assert_eq!(sandbox.spawn_counts().prestarted, 2);

    assert!(sandbox.remove_parent_if_empty().unwrap());
    assert_eq!(sandbox.ready_processes(), 0);
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fresh descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both are fresh and ours.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

#[test]
fn a_waiting_process_keeps_none_of_the_runners_descriptors_open() {
    let parent = format!("arena-ready-fds-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = long_lived(&parent);
    let cores = CoreAllocator::available().unwrap();
    let app = app_dir("fds");

    // Open before the process started ahead is cloned, so it gets a copy.
    let (read_end, write_end) = pipe();
    let command = SandboxCommand::new("/bin/true", app.path(), 65_534)
        .env("PATH", RuntimeEnv::host_default().search_path())
        .cpus(vec![cores[0]])
        .label("fds");
    let mut child = sandbox.spawn(&command).unwrap();
    assert_eq!(child.wait().unwrap().code, Some(0));
    drop(child);
    wait_for_ready(&sandbox, 1);

    // The runner closes its write end: the reader must see EOF at once,
    // which it would not if the waiting process still held a copy.
    drop(write_end);
    let mut poll = libc::pollfd {
        fd: read_end.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut poll, 1, 2_000) };
    assert_eq!(ready, 1, "no EOF: a copy of the write end is still open");
    assert_ne!(poll.revents & libc::POLLHUP, 0);

    assert!(sandbox.remove_parent_if_empty().unwrap());
}

#[test]
fn a_failing_command_uses_up_the_waiting_process_and_the_next_spawn_still_works() {
    let parent = format!("arena-ready-fail-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = long_lived(&parent);
    let cores = CoreAllocator::available().unwrap();
    let app = app_dir("fail");
    let command = |program: &str, dir: &Path| {
        SandboxCommand::new(program, dir, 65_534)
            .env("PATH", RuntimeEnv::host_default().search_path())
            .cpus(vec![cores[0]])
            .label("fail")
    };
    let mut child = sandbox.spawn(&command("/bin/true", app.path())).unwrap();
    assert_eq!(child.wait().unwrap().code, Some(0));
    drop(child);

    // A program that does not exist: the exec stage fails, as it would cold.
    let failed_at = |command: &SandboxCommand, stage: Stage| {
        wait_for_ready(&sandbox, 1);
        match sandbox.spawn(command) {
            Err(SandboxError::Child { stage: at, .. }) if at == stage => {}
            Err(other) => panic!("failed otherwise than at {stage:?}: {other:?}"),
            Ok(_) => panic!("spawned, though it should fail at {stage:?}"),
        }
    };
    failed_at(&command("/no/such/program", app.path()), Stage::Exec);
    // A directory that does not exist: binding it fails.
    failed_at(
        &command("/bin/true", Path::new("/no/such/dir")),
        Stage::BindProgramDir,
    );

    // A NUL byte never reaches the process, which stays ready.
    wait_for_ready(&sandbox, 1);
    let error = sandbox
        .spawn(&command("/bin/true", app.path()).arg("a\0b"))
        .err()
        .expect("a NUL byte");
    assert!(matches!(error, SandboxError::Nul { .. }), "{error:?}");
    assert_eq!(sandbox.ready_processes(), 1);

    let mut child = sandbox.spawn(&command("/bin/true", app.path())).unwrap();
    assert_eq!(child.wait().unwrap().code, Some(0));
    drop(child);
    // Every spawn after the first was ordered, the failed ones included.
    let counts = sandbox.spawn_counts();
    assert_eq!((counts.cold, counts.prestarted), (1, 3));
    assert!(sandbox.remove_parent_if_empty().unwrap());
}

#[test]
fn spares_are_kept_per_limits_and_none_outlives_the_sandbox() {
    let parent = format!("arena-ready-limits-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = long_lived(&parent);
    let cores = CoreAllocator::available().unwrap();
    let app = app_dir("limits");
    let command = |core: usize| {
        SandboxCommand::new("/bin/true", app.path(), 65_534)
            .env("PATH", RuntimeEnv::host_default().search_path())
            .cpus(vec![core])
            .label("limits")
    };
    let mut pids = Vec::new();
    // Two seats on two cores (one core twice on a one-core machine).
    let seats = [cores[0], *cores.last().unwrap()];
    let distinct = if seats[0] == seats[1] { 1 } else { 2 };
    for _ in 0..3 {
        for core in seats {
            let mut child = sandbox.spawn(&command(core)).unwrap();
            pids.push(child.pid());
            assert_eq!(child.wait().unwrap().code, Some(0));
        }
    }
    wait_for_ready(&sandbox, distinct);
    assert_eq!(leaves(&parent).len(), distinct, "{:?}", leaves(&parent));
    drop(sandbox);
    // Every init is reaped, and every leaf (so every waiting process) gone.
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "pid {pid}");
    }
    assert!(leaves(&parent).is_empty(), "{:?}", leaves(&parent));
}

/// Leaf directories under `parent` in the pids hierarchy (v1 here; the
/// unified mount's on v2 hosts).
fn leaves(parent: &str) -> Vec<std::path::PathBuf> {
    let roots = [
        Path::new("/sys/fs/cgroup/pids").join(parent),
        Path::new("/sys/fs/cgroup").join(parent),
    ];
    let Some(root) = roots.iter().find(|r| r.is_dir()) else {
        return Vec::new();
    };
    std::fs::read_dir(root)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_next_spawn_takes_the_leaf_made_ahead_and_none_outlives_the_sandbox() {
    let parent = format!("arena-spare-test-{}", std::process::id());
    let _guard = ParentGuard(parent.clone());
    let sandbox = long_lived(&parent);
    let app = app_dir("spare");
    let cores = CoreAllocator::available().unwrap();
    let command = SandboxCommand::new("/bin/true", app.path(), 65_534)
        .env("PATH", RuntimeEnv::host_default().search_path())
        .cpus(vec![cores[0]])
        .label("bot");

    let mut first = sandbox.spawn(&command).unwrap();
    assert_eq!(first.wait().unwrap().code, Some(0));
    drop(first);
    // Made on the spawner's thread once the spawn has been answered.
    let waited = Instant::now();
    while leaves(&parent).is_empty() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let ahead = leaves(&parent);
    assert_eq!(ahead.len(), 1, "one leaf made ahead: {ahead:?}");
    assert!(ahead[0].to_string_lossy().ends_with("-spare"), "{ahead:?}");

    // Same limits: the spawn runs in the leaf made ahead.
    let mut second = sandbox.spawn(&command).unwrap();
    let during = leaves(&parent);
    assert!(during.contains(&ahead[0]), "{during:?}");
    let verdict = second.wait().unwrap();
    assert_eq!(verdict.code, Some(0), "{verdict:?}");
    drop(second);

    // Other limits: a fresh leaf (and a spare for those limits too).
    let other = command.clone().cpus(vec![*cores.last().unwrap()]);
    let mut third = sandbox.spawn(&other).unwrap();
    let verdict = third.wait().unwrap();
    assert_eq!(verdict.code, Some(0), "{verdict:?}");
    drop(third);

    assert!(
        sandbox.remove_parent_if_empty().unwrap(),
        "{:?}",
        leaves(&parent)
    );
    drop(sandbox);
    assert!(leaves(&parent).is_empty());
}
