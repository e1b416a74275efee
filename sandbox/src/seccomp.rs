//! The seccomp filters every confined process runs under, compiled once in
//! the parent (the child only hands the ready program to the kernel).
//!
//! A denylist: the process may use the ordinary system-call surface, but not
//! the calls that reach across process or namespace boundaries, load code
//! into the kernel, or exist mainly as exploit vehicles. Every non-native
//! architecture (including the x32 ABI) kills the process outright.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// System calls answered with EPERM.
const DENIED: &[(&str, libc::c_long)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("chroot", libc::SYS_chroot),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("name_to_handle_at", libc::SYS_name_to_handle_at),
    ("fsopen", libc::SYS_fsopen),
    ("fsmount", libc::SYS_fsmount),
    ("fsconfig", libc::SYS_fsconfig),
    ("fspick", libc::SYS_fspick),
    ("move_mount", libc::SYS_move_mount),
    ("open_tree", libc::SYS_open_tree),
    ("mount_setattr", libc::SYS_mount_setattr),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("reboot", libc::SYS_reboot),
    ("acct", libc::SYS_acct),
    ("quotactl", libc::SYS_quotactl),
    ("lookup_dcookie", libc::SYS_lookup_dcookie),
    ("iopl", libc::SYS_iopl),
    ("ioperm", libc::SYS_ioperm),
    ("personality", libc::SYS_personality),
];

/// The x32 ABI shares the x86_64 audit architecture and marks its system
/// calls with this bit, so the architecture check alone does not catch it.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offset of `nr` in `struct seccomp_data`.
const SECCOMP_DATA_NR_OFFSET: u32 = 0;

#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    #[error("building the seccomp filter")]
    Build(#[source] seccompiler::BackendError),
    #[error("compiling the seccomp filter")]
    Compile(#[source] seccompiler::BackendError),
}

/// The compiled filters, in the order the child installs them.
#[derive(Clone, Debug)]
pub struct SeccompFilters {
    pub programs: Vec<BpfProgram>,
}

impl SeccompFilters {
    /// The denylist filter, plus one that answers `clone3` with ENOSYS: the C
    /// library then falls back to `clone`, whose flags the denylist can see
    /// (seccomp cannot read `clone3`'s arguments, which live in memory).
    pub fn denylist() -> Result<SeccompFilters, SeccompError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
            DENIED.iter().map(|(_, nr)| (*nr, Vec::new())).collect();
        // No new user namespace through clone: it would hand the process a
        // fresh set of capabilities over its own namespaces.
        let new_user_ns = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
            libc::CLONE_NEWUSER as u64,
        )
        .map_err(SeccompError::Build)?;
        rules.insert(
            libc::SYS_clone,
            vec![SeccompRule::new(vec![new_user_ns]).map_err(SeccompError::Build)?],
        );
        let deny = compile(rules, SeccompAction::Errno(libc::EPERM as u32))?;

        let clone3 = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
        let no_clone3 = compile(clone3, SeccompAction::Errno(libc::ENOSYS as u32))?;

        Ok(SeccompFilters {
            programs: vec![deny, no_clone3],
        })
    }

    /// The names of the denied system calls, for documentation and tests.
    pub fn denied_names() -> impl Iterator<Item = &'static str> {
        DENIED.iter().map(|(name, _)| *name)
    }
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    on_match: SeccompAction,
) -> Result<BpfProgram, SeccompError> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, on_match, native_arch())
        .map_err(SeccompError::Build)?;
    let compiled: BpfProgram = filter.try_into().map_err(SeccompError::Compile)?;
    // Kill x32 system calls before anything else looks at the number.
    let mut program = vec![
        stmt(BPF_LD | BPF_W | BPF_ABS, SECCOMP_DATA_NR_OFFSET),
        jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
        stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    program.extend(compiled);
    Ok(program)
}

#[cfg(target_arch = "x86_64")]
fn native_arch() -> TargetArch {
    TargetArch::x86_64
}

#[cfg(target_arch = "aarch64")]
fn native_arch() -> TargetArch {
    TargetArch::aarch64
}

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD: u16 = 0x00;
const BPF_JMP: u16 = 0x05;
const BPF_RET: u16 = 0x06;
const BPF_W: u16 = 0x00;
const BPF_ABS: u16 = 0x20;
const BPF_JGE: u16 = 0x30;
const BPF_K: u16 = 0x00;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_and_start_with_the_x32_check() {
        let filters = SeccompFilters::denylist().unwrap();
        assert_eq!(filters.programs.len(), 2);
        for program in &filters.programs {
            assert!(program.len() > 6);
            assert_eq!(program[1].k, X32_SYSCALL_BIT);
            assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        }
    }

    #[test]
    fn the_issue_s_minimum_is_denied() {
        let names: Vec<&str> = SeccompFilters::denied_names().collect();
        for required in [
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "keyctl",
            "add_key",
            "request_key",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "mount",
            "umount2",
            "unshare",
            "setns",
            "kexec_load",
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
        ] {
            assert!(names.contains(&required), "{required} is not denied");
        }
    }
}
