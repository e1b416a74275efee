//! The one error type at the cgroup module's boundary.
//!
//! Each variant names the step that failed and carries the path it touched, so a log line
//! alone says what was attempted where (youki `WrappedIoError`, firecracker jailer errors).

use std::io;
use std::path::PathBuf;

/// The library error of cgroups-rs, kept as the source where its setters did the write.
pub type CgroupsRsError = cgroups_rs::fs::error::Error;

/// Everything that can go wrong while creating, limiting, reading, killing or removing a
/// cgroup leaf.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    // ---- invalid input ----
    /// A leaf or parent name is not a plain relative cgroup name.
    #[error("invalid cgroup name {name:?}: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The requested limits cannot be expressed (zero or out of the kernel's range).
    #[error("invalid cgroup limits: {reason}")]
    InvalidLimits {
        /// Which limit is wrong and why.
        reason: String,
    },

    // ---- detection ----
    /// `statfs(2)` on a would-be cgroup mount failed.
    #[error("statfs {path}")]
    Statfs {
        /// The path given to statfs.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The filesystem at the cgroup root is neither cgroup2, cgroup (v1) nor a tmpfs holding
    /// v1 mounts.
    #[error("{path} is not a cgroup mount (filesystem magic {magic:#x})")]
    NotCgroupFs {
        /// The path inspected.
        path: PathBuf,
        /// `f_type` reported by statfs.
        magic: i64,
    },

    // ---- parent group setup ----
    /// Creating the shared parent group (e.g. `arena`) failed.
    #[error("create parent cgroup {path}")]
    CreateParent {
        /// The directory being created.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Removing an empty parent group failed for a reason other than it being in use.
    #[error("remove parent cgroup {path}")]
    RemoveParent {
        /// The directory being removed.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Copying `cpuset.cpus`/`cpuset.mems` from the v1 root into the parent failed (without
    /// it every attach into a leaf fails with ENOSPC).
    #[error("copy {file} into v1 cpuset parent {path}")]
    CopyCpuset {
        /// The cpuset directory being filled.
        path: PathBuf,
        /// `cpuset.cpus` or `cpuset.mems`.
        file: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Reading `cgroup.controllers` or `cgroup.subtree_control` of a v2 group failed.
    #[error("read controller list {path}")]
    ReadControllers {
        /// The file being read.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing `+controller` into a v2 `cgroup.subtree_control` failed (EBUSY there usually
    /// means the group still holds processes: the "no internal processes" rule).
    #[error("enable controllers {request:?} in {path}")]
    EnableControllers {
        /// The `cgroup.subtree_control` file.
        path: PathBuf,
        /// What was written, e.g. `+memory`.
        request: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A limit needs a controller (or control file) this host does not offer to the leaf,
    /// and the manager was not told to allow that.
    #[error(
        "cannot enforce {limit}: controller {controller} is not available at {path} \
         (construct the manager with allow_missing_controllers to run without it)"
    )]
    ControllerMissing {
        /// The controller name, e.g. `memory`.
        controller: &'static str,
        /// Which limit or reading needed it.
        limit: &'static str,
        /// Where it was looked for.
        path: PathBuf,
    },

    // ---- leaf creation and limits ----
    /// A leaf of that name already exists: names must be unique per confined process.
    #[error("cgroup leaf {path} already exists")]
    LeafExists {
        /// The existing directory.
        path: PathBuf,
    },
    /// `mkdir` of a leaf directory failed.
    #[error("create cgroup leaf {path}")]
    CreateLeaf {
        /// The directory being created.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Reading the current value of a limit (to order v1 memory writes) failed.
    #[error("read current limit {path}")]
    ReadLimit {
        /// The control file.
        path: PathBuf,
        /// The OS error or a parse failure.
        #[source]
        source: io::Error,
    },
    /// Writing the memory hard limit failed.
    #[error("set memory limit {bytes} in {path}")]
    SetMemoryLimit {
        /// The leaf directory.
        path: PathBuf,
        /// The limit in bytes.
        bytes: u64,
        /// The cgroups-rs error (it wraps the OS error).
        #[source]
        source: CgroupsRsError,
    },
    /// Writing the swap limit (v1 `memory.memsw.limit_in_bytes`, v2 `memory.swap.max`) failed.
    #[error("set swap limit {value} in {path}")]
    SetSwapLimit {
        /// The leaf directory.
        path: PathBuf,
        /// The value written (v1: memory+swap bytes, v2: swap bytes).
        value: u64,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// Writing `pids.max` failed.
    #[error("set pids.max {max} in {path}")]
    SetPidsLimit {
        /// The leaf directory.
        path: PathBuf,
        /// The limit.
        max: u64,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// Writing `cpuset.cpus` failed (EINVAL: a CPU outside the parent's set).
    #[error("set cpuset.cpus {cpus:?} in {path}")]
    SetCpus {
        /// The leaf directory.
        path: PathBuf,
        /// The list written, e.g. `0-1`.
        cpus: String,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// Writing a CPU bandwidth cap failed (v1 `cpu.cfs_period_us`/`cpu.cfs_quota_us`, v2
    /// `cpu.max`; EINVAL: a value outside the kernel's range or above the parent's cap).
    #[error("set cpu quota {value:?} in {path}")]
    SetCpuQuota {
        /// The control file written.
        path: PathBuf,
        /// The value written, e.g. `50000 100000`.
        value: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Copying `cpuset.mems` from the parent into a v1 leaf failed.
    #[error("set cpuset.mems {mems:?} in {path}")]
    SetMems {
        /// The leaf directory.
        path: PathBuf,
        /// The list written.
        mems: String,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },

    // ---- reading ----
    /// Opening a leaf's `cgroup.procs` for the child to join failed.
    #[error("open {path} for joining")]
    OpenProcs {
        /// The `cgroup.procs` file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Reading or parsing a leaf's `cgroup.procs` failed.
    #[error("read pids from {path}")]
    ReadProcs {
        /// The `cgroup.procs` file.
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },
    /// Reading or parsing the OOM kill counter failed.
    #[error("read oom_kill from {path}")]
    ReadOomKills {
        /// `memory.oom_control` (v1) or `memory.events` (v2).
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },
    /// Reading or parsing the peak memory failed.
    #[error("read peak memory from {path}")]
    ReadPeakMemory {
        /// `memory.max_usage_in_bytes` (v1) or `memory.peak` (v2).
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },
    /// Reading or parsing the consumed CPU time failed.
    #[error("read cpu time from {path}")]
    ReadCpuTime {
        /// `cpuacct.usage` (v1) or `cpu.stat` (v2).
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },

    // ---- killing ----
    /// Writing `FROZEN` or reading `freezer.state` failed.
    #[error("freeze {path}")]
    Freeze {
        /// The freezer leaf directory.
        path: PathBuf,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// Writing `THAWED` failed; processes may stay frozen (and unkillable) in the leaf.
    #[error("thaw {path}")]
    Thaw {
        /// The freezer leaf directory.
        path: PathBuf,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// `kill(pid, SIGKILL)` failed with something other than ESRCH.
    #[error("SIGKILL pid {pid} listed in {path}")]
    Signal {
        /// The target process.
        pid: i32,
        /// The `cgroup.procs` it was listed in.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing `1` into a v2 leaf's `cgroup.kill` failed.
    #[error("write cgroup.kill in {path}")]
    WriteCgroupKill {
        /// The unified leaf directory.
        path: PathBuf,
        /// The cgroups-rs error.
        #[source]
        source: CgroupsRsError,
    },
    /// Reading or parsing a v2 leaf's `cgroup.events` failed.
    #[error("read cgroup.events in {path}")]
    ReadEvents {
        /// The `cgroup.events` file.
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },
    /// The leaf still held processes when the kill deadline passed.
    #[error("cgroup {path} still holds pids {remaining:?} after {waited_ms} ms of killing")]
    KillTimeout {
        /// The directory that is not empty.
        path: PathBuf,
        /// What it still held at the last look.
        remaining: Vec<i32>,
        /// How long killing went on.
        waited_ms: u64,
        /// The last failure of a kill step (freeze, signal, thaw, `cgroup.kill`), if any.
        #[source]
        cause: Option<Box<CgroupError>>,
    },

    // ---- removal ----
    /// `rmdir` of a leaf directory kept failing (EBUSY past the retry bound, or another error).
    #[error("remove cgroup leaf {path}")]
    RemoveLeaf {
        /// The directory.
        path: PathBuf,
        /// The last OS error.
        #[source]
        source: io::Error,
    },
    /// Listing the leaves under a parent group (for stale cleanup) failed.
    #[error("list cgroup leaves in {path}")]
    ListLeaves {
        /// The parent directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Reading this process's own `/proc/self/stat` start time failed.
    #[error("read own start time from {path}")]
    ReadStartTime {
        /// The stat file.
        path: PathBuf,
        /// The OS error or a parse failure (`InvalidData`).
        #[source]
        source: io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each cause is printed once: the message names the step and the path,
    /// and the OS error comes only as the source, which error chains print.
    #[test]
    fn messages_leave_the_os_error_to_the_source() {
        let err = CgroupError::Statfs {
            path: PathBuf::from("/sys/fs/cgroup/x"),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        let shown = err.to_string();
        let cause = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(shown, "statfs /sys/fs/cgroup/x");
        assert!(cause.is_some_and(|c| c.contains("No such file")));
    }
}
