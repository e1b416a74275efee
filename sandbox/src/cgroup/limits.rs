//! Per-process limits and their translation into control-file values, kept pure so the
//! translation can be tested without a cgroup tree; plus the missing-controller policy and the
//! writes that are the same on v1 and v2.

use std::path::Path;

use cgroups_rs::fs::pid::PidController;
use cgroups_rs::fs::{Controller, MaxValue};

use super::error::CgroupError;

/// Task limit (same file on v1 and v2).
const PIDS_MAX: &str = "pids.max";

/// Per-process limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Hard memory limit in bytes. Swap is always limited to zero on top of it
    /// (v1: `memory.memsw.limit_in_bytes` = this; v2: `memory.swap.max` = 0).
    pub memory_bytes: u64,
    /// Maximum number of tasks (processes and threads) in the leaf: `pids.max`.
    pub pids: u64,
    /// CPUs the leaf may run on: `cpuset.cpus`. Empty means "no pinning": the leaf gets its
    /// parent's CPUs (v1 copies them explicitly, v2 inherits them).
    pub cpus: Vec<usize>,
    /// A CPU bandwidth cap for the whole leaf (v1 `cpu.cfs_period_us`/`cpu.cfs_quota_us`,
    /// v2 `cpu.max`), or `None` for no cap. Needs the cpu controller; without it, creating
    /// the leaf fails with [`CgroupError::ControllerMissing`].
    pub cpu_quota: Option<CpuQuota>,
}

/// At most `quota_us` microseconds of CPU time in every `period_us`, summed over every
/// thread of the leaf: `quota_us == period_us` is one core's worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuQuota {
    /// CPU time allowed per period, in microseconds.
    pub quota_us: u64,
    /// The accounting period, in microseconds.
    pub period_us: u64,
}

impl CpuQuota {
    /// The kernel's default period (100 ms), used for every quota Arena sets.
    pub const PERIOD_US: u64 = 100_000;
    /// The smallest quota the kernel accepts (1 ms), on v1 and v2 alike.
    pub const MIN_QUOTA_US: u64 = 1_000;
    /// The longest period the kernel accepts (1 s).
    const MAX_PERIOD_US: u64 = 1_000_000;

    /// One core's worth split evenly between `sharers` processes on one CPU (at least the
    /// kernel's 1 ms minimum): `1` is a whole core.
    pub fn share_of_one_core(sharers: usize) -> Self {
        let sharers = u64::try_from(sharers.max(1)).unwrap_or(u64::MAX);
        Self {
            quota_us: (Self::PERIOD_US / sharers).max(Self::MIN_QUOTA_US),
            period_us: Self::PERIOD_US,
        }
    }

    /// The cap in cores (`0.5` = half a core), for logs.
    pub fn cores(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }

    /// v2 `cpu.max`: `"$MAX $PERIOD"`.
    pub(crate) fn v2_max(&self) -> String {
        format!("{} {}", self.quota_us, self.period_us)
    }

    /// Rejects what the kernel would refuse with EINVAL: a period outside 1 ms..1 s or a quota
    /// under 1 ms (checked here so the error names the value, not just the file).
    fn validate(&self) -> Result<(), String> {
        if !(Self::MIN_QUOTA_US..=Self::MAX_PERIOD_US).contains(&self.period_us) {
            return Err(format!(
                "cpu period {} us is outside 1000..=1000000",
                self.period_us
            ));
        }
        if self.quota_us < Self::MIN_QUOTA_US || i64::try_from(self.quota_us).is_err() {
            return Err(format!(
                "cpu quota {} us is under 1000 or exceeds i64",
                self.quota_us
            ));
        }
        Ok(())
    }
}

impl CgroupLimits {
    /// Rejects limits the kernel would misread: zero (v1 would refuse every allocation or fork,
    /// which is never what a caller means) and values that do not fit the kernel's signed
    /// 64-bit counters.
    pub(crate) fn validate(&self) -> Result<(), CgroupError> {
        let invalid = |reason: String| Err(CgroupError::InvalidLimits { reason });
        if self.memory_bytes == 0 {
            return invalid("memory_bytes is 0".into());
        }
        if i64::try_from(self.memory_bytes).is_err() {
            return invalid(format!("memory_bytes {} exceeds i64", self.memory_bytes));
        }
        if self.pids == 0 {
            return invalid("pids is 0".into());
        }
        if i64::try_from(self.pids).is_err() {
            return invalid(format!("pids {} exceeds i64", self.pids));
        }
        if let Some(quota) = &self.cpu_quota {
            quota.validate().or_else(invalid)?;
        }
        Ok(())
    }

    /// The memory limit as the `i64` cgroups-rs takes; `validate` guarantees it fits.
    pub(crate) fn memory_i64(&self) -> i64 {
        i64::try_from(self.memory_bytes).unwrap_or(i64::MAX)
    }

    /// The pids limit as the `i64` cgroups-rs takes; `validate` guarantees it fits.
    pub(crate) fn pids_i64(&self) -> i64 {
        i64::try_from(self.pids).unwrap_or(i64::MAX)
    }

    /// `cpuset.cpus` in the kernel's list syntax.
    pub(crate) fn cpu_list(&self) -> String {
        format_cpu_list(&self.cpus)
    }
}

/// What to do about a limit this host cannot enforce (controller or control file absent).
///
/// By default that is an error: a sandbox that silently runs a bot without its memory limit
/// is worse than one that refuses to start. With `allow_missing` (a test-only setting, see
/// [`super::CgroupOptions`]) the limit is skipped with a warning on stderr.
pub(crate) fn unenforceable(
    allow_missing: bool,
    controller: &'static str,
    limit: &'static str,
    path: &Path,
) -> Result<(), CgroupError> {
    if allow_missing {
        tracing::warn!(
            path = %path.display(),
            "{limit} not enforced: controller {controller} is not available"
        );
        return Ok(());
    }
    Err(CgroupError::ControllerMissing {
        controller,
        limit,
        path: path.to_path_buf(),
    })
}

/// Whether `dir/file` exists; if not, applies the missing-controller policy (error, or skip
/// with a warning). cgroups-rs opens with `O_CREAT`, so this check is also what makes a missing
/// file fail on a fake tree the way it does on the kernel.
pub(crate) fn has_file(
    allow_missing: bool,
    dir: &Path,
    file: &str,
    controller: &'static str,
    limit: &'static str,
) -> Result<bool, CgroupError> {
    let path = dir.join(file);
    if path.is_file() {
        return Ok(true);
    }
    unenforceable(allow_missing, controller, limit, &path)?;
    Ok(false)
}

/// Writes `pids.max` into a leaf's pids controller.
pub(crate) fn apply_pids(
    pids: &PidController,
    limits: &CgroupLimits,
    allow_missing: bool,
) -> Result<(), CgroupError> {
    if !has_file(allow_missing, pids.path(), PIDS_MAX, "pids", "pids limit")? {
        return Ok(());
    }
    pids.set_pid_max(MaxValue::Value(limits.pids_i64()))
        .map_err(|source| CgroupError::SetPidsLimit {
            path: pids.path().to_path_buf(),
            max: limits.pids,
            source,
        })
}

/// Formats CPU numbers in the kernel's list syntax (`0-1`, `1`, `0,2-3`), sorted and without
/// duplicates; an empty set gives an empty string.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

/// Which of the two v1 memory files to write first.
///
/// The v1 kernel insists that `memory.memsw.limit_in_bytes` ≥ `memory.limit_in_bytes` after
/// every single write (EINVAL otherwise), so lowering must set memory first and raising must
/// set memory+swap first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemswOrder {
    /// Lowering: `memory.limit_in_bytes`, then `memory.memsw.limit_in_bytes`.
    MemoryFirst,
    /// Raising or equal: `memory.memsw.limit_in_bytes`, then `memory.limit_in_bytes`.
    MemswFirst,
}

/// Picks the write order for setting both v1 memory limits to `new`, given the current
/// `memory.limit_in_bytes`.
pub(crate) fn memsw_order(current_memory_limit: u64, new: u64) -> MemswOrder {
    if new < current_memory_limit {
        MemswOrder::MemoryFirst
    } else {
        MemswOrder::MemswFirst
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn limits(memory_bytes: u64, pids: u64) -> CgroupLimits {
        CgroupLimits {
            memory_bytes,
            pids,
            cpus: vec![],
            cpu_quota: None,
        }
    }

    #[test]
    fn cpu_lists_use_kernel_syntax() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[1]), "1");
        assert_eq!(format_cpu_list(&[0, 1]), "0-1");
        assert_eq!(format_cpu_list(&[1, 0]), "0-1");
        assert_eq!(format_cpu_list(&[0, 2, 3]), "0,2-3");
        assert_eq!(format_cpu_list(&[3, 3, 0, 1, 2, 7, 9, 10]), "0-3,7,9-10");
    }

    #[test]
    fn zero_and_oversized_limits_are_rejected() {
        assert!(limits(64 << 20, 16).validate().is_ok());
        assert!(limits(0, 16).validate().is_err());
        assert!(limits(64 << 20, 0).validate().is_err());
        assert!(limits(u64::MAX, 16).validate().is_err());
        assert!(limits(64 << 20, u64::MAX).validate().is_err());
    }

    #[test]
    fn limits_translate_to_cgroups_rs_values() {
        let l = CgroupLimits {
            memory_bytes: 64 << 20,
            pids: 16,
            cpus: vec![0],
            cpu_quota: None,
        };
        assert_eq!(l.memory_i64(), 67_108_864);
        assert_eq!(l.pids_i64(), 16);
        assert_eq!(l.cpu_list(), "0");
    }

    #[test]
    fn quotas_split_one_core_and_respect_the_kernel_range() {
        let whole = CpuQuota::share_of_one_core(1);
        assert_eq!((whole.quota_us, whole.period_us), (100_000, 100_000));
        assert_eq!(whole.v2_max(), "100000 100000");
        assert_eq!(CpuQuota::share_of_one_core(2).v2_max(), "50000 100000");
        assert_eq!(CpuQuota::share_of_one_core(3).quota_us, 33_333);
        assert_eq!(CpuQuota::share_of_one_core(0), whole, "0 sharers means one");
        assert_eq!(
            CpuQuota::share_of_one_core(1000).quota_us,
            1_000,
            "kernel minimum"
        );
        assert!((CpuQuota::share_of_one_core(4).cores() - 0.25).abs() < 1e-9);
        let with = |quota_us, period_us| CgroupLimits {
            cpu_quota: Some(CpuQuota {
                quota_us,
                period_us,
            }),
            ..limits(64 << 20, 16)
        };
        assert!(with(50_000, 100_000).validate().is_ok());
        assert!(with(999, 100_000).validate().is_err());
        assert!(with(50_000, 999).validate().is_err());
        assert!(with(50_000, 2_000_000).validate().is_err());
        assert!(with(u64::MAX, 100_000).validate().is_err());
    }

    #[test]
    fn lowering_sets_memory_first_raising_sets_memsw_first() {
        // A fresh v1 leaf reports "unlimited" as a page-aligned i64::MAX.
        assert_eq!(
            memsw_order(9_223_372_036_854_771_712, 64 << 20),
            MemswOrder::MemoryFirst
        );
        assert_eq!(memsw_order(32 << 20, 64 << 20), MemswOrder::MemswFirst);
        assert_eq!(memsw_order(64 << 20, 64 << 20), MemswOrder::MemswFirst);
    }

    /// Parses the list syntax back, to check formatting round-trips.
    fn parse_cpu_list(s: &str) -> Vec<usize> {
        let mut out = vec![];
        for part in s.split(',').filter(|p| !p.is_empty()) {
            match part.split_once('-') {
                Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
                None => out.push(part.parse().unwrap()),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn cpu_list_round_trips(cpus in proptest::collection::vec(0usize..256, 0..40)) {
            let mut want = cpus.clone();
            want.sort_unstable();
            want.dedup();
            prop_assert_eq!(parse_cpu_list(&format_cpu_list(&cpus)), want);
        }

        /// Whatever the current (valid) pair, the chosen order never makes the kernel see
        /// memsw < memory after either write.
        #[test]
        fn memsw_order_keeps_the_kernel_invariant(
            mem in 1u64..1 << 40,
            extra in 0u64..1 << 40,
            new in 1u64..1 << 40,
        ) {
            let (mut m, mut s) = (mem, mem + extra);
            match memsw_order(m, new) {
                MemswOrder::MemoryFirst => {
                    m = new;
                    prop_assert!(s >= m);
                    s = new;
                    prop_assert!(s >= m);
                }
                MemswOrder::MemswFirst => {
                    s = new;
                    prop_assert!(s >= m);
                    m = new;
                    prop_assert!(s >= m);
                }
            }
        }
    }
}
