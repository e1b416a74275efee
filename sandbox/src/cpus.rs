//! Which CPUs run what: one core's worth of compute per confined process, always.
//!
//! Every confined process (a bot or a build) gets a cpuset of exactly one CPU, chosen
//! least-loaded first, and a cgroup of its own in the cpu controller, so all of its threads
//! are one scheduling entity with one weight. What differs between the modes is whether a
//! CPU is shared:
//!
//! * **Dedicated** (at least `seats + 1` CPUs): the runner is pinned to a CPU of its own and
//!   every process leases a CPU no other confined process has. Nothing is capped: a CPU of
//!   one's own is one core's worth.
//! * **Shared** (fewer): only exclusivity is given up. With `k = ceil(seats / CPUs)` bots at
//!   most on any CPU, each bot is still pinned to one CPU, and when `k > 1` each also gets a
//!   CPU quota of `1/k` of a core (`cpu.max`/`cpu.cfs_quota_us`), so every seat gets the same
//!   compute whatever its neighbours do and no bot can take its neighbour's share with more
//!   threads. The runner gets a CPU no bot has when that costs no bot any compute (when the
//!   bots fit on one CPU fewer at the same `k`); otherwise it is not pinned and the kernel runs
//!   it wherever a bot is idle. Ties go to the highest-numbered CPU, so CPU 0 (the runner's,
//!   and where hosts tend to run their housekeeping) is the last to get a bot. The layout is
//!   logged once.
//!
//! A match with more bots than a dedicated plan has CPUs (a caller that plans by cores only
//! does this for a match bigger than the host) puts the extra bots on the least-loaded CPU
//! with a quota of `1/(holders + 1)` of a core; the process already there keeps no cap, and
//! the cpu controller's equal weights split the CPU between them.
//!
//! Why a quota only when sharing: on a one-CPU cpuset a one-core cap is a no-op, and needing
//! the cpu controller for it would refuse hosts that lack it for nothing. When a quota is
//! needed and the controller is missing, creating the bot's cgroup fails with
//! `ControllerMissing`; no bot ever silently gets every CPU.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::cgroup::{CpuQuota, format_cpu_list};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreMode {
    /// One CPU for the runner, one exclusive CPU per confined process.
    Dedicated,
    /// Too few CPUs: one CPU per process still, but bots may share one (capped evenly).
    Shared,
}

#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    #[error("no cores available")]
    NoCores,
    #[error("all {0} bot cores are leased; the caller must not run more processes than cores")]
    Exhausted(usize),
    #[error("reading the CPU affinity")]
    Affinity(#[source] std::io::Error),
    #[error("pinning the runner to core {core}")]
    Pin { core: usize, source: std::io::Error },
}

/// Where the runner and the bots go, decided once from the CPUs and the seats (pure, so it
/// can be tested with any core count).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    /// Dedicated or shared.
    mode: CoreMode,
    /// The runner's own CPU, when it has one.
    runner: Option<usize>,
    /// The CPUs confined processes are pinned to, ascending.
    bot_cores: Vec<usize>,
    /// The most bots a full match puts on one bot CPU (1 in dedicated mode).
    sharers: usize,
}

impl Layout {
    /// Plans `available` CPUs for matches of `seats` bots.
    fn plan(available: &[usize], seats: usize) -> Result<Layout, CpuError> {
        let mut cores: Vec<usize> = available.to_vec();
        cores.sort_unstable();
        cores.dedup();
        let n = cores.len();
        if n == 0 {
            return Err(CpuError::NoCores);
        }
        if n > seats {
            let runner = cores.remove(0);
            return Ok(Layout {
                mode: CoreMode::Dedicated,
                runner: Some(runner),
                bot_cores: cores,
                sharers: 1,
            });
        }
        // n <= seats, so seats >= 1 here.
        let sharers = seats.div_ceil(n);
        // The bots need only this many CPUs at `sharers` per CPU; if that leaves one over, the
        // runner takes it without costing any bot compute (each is capped at 1/sharers anyway).
        let needed = seats.div_ceil(sharers);
        let runner = if needed < n {
            Some(cores.remove(0))
        } else {
            None
        };
        Ok(Layout {
            mode: CoreMode::Shared,
            runner,
            bot_cores: cores,
            sharers,
        })
    }

    /// The cap each bot of a full match gets (shared mode with CPUs shared).
    fn shared_quota(&self) -> Option<CpuQuota> {
        (self.mode == CoreMode::Shared && self.sharers > 1)
            .then(|| CpuQuota::share_of_one_core(self.sharers))
    }

    /// The one line that says what shared mode guarantees on this host.
    fn describe(&self, seats: usize) -> String {
        let cap = match self.shared_quota() {
            Some(q) => format!(
                "up to {} bots share a CPU, each capped at {:.2} core",
                self.sharers,
                q.cores()
            ),
            None => "no two bots share a CPU".to_owned(),
        };
        let runner = match self.runner {
            Some(core) => format!("the runner has CPU {core} to itself"),
            None => "the runner has no CPU of its own (every CPU holds a bot; \
                     it runs wherever a bot is idle)"
                .to_owned(),
        };
        format!(
            "shared-core mode: {} CPU(s) for {seats} bot(s) and the runner; \
             each bot is pinned to one of CPUs {} ({cap}); {runner}; \
             every other limit still applies",
            self.bot_cores.len() + usize::from(self.runner.is_some()),
            format_cpu_list(&self.bot_cores),
        )
    }
}

/// Processes holding each bot CPU right now.
type Load = Arc<Mutex<BTreeMap<usize, usize>>>;

/// Hands out CPUs to confined processes.
#[derive(Clone, Debug)]
pub struct CoreAllocator {
    /// The plan for this host.
    layout: Layout,
    /// How many processes hold each bot CPU; shared with every lease, which gives its
    /// CPU back on drop.
    load: Load,
}

impl CoreAllocator {
    /// Plans `available` CPUs for matches of `seats` bots: dedicated when there are at least
    /// `seats + 1`, shared (and its layout logged as a warning) otherwise.
    pub fn new(available: &[usize], seats: usize) -> Result<CoreAllocator, CpuError> {
        let layout = Layout::plan(available, seats)?;
        if layout.mode == CoreMode::Shared {
            tracing::warn!(seats, "{}", layout.describe(seats));
        }
        let load = layout.bot_cores.iter().map(|&cpu| (cpu, 0)).collect();
        Ok(CoreAllocator {
            layout,
            load: Arc::new(Mutex::new(load)),
        })
    }

    /// The cores this process may run on (its affinity mask).
    pub fn available() -> Result<Vec<usize>, CpuError> {
        // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable cpu_set_t of the given size.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(CpuError::Affinity(std::io::Error::last_os_error()));
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            // SAFETY: reads a bit of the filled set.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect())
    }

    pub fn mode(&self) -> CoreMode {
        self.layout.mode
    }

    /// The runner's own CPU: always in dedicated mode, in shared mode only when no bot loses
    /// compute by it.
    pub fn runner_core(&self) -> Option<usize> {
        self.layout.runner
    }

    /// The most bots a full match puts on one CPU (1: no CPU is shared).
    pub fn sharers(&self) -> usize {
        self.layout.sharers
    }

    /// Pins the calling thread (and the threads it starts later) to the runner's CPU; a
    /// no-op when the runner has none.
    pub fn pin_runner_thread(&self) -> Result<(), CpuError> {
        let Some(core) = self.layout.runner else {
            return Ok(());
        };
        // SAFETY: builds a cpu_set_t with one bit and applies it to this thread.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(CpuError::Pin {
                core,
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// How many CPUs bots may be given (every CPU but the runner's own).
    pub fn bot_core_count(&self) -> usize {
        self.layout.bot_cores.len()
    }

    /// One CPU for a confined process that must run now: in dedicated mode an exclusive one
    /// while one is free, otherwise the least-loaded one, shared, capped at its share and
    /// logged. A caller that plans its matches by cores (the worker daemon) only gets the
    /// fallback for a match with more bots than bot CPUs.
    pub fn lease_or_share(&self) -> CoreLease {
        if self.layout.mode == CoreMode::Shared {
            return self.take(|_| self.layout.shared_quota());
        }
        let lease = self.take(|holders| {
            (holders > 0).then(|| CpuQuota::share_of_one_core(holders.saturating_add(1)))
        });
        if let (Some(quota), [cpu]) = (lease.quota, lease.cores()) {
            tracing::warn!(
                cpu,
                "shared-core fallback: all {} bot CPU(s) are taken; \
                 this process shares CPU {cpu}, capped at {:.2} core \
                 (every other limit still applies)",
                self.layout.bot_cores.len(),
                quota.cores()
            );
        }
        lease
    }

    /// One CPU for a confined process, held until the lease drops: exclusive in dedicated
    /// mode ([`CpuError::Exhausted`] when none is free), least-loaded in shared mode.
    pub fn lease(&self) -> Result<CoreLease, CpuError> {
        match self.layout.mode {
            CoreMode::Shared => Ok(self.lease_or_share()),
            CoreMode::Dedicated => {
                let mut load = self.load.lock().unwrap_or_else(|p| p.into_inner());
                match least_loaded(&load) {
                    Some((cpu, 0)) => Ok(self.hold(&mut load, cpu, None)),
                    _ => Err(CpuError::Exhausted(self.layout.bot_cores.len())),
                }
            }
        }
    }

    /// Leases the least-loaded bot CPU with the quota `quota(holders already there)`; an
    /// empty lease when there are no bot CPUs at all (spawning it then fails with
    /// `NoCores`).
    fn take(&self, quota: impl FnOnce(usize) -> Option<CpuQuota>) -> CoreLease {
        let mut load = self.load.lock().unwrap_or_else(|p| p.into_inner());
        match least_loaded(&load) {
            Some((cpu, holders)) => self.hold(&mut load, cpu, quota(holders)),
            None => CoreLease {
                cores: Vec::new(),
                quota: None,
                load: None,
            },
        }
    }

    /// Counts one more holder of `cpu` and returns its lease.
    fn hold(
        &self,
        load: &mut BTreeMap<usize, usize>,
        cpu: usize,
        quota: Option<CpuQuota>,
    ) -> CoreLease {
        if let Some(holders) = load.get_mut(&cpu) {
            *holders = holders.saturating_add(1);
        }
        CoreLease {
            cores: vec![cpu],
            quota,
            load: Some(Arc::clone(&self.load)),
        }
    }
}

/// The CPU with the fewest holders, and its count; ties go to the highest CPU number.
fn least_loaded(load: &BTreeMap<usize, usize>) -> Option<(usize, usize)> {
    load.iter()
        .min_by_key(|&(&cpu, &holders)| (holders, std::cmp::Reverse(cpu)))
        .map(|(&cpu, &holders)| (cpu, holders))
}

/// One CPU leased to one process, with its cap if it shares; given back on drop.
#[derive(Debug)]
pub struct CoreLease {
    /// The CPU (one; empty only when the allocator has no bot CPUs).
    cores: Vec<usize>,
    /// The CPU bandwidth cap for the process, when it shares its CPU.
    quota: Option<CpuQuota>,
    /// The allocator's counts, decremented on drop.
    load: Option<Load>,
}

impl CoreLease {
    /// The cpuset: exactly one CPU.
    pub fn cores(&self) -> &[usize] {
        &self.cores
    }

    /// The CPU quota to apply to the process's cgroup, if any.
    pub fn quota(&self) -> Option<CpuQuota> {
        self.quota
    }
}

impl Drop for CoreLease {
    fn drop(&mut self) {
        let Some(load) = &self.load else {
            return;
        };
        let mut load = load.lock().unwrap_or_else(|p| p.into_inner());
        for cpu in &self.cores {
            if let Some(holders) = load.get_mut(cpu) {
                *holders = holders.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(leases: &[&CoreLease]) -> Vec<usize> {
        let mut all: Vec<usize> = leases.iter().flat_map(|l| l.cores().to_vec()).collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn dedicated_mode_never_shares_a_core() {
        let cores = CoreAllocator::new(&[0, 1, 2, 3], 2).unwrap();
        assert_eq!(cores.mode(), CoreMode::Dedicated);
        assert_eq!(cores.runner_core(), Some(0));
        assert_eq!(cores.sharers(), 1);
        let a = cores.lease().unwrap();
        let b = cores.lease().unwrap();
        let c = cores.lease().unwrap();
        assert_eq!(
            cpus(&[&a, &b, &c]),
            vec![1, 2, 3],
            "exclusive, never the runner's"
        );
        for lease in [&a, &b, &c] {
            assert_eq!(lease.cores().len(), 1);
            assert_eq!(lease.quota(), None, "a CPU of its own needs no cap");
        }
        assert!(matches!(cores.lease(), Err(CpuError::Exhausted(3))));
        drop(b);
        let again = cores.lease().unwrap();
        assert_eq!(again.cores().len(), 1);
        assert!(!a.cores().contains(&again.cores()[0]));
    }

    #[test]
    fn dedicated_overflow_shares_one_cpu_capped() {
        let cores = CoreAllocator::new(&[0, 1, 2, 3], 2).unwrap();
        let leases: Vec<CoreLease> = (0..3).map(|_| cores.lease().unwrap()).collect();
        // More bots than CPUs: the extra one gets one CPU, never the runner's, capped at half.
        let extra = cores.lease_or_share();
        assert_eq!(extra.cores().len(), 1);
        assert_ne!(extra.cores(), &[0]);
        assert_eq!(extra.quota(), Some(CpuQuota::share_of_one_core(2)));
        let third = cores.lease_or_share();
        assert_ne!(third.cores(), extra.cores(), "least loaded first");
        drop((extra, third));
        assert!(
            matches!(cores.lease(), Err(CpuError::Exhausted(3))),
            "the shared leases gave their CPUs back, the exclusive ones still hold theirs"
        );
        drop(leases);
        assert!(cores.lease().is_ok());
    }

    #[test]
    fn shared_mode_pins_every_bot_to_one_cpu_spread_out() {
        // This machine's case: 2 CPUs, 2 bots and the runner.
        let cores = CoreAllocator::new(&[0, 1], 2).unwrap();
        assert_eq!(cores.mode(), CoreMode::Shared);
        assert_eq!(
            cores.runner_core(),
            None,
            "a CPU for the runner would halve a bot"
        );
        assert_eq!(cores.sharers(), 1);
        let a = cores.lease().unwrap();
        let b = cores.lease().unwrap();
        assert_eq!(a.cores(), &[1], "CPU 0 is the last to get a bot");
        assert_eq!(b.cores(), &[0]);
        assert_eq!((a.quota(), b.quota()), (None, None), "alone on its CPU");
        cores.pin_runner_thread().unwrap();
    }

    #[test]
    fn shared_mode_caps_bots_that_share_a_cpu() {
        // A 3-bot match on 2 CPUs: every bot gets the same half core, the lone one included.
        let cores = CoreAllocator::new(&[0, 1], 3).unwrap();
        assert_eq!(cores.sharers(), 2);
        let leases: Vec<CoreLease> = (0..3).map(|_| cores.lease().unwrap()).collect();
        assert_eq!(cpus(&leases.iter().collect::<Vec<_>>()), vec![0, 1, 1]);
        for lease in &leases {
            assert_eq!(lease.cores().len(), 1);
            assert_eq!(lease.quota(), Some(CpuQuota::share_of_one_core(2)));
        }
        // One CPU for everything.
        let one = CoreAllocator::new(&[5], 2).unwrap();
        let (a, b) = (one.lease().unwrap(), one.lease().unwrap());
        assert_eq!((a.cores(), b.cores()), (&[5][..], &[5][..]));
        assert_eq!(a.quota(), Some(CpuQuota::share_of_one_core(2)));
    }

    #[test]
    fn shared_mode_gives_the_runner_a_cpu_when_no_bot_pays_for_it() {
        // 4 bots on 3 CPUs: two per CPU either way, so CPU 0 goes to the runner.
        let cores = CoreAllocator::new(&[0, 1, 2], 4).unwrap();
        assert_eq!(cores.mode(), CoreMode::Shared);
        assert_eq!(cores.runner_core(), Some(0));
        assert_eq!(cores.sharers(), 2);
        let leases: Vec<CoreLease> = (0..4).map(|_| cores.lease().unwrap()).collect();
        assert_eq!(cpus(&leases.iter().collect::<Vec<_>>()), vec![1, 1, 2, 2]);
        // 3 bots on 3 CPUs: a runner CPU would put two bots on one, so there is none.
        let cores = CoreAllocator::new(&[0, 1, 2], 3).unwrap();
        assert_eq!(cores.runner_core(), None);
        assert_eq!(cores.sharers(), 1);
        // 6 bots on 5 CPUs: two per CPU at most either way.
        let cores = CoreAllocator::new(&[0, 1, 2, 3, 4], 6).unwrap();
        assert_eq!((cores.runner_core(), cores.sharers()), (Some(0), 2));
    }

    #[test]
    fn the_plan_never_overloads_a_cpu_beyond_its_sharers() {
        for n in 1..=8usize {
            for seats in 1..=12usize {
                let available: Vec<usize> = (0..n).collect();
                let layout = Layout::plan(&available, seats).unwrap();
                let bot_cpus = layout.bot_cores.len();
                assert!(bot_cpus >= 1, "{n} cpus, {seats} seats");
                assert!(
                    bot_cpus * layout.sharers >= seats,
                    "{n} cpus, {seats} seats: {layout:?}"
                );
                // Never fewer sharers than the best any layout of n CPUs could do.
                assert_eq!(
                    layout.sharers,
                    seats.div_ceil(n.min(seats).max(1)).max(1),
                    "{n} cpus, {seats} seats"
                );
                if let Some(runner) = layout.runner {
                    assert!(!layout.bot_cores.contains(&runner));
                }
            }
        }
    }

    #[test]
    fn the_shared_log_line_says_what_is_guaranteed() {
        let two = Layout::plan(&[0, 1], 2).unwrap().describe(2);
        assert!(two.contains("no two bots share a CPU"), "{two}");
        assert!(two.contains("the runner has no CPU of its own"), "{two}");
        let three = Layout::plan(&[0, 1], 3).unwrap().describe(3);
        assert!(
            three.contains("up to 2 bots share a CPU, each capped at 0.50 core"),
            "{three}"
        );
        let runner = Layout::plan(&[0, 1, 2], 4).unwrap().describe(4);
        assert!(
            runner.contains("the runner has CPU 0 to itself"),
            "{runner}"
        );
    }

    #[test]
    fn the_host_reports_its_cores() {
        let cores = CoreAllocator::available().unwrap();
        assert!(!cores.is_empty());
        assert!(CoreAllocator::new(&[], 2).is_err());
    }
}
