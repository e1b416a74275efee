//! Which cores run what. In dedicated mode the runner is pinned to a core of
//! its own and every confined process leases an exclusive core: no two bots
//! (or a build and a bot) ever share one. A host with fewer cores than a
//! match needs runs in shared mode: every process may use every core, the
//! runner is not pinned, all other limits still hold, and the mode is logged.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreMode {
    /// One core for the runner, one exclusive core per confined process.
    Dedicated,
    /// Too few cores: everything shares every core.
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

/// Hands out cores to confined processes.
#[derive(Clone, Debug)]
pub struct CoreAllocator {
    mode: CoreMode,
    /// The runner's core (dedicated mode only).
    runner: Option<usize>,
    /// Every core a confined process may get.
    bot_cores: Vec<usize>,
    /// Cores not leased right now (dedicated mode only).
    free: Arc<Mutex<BTreeSet<usize>>>,
}

impl CoreAllocator {
    /// Plans `available` cores for matches of `seats` bots: dedicated when
    /// there are at least `seats + 1`, shared (and said so on stderr) otherwise.
    pub fn new(available: &[usize], seats: usize) -> Result<CoreAllocator, CpuError> {
        let mut cores: Vec<usize> = available.to_vec();
        cores.sort_unstable();
        cores.dedup();
        if cores.is_empty() {
            return Err(CpuError::NoCores);
        }
        if cores.len() > seats {
            let runner = cores.remove(0);
            Ok(CoreAllocator {
                mode: CoreMode::Dedicated,
                runner: Some(runner),
                free: Arc::new(Mutex::new(cores.iter().copied().collect())),
                bot_cores: cores,
            })
        } else {
            eprintln!(
                "arena-sandbox: shared-core mode: {} core(s) for {seats} bot(s) and the runner; \
                 bots are not on dedicated cores (every other limit still applies)",
                cores.len()
            );
            Ok(CoreAllocator {
                mode: CoreMode::Shared,
                runner: None,
                free: Arc::new(Mutex::new(BTreeSet::new())),
                bot_cores: cores,
            })
        }
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
        self.mode
    }

    pub fn runner_core(&self) -> Option<usize> {
        self.runner
    }

    /// Pins the calling thread to the runner's core (dedicated mode; a no-op
    /// in shared mode).
    pub fn pin_runner_thread(&self) -> Result<(), CpuError> {
        let Some(core) = self.runner else {
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

    /// How many cores bots may be given (every core but the runner's in
    /// dedicated mode).
    pub fn bot_core_count(&self) -> usize {
        self.bot_cores.len()
    }

    /// Cores for one confined process when one may be busy: a dedicated
    /// core while one is free, otherwise every bot core, shared, with a
    /// logged warning. A caller that plans its matches by cores (the worker
    /// daemon) only gets here for a match with more bots than bot cores.
    pub fn lease_or_share(&self) -> CoreLease {
        match self.lease() {
            Ok(lease) => lease,
            Err(_) => {
                eprintln!(
                    "arena-sandbox: shared-core fallback: all {} bot core(s) are taken; \
                     this bot shares them (every other limit still applies)",
                    self.bot_cores.len()
                );
                CoreLease {
                    cores: self.bot_cores.clone(),
                    pool: None,
                }
            }
        }
    }

    /// Cores for one confined process, held until the lease drops.
    pub fn lease(&self) -> Result<CoreLease, CpuError> {
        match self.mode {
            CoreMode::Shared => Ok(CoreLease {
                cores: self.bot_cores.clone(),
                pool: None,
            }),
            CoreMode::Dedicated => {
                let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
                let core = free
                    .pop_first()
                    .ok_or(CpuError::Exhausted(self.bot_cores.len()))?;
                Ok(CoreLease {
                    cores: vec![core],
                    pool: Some(Arc::clone(&self.free)),
                })
            }
        }
    }
}

/// Cores leased to one process; returned to the pool on drop.
#[derive(Debug)]
pub struct CoreLease {
    cores: Vec<usize>,
    pool: Option<Arc<Mutex<BTreeSet<usize>>>>,
}

impl CoreLease {
    pub fn cores(&self) -> &[usize] {
        &self.cores
    }
}

impl Drop for CoreLease {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            let mut free = pool.lock().unwrap_or_else(|p| p.into_inner());
            free.extend(self.cores.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedicated_mode_never_shares_a_core() {
        let cores = CoreAllocator::new(&[0, 1, 2, 3], 2).unwrap();
        assert_eq!(cores.mode(), CoreMode::Dedicated);
        assert_eq!(cores.runner_core(), Some(0));
        let a = cores.lease().unwrap();
        let b = cores.lease().unwrap();
        let c = cores.lease().unwrap();
        let mut all: Vec<usize> = [&a, &b, &c]
            .iter()
            .flat_map(|l| l.cores().to_vec())
            .collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2, 3], "exclusive, and never the runner's");
        assert!(matches!(cores.lease(), Err(CpuError::Exhausted(3))));
        // More bots than cores: the extra one shares every bot core.
        let shared = cores.lease_or_share();
        assert_eq!(shared.cores(), &[1, 2, 3]);
        drop(shared);
        assert!(
            matches!(cores.lease(), Err(CpuError::Exhausted(3))),
            "nothing returned"
        );
        drop(b);
        assert_eq!(cores.lease().unwrap().cores().len(), 1);
    }

    #[test]
    fn too_few_cores_means_shared_mode() {
        let cores = CoreAllocator::new(&[0, 1], 2).unwrap();
        assert_eq!(cores.mode(), CoreMode::Shared);
        assert_eq!(cores.runner_core(), None);
        let a = cores.lease().unwrap();
        let b = cores.lease().unwrap();
        assert_eq!(a.cores(), &[0, 1]);
        assert_eq!(b.cores(), &[0, 1]);
        cores.pin_runner_thread().unwrap();
    }

    #[test]
    fn the_host_reports_its_cores() {
        let cores = CoreAllocator::available().unwrap();
        assert!(!cores.is_empty());
        assert!(CoreAllocator::new(&[], 2).is_err());
    }
}
