//! The `arena` binary and the processes the tests run from it: coordinators,
//! workers and `arena tournament` commands, plus gRPC clients for what the
//! command line does not show (the Admin `Matches` call, raw auth checks).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use arena_proto::v1::RegisterRequest;
use arena_proto::v1::admin_client::AdminClient;
use arena_proto::v1::worker_client::WorkerClient;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use super::bots::Gate;
use super::cgroups::CgroupParent;
use super::process::{Proc, output};
use super::redis::RedisServer;

pub const WORKER_TOKEN: &str = "e2e-worker-token";
pub const ADMIN_TOKEN: &str = "e2e-admin-token";

/// How long a process may take to print its readiness line (a debug build
/// on a loaded 2-core machine).
pub const STARTUP: Duration = Duration::from_secs(30);

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e crate sits in the workspace")
        .to_owned()
}

/// The `arena` binary, built once per test process.
///
/// `CARGO_BIN_EXE_arena` only exists for the tests of `arena-cli` itself,
/// and Cargo does not build the binaries of (dev-)dependencies without the
/// unstable artifact dependencies, so this runs
/// `cargo build -p arena-cli --bin arena` in the tests' own target directory
/// and profile (both read off this test executable's path) and takes the
/// executable's path from Cargo's JSON messages. Cargo does not hold the
/// build lock while tests run, so the nested build does not deadlock; when
/// the binary is current it takes well under a second. `ARENA_E2E_BIN`
/// points the tests at another binary instead.
pub fn arena_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("ARENA_E2E_BIN") {
        Some(path) => PathBuf::from(path),
        None => build_arena(),
    })
}

fn build_arena() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    // <target>[/<triple>]/<profile>/deps/<test executable>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executables live in <target>/<profile>/deps");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a profile directory name");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(cargo);
    command.current_dir(workspace()).args([
        "build",
        "-p",
        "arena-cli",
        "--bin",
        "arena",
        "--message-format=json-render-diagnostics",
    ]);
    match profile {
        // `cargo test` builds with the test profile, which inherits dev's
        // output directory.
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    let is_target = |dir: &Path| dir.join("CACHEDIR.TAG").is_file();
    if let Some(parent) = profile_dir.parent() {
        if is_target(parent) {
            command.arg("--target-dir").arg(parent);
        } else if let Some(grandparent) = parent.parent().filter(|d| is_target(d)) {
            command
                .arg("--target-dir")
                .arg(grandparent)
                .arg("--target")
                .arg(parent.file_name().expect("a target triple"));
        }
    }
    let started = Instant::now();
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "arena")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("{command:?} named no `arena` executable"));
    eprintln!("e2e: built {} in {:.1?}", path.display(), started.elapsed());
    path
}

pub fn arena() -> Command {
    Command::new(arena_bin())
}

/// `arena coordinator` on Redis, with the test tokens.
pub struct Coordinator {
    pub process: Proc,
    pub addr: SocketAddr,
}

impl Coordinator {
    /// Starts one listening on `listen` (`127.0.0.1:0` for any free port)
    /// and waits for its `listening on ADDR` line.
    pub fn start(redis: &RedisServer, listen: &str, lease_ttl_s: u64) -> Coordinator {
        Coordinator::start_with(redis, listen, lease_ttl_s, &[])
    }

    /// [`Coordinator::start`] with more `arena coordinator` flags.
    pub fn start_with(
        redis: &RedisServer,
        listen: &str,
        lease_ttl_s: u64,
        flags: &[&str],
    ) -> Coordinator {
        let mut command = arena();
        command
            .args(["coordinator", "--listen", listen, "--redis"])
            .arg(redis.url())
            .args(["--worker-token", WORKER_TOKEN, "--admin-token", ADMIN_TOKEN])
            .args(["--lease-ttl", &lease_ttl_s.to_string()])
            .arg("--blobs")
            .arg(redis.blob_dir())
            .args(flags);
        let process = Proc::spawn("coordinator", command);
        let line = process.wait_for_stdout("its listening line", STARTUP, |l| {
            l.starts_with("listening on ")
        });
        let addr = line["listening on ".len()..]
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{line:?} names no socket address: {e}"));
        Coordinator { process, addr }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address a coordinator started with `--http` serves its pages
    /// on, from the line it prints (the one with `http` and a socket
    /// address in it).
    pub fn web_address(&self) -> SocketAddr {
        let parse = |line: &str| {
            line.split_whitespace()
                .map(|word| word.trim_start_matches("http://").trim_end_matches('/'))
                .find_map(|word| word.parse::<SocketAddr>().ok())
        };
        let line = self
            .process
            .wait_for_stdout("the web listener's address", STARTUP, |line| {
                line.to_ascii_lowercase().contains("http") && parse(line).is_some()
            });
        parse(&line).unwrap_or_else(|| panic!("{line:?} names no address"))
    }
}

/// What a worker says it did when it drains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub played: u64,
    pub accepted: u64,
    pub dropped: u64,
    pub failed: u64,
    /// Matches stopped unreported because their lease was lost.
    pub abandoned: u64,
}

impl Summary {
    /// Parses `arena worker: played 3, accepted 3, dropped 0, failed 0, abandoned 0`.
    fn parse(line: &str) -> Option<Summary> {
        let mut fields = line
            .strip_prefix("arena worker: ")?
            .split(", ")
            .map(|field| field.split_once(' '));
        let mut next = |key: &str| -> Option<u64> {
            let (name, value) = fields.next()??;
            if name == key {
                value.parse().ok()
            } else {
                None
            }
        };
        Some(Summary {
            played: next("played")?,
            accepted: next("accepted")?,
            dropped: next("dropped")?,
            failed: next("failed")?,
            abandoned: next("abandoned")?,
        })
    }
}

/// `arena worker`, with a private submissions dir and build cache, and
/// (when sandboxed) a cgroup parent of its own.
pub struct Worker {
    pub process: Proc,
    pub id: String,
    cgroup: Option<CgroupParent>,
    dir: tempfile::TempDir,
}

impl Worker {
    /// Starts worker `id` against `coordinator_url`; bots run in the sandbox
    /// under a fresh cgroup parent when `sandboxed`, as plain processes
    /// (`--no-sandbox`) otherwise.
    pub fn start(id: &str, coordinator_url: &str, sandboxed: bool) -> Worker {
        let sandbox = sandboxed.then_some(&[][..]);
        Worker::spawn(id, coordinator_url, sandbox)
    }

    /// A sandboxed worker whose bots see `gate`: its directory is bound
    /// read-only into every sandbox (`--env-path`).
    pub fn start_gated(id: &str, coordinator_url: &str, gate: &Gate) -> Worker {
        Worker::spawn(id, coordinator_url, Some(&[gate.dir()]))
    }

    /// A sandboxed worker whose bots see `gate`, started in the cgroup
    /// parent of `predecessor` (a sandboxed worker that was killed), as a
    /// worker restarted on the same host would be; it takes over the
    /// parent's guard.
    pub fn replace_gated(
        predecessor: &mut Worker,
        id: &str,
        coordinator_url: &str,
        gate: &Gate,
    ) -> Worker {
        assert!(
            predecessor.process.try_exit().is_some(),
            "{} still runs",
            predecessor.process.label()
        );
        let parent = predecessor
            .cgroup
            .take()
            .expect("the predecessor was sandboxed");
        Worker::spawn_in(id, coordinator_url, Some((&[gate.dir()], Some(parent))))
    }

    /// Sandboxed with `env_paths` bound in when `sandbox` is given.
    fn spawn(id: &str, coordinator_url: &str, sandbox: Option<&[&Path]>) -> Worker {
        Worker::spawn_in(id, coordinator_url, sandbox.map(|paths| (paths, None)))
    }

    /// Sandboxed with `env_paths` bound in, under `parent` or a fresh
    /// cgroup parent, when `sandbox` is given.
    fn spawn_in(
        id: &str,
        coordinator_url: &str,
        sandbox: Option<(&[&Path], Option<CgroupParent>)>,
    ) -> Worker {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = tempfile::Builder::new()
            .prefix(&format!("arena-e2e-{id}-"))
            .tempdir()
            .expect("worker temp dir");
        let mut command = arena();
        command
            .args(["worker", "--coordinator", coordinator_url])
            .args(["--token", WORKER_TOKEN, "--id", id])
            .arg("--submissions-dir")
            .arg(dir.path().join("submissions"))
            .arg("--cache-dir")
            .arg(dir.path().join("builds"));
        let cgroup = match sandbox {
            Some((env_paths, parent)) => {
                let parent = parent.unwrap_or_else(|| {
                    CgroupParent::new(format!(
                        "arena-e2e-{}-{}",
                        std::process::id(),
                        NEXT.fetch_add(1, Ordering::Relaxed)
                    ))
                });
                command.args(["--cgroup-parent", parent.name()]);
                for path in env_paths {
                    command.arg("--env-path").arg(path);
                }
                Some(parent)
            }
            None => {
                command.arg("--no-sandbox");
                None
            }
        };
        Worker {
            process: Proc::spawn(format!("worker {id}"), command),
            id: id.to_owned(),
            cgroup,
            dir,
        }
    }

    /// A sandboxed worker's cgroup parent.
    pub fn cgroup(&self) -> Option<&CgroupParent> {
        self.cgroup.as_ref()
    }

    /// SIGTERM: the worker finishes what it is playing, leases nothing more
    /// and exits with its summary; a sandboxed one removes its (empty)
    /// cgroup parent on the way out.
    pub fn drain(&mut self) -> Summary {
        self.process.terminate(Duration::from_secs(60));
        let line = self.process.wait_for_stderr("its summary", STARTUP, |l| {
            l.starts_with("arena worker: played ")
        });
        let summary =
            Summary::parse(&line).unwrap_or_else(|| panic!("unreadable summary {line:?}"));
        if let Some(cgroup) = &self.cgroup {
            assert!(
                !cgroup.exists(),
                "{} left its cgroup parent {} behind",
                self.process.label(),
                cgroup.name()
            );
        }
        summary
    }

    /// This worker's bot processes: those in its cgroup leaves when
    /// sandboxed; those whose working directory is in its directory
    /// otherwise (plain-process bots run in their unpacked submission).
    pub fn bot_processes(&self) -> Vec<i32> {
        if let Some(cgroup) = &self.cgroup {
            return cgroup.pids();
        }
        let Ok(root) = self.dir.path().canonicalize() else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .is_ok_and(|cwd| cwd.starts_with(&root))
            })
            .collect()
    }

    /// Bots running now: sandboxes with a process in them (a sandbox may
    /// hold an init beside its bot), or plain bot processes.
    pub fn running_bots(&self) -> usize {
        match &self.cgroup {
            Some(cgroup) => cgroup.busy_leaves(),
            None => self.bot_processes().len(),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.process.kill();
        // Bots die with their runner (parent-death signal); anything still
        // running in this worker's directory after a grace period is a bot
        // this worker started, and is killed so nothing outlives the test.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let bots = self.bot_processes();
            if bots.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                for pid in bots {
                    eprintln!("e2e: killing leftover bot {pid} of {}", self.id);
                    // SAFETY: kill(2); the pid runs in this worker's private temp dir.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Then the cgroup parent (its own Drop) and the directory go.
    }
}

/// Runs `arena tournament --coordinator URL --token ADMIN <args>` and
/// returns its stdout; panics with its stderr if it fails.
pub fn tournament(coordinator_url: &str, args: &[&str]) -> String {
    let mut command = arena();
    command
        .args(["tournament", "--coordinator", coordinator_url])
        .args(["--token", ADMIN_TOKEN])
        .args(args);
    output(command)
}

/// `arena tournament create FILE`: the new tournament's id.
pub fn create_tournament(coordinator_url: &str, file: &str) -> String {
    tournament(coordinator_url, &["create", file])
        .trim()
        .to_owned()
}

/// `authorization: Bearer <token>` on every call, or nothing.
#[derive(Clone)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl Bearer {
    pub fn new(token: Option<&str>) -> Bearer {
        Bearer(
            token.map(|t| MetadataValue::try_from(format!("Bearer {t}")).expect("an ASCII token")),
        )
    }

    /// `authorization: <value>` verbatim.
    pub fn header(value: &str) -> Bearer {
        Bearer(Some(
            MetadataValue::try_from(value).expect("an ASCII header value"),
        ))
    }
}

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

pub type Admin = AdminClient<InterceptedService<Channel, Bearer>>;
pub type WorkerRpc = WorkerClient<InterceptedService<Channel, Bearer>>;

pub async fn channel(url: &str) -> Channel {
    Endpoint::from_shared(url.to_owned())
        .expect("a coordinator URL")
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// An Admin client presenting `token` (none when `None`).
pub async fn admin(url: &str, token: Option<&str>) -> Admin {
    AdminClient::with_interceptor(channel(url).await, Bearer::new(token))
}

/// A Worker-service client presenting `token` (none when `None`).
pub async fn worker_rpc(url: &str, token: Option<&str>) -> WorkerRpc {
    WorkerClient::with_interceptor(channel(url).await, Bearer::new(token))
}

/// `Register` for a probe worker `worker_id`: one core, 512 MB.
pub fn register_request(worker_id: &str) -> RegisterRequest {
    RegisterRequest {
        worker_id: worker_id.to_owned(),
        cores: 1,
        memory_mb: 512,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::Summary;

    #[test]
    fn summaries_parse() {
        assert_eq!(
            Summary::parse("arena worker: played 3, accepted 2, dropped 1, failed 0, abandoned 4"),
            Some(Summary {
                played: 3,
                accepted: 2,
                dropped: 1,
                failed: 0,
                abandoned: 4,
            })
        );
        assert_eq!(Summary::parse("arena worker: draining"), None);
    }
}
