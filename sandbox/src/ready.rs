//! A confined process started ahead of its command.
//!
//! Most of a spawn does not depend on the program: the clone into fresh
//! namespaces, joining the cgroup leaf and a network namespace, the private
//! `/tmp` and `/proc`, the host name, rlimits and the capability bounding
//! set. A long-lived sandbox does all of that ahead, in the leaf it keeps
//! spare (see [`crate::SandboxConfig::spare_leaf`]), and leaves the process
//! waiting on a socket. A spawn then sends it an [`Order`] (the program
//! directory, identity, program, arguments and environment) and only the
//! part that depends on them is left: binding the directory, `pivot_root`,
//! dropping privileges, seccomp and `execve`. The confinement is the same
//! sequence either way (see [`crate::child`]); only where it pauses differs.
//!
//! While it waits, the process holds nothing of the runner's but its own
//! pipes: every other descriptor it was cloned with is closed first, so a
//! socket or pipe the runner closes is really closed.

use std::ffi::{CStr, c_char};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::cgroup::{CgroupLimits, LeafCgroup};

/// Room for one order, in bytes: far more than any bot's command line and
/// environment, and below a local socket's default send buffer, so an
/// order is always one message. A command that does not fit is spawned the
/// ordinary way.
pub const ORDER_BYTES: usize = 96 * 1024;

/// Most arguments and environment variables together in one order.
pub const ORDER_STRINGS: usize = 2048;

/// Header: uid, gid, writable, argument count, environment count.
const HEADER_WORDS: usize = 5;
const HEADER_BYTES: usize = HEADER_WORDS * 4;

/// What the waiting process sends once everything ahead is done.
pub(crate) const READY_BYTE: u8 = b'R';

/// The part of a spawn that depends on the command: what [`decode`] reads
/// out of an [`Order`], for a waiting process and for a cold spawn alike.
/// Lives here, not in [`crate::child`], so that `child` depends on `ready`
/// and not the other way round.
#[derive(Clone, Copy)]
pub struct Program<'a> {
    /// Host directory shown at the mount point.
    pub app_dir: &'a CStr,
    pub app_writable: bool,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub program: &'a CStr,
    /// NULL-terminated pointer arrays into strings the parent owns.
    pub argv: &'a [*const c_char],
    pub envp: &'a [*const c_char],
}

/// The per-command part of a spawn, encoded once: it travels to a waiting
/// process as it is, and a cold spawn reads it back in the parent.
#[derive(Debug)]
pub struct Order {
    bytes: Vec<u8>,
    /// Arguments and environment variables together.
    strings: usize,
}

/// Why a command cannot be an order.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} contains a NUL byte")]
pub struct NulInCommand {
    pub what: &'static str,
}

impl Order {
    /// Encodes a command: the header, then NUL-terminated strings (program
    /// directory, program, each argument (the first is the program's
    /// name), each `KEY=value`).
    pub fn encode(
        app_dir: &[u8],
        writable: bool,
        uid: u32,
        gid: u32,
        program: &[u8],
        args: &[&[u8]],
        env: &[(&[u8], &[u8])],
    ) -> Result<Order, NulInCommand> {
        let mut bytes = Vec::with_capacity(256);
        for word in [
            uid,
            gid,
            u32::from(writable),
            args.len() as u32,
            env.len() as u32,
        ] {
            bytes.extend_from_slice(&word.to_ne_bytes());
        }
        let mut push = |parts: &[&[u8]], what| {
            if parts.iter().any(|p| p.contains(&0)) {
                return Err(NulInCommand { what });
            }
            for part in parts {
                bytes.extend_from_slice(part);
            }
            bytes.push(0);
            Ok(())
        };
        push(&[app_dir], "the program directory")?;
        push(&[program], "the program")?;
        for arg in args {
            push(&[arg], "an argument")?;
        }
        for (key, value) in env {
            push(&[key, b"=", value], "an environment variable")?;
        }
        Ok(Order {
            bytes,
            strings: args.len() + env.len(),
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Room for the pointer arrays [`decode`] writes.
    pub fn pointers_needed(&self) -> usize {
        self.strings + 2
    }

    /// Whether a waiting process can take it: strictly below its room, so
    /// that a full receive there means a cut order.
    pub fn fits_inbox(&self) -> bool {
        self.bytes.len() < ORDER_BYTES && self.pointers_needed() <= ORDER_STRINGS
    }
}

/// Reads an order without allocating (a waiting process reads it between
/// clone and exec): borrowed from `bytes`, with the NULL-terminated pointer
/// arrays `execve` needs written into `pointers`. `None` for anything
/// [`Order::encode`] never writes.
pub fn decode<'a>(bytes: &'a [u8], pointers: &'a mut [*const c_char]) -> Option<Program<'a>> {
    let word = |i: usize| -> Option<u32> {
        let at = bytes.get(i * 4..i * 4 + 4)?;
        Some(u32::from_ne_bytes([at[0], at[1], at[2], at[3]]))
    };
    let (uid, gid, writable) = (word(0)?, word(1)?, word(2)?);
    let (argc, envc) = (word(3)? as usize, word(4)? as usize);
    if writable > 1 || argc.checked_add(envc)?.checked_add(2)? > pointers.len() {
        return None;
    }
    let mut rest = bytes.get(HEADER_BYTES..)?;
    let mut next = || -> Option<&'a CStr> {
        let end = rest.iter().position(|&b| b == 0)?;
        let (string, tail) = rest.split_at(end + 1);
        rest = tail;
        CStr::from_bytes_with_nul(string).ok()
    };
    let app_dir = next()?;
    let program = next()?;
    let (argv, envp) = pointers.split_at_mut(argc + 1);
    for slot in argv.iter_mut().take(argc) {
        *slot = next()?.as_ptr();
    }
    argv[argc] = std::ptr::null();
    for slot in envp.iter_mut().take(envc) {
        *slot = next()?.as_ptr();
    }
    envp[envc] = std::ptr::null();
    if !rest.is_empty() {
        return None;
    }
    Some(Program {
        app_dir,
        app_writable: writable == 1,
        uid,
        gid,
        program,
        argv: &argv[..=argc],
        envp: &envp[..=envc],
    })
}

/// The runner's ends of a confined process's pipes.
pub(crate) struct ChildEnds {
    /// Its stdin, stdout and stderr.
    pub stdio: [OwnedFd; 3],
    /// Read end of the setup error pipe (EOF once the bot has exec'd).
    pub error: OwnedFd,
    /// Read end (non-blocking) of the init's report pipe.
    pub report: OwnedFd,
    /// Write end of the pipe the child checks its parent's life by.
    pub parent_alive: OwnedFd,
}

/// The runner's side of a process started ahead. Dropping it kills and
/// reaps the process, unless it was handed over to a spawned child.
pub(crate) struct ReadyChild {
    pid: libc::pid_t,
    orders: OwnedFd,
    ends: Option<ChildEnds>,
}

impl ReadyChild {
    pub fn new(pid: libc::pid_t, orders: OwnedFd, ends: ChildEnds) -> ReadyChild {
        ReadyChild {
            pid,
            orders,
            ends: Some(ends),
        }
    }

    /// Sends `order`; false if the process is gone.
    pub fn send(&self, order: &Order) -> bool {
        let bytes = order.as_bytes();
        // SAFETY: sends a valid buffer on a socket we own; MSG_NOSIGNAL keeps
        // a gone process from raising SIGPIPE in the runner.
        let sent = unsafe {
            libc::send(
                self.orders.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        sent == bytes.len() as isize
    }

    /// Waits up to `timeout` for the ready byte; false if the process
    /// failed (its stage is then on the error pipe) or never answered.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return false;
            }
            let mut poll = libc::pollfd {
                fd: self.orders.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, remaining.as_millis().max(1) as i32) };
            if ready < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
                continue;
            }
            if ready <= 0 {
                return false;
            }
            let mut byte = 0u8;
            // SAFETY: reads one byte into a stack variable.
            let n = unsafe {
                libc::recv(
                    self.orders.as_raw_fd(),
                    (&mut byte as *mut u8).cast(),
                    1,
                    libc::MSG_DONTWAIT,
                )
            };
            return n == 1 && byte == READY_BYTE;
        }
    }

    /// Its pid and pipes, for the spawned child that now owns the process.
    pub fn hand_over(mut self) -> Option<(libc::pid_t, ChildEnds)> {
        let ends = self.ends.take()?;
        Some((self.pid, ends))
    }

    /// The setup error pipe, to read why it failed.
    pub fn error_pipe(&self) -> Option<&OwnedFd> {
        self.ends.as_ref().map(|ends| &ends.error)
    }
}

impl Drop for ReadyChild {
    fn drop(&mut self) {
        if self.ends.is_none() {
            return;
        }
        // SAFETY: our unreaped child, so the pid cannot have been reused;
        // waitpid then reaps it.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            loop {
                let mut status = 0;
                let reaped = libc::waitpid(self.pid, &mut status, libc::__WALL);
                if reaped >= 0 || *libc::__errno_location() != libc::EINTR {
                    break;
                }
            }
        }
    }
}

/// A leaf kept for the next spawn with the same limits, and the process
/// waiting in it, if one could be started.
pub(crate) struct Spare {
    pub limits: CgroupLimits,
    /// Dropped before `leaf` (fields drop in order), so the leaf is empty
    /// when it is removed.
    pub ready: Option<ReadyChild>,
    pub leaf: LeafCgroup,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    fn strings(pointers: &[*const c_char]) -> Vec<String> {
        pointers
            .iter()
            .take_while(|p| !p.is_null())
            // SAFETY: every non-null pointer points into the decoded buffer.
            .map(|&p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn an_order_reads_back_as_it_was_written() {
        let order = Order::encode(
            b"/srv/bots/a",
            true,
            60_001,
            60_002,
            b"/bin/sh",
            &[b"/bin/sh", b"-c", b"echo hi"],
            &[(b"PATH", b"/usr/bin"), (b"EMPTY", b"")],
        )
        .unwrap();
        let mut pointers = vec![std::ptr::null(); ORDER_STRINGS];
        let got = decode(order.as_bytes(), &mut pointers).unwrap();
        assert_eq!(got.app_dir, c("/srv/bots/a").as_c_str());
        assert_eq!(got.program, c("/bin/sh").as_c_str());
        assert!(got.app_writable);
        assert_eq!((got.uid, got.gid), (60_001, 60_002));
        assert_eq!(got.argv.len(), 4);
        assert!(got.argv[3].is_null());
        assert_eq!(strings(got.argv), ["/bin/sh", "-c", "echo hi"]);
        assert_eq!(strings(got.envp), ["PATH=/usr/bin", "EMPTY="]);
        assert!(got.envp.last().unwrap().is_null());
    }

    #[test]
    fn no_strings_at_all_is_an_empty_argv_and_environment() {
        let order = Order::encode(b"/a", false, 1, 1, b"/p", &[], &[]).unwrap();
        let mut pointers = vec![std::ptr::null(); 2];
        let got = decode(order.as_bytes(), &mut pointers).unwrap();
        assert!(!got.app_writable);
        assert_eq!(got.argv.len(), 1);
        assert_eq!(got.envp.len(), 1);
    }

    #[test]
    fn cut_padded_or_miscounted_orders_are_refused() {
        let order = Order::encode(b"/a", false, 1, 1, b"/p", &[b"x"], &[(b"K", b"v")]).unwrap();
        let bytes = order.as_bytes();
        let mut pointers = vec![std::ptr::null(); 16];
        for cut in 0..bytes.len() {
            assert!(
                decode(&bytes[..cut], &mut pointers).is_none(),
                "cut at {cut}"
            );
        }
        let mut padded = bytes.to_vec();
        padded.push(b'x');
        assert!(decode(&padded, &mut pointers).is_none());
        // More strings announced than there is room for pointers.
        let mut greedy = bytes.to_vec();
        greedy[12..16].copy_from_slice(&100u32.to_ne_bytes());
        assert!(decode(&greedy, &mut pointers).is_none());
        let mut not_a_flag = bytes.to_vec();
        not_a_flag[8..12].copy_from_slice(&2u32.to_ne_bytes());
        assert!(decode(&not_a_flag, &mut pointers).is_none());
    }

    #[test]
    fn nul_bytes_do_not_become_orders_and_oversized_ones_do_not_fit() {
        assert_eq!(
            Order::encode(b"/a", false, 1, 1, b"/p", &[b"a\0b"], &[]).unwrap_err(),
            NulInCommand {
                what: "an argument"
            }
        );
        assert_eq!(
            Order::encode(b"/a", false, 1, 1, b"/p", &[], &[(b"K\0", b"v")]).unwrap_err(),
            NulInCommand {
                what: "an environment variable"
            }
        );
        let small = Order::encode(b"/a", false, 1, 1, b"/p", &[b"x"], &[]).unwrap();
        assert!(small.fits_inbox());
        let huge = vec![b'x'; ORDER_BYTES];
        let order = Order::encode(b"/a", false, 1, 1, b"/p", &[&huge], &[]).unwrap();
        assert!(!order.fits_inbox());
        // Too large to wait for, but it still reads back (a cold spawn's).
        let mut pointers = vec![std::ptr::null(); order.pointers_needed()];
        assert_eq!(
            decode(order.as_bytes(), &mut pointers).unwrap().argv.len(),
            2
        );
        let many: Vec<&[u8]> = vec![b"x"; ORDER_STRINGS];
        assert!(
            !Order::encode(b"/a", false, 1, 1, b"/p", &many, &[])
                .unwrap()
                .fits_inbox()
        );
    }
}
