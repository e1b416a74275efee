//! The parent side: prepare everything, clone into new namespaces, wait for
//! the child's report, and hand back a [`SandboxedChild`].
//!
//! Layout: this file holds the [`Sandbox`] itself and the policy every
//! spawn shares; `command` the types a caller describes ([`SandboxConfig`],
//! [`Limits`], [`SandboxCommand`]) and the command's encoding; `spawner`
//! the thread every clone happens on; `spares` the pool of leaves made
//! ahead, with processes started ahead in them; `clone` the clone itself,
//! the pipes and descriptors the child is given, and its setup report.

mod clone;
mod command;
mod spares;
mod spawner;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use crate::cgroup::{CgroupLimits, CgroupManager, CgroupSetup, LeafCgroup};
use crate::netns::{self, NetnsPool};
use crate::ready::Spare;
use crate::rootfs::RootSpec;
use crate::seccomp::SeccompFilters;
use command::order_of;
use spawner::{Job, SpawnRequest};

pub use crate::error::SandboxError;
pub use crate::handle::{SandboxedChild, Verdict, WaitError};
pub use command::{
    APP_MOUNT, Limits, PLATFORM_DIR, SandboxCommand, SandboxConfig, SpawnCounts,
    platform_path_inside,
};
pub use spares::SPARES;

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

/// Numbers cgroup leaves: leaf names carry this process's pid and start time,
/// so a counter shared by every `Sandbox` in the process makes them unique.
static NEXT_LEAF: AtomicU64 = AtomicU64::new(0);

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
        let policy = Arc::new(Policy::new(config, setup)?);
        let (jobs, spawner) = spawner::start(&policy)?;
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

impl Policy {
    /// What every spawn shares, for `setup`: the cgroup manager (with the
    /// stale leaves of dead runners removed), the compiled seccomp filters,
    /// the root mount point, and what the kernel tells about this runner.
    fn new(config: SandboxConfig, setup: CgroupSetup) -> Result<Policy, SandboxError> {
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
        Ok(Policy {
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
        })
    }

    /// The runtime environment's part of every root, for [`crate::rootfs`].
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
