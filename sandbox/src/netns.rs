//! Network namespaces made ahead of time.
//!
//! Creating a network namespace is the most expensive step of a spawn (the
//! kernel registers a loopback device, its sysctl tables and every
//! protocol's per-namespace state: about a millisecond here), and none of it
//! depends on the command. So a thread of the sandbox keeps a few fresh
//! namespaces ready, each with `lo` already up, and a spawn hands one to its
//! child, which joins it with `setns` instead of cloning a new one. Each
//! namespace serves exactly one sandbox: the pool holds the only reference
//! until the child joins, the parent closes its copy right after the clone,
//! and the namespace is gone once the sandbox's last process is.
//!
//! When the pool is empty (a burst of spawns) or cannot work (the thread
//! failed to make a namespace), a spawn falls back to `CLONE_NEWNET`: the
//! pool only ever saves time, never changes what a bot sees.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How many ready namespaces the pool keeps: enough for the seats of a
/// match starting at once on a small worker.
pub const POOL_SIZE: usize = 4;

/// A fresh network namespace with `lo` up, not yet joined by anyone.
#[derive(Debug)]
pub struct ReadyNetns(OwnedFd);

impl ReadyNetns {
    pub fn as_raw_fd(&self) -> i32 {
        self.0.as_raw_fd()
    }
}

#[derive(Default)]
struct State {
    ready: VecDeque<ReadyNetns>,
    stopping: bool,
    /// Set once the maker failed: the pool stays empty from then on.
    broken: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Keeps up to `size` namespaces ready; stops its thread on drop.
pub struct NetnsPool {
    shared: Arc<Shared>,
    maker: Option<JoinHandle<()>>,
}

impl NetnsPool {
    /// Starts the maker thread. A pool of size 0, or one whose thread
    /// cannot start, is always empty.
    pub fn start(size: usize) -> NetnsPool {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let maker = if size == 0 {
            None
        } else {
            let for_thread = Arc::clone(&shared);
            match std::thread::Builder::new()
                .name("arena-netns".to_owned())
                .spawn(move || make_namespaces(&for_thread, size))
            {
                Ok(handle) => Some(handle),
                Err(e) => {
                    tracing::warn!(
                        error = %e,
                        "cannot start the network-namespace thread; every spawn makes its own"
                    );
                    None
                }
            }
        };
        NetnsPool { shared, maker }
    }

    /// A ready namespace, if one is waiting; the pool then makes another.
    pub fn take(&self) -> Option<ReadyNetns> {
        let taken = self.shared.lock().ready.pop_front();
        if taken.is_some() {
            self.shared.wake.notify_one();
        }
        taken
    }

    /// Ready namespaces right now (for tests).
    pub fn ready(&self) -> usize {
        self.shared.lock().ready.len()
    }

    /// Whether the maker gave up after a failure (for tests and logs).
    pub fn is_broken(&self) -> bool {
        self.shared.lock().broken
    }
}

impl Drop for NetnsPool {
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.wake.notify_all();
        if let Some(maker) = self.maker.take()
            && maker.join().is_err()
        {
            tracing::error!("the network-namespace thread panicked");
        }
        // The ready namespaces close with the state.
    }
}

/// The maker thread: refills the pool whenever it is below `size`.
fn make_namespaces(shared: &Shared, size: usize) {
    // Network namespaces are per thread: this thread moves into each new
    // one to set it up, and back home before handing it out.
    let home = match open_own_netns() {
        Ok(fd) => fd,
        Err(e) => {
            give_up(shared, "opening this thread's network namespace", &e);
            return;
        }
    };
    loop {
        {
            let mut state = shared.lock();
            while !state.stopping && state.ready.len() >= size {
                state = shared.wake.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            if state.stopping {
                return;
            }
        }
        match make_one(&home) {
            Ok(netns) => shared.lock().ready.push_back(netns),
            Err((what, e)) => {
                give_up(shared, what, &e);
                return;
            }
        }
    }
}

fn give_up(shared: &Shared, what: &str, error: &std::io::Error) {
    tracing::warn!(
        step = what,
        %error,
        "network namespaces are no longer made ahead; every spawn makes its own"
    );
    shared.lock().broken = true;
}

type MakeError = (&'static str, std::io::Error);

/// Makes one namespace with `lo` up and returns this thread to `home`.
fn make_one(home: &OwnedFd) -> Result<ReadyNetns, MakeError> {
    // SAFETY: unshare on this thread only; no memory is passed.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } < 0 {
        return Err(("unshare(CLONE_NEWNET)", std::io::Error::last_os_error()));
    }
    let made = open_own_netns()
        .map_err(|e| ("opening the new namespace", e))
        .and_then(|fd| {
            loopback_up().map_err(|e| ("bringing up lo", e))?;
            Ok(ReadyNetns(fd))
        });
    // Home first, whatever happened: this thread must never stay inside a
    // namespace it hands out.
    // SAFETY: setns on a namespace descriptor this thread owns.
    if unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
        return Err((
            "returning to the runner's network namespace",
            std::io::Error::last_os_error(),
        ));
    }
    made
}

fn open_own_netns() -> std::io::Result<OwnedFd> {
    // SAFETY: open on a NUL-terminated literal; the result is checked.
    let fd = unsafe {
        libc::open(
            c"/proc/thread-self/ns/net".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A new network namespace has only `lo`, and it starts down.
pub(crate) fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a datagram socket and two ioctls on a zeroed ifreq naming "lo".
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let sock = OwnedFd::from_raw_fd(sock);
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn inode(path: &str) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).map(|m| m.ino()).unwrap_or(0)
    }

    fn wait_for(pool: &NetnsPool, ready: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pool.ready() < ready && !pool.is_broken() && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }

    #[test]
    fn pool_fills_refills_and_hands_out_distinct_namespaces() {
        let pool = NetnsPool::start(2);
        wait_for(&pool, 2);
        assert!(!pool.is_broken(), "the maker failed (needs root)");
        assert_eq!(pool.ready(), 2);
        let first = pool.take().expect("a ready namespace");
        let second = pool.take().expect("a second ready namespace");
        wait_for(&pool, 2);
        assert_eq!(pool.ready(), 2, "taking refills the pool");

        let ino = |n: &ReadyNetns| inode(&format!("/proc/self/fd/{}", n.as_raw_fd()));
        let home = inode("/proc/thread-self/ns/net");
        assert_ne!(ino(&first), ino(&second));
        assert_ne!(ino(&first), home, "a pooled namespace is not the runner's");
        assert_eq!(
            inode("/proc/thread-self/ns/net"),
            home,
            "making namespaces never moves other threads"
        );
    }

    #[test]
    fn empty_pool_gives_nothing() {
        let pool = NetnsPool::start(0);
        assert!(pool.take().is_none());
    }
}
