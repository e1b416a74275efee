//! The parent side: prepare everything, clone into new namespaces, wait for
//! the child's report, and hand back a [`SandboxedChild`].

use std::ffi::{CString, OsString, c_char};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::cgroup::{CgroupError, CgroupLimits, CgroupManager, CgroupSetup, CpuQuota, LeafCgroup};
use crate::child::{self, ChildSetup, Stage};
use crate::env::RuntimeEnv;
use crate::handle::Parts;
pub use crate::handle::{SandboxedChild, Verdict, WaitError};
use crate::init::InitSetup;
use crate::netns::{self, NetnsPool};
use crate::rootfs::{self, RootSpec, RootfsError};
use crate::seccomp::{SeccompError, SeccompFilters};

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
    /// Keep one cgroup leaf made ahead, with the limits of the last spawn,
    /// so the next spawn with the same limits skips making one (the
    /// costliest step of a spawn on cgroup v1). For long-lived runners: the
    /// spare is an empty leaf beside the bots' while the sandbox lives.
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

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    // Setting up the sandbox itself.
    #[error("setting up cgroups")]
    Cgroup(#[from] CgroupError),
    #[error("compiling seccomp filters")]
    Seccomp(#[from] SeccompError),
    #[error("creating the root mount point {path}")]
    RootDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("reading {path}")]
    KernelInfo {
        path: &'static str,
        source: std::io::Error,
    },
    // One spawn.
    #[error("planning the root filesystem")]
    Rootfs(#[from] RootfsError),
    #[error("{what} contains a NUL byte")]
    Nul { what: &'static str },
    #[error("the command needs at least one core")]
    NoCores,
    #[error("creating a pipe")]
    Pipe(#[source] std::io::Error),
    #[error("cloning into new namespaces")]
    Clone(#[source] std::io::Error),
    #[error("confining the child failed at {stage:?}")]
    Child {
        stage: Stage,
        source: std::io::Error,
    },
    #[error("the child reported an unknown stage {0}")]
    UnknownStage(u32),
    #[error("the child did not finish its setup within {0:?}")]
    SetupTimeout(Duration),
    #[error("starting the spawner thread")]
    SpawnerThread(#[source] std::io::Error),
    #[error("the spawner thread is gone")]
    SpawnerGone,
    // The end of a process.
    #[error("telling how the confined process ended")]
    Wait(#[from] WaitError),
}

/// Confines processes: holds the policy, the cgroup manager and the compiled
/// seccomp filters, which are shared by every spawn.
///
/// Every clone happens on one thread the sandbox owns for its lifetime: the
/// kernel delivers a child's parent-death signal when the *thread* that
/// cloned it exits, so cloning from a short-lived caller thread would kill
/// bots early, while this way they die exactly when the sandbox (or the
/// whole runner) does.
pub struct Sandbox {
    policy: Arc<Policy>,
    /// Sends spawn requests to the spawner thread; taken on drop to stop it.
    jobs: Option<mpsc::Sender<SpawnJob>>,
    spawner: Option<std::thread::JoinHandle<()>>,
}

/// One spawn request and where its answer goes.
type SpawnJob = (
    SandboxCommand,
    mpsc::SyncSender<Result<SandboxedChild, SandboxError>>,
);

/// What every spawn shares.
struct Policy {
    config: SandboxConfig,
    cgroups: CgroupManager,
    filters: SeccompFilters,
    cap_last_cap: u32,
    /// The runner's argument area, which the sandbox's init overwrites in
    /// its copy of the runner's memory (see [`crate::init`]).
    runner_args: (usize, usize),
    /// Network namespaces made ahead of the spawns that join them.
    netns: NetnsPool,
    /// The leaf made ahead (see [`SandboxConfig::spare_leaf`]).
    spare: Mutex<Option<SpareLeaf>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A leaf made ahead for the next spawn, and the limits it was made with.
struct SpareLeaf {
    limits: CgroupLimits,
    leaf: LeafCgroup,
}

/// Numbers cgroup leaves: leaf names carry this process's pid and start time,
/// so a counter shared by every `Sandbox` in the process makes them unique.
static NEXT_LEAF: AtomicU64 = AtomicU64::new(0);

/// How long a child may take from clone to exec.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

impl Sandbox {
    /// Detects the cgroup layout, removes stale leaves of dead runners, and
    /// compiles the seccomp filters.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let setup = crate::cgroup::detect()?;
        Self::with_cgroup_setup(config, setup)
    }

    pub fn with_cgroup_setup(
        config: SandboxConfig,
        setup: CgroupSetup,
    ) -> Result<Sandbox, SandboxError> {
        let cgroups = CgroupManager::new(setup, &config.cgroup_parent)?;
        // Leftovers of a runner that died are removed; one that resists is
        // logged rather than keeping this runner from starting.
        match cgroups.remove_stale() {
            Ok(0) => {}
            Ok(stale) => {
                eprintln!("arena-sandbox: removed {stale} stale cgroup(s) left by a dead runner")
            }
            Err(e) => eprintln!("arena-sandbox: cannot remove a stale cgroup: {e}"),
        }
        let filters = SeccompFilters::denylist()?;
        std::fs::create_dir_all(&config.root_dir).map_err(|source| SandboxError::RootDir {
            path: config.root_dir.clone(),
            source,
        })?;
        const CAP_LAST_CAP: &str = "/proc/sys/kernel/cap_last_cap";
        let cap_last_cap = std::fs::read_to_string(CAP_LAST_CAP)
            .map_err(|source| SandboxError::KernelInfo {
                path: CAP_LAST_CAP,
                source,
            })?
            .trim()
            .parse()
            .unwrap_or(40);
        let runner_args = runner_arg_area()?;
        let policy = Arc::new(Policy {
            config,
            cgroups,
            filters,
            cap_last_cap,
            runner_args,
            netns: NetnsPool::start(netns::POOL_SIZE),
            spare: Mutex::new(None),
        });
        let (jobs, requests) = mpsc::channel::<SpawnJob>();
        let shared = Arc::clone(&policy);
        let spawner = std::thread::Builder::new()
            .name("arena-spawner".to_owned())
            .spawn(move || {
                let template = shared.prepare_template();
                for (command, reply) in requests {
                    if command.cpus.is_empty() {
                        let _ = reply.send(Err(SandboxError::NoCores));
                        continue;
                    }
                    let limits = shared.leaf_limits(&command);
                    let leaf = shared
                        .take_spare()
                        .filter(|s| s.limits == limits)
                        .map(|s| Ok(s.leaf))
                        .unwrap_or_else(|| shared.new_leaf(&command.label, &limits));
                    let spawned = leaf.and_then(|leaf| shared.spawn_here(&command, leaf, template));
                    // The caller may have given up waiting; nothing to do then.
                    let _ = reply.send(spawned);
                    // Made while the caller goes on with its child.
                    if shared.config.spare_leaf {
                        let made = shared.new_leaf("spare", &limits);
                        *lock(&shared.spare) = made.ok().map(|leaf| SpareLeaf { limits, leaf });
                    }
                }
            })
            .map_err(SandboxError::SpawnerThread)?;
        Ok(Sandbox {
            policy,
            jobs: Some(jobs),
            spawner: Some(spawner),
        })
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.policy.config
    }

    pub fn cgroup_setup(&self) -> CgroupSetup {
        self.policy.cgroups.setup()
    }

    /// Removes this sandbox's parent cgroup if no leaf is left in it (see
    /// [`CgroupManager::remove_parent_if_empty`]): for one-shot runs and tests.
    pub fn remove_parent_if_empty(&self) -> Result<bool, SandboxError> {
        // The leaf made ahead goes first: it is ours, and nothing will use it.
        drop(self.policy.take_spare());
        Ok(self.policy.cgroups.remove_parent_if_empty()?)
    }

    /// Starts `command` confined, with piped stdin, stdout and stderr. The
    /// process lives until its handle is finished or dropped, or until this
    /// sandbox is dropped.
    pub fn spawn(&self, command: &SandboxCommand) -> Result<SandboxedChild, SandboxError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.jobs
            .as_ref()
            .ok_or(SandboxError::SpawnerGone)?
            .send((command.clone(), reply))
            .map_err(|_| SandboxError::SpawnerGone)?;
        answer.recv().map_err(|_| SandboxError::SpawnerGone)?
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(spawner) = self.spawner.take()
            && spawner.join().is_err()
        {
            eprintln!("arena-sandbox: the spawner thread panicked");
        }
    }
}

impl Policy {
    /// The runtime environment's part of every root, for [`rootfs`].
    fn root_spec(&self, app_dir: &Path, app_writable: bool) -> RootSpec {
        RootSpec {
            env_paths: self.config.env.paths.clone(),
            links: self.config.env.links.clone(),
            files: self
                .config
                .platform_paths
                .iter()
                .map(|host| (host.clone(), platform_path_inside(host)))
                .collect(),
            app_dir: app_dir.to_owned(),
            app_mount: PathBuf::from(APP_MOUNT),
            app_writable,
            tmp_bytes: self.config.limits.tmp_bytes,
        }
    }

    /// Builds the shared part of every root once, on the spawner thread
    /// (see [`child::prepare_template`]), so a spawn only mounts its own
    /// directory, `/tmp`, `/dev/shm` and `/proc`. Whether it worked; if not,
    /// every child builds its whole root, as slowly as before.
    fn prepare_template(&self) -> bool {
        let steps = match rootfs::plan_template(
            &self.config.root_dir,
            &self.root_spec(Path::new("/"), false),
        ) {
            Ok(steps) => steps,
            Err(e) => {
                eprintln!(
                    "arena-sandbox: cannot plan the shared root ({e}); every spawn builds its own"
                );
                return false;
            }
        };
        // SAFETY: this is the spawner thread, which owns its mount namespace.
        match unsafe { child::prepare_template(&steps) } {
            Ok(()) => true,
            Err((stage, errno)) => {
                eprintln!(
                    "arena-sandbox: cannot prepare the shared root at {stage:?} ({}); every \
                     spawn builds its own",
                    std::io::Error::from_raw_os_error(errno)
                );
                false
            }
        }
    }

    /// The leaf made ahead, if any, taken out of the policy.
    fn take_spare(&self) -> Option<SpareLeaf> {
        lock(&self.spare).take()
    }

    /// The cgroup limits of `command`'s leaf.
    fn leaf_limits(&self, command: &SandboxCommand) -> CgroupLimits {
        let limits = &self.config.limits;
        CgroupLimits {
            memory_bytes: limits.memory_bytes,
            pids: limits.pids,
            cpus: command.cpus.clone(),
            cpu_quota: command.cpu_quota,
        }
    }

    /// A fresh leaf named after `label`, with `limits`.
    fn new_leaf(&self, label: &str, limits: &CgroupLimits) -> Result<LeafCgroup, SandboxError> {
        let seq = NEXT_LEAF.fetch_add(1, Ordering::Relaxed);
        let leaf_name = CgroupManager::owned_name(&format!("{seq}-{label}"));
        Ok(self.cgroups.create(&leaf_name, limits)?)
    }

    /// Spawns on the calling thread (the spawner thread) into `leaf`, on
    /// the shared root when `template` says it is in place.
    fn spawn_here(
        &self,
        command: &SandboxCommand,
        leaf: LeafCgroup,
        template: bool,
    ) -> Result<SandboxedChild, SandboxError> {
        if command.cpus.is_empty() {
            return Err(SandboxError::NoCores);
        }
        let limits = &self.config.limits;
        let procs = leaf.open_procs_files()?;

        let spec = self.root_spec(&command.app_dir, command.app_writable);
        let steps = if template {
            rootfs::plan_spawn(&self.config.root_dir, &spec)?
        } else {
            rootfs::plan(&self.config.root_dir, &spec)?
        };
        let new_root = rootfs::cstring(&self.config.root_dir)?;
        let cwd = rootfs::cstring(Path::new(APP_MOUNT))?;
        let program = rootfs::cstring(&command.program)?;

        let args: Vec<CString> = std::iter::once(command.program.as_os_str())
            .chain(command.args.iter().map(|a| a.as_os_str()))
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| SandboxError::Nul {
                what: "an argument",
            })?;
        let envs: Vec<CString> = command
            .env
            .iter()
            .map(|(k, v)| {
                let mut pair = k.as_bytes().to_vec();
                pair.push(b'=');
                pair.extend_from_slice(v.as_bytes());
                CString::new(pair)
            })
            .collect::<Result<_, _>>()
            .map_err(|_| SandboxError::Nul {
                what: "an environment variable",
            })?;
        let argv = null_terminated(&args);
        let envp = null_terminated(&envs);
        let fprogs: Vec<libc::sock_fprog> = self
            .filters
            .programs
            .iter()
            .map(|p| libc::sock_fprog {
                len: p.len() as libc::c_ushort,
                // seccompiler's sock_filter is #[repr(C)] with libc's layout.
                filter: p.as_ptr() as *mut libc::sock_filter,
            })
            .collect();
        let rlimits = [
            (libc::RLIMIT_CORE, 0),
            (libc::RLIMIT_NOFILE, limits.open_files),
            (libc::RLIMIT_FSIZE, limits.file_bytes),
        ];

        let (stdin_child, stdin_parent) = pipe().map_err(SandboxError::Pipe)?;
        let (stdout_parent, stdout_child) = pipe().map_err(SandboxError::Pipe)?;
        let (stderr_parent, stderr_child) = pipe().map_err(SandboxError::Pipe)?;
        let (error_read, error_write) = pipe().map_err(SandboxError::Pipe)?;
        let (alive_read, alive_write) = pipe().map_err(SandboxError::Pipe)?;
        let (report_read, report_write) = pipe().map_err(SandboxError::Pipe)?;
        set_nonblocking(&report_read).map_err(SandboxError::Pipe)?;
        let procs_raw: Vec<RawFd> = procs.iter().map(|fd| fd.as_raw_fd()).collect();
        // Joined by the child; the clone makes a fresh one when none is ready.
        let ready_netns = self.netns.take();

        let setup = ChildSetup {
            stdio: [
                stdin_child.as_raw_fd(),
                stdout_child.as_raw_fd(),
                stderr_child.as_raw_fd(),
            ],
            error_fd: error_write.as_raw_fd(),
            init: InitSetup {
                report_fd: report_write.as_raw_fd(),
                runner_args: self.runner_args,
            },
            parent_alive_fd: alive_read.as_raw_fd(),
            parent_alive_writer: alive_write.as_raw_fd(),
            netns_fd: ready_netns.as_ref().map(|n| n.as_raw_fd()),
            procs_fds: &procs_raw,
            rootfs: &steps,
            new_root: &new_root,
            hostname: b"arena",
            rlimits: &rlimits,
            cap_last_cap: self.cap_last_cap,
            uid: command.uid,
            gid: command.gid,
            cwd: &cwd,
            filters: &fprogs,
            program: &program,
            argv: &argv,
            envp: &envp,
        };

        let started = Instant::now();
        let fresh_netns = if ready_netns.is_some() {
            0
        } else {
            libc::CLONE_NEWNET
        };
        let flags = libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | fresh_netns
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::SIGCHLD;
        // SAFETY: clone without CLONE_VM behaves like fork: the child gets a
        // copy of this address space and runs `child::run`, which only makes
        // system calls on data prepared above and never returns.
        let pid = unsafe {
            libc::syscall(
                libc::SYS_clone,
                flags as libc::c_ulong,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        };
        if pid < 0 {
            return Err(SandboxError::Clone(std::io::Error::last_os_error()));
        }
        if pid == 0 {
            child::run(&setup);
        }
        let pid = pid as libc::pid_t;
        drop((
            stdin_child,
            stdout_child,
            stderr_child,
            error_write,
            procs,
            alive_read,
            report_write,
            ready_netns,
        ));

        let mut child = SandboxedChild::new(Parts {
            pid,
            stdio: [stdin_parent, stdout_parent, stderr_parent],
            cgroup: leaf,
            report: report_read,
            started,
            parent_alive: alive_write,
        });
        match read_report(&error_read) {
            Ok(None) => Ok(child),
            Ok(Some((code, errno))) => {
                child.kill_and_reap();
                Err(match Stage::from_code(code) {
                    Some(stage) => SandboxError::Child {
                        stage,
                        source: std::io::Error::from_raw_os_error(errno),
                    },
                    None => SandboxError::UnknownStage(code),
                })
            }
            Err(e) => {
                child.kill_and_reap();
                Err(e)
            }
        }
    }
}

/// Waits for the child's setup report: `None` when exec succeeded (the pipe
/// closed on exec), or `(stage, errno)`.
fn read_report(pipe: &OwnedFd) -> Result<Option<(u32, i32)>, SandboxError> {
    let deadline = Instant::now() + SETUP_TIMEOUT;
    let mut report = [0u8; 8];
    let mut got = 0;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(SandboxError::SetupTimeout(SETUP_TIMEOUT));
        }
        let mut poll = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe {
            libc::poll(
                &mut poll,
                1,
                remaining.as_millis().min(i32::MAX as u128) as i32,
            )
        };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(SandboxError::Pipe(err));
        }
        if ready == 0 {
            continue;
        }
        // SAFETY: reads into the unfilled tail of `report`.
        let n = unsafe {
            libc::read(
                pipe.as_raw_fd(),
                report[got..].as_mut_ptr().cast(),
                report.len() - got,
            )
        };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(SandboxError::Pipe(err));
        }
        if n == 0 {
            return Ok(if got == 0 { None } else { Some((0, 0)) });
        }
        got += n as usize;
        if got == report.len() {
            let code = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
            let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
            return Ok(Some((code, errno)));
        }
    }
}

fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Makes `fd` non-blocking (the spawner reads the init's report only once
/// the init is gone, and must not wait for a report that never came).
fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// This process's `/proc/self/stat`: the argument area is fields 48 and 49.
const PROC_SELF_STAT: &str = "/proc/self/stat";

/// `[arg_start, arg_end)` of this process's command line (proc(5)).
fn runner_arg_area() -> Result<(usize, usize), SandboxError> {
    let fail = |source| SandboxError::KernelInfo {
        path: PROC_SELF_STAT,
        source,
    };
    let stat = std::fs::read_to_string(PROC_SELF_STAT).map_err(fail)?;
    arg_area_of(&stat).ok_or_else(|| {
        fail(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no arg_start and arg_end fields",
        ))
    })
}

/// Fields 48 and 49 of a `stat` line; the name (field 2) may hold spaces and
/// parentheses, so counting starts after its last `)`.
fn arg_area_of(stat: &str) -> Option<(usize, usize)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // The first field after the name is field 3.
    let mut fields = after_name.split_whitespace().skip(48 - 3);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    (start <= end).then_some((start, end))
}

/// A close-on-exec pipe: (read end, write end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_argument_area_is_read_after_the_name() {
        // A name with spaces and a parenthesis; fields 3..=47 are 0 here.
        let mut stat = "4242 (a) b (c) S".to_owned();
        for _ in 4..=47 {
            stat.push_str(" 0");
        }
        stat.push_str(" 1000 1042 2000 2100 0\n");
        assert_eq!(arg_area_of(&stat), Some((1000, 1042)));
        assert_eq!(arg_area_of("4242 (a) S 1 2"), None);
    }

    #[test]
    fn this_process_has_an_argument_area() {
        let (start, end) = runner_arg_area().expect("/proc/self/stat");
        let cmdline = std::fs::read("/proc/self/cmdline").expect("/proc/self/cmdline");
        assert_eq!(end - start, cmdline.len());
    }
}
