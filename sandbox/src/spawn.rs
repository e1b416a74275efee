//! The parent side: prepare everything, clone into new namespaces, wait for
//! the child's report, and hand back a [`SandboxedChild`].

use std::ffi::{OsString, c_char};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::cgroup::{CgroupError, CgroupLimits, CgroupManager, CgroupSetup, CpuQuota, LeafCgroup};
use crate::child::{self, ChildSetup, Inbox, Launch, Stage};
use crate::env::RuntimeEnv;
use crate::handle::Parts;
pub use crate::handle::{SandboxedChild, Verdict, WaitError};
use crate::init::InitSetup;
use crate::netns::{self, NetnsPool};
use crate::ready::{
    self, ChildEnds, NulInCommand, ORDER_BYTES, ORDER_STRINGS, Order, ReadyChild, Spare,
};
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
    /// Keep a cgroup leaf made ahead for the limits of each recent spawn
    /// (up to [`SPARES`]), with a confined process started ahead in it
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
    #[error("the command does not read back from its own encoding")]
    UnreadableOrder,
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
/// whole runner) does. A process started ahead (see [`crate::ready`]) was
/// cloned there too, so the caller's own thread may send it its order.
pub struct Sandbox {
    policy: Arc<Policy>,
    /// Sends jobs to the spawner thread; taken on drop to stop it.
    jobs: Option<mpsc::Sender<Job>>,
    spawner: Option<std::thread::JoinHandle<()>>,
}

/// What the spawner thread does.
enum Job {
    /// One spawn, and where its answer goes.
    Spawn(
        SpawnRequest,
        mpsc::SyncSender<Result<SandboxedChild, SandboxError>>,
    ),
    /// Keep a spare for these limits, now that one was used.
    Refill(CgroupLimits),
    /// Drop every spare, after every job sent before this one.
    DropSpares(mpsc::SyncSender<()>),
}

/// A spawn as the spawner thread needs it: the command encoded once, the
/// limits of its leaf, and the leaf's label.
struct SpawnRequest {
    order: Order,
    limits: CgroupLimits,
    label: String,
}

/// How many spawns started cold and how many in a process started ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpawnCounts {
    pub cold: u64,
    pub prestarted: u64,
}

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
    /// Leaves made ahead, oldest first (see [`SandboxConfig::spare_leaf`]).
    spares: Mutex<Vec<Spare>>,
    /// Set once starting a process ahead failed: spares are plain leaves
    /// from then on (the failure is logged once).
    prestart_failed: AtomicBool,
    cold_spawns: AtomicU64,
    prestarted_spawns: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How many spares a sandbox keeps, each for other limits (other cores):
/// one per seat of the matches a small worker plays at once.
pub const SPARES: usize = 4;

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
            Ok(stale) => tracing::info!(stale, "removed stale cgroups left by a dead runner"),
            Err(e) => tracing::warn!(error = %e, "cannot remove a stale cgroup"),
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
            spares: Mutex::new(Vec::new()),
            prestart_failed: AtomicBool::new(false),
            cold_spawns: AtomicU64::new(0),
            prestarted_spawns: AtomicU64::new(0),
        });
        let (jobs, requests) = mpsc::channel::<Job>();
        let shared = Arc::clone(&policy);
        let spawner = std::thread::Builder::new()
            .name("arena-spawner".to_owned())
            .spawn(move || {
                let template = shared.prepare_template();
                for job in requests {
                    match job {
                        Job::Spawn(request, reply) => {
                            let spawned = shared.spawn_on_this_thread(&request, template);
                            // The caller may have given up waiting; nothing to do then.
                            let _ = reply.send(spawned);
                            // Made while the caller goes on with its child.
                            if shared.config.spare_leaf {
                                shared.keep_spare(request.limits, template);
                            }
                        }
                        Job::Refill(limits) => shared.keep_spare(limits, template),
                        Job::DropSpares(done) => {
                            shared.drop_spares();
                            let _ = done.send(());
                        }
                    }
                }
                shared.drop_spares();
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
        // The leaves made ahead go first: they are ours, and nothing will
        // use them. On the spawner thread, so that none is still being made.
        let (done, finished) = mpsc::sync_channel(1);
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(Job::DropSpares(done)).is_ok());
        if sent {
            let _ = finished.recv();
        }
        self.policy.drop_spares();
        Ok(self.policy.cgroups.remove_parent_if_empty()?)
    }

    /// How many processes started ahead are waiting for a command.
    pub fn ready_processes(&self) -> usize {
        lock(&self.policy.spares)
            .iter()
            .filter(|s| s.ready.is_some())
            .count()
    }

    /// How many spawns so far started cold and how many in a process
    /// started ahead (the setup failures among them included).
    pub fn spawn_counts(&self) -> SpawnCounts {
        SpawnCounts {
            cold: self.policy.cold_spawns.load(Ordering::Relaxed),
            prestarted: self.policy.prestarted_spawns.load(Ordering::Relaxed),
        }
    }

    /// Starts `command` confined, with piped stdin, stdout and stderr. The
    /// process lives until its handle is finished or dropped, or until this
    /// sandbox is dropped.
    pub fn spawn(&self, command: &SandboxCommand) -> Result<SandboxedChild, SandboxError> {
        if command.cpus.is_empty() {
            return Err(SandboxError::NoCores);
        }
        let jobs = self.jobs.as_ref().ok_or(SandboxError::SpawnerGone)?;
        let order = order_of(command)?;
        // A process started ahead needs no clone: it is ordered from here,
        // and the spawner thread starts the next one meanwhile.
        let limits = self.policy.leaf_limits(command);
        if let Some(spawned) = self.policy.start_prestarted(&order, &limits) {
            let _ = jobs.send(Job::Refill(limits));
            return spawned;
        }
        let request = SpawnRequest {
            order,
            limits,
            label: command.label.clone(),
        };
        let (reply, answer) = mpsc::sync_channel(1);
        jobs.send(Job::Spawn(request, reply))
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
            tracing::error!("the spawner thread panicked");
        }
        self.policy.drop_spares();
    }
}

/// The command as an order: sent as it is to a process started ahead, read
/// back by a cold spawn.
fn order_of(command: &SandboxCommand) -> Result<Order, SandboxError> {
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

impl Policy {
    /// The runtime environment's part of every root, for [`rootfs`].
    fn root_spec(&self) -> RootSpec {
        RootSpec {
            env_paths: self.config.env.paths.clone(),
            links: self.config.env.links.clone(),
            files: self
                .config
                .platform_paths
                .iter()
                .map(|host| (host.clone(), platform_path_inside(host)))
                .collect(),
            app_mount: PathBuf::from(APP_MOUNT),
            tmp_bytes: self.config.limits.tmp_bytes,
        }
    }

    /// Builds the shared part of every root once, on the spawner thread
    /// (see [`child::prepare_template`]), so a spawn only mounts its own
    /// directory, `/tmp`, `/dev/shm` and `/proc`. Whether it worked; if not,
    /// every child builds its whole root, as slowly as before.
    fn prepare_template(&self) -> bool {
        let steps = match rootfs::plan_template(&self.config.root_dir, &self.root_spec()) {
            Ok(steps) => steps,
            Err(e) => {
                tracing::warn!(error = %e, "cannot plan the shared root; every spawn builds its own");
                return false;
            }
        };
        // SAFETY: this is the spawner thread, which owns its mount namespace.
        match unsafe { child::prepare_template(&steps) } {
            Ok(()) => true,
            Err((stage, errno)) => {
                tracing::warn!(
                    ?stage,
                    error = %std::io::Error::from_raw_os_error(errno),
                    "cannot prepare the shared root; every spawn builds its own"
                );
                false
            }
        }
    }

    /// The first spare that `wanted` accepts, taken out of the list.
    fn take_spare(&self, wanted: impl Fn(&Spare) -> bool) -> Option<Spare> {
        let mut spares = lock(&self.spares);
        let at = spares.iter().position(wanted)?;
        Some(spares.remove(at))
    }

    /// Every spare, dropped (their processes killed, their leaves removed).
    fn drop_spares(&self) {
        let spares = std::mem::take(&mut *lock(&self.spares));
        drop(spares);
    }

    /// Makes sure a spare for `limits` exists, with a process started ahead
    /// in it when the shared root is in place; the oldest spare goes when
    /// there are more than [`SPARES`].
    fn keep_spare(&self, limits: CgroupLimits, template: bool) {
        if lock(&self.spares).iter().any(|s| s.limits == limits) {
            return;
        }
        let Ok(leaf) = self.new_leaf("spare", &limits) else {
            // A spawn will make its own leaf, and say why if it cannot.
            return;
        };
        let ready = if template && !self.prestart_failed.load(Ordering::Relaxed) {
            self.prestart(&leaf)
        } else {
            None
        };
        let surplus: Vec<Spare> = {
            let mut spares = lock(&self.spares);
            spares.push(Spare {
                limits,
                ready,
                leaf,
            });
            let surplus = spares.len().saturating_sub(SPARES);
            spares.drain(..surplus).collect()
        };
        drop(surplus);
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

    /// A spawn on the spawner thread: in a process started ahead if one
    /// waits with these limits, else cloned here into a spare or fresh leaf.
    fn spawn_on_this_thread(
        &self,
        request: &SpawnRequest,
        template: bool,
    ) -> Result<SandboxedChild, SandboxError> {
        let limits = &request.limits;
        if let Some(spawned) = self.start_prestarted(&request.order, limits) {
            return spawned;
        }
        let leaf = match self.take_spare(|s| s.limits == *limits && s.ready.is_none()) {
            Some(spare) => spare.leaf,
            None => self.new_leaf(&request.label, limits)?,
        };
        self.spawn_here(&request.order, leaf, template)
    }

    /// Sends `order` to a process started ahead for `limits`; `None` when
    /// none waits or the order does not fit (the command is then cloned
    /// the ordinary way).
    fn start_prestarted(
        &self,
        order: &Order,
        limits: &CgroupLimits,
    ) -> Option<Result<SandboxedChild, SandboxError>> {
        if !self.config.spare_leaf || !order.fits_inbox() {
            return None;
        }
        let Spare {
            limits: spare_limits,
            ready,
            leaf,
        } = self.take_spare(|s| s.limits == *limits && s.ready.is_some())?;
        let ready = ready?;
        let started = Instant::now();
        if !ready.send(order) {
            // It died waiting; its leaf can still serve a cold spawn.
            drop(ready);
            lock(&self.spares).push(Spare {
                limits: spare_limits,
                ready: None,
                leaf,
            });
            return None;
        }
        let (pid, ends) = ready.hand_over()?;
        self.prestarted_spawns.fetch_add(1, Ordering::Relaxed);
        Some(self.finish_spawn(pid, ends, leaf, started))
    }

    /// Starts a process in `leaf` that does everything ahead of the command
    /// and waits for its order; `None` (logged once) if that fails.
    fn prestart(&self, leaf: &LeafCgroup) -> Option<ReadyChild> {
        let started = self.try_prestart(leaf);
        match started {
            Ok(ready) => Some(ready),
            Err(e) => {
                if !self.prestart_failed.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        error = %e,
                        "cannot start a confined process ahead; every spawn clones its own"
                    );
                }
                None
            }
        }
    }

    fn try_prestart(&self, leaf: &LeafCgroup) -> Result<ReadyChild, SandboxError> {
        let (orders, inbox_socket) = seqpacket_pair().map_err(SandboxError::Pipe)?;
        // Room for the order, made before the clone so the child's copy is
        // its own; the parent's is freed once the clone is made.
        let mut buffer = vec![0u8; ORDER_BYTES];
        let mut pointers = vec![std::ptr::null::<c_char>(); ORDER_STRINGS];
        let inbox = Inbox {
            socket: inbox_socket.as_raw_fd(),
            buffer: buffer.as_mut_ptr(),
            buffer_len: buffer.len(),
            pointers: pointers.as_mut_ptr(),
            pointers_len: pointers.len(),
        };
        let steps = rootfs::plan_spawn(&self.config.root_dir, &self.root_spec())?;
        let (pid, ends) = self.clone_confined(leaf, &steps, Launch::Ordered(inbox))?;
        drop((inbox_socket, buffer, pointers));
        let ready = ReadyChild::new(pid, orders, ends);
        if ready.wait_ready(SETUP_TIMEOUT) {
            return Ok(ready);
        }
        // It has failed (the report is in the pipe) or is still stuck.
        Err(
            match ready
                .error_pipe()
                .map(|pipe| read_report_within(pipe, Duration::ZERO))
            {
                Some(Ok(Some((code, errno)))) => stage_error(code, errno),
                Some(Err(e)) => e,
                _ => SandboxError::SetupTimeout(SETUP_TIMEOUT),
            },
        )
    }

    /// Spawns `order` on the calling thread (the spawner thread) into
    /// `leaf`, on the shared root when `template` says it is in place.
    fn spawn_here(
        &self,
        order: &Order,
        leaf: LeafCgroup,
        template: bool,
    ) -> Result<SandboxedChild, SandboxError> {
        let spec = self.root_spec();
        let steps = if template {
            rootfs::plan_spawn(&self.config.root_dir, &spec)?
        } else {
            rootfs::plan(&self.config.root_dir, &spec)?
        };
        let mut pointers = vec![std::ptr::null(); order.pointers_needed()];
        let program =
            ready::decode(order.as_bytes(), &mut pointers).ok_or(SandboxError::UnreadableOrder)?;
        self.cold_spawns.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let (pid, ends) = self.clone_confined(&leaf, &steps, Launch::Now(program))?;
        self.finish_spawn(pid, ends, leaf, started)
    }

    /// The handle of a child whose setup is under way, once its setup
    /// report says the bot exec'd.
    fn finish_spawn(
        &self,
        pid: libc::pid_t,
        ends: ChildEnds,
        leaf: LeafCgroup,
        started: Instant,
    ) -> Result<SandboxedChild, SandboxError> {
        let ChildEnds {
            stdio,
            error,
            report,
            parent_alive,
        } = ends;
        let mut child = SandboxedChild::new(Parts {
            pid,
            stdio,
            cgroup: leaf,
            report,
            started,
            parent_alive,
        });
        match read_report(&error) {
            Ok(None) => Ok(child),
            Ok(Some((code, errno))) => {
                child.kill_and_reap();
                Err(stage_error(code, errno))
            }
            Err(e) => {
                child.kill_and_reap();
                Err(e)
            }
        }
    }

    /// Clones a child into new namespaces that joins `leaf`, builds its
    /// root with `steps` and runs the confinement sequence of
    /// [`child::run`] for `launch`; returns its pid and the runner's ends
    /// of its pipes.
    fn clone_confined(
        &self,
        leaf: &LeafCgroup,
        steps: &[rootfs::Step],
        launch: Launch<'_>,
    ) -> Result<(libc::pid_t, ChildEnds), SandboxError> {
        let limits = &self.config.limits;
        let procs = leaf.open_procs_files()?;
        let new_root = rootfs::cstring(&self.config.root_dir)?;
        let app_target = rootfs::cstring(&rootfs::inside(
            &self.config.root_dir,
            Path::new(APP_MOUNT),
        )?)?;
        let cwd = rootfs::cstring(Path::new(APP_MOUNT))?;
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
            rootfs: steps,
            app_target: &app_target,
            new_root: &new_root,
            hostname: b"arena",
            rlimits: &rlimits,
            cap_last_cap: self.cap_last_cap,
            cwd: &cwd,
            filters: &fprogs,
            launch,
        };

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
        Ok((
            pid as libc::pid_t,
            ChildEnds {
                stdio: [stdin_parent, stdout_parent, stderr_parent],
                error: error_read,
                report: report_read,
                parent_alive: alive_write,
            },
        ))
    }
}

/// The error for a failed setup stage as the child reported it.
fn stage_error(code: u32, errno: i32) -> SandboxError {
    match Stage::from_code(code) {
        Some(stage) => SandboxError::Child {
            stage,
            source: std::io::Error::from_raw_os_error(errno),
        },
        None => SandboxError::UnknownStage(code),
    }
}

/// A close-on-exec pair of connected packet sockets: (ours, the child's).
fn seqpacket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits for the child's setup report: `None` when exec succeeded (the pipe
/// closed on exec), or `(stage, errno)`.
fn read_report(pipe: &OwnedFd) -> Result<Option<(u32, i32)>, SandboxError> {
    read_report_within(pipe, SETUP_TIMEOUT)
}

/// [`read_report`], waiting at most `timeout` (zero: only what is there).
fn read_report_within(
    pipe: &OwnedFd,
    timeout: Duration,
) -> Result<Option<(u32, i32)>, SandboxError> {
    let deadline = Instant::now() + timeout;
    let mut report = [0u8; 8];
    let mut got = 0;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
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
            // Nothing there by the deadline (at once for a zero timeout).
            if Instant::now() >= deadline {
                return Err(SandboxError::SetupTimeout(SETUP_TIMEOUT));
            }
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
