//! Non-blocking pipe I/O on raw descriptors: the runner polls bots, it never
//! blocks on one.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

pub fn set_nonblocking(raw: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller holds open; no memory is passed.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What one non-blocking read found.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    Data(usize),
    /// Nothing there yet.
    Empty,
    /// The writer closed its end.
    Closed,
}

pub fn read_some(fd: RawFd, buf: &mut [u8]) -> io::Result<ReadOutcome> {
    loop {
        // SAFETY: the caller holds `fd` open; `buf` is valid for `buf.len()` writable bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            return Ok(ReadOutcome::Data(n as usize));
        }
        if n == 0 {
            return Ok(ReadOutcome::Closed);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(ReadOutcome::Empty),
            _ => return Err(err),
        }
    }
}

/// Writes what the pipe takes now; returns how many bytes went.
/// `Ok(None)` means the reader is gone (EPIPE).
pub fn write_some(fd: RawFd, bytes: &[u8]) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: the caller holds `fd` open; `bytes` is valid for `bytes.len()` readable bytes.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) => return Ok(Some(0)),
            Some(libc::EPIPE) => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// One descriptor to wait on.
pub struct Interest {
    pub fd: RawFd,
    pub readable: bool,
    pub writable: bool,
}

/// Waits until one of `interests` is ready or `timeout` passes.
pub fn wait_any(interests: &[Interest], timeout: Duration) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = interests
        .iter()
        .map(|i| libc::pollfd {
            fd: i.fd,
            events: (if i.readable { libc::POLLIN } else { 0 })
                | (if i.writable { libc::POLLOUT } else { 0 }),
            revents: 0,
        })
        .collect();
    // Round up so a sub-millisecond remainder still sleeps instead of spinning.
    let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    if n < 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    Ok(())
}

/// Copies `outputs` (made non-blocking here) into `log` until they have all
/// closed and `exited` says the process is gone (`true`), or until the
/// deadline passes (`false`). Used for build scripts, whose output is only
/// kept, never parsed.
pub fn drain_until_exit(
    outputs: &[std::os::fd::OwnedFd],
    log: &mut crate::capped_log::CappedLog,
    deadline: std::time::Instant,
    mut exited: impl FnMut() -> io::Result<bool>,
) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    use std::time::Instant;

    for output in outputs {
        set_nonblocking(output.as_raw_fd())?;
    }
    let mut open = vec![true; outputs.len()];
    let mut buf = vec![0u8; 64 * 1024];
    // Once both streams are closed, poll for the exit with a growing pause.
    let mut pause = Duration::from_micros(50);
    loop {
        for (output, is_open) in outputs.iter().zip(open.iter_mut()) {
            while *is_open {
                match read_some(output.as_raw_fd(), &mut buf)? {
                    ReadOutcome::Data(n) => log.write(&buf[..n]),
                    ReadOutcome::Empty => break,
                    ReadOutcome::Closed => *is_open = false,
                }
            }
        }
        let now = Instant::now();
        if !open.contains(&true) {
            if exited()? {
                return Ok(true);
            }
            if now >= deadline {
                return Ok(false);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
            continue;
        }
        if now >= deadline {
            return Ok(false);
        }
        let interests: Vec<Interest> = outputs
            .iter()
            .zip(&open)
            .filter(|(_, open)| **open)
            .map(|(fd, _)| Interest {
                fd: fd.as_raw_fd(),
                readable: true,
                writable: false,
            })
            .collect();
        wait_any(&interests, (deadline - now).min(Duration::from_millis(100)))?;
    }
}
