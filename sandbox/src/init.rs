//! The init at pid 1 of every sandbox: the confined child clones the bot
//! once, right before its `execve`, and stays behind as the pid namespace's
//! init.
//!
//! Why an init at all: the kernel treats pid 1 of a pid namespace specially
//! (pid_namespaces(7)). A signal it sends itself (or any process of its
//! namespace sends it) is dropped unless it installed a handler, so a bot at
//! pid 1 that calls `kill(getpid(), SIGSEGV)` would run on instead of
//! crashing as it would outside; and every orphan is reparented to pid 1,
//! which a bot never reaps. bubblewrap, tini and nsjail put a small init
//! there for the same reasons. This one:
//!
//! * starts the bot as its only direct child;
//! * reaps every process that dies under it (`waitpid(-1)`);
//! * forwards [`FORWARDED`] signals, whoever sends them, to the bot;
//! * when the bot ends, writes the bot's raw wait status to the report pipe
//!   (its only descriptor) and exits. The status cannot be reproduced on the
//!   init itself: the namespace rule above also drops a signal the init
//!   raises on itself, and from the parent namespace only SIGKILL and SIGSTOP
//!   reach it. So the report is what the spawner believes; the init's own
//!   exit status (the bot's code, or 128 + its signal) is only for people
//!   reading `ps`. When the init dies without a report (killed at teardown,
//!   by the OOM killer, or by its parent-death signal), the spawner reports
//!   the init's own end.
//!
//! The init runs with exactly the bot's confinement (cgroup, namespaces,
//! uid, no capabilities, rlimits, seccomp): it starts the bot after all of
//! it. It is made non-dumpable so the bot, which shares its uid, can neither read its
//! memory nor open its descriptors through `/proc/1`, and its command line
//! (a copy of the runner's) is overwritten so `/proc/1/cmdline` does not show
//! the runner's arguments. The init exits as soon as the bot does, which ends
//! the namespace: the kernel kills whatever the bot left running, as it did
//! when the bot itself was pid 1.
//!
//! Like the rest of the child, this is a copy of one thread of a possibly
//! multi-threaded runner, so it only makes system calls (the bot is started
//! with `clone`, since glibc's `fork` takes locks and runs atfork handlers)
//! and touches nothing it did not prepare.

use std::ffi::{CStr, c_char};
use std::os::fd::RawFd;

use crate::stage::{Failure, Stage, check, errno, report_and_exit};

/// Signals the init passes on to the bot: the ones a supervisor uses to ask a
/// process to stop or to poke it.
pub const FORWARDED: [libc::c_int; 6] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// What the init shows as its command line and name.
const INIT_NAME: &[u8] = b"arena-init\0";

/// First word of a report: the bot ended; the second word is its wait status.
pub const REPORT_BOT_ENDED: u32 = 1;
/// First word of a report: the init itself failed; the second word is errno.
pub const REPORT_INIT_FAILED: u32 = 2;
/// A report is two native-endian 32-bit words.
pub const REPORT_LEN: usize = 8;

/// What the init needs, prepared by the parent.
pub struct InitSetup {
    /// Write end of the report pipe (the read end is the spawner's).
    pub report_fd: RawFd,
    /// `[arg_start, arg_end)` of the runner's command line in this copy of
    /// its memory, from `/proc/self/stat`.
    pub runner_args: (usize, usize),
}

/// How the bot starts: the program, and the pipe a failed `execve` is
/// reported through.
pub struct BotExec<'a> {
    pub program: &'a CStr,
    /// NULL-terminated pointer arrays into strings the parent owns.
    pub argv: &'a [*const c_char],
    pub envp: &'a [*const c_char],
    /// The setup error pipe (close-on-exec).
    pub error_fd: RawFd,
}

/// Room for the bot's side between its clone and its `execve`: a handful of
/// system-call wrappers.
const BOT_STACK_BYTES: usize = 64 * 1024;

#[repr(C, align(16))]
struct BotStack([u8; BOT_STACK_BYTES]);

/// Everything the bot's side reads, on the init's stack.
struct BotStart<'a> {
    setup: &'a InitSetup,
    exec: &'a BotExec<'a>,
    bot_mask: libc::sigset_t,
    runner_chld: libc::sigaction,
}

/// Starts the bot, which execs `exec`, and stays behind as the init; returns
/// only a failure from before the bot exists (reported like any other stage).
///
/// The bot is cloned with `CLONE_VM | CLONE_VFORK`, as `posix_spawn` does:
/// it runs on a small stack of its own in the init's memory until its
/// `execve` gives it a fresh address space, and the init waits until then.
/// Copying the runner's whole address space a second time (the confined
/// child already is one copy) would cost more than the rest of the init.
///
/// # Safety
/// Called only from the confined child, after the whole confinement
/// sequence, with no other thread in the process.
pub unsafe fn start_bot(setup: &InitSetup, exec: &BotExec<'_>) -> Failure {
    // SAFETY: `clone_bot`'s contract is this function's, which the caller
    // keeps.
    match unsafe { clone_bot(setup, exec) } {
        Ok(never) => match never {},
        Err(failure) => failure,
    }
}

enum Never {}

/// Starts the bot and becomes the init (see [`start_bot`]).
///
/// # Safety
/// As for [`start_bot`].
unsafe fn clone_bot(setup: &InitSetup, exec: &BotExec<'_>) -> Result<Never, Failure> {
    // Before the clone, so no bot can ever see the init dumpable.
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    check(rc as _, Stage::NotDumpable)?;
    // SAFETY: `runner_args` is the runner's argument area in this process's
    // private copy of its memory, which nothing here reads any more (see
    // [`InitSetup`]).
    unsafe { hide_runner_args(setup.runner_args) };
    // SAFETY: PR_SET_NAME reads a NUL-terminated static string.
    let rc = unsafe { libc::prctl(libc::PR_SET_NAME, INIT_NAME.as_ptr(), 0, 0, 0) };
    check(rc as _, Stage::NotDumpable)?;

    // Blocked from before the clone, so none is lost or acted on by
    // default in the window before the init waits for them; a blocked
    // signal is queued even for a namespace init (signal(7)).
    // SAFETY: a sigset_t is plain integers, for which all zeros is valid.
    let mut waited: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: empties a sigset_t on the stack.
    unsafe { libc::sigemptyset(&mut waited) };
    // SAFETY: adds a valid signal number to a sigset_t on the stack.
    unsafe { libc::sigaddset(&mut waited, libc::SIGCHLD) };
    for signal in FORWARDED {
        // SAFETY: as above.
        unsafe { libc::sigaddset(&mut waited, signal) };
    }
    let mut start = BotStart {
        setup,
        exec,
        // SAFETY: plain integers, for which all zeros is valid;
        // sigprocmask fills it in below.
        bot_mask: unsafe { std::mem::zeroed() },
        // SAFETY: plain data, for which all zeros is valid (SIG_DFL, no
        // flags, an empty mask); sigaction fills it in below.
        runner_chld: unsafe { std::mem::zeroed() },
    };
    // SAFETY: reads and writes sigset_ts on the stack; this process runs
    // no other thread.
    let rc = unsafe { libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut start.bot_mask) };
    check(rc as _, Stage::BlockSignals)?;
    // A runner that ignores SIGCHLD would make the kernel reap the bot
    // before the init could read its status.
    // SAFETY: plain data, for which all zeros is valid (no flags, an empty
    // mask); the handler is set next.
    let mut default_action: libc::sigaction = unsafe { std::mem::zeroed() };
    default_action.sa_sigaction = libc::SIG_DFL;
    // SAFETY: reads and writes sigaction structs on the stack.
    let rc = unsafe { libc::sigaction(libc::SIGCHLD, &default_action, &mut start.runner_chld) };
    check(rc as _, Stage::BlockSignals)?;

    let mut stack = BotStack([0; BOT_STACK_BYTES]);
    // The stack grows down from its end.
    let top = stack.0.as_mut_ptr_range().end.cast::<libc::c_void>();
    // SAFETY: `bot_main` runs on `stack` and reads `start`, both on this
    // frame: CLONE_VFORK suspends this process until the bot execs or
    // exits, so both outlive its use of them, and it shares this memory
    // (CLONE_VM) without writing to it but for its own stack.
    let bot = unsafe {
        libc::clone(
            bot_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&mut start as *mut BotStart<'_>).cast(),
        )
    };
    check(bot as _, Stage::ForkBot)?;
    // The bot has exec'd (or exited): it no longer uses `stack`.
    // SAFETY: the caller keeps `start_bot`'s contract, and `waited` was
    // blocked above.
    unsafe { supervise(bot, setup, &waited) }
}

/// The bot's side of the clone: undo what only the init needs, so the
/// program starts with the signal state and parent-death signal it had
/// before there was an init, then exec. Never returns.
extern "C" fn bot_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `BotStart` on the init's stack, which the init,
    // suspended until this process execs or exits, keeps alive.
    let start = unsafe { &*(arg as *const BotStart<'_>) };
    // SAFETY: this is the bot, before its `execve`.
    let failure = match unsafe { become_bot(start) } {
        Err(failure) => failure,
        Ok(()) => {
            // SAFETY: execve reads NUL-terminated strings and NULL-terminated
            // pointer arrays that the parent prepared and keeps alive.
            unsafe {
                libc::execve(
                    start.exec.program.as_ptr(),
                    start.exec.argv.as_ptr(),
                    start.exec.envp.as_ptr(),
                )
            };
            (Stage::Exec, errno())
        }
    };
    report_and_exit(start.exec.error_fd, failure)
}

/// # Safety
/// Runs only in the bot before `execve`, sharing the init's memory: it
/// writes nothing but the signal state and its own stack.
unsafe fn become_bot(start: &BotStart<'_>) -> Result<(), Failure> {
    // SAFETY: closes the bot's own copy of the report pipe (the clone did not
    // share the descriptor table).
    unsafe { libc::close(start.setup.report_fd) };
    // The parent-death signal is not inherited; the bot's parent is now
    // the init, whose death ends the namespace anyway.
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(rc as _, Stage::ParentDeathSignal)?;
    // A handler copied from the runner must never run here, in the
    // init's memory: every caught signal goes back to its default until
    // execve (which resets caught signals anyway).
    // SAFETY: plain data, for which all zeros is valid (no flags, an empty
    // mask); the handler is set next.
    let mut default_action: libc::sigaction = unsafe { std::mem::zeroed() };
    default_action.sa_sigaction = libc::SIG_DFL;
    for signal in 1..libc::SIGRTMAX() + 1 {
        // SAFETY: as for `default_action`; sigaction fills it in below.
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: only reads this signal's action into a struct on the stack.
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } < 0 {
            continue;
        }
        if current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN {
            // SAFETY: sets this signal's action from a valid struct on the
            // stack; this process has one thread.
            unsafe { libc::sigaction(signal, &default_action, std::ptr::null_mut()) };
        }
    }
    // Only an ignored disposition survives execve, so only that one
    // needs restoring.
    if start.runner_chld.sa_sigaction == libc::SIG_IGN {
        // SAFETY: sets SIGCHLD's action from the runner's, which the init
        // saved and keeps alive while this process runs.
        let rc =
            unsafe { libc::sigaction(libc::SIGCHLD, &start.runner_chld, std::ptr::null_mut()) };
        check(rc as _, Stage::RestoreSignals)?;
    }
    // SAFETY: restores the mask the init saved before blocking signals.
    let rc = unsafe { libc::sigprocmask(libc::SIG_SETMASK, &start.bot_mask, std::ptr::null_mut()) };
    check(rc as _, Stage::RestoreSignals)
}

/// Overwrites the runner's command line in this copy of its memory with
/// [`INIT_NAME`] and zeros (see [`show_as`]).
///
/// # Safety
/// As for [`show_as`].
unsafe fn hide_runner_args(area: (usize, usize)) {
    // SAFETY: the caller's contract.
    unsafe { show_as(area, INIT_NAME) }
}

/// Shows `name` (NUL-terminated) as this process's command line,
/// overwriting the runner's command line in this copy of its memory with it
/// and zeros, keeping the last byte zero so the kernel shows exactly that
/// range (proc(5), `/proc/pid/cmdline`).
///
/// # Safety
/// `[start, end)` is the argument area of this process's memory (mapped and
/// writable: it is on the main thread's stack), which nothing in this process
/// reads any more.
pub(crate) unsafe fn show_as((start, end): (usize, usize), name: &[u8]) {
    let Some(len) = end.checked_sub(start).filter(|&len| len > 0) else {
        return;
    };
    let name = &name[..name.len().min(len)];
    // SAFETY: see the function's contract.
    unsafe {
        std::ptr::write_bytes(start as *mut u8, 0, len);
        std::ptr::copy_nonoverlapping(name.as_ptr(), start as *mut u8, name.len());
        *((end - 1) as *mut u8) = 0;
    }
}

/// The init's loop: wait for a signal; reap on SIGCHLD, forward anything
/// else; report and exit when the bot has ended.
///
/// # Safety
/// See [`start_bot`]; `waited` is blocked in this process.
unsafe fn supervise(bot: libc::pid_t, setup: &InitSetup, waited: &libc::sigset_t) -> ! {
    // The init holds nothing but its report pipe: not the bot's stdio (so
    // the runner sees EOF on stdout when the bot goes), not the setup
    // error pipe (so the runner reads EOF exactly when the bot's execve
    // closes the last copy), not the cgroup files.
    let keep = setup.report_fd as libc::c_uint;
    if keep > 0 {
        // SAFETY: close_range with integer arguments, on this process's
        // descriptors only.
        unsafe { libc::syscall(libc::SYS_close_range, 0u32, keep - 1, 0u32) };
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0u32) };
    loop {
        // SAFETY: plain data, for which all zeros is valid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: reads a valid sigset_t and writes a siginfo_t on the
        // stack.
        let signal = unsafe { libc::sigwaitinfo(waited, &mut info) };
        if signal < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            fail(bot, setup.report_fd, errno());
        }
        if signal != libc::SIGCHLD {
            // The bot may be gone already; its SIGCHLD is then next.
            // SAFETY: kill with integer arguments only.
            unsafe { libc::kill(bot, signal) };
            continue;
        }
        // SIGCHLD is not queued per child: reap everything that is dead.
        loop {
            let mut status = 0;
            // SAFETY: writes a wait status into an integer on the stack.
            let reaped = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
            if reaped == bot {
                report(setup.report_fd, REPORT_BOT_ENDED, status);
                // SAFETY: ends this process without running anything of
                // the runner's.
                unsafe { libc::_exit(own_exit_code(status)) };
            }
            if reaped > 0 {
                continue;
            }
            if reaped == 0 {
                break;
            }
            match errno() {
                libc::EINTR => continue,
                // The bot is our child until it is reaped above, so
                // this cannot be ECHILD; anything is a broken init.
                e => fail(bot, setup.report_fd, e),
            }
        }
    }
}

/// The init cannot go on: the bot dies with it (the namespace ends), and
/// the spawner is told the init failed rather than being shown a kill.
fn fail(bot: libc::pid_t, report_fd: RawFd, errno: i32) -> ! {
    // SAFETY: kill with integer arguments only.
    unsafe { libc::kill(bot, libc::SIGKILL) };
    report(report_fd, REPORT_INIT_FAILED, errno);
    // SAFETY: ends this process without running anything of the runner's.
    unsafe { libc::_exit(127) }
}

/// One report; a pipe write this small is atomic (pipe(7)).
fn report(fd: RawFd, kind: u32, value: i32) {
    let mut bytes = [0u8; REPORT_LEN];
    bytes[..4].copy_from_slice(&kind.to_ne_bytes());
    bytes[4..].copy_from_slice(&value.to_ne_bytes());
    loop {
        // SAFETY: writes a stack buffer; if the spawner is gone there is
        // nobody to tell.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written >= 0 || errno() != libc::EINTR {
            return;
        }
    }
}

/// The init's own exit code for the bot's `status`, as a shell reports it.
fn own_exit_code(status: libc::c_int) -> libc::c_int {
    if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        libc::WEXITSTATUS(status)
    }
}

/// How the bot ended, decoded from a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// It exited with this code.
    Exited(i32),
    /// This signal ended it.
    Signaled(i32),
    /// The init failed with this errno (an infrastructure failure).
    InitFailed(i32),
}

impl Report {
    /// Decodes the init's report; `None` for anything it never writes.
    pub fn decode(bytes: [u8; REPORT_LEN]) -> Option<Report> {
        let kind = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let value = i32::from_ne_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        match kind {
            REPORT_BOT_ENDED if libc::WIFEXITED(value) => {
                Some(Report::Exited(libc::WEXITSTATUS(value)))
            }
            REPORT_BOT_ENDED if libc::WIFSIGNALED(value) => {
                Some(Report::Signaled(libc::WTERMSIG(value)))
            }
            REPORT_INIT_FAILED => Some(Report::InitFailed(value)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(kind: u32, value: i32) -> [u8; REPORT_LEN] {
        let mut bytes = [0u8; REPORT_LEN];
        bytes[..4].copy_from_slice(&kind.to_ne_bytes());
        bytes[4..].copy_from_slice(&value.to_ne_bytes());
        bytes
    }

    #[test]
    fn reports_decode_to_the_bot_s_own_end() {
        // Wait statuses as the kernel encodes them (wait(2)).
        assert_eq!(
            Report::decode(encode(REPORT_BOT_ENDED, 3 << 8)),
            Some(Report::Exited(3))
        );
        assert_eq!(
            Report::decode(encode(REPORT_BOT_ENDED, libc::SIGSEGV)),
            Some(Report::Signaled(libc::SIGSEGV))
        );
        // Core-dump bit set: still the signal.
        assert_eq!(
            Report::decode(encode(REPORT_BOT_ENDED, libc::SIGABRT | 0x80)),
            Some(Report::Signaled(libc::SIGABRT))
        );
        assert_eq!(
            Report::decode(encode(REPORT_INIT_FAILED, libc::EINVAL)),
            Some(Report::InitFailed(libc::EINVAL))
        );
        // A stopped status is never reported (no WUNTRACED), nor kind 0.
        assert_eq!(Report::decode(encode(REPORT_BOT_ENDED, 0x137f)), None);
        assert_eq!(Report::decode(encode(0, 0)), None);
    }

    #[test]
    fn own_exit_code_follows_the_shell_convention() {
        assert_eq!(own_exit_code(7 << 8), 7);
        assert_eq!(own_exit_code(libc::SIGKILL), 128 + libc::SIGKILL);
    }
}
