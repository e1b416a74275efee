//! What a caller describes: the sandbox's long-lived policy
//! ([`SandboxConfig`], [`Limits`]), one program to run ([`SandboxCommand`]),
//! where things appear inside, and the command's encoding as an [`Order`].

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::cgroup::CpuQuota;
use crate::env::RuntimeEnv;
use crate::error::SandboxError;
use crate::ready::{NulInCommand, Order};

/// Where the program's directory appears inside the sandbox.
pub const APP_MOUNT: &str = "/bot";

/// The limits every confined process gets.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Hard memory cap, swap included (no swap beyond it).
    pub memory_bytes: u64,
    /// Most processes and threads alive at once.
    pub pids: u64,
    /// Size of the private `/tmp` (and `/dev/shm`).
    pub tmp_bytes: u64,
    /// Open file descriptors (RLIMIT_NOFILE).
    pub open_files: u64,
    /// Largest file it may write (RLIMIT_FSIZE).
    pub file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 2 << 30,
            pids: 256,
            tmp_bytes: 256 << 20,
            open_files: 1024,
            file_bytes: 512 << 20,
        }
    }
}

/// Long-lived policy: one per runner process.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    pub limits: Limits,
    pub env: RuntimeEnv,
    /// The cgroup under which every leaf is made (e.g. `arena`).
    pub cgroup_parent: String,
    /// Host directory the child mounts its root on (never mounted on the host side).
    pub root_dir: PathBuf,
    /// Programs of the platform itself that run in the sandbox on a bot's
    /// behalf (the WebAssembly host), each bound read-only at
    /// [`platform_path_inside`] (its own path may be under a directory the
    /// sandbox replaces, such as `/tmp`). Unlike the environment they are
    /// not what bots build against, so they are not part of its id.
    pub platform_paths: Vec<PathBuf>,
    /// Keep a cgroup leaf made ahead for the limits of each recent spawn
    /// (up to [`SPARES`](super::SPARES)), with a confined process started ahead in it
    /// (see [`crate::ready`]), so the next spawn with the same limits skips
    /// the leaf (the costliest step on cgroup v1), the clone and the part of
    /// the confinement that does not depend on the command. For long-lived
    /// runners: each spare is one idle process beside the bots' while the
    /// sandbox lives.
    pub spare_leaf: bool,
}

/// Where platform programs appear inside the sandbox.
pub const PLATFORM_DIR: &str = "/.arena/platform";

/// Where the platform program at host path `host` appears inside.
pub fn platform_path_inside(host: &Path) -> PathBuf {
    let name = host
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "program".into());
    Path::new(PLATFORM_DIR).join(name)
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            env: RuntimeEnv::host_default(),
            cgroup_parent: "arena".to_owned(),
            root_dir: PathBuf::from("/run/arena-sandbox/root"),
            platform_paths: Vec::new(),
            spare_leaf: false,
        }
    }
}

/// One program to run confined.
#[derive(Clone, Debug)]
pub struct SandboxCommand {
    /// Path of the program inside the sandbox.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The whole environment of the program (nothing is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// Host directory shown at [`APP_MOUNT`]; the program starts there.
    pub app_dir: PathBuf,
    /// Whether the program may write into it (builds).
    pub app_writable: bool,
    /// Unprivileged identity (distinct per concurrent slot).
    pub uid: u32,
    pub gid: u32,
    /// Cores the process may run on.
    pub cpus: Vec<usize>,
    /// CPU bandwidth cap for the whole process tree (from its core lease), if any.
    pub cpu_quota: Option<CpuQuota>,
    /// Suffix of the cgroup leaf's name, for people reading cgroupfs.
    pub label: String,
}

impl SandboxCommand {
    /// A command for `program` run in `app_dir` as `uid`/`gid`.
    pub fn new(program: impl Into<PathBuf>, app_dir: impl Into<PathBuf>, uid: u32) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            app_dir: app_dir.into(),
            app_writable: false,
            uid,
            gid: uid,
            cpus: Vec::new(),
            cpu_quota: None,
            label: "proc".to_owned(),
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn writable(mut self, writable: bool) -> Self {
        self.app_writable = writable;
        self
    }

    pub fn cpus(mut self, cpus: Vec<usize>) -> Self {
        self.cpus = cpus;
        self
    }

    pub fn cpu_quota(mut self, quota: Option<CpuQuota>) -> Self {
        self.cpu_quota = quota;
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }
}

/// How many spawns started cold and how many in a process started ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpawnCounts {
    pub cold: u64,
    pub prestarted: u64,
}

/// The command as an order: sent as it is to a process started ahead, read
/// back by a cold spawn.
pub(super) fn order_of(command: &SandboxCommand) -> Result<Order, SandboxError> {
    let args: Vec<&[u8]> = std::iter::once(command.program.as_os_str())
        .chain(command.args.iter().map(|a| a.as_os_str()))
        .map(|a| a.as_bytes())
        .collect();
    let env: Vec<(&[u8], &[u8])> = command
        .env
        .iter()
        .map(|(k, v)| (k.as_bytes(), v.as_bytes()))
        .collect();
    Order::encode(
        command.app_dir.as_os_str().as_bytes(),
        command.app_writable,
        command.uid,
        command.gid,
        command.program.as_os_str().as_bytes(),
        &args,
        &env,
    )
    .map_err(|NulInCommand { what }| SandboxError::Nul { what })
}
