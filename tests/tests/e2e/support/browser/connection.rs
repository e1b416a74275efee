//! The DevTools protocol over Chromium's two pipes: commands written to its
//! fd 3, replies and events read from its fd 4 by one thread into an
//! [`Inbox`], each message JSON followed by a NUL byte.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{BrowserError, Result};

/// Chromium's stderr lines kept for error messages.
const STDERR_LINES: usize = 40;

/// Messages read from Chromium's fd 4.
#[derive(Default)]
struct Inbox {
    state: Mutex<InboxState>,
    changed: Condvar,
}

#[derive(Default)]
struct InboxState {
    /// Replies not yet taken, by command id.
    replies: HashMap<u64, Value>,
    /// Every event, in arrival order; pages find theirs by session id.
    events: Vec<Value>,
    /// The pipe reached EOF: Chromium exited (or closed it).
    closed: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The protocol over the two pipes.
pub(super) struct Connection {
    /// Our end of Chromium's fd 3.
    commands: Mutex<File>,
    next_id: AtomicU64,
    inbox: Arc<Inbox>,
    /// Chromium's last stderr lines, for errors.
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Connection {
    /// Talks over `commands` (our end of Chromium's fd 3) and `replies`
    /// (of its fd 4), keeping the tail of its `stderr`; returns the reader
    /// thread too, which ends when every writer of `replies` is gone.
    pub(super) fn open(
        commands: File,
        replies: File,
        stderr: Option<std::process::ChildStderr>,
    ) -> (Connection, JoinHandle<()>) {
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = stderr {
            keep_stderr(stderr, Arc::clone(&tail));
        }
        let inbox = Arc::new(Inbox::default());
        let reader = read_messages(replies, Arc::clone(&inbox));
        let connection = Connection {
            commands: Mutex::new(commands),
            next_id: AtomicU64::new(1),
            inbox,
            stderr: tail,
        };
        (connection, reader)
    }

    /// `pick` applied to every event so far, keeping what it returns.
    pub(super) fn events<T>(&self, pick: impl FnMut(&Value) -> Option<T>) -> Vec<T> {
        lock(&self.inbox.state)
            .events
            .iter()
            .filter_map(pick)
            .collect()
    }

    /// Sends `method` (to a tab's `session`, or to the browser) and waits
    /// up to `timeout` for its reply's `result`.
    pub(super) fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let id = self.send(session, method, params)?;
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.inbox.state);
        loop {
            if let Some(mut reply) = state.replies.remove(&id) {
                if let Some(error) = reply.get("error") {
                    let message = error["message"].as_str().unwrap_or("(no message)");
                    return Err(BrowserError::Protocol {
                        method: method.to_owned(),
                        message: message.to_owned(),
                    });
                }
                return Ok(reply["result"].take());
            }
            if state.closed {
                drop(state);
                return Err(BrowserError::Closed {
                    method: method.to_owned(),
                    stderr: self.stderr_tail(),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(BrowserError::Timeout {
                    method: method.to_owned(),
                    timeout,
                });
            }
            state = self
                .inbox
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Writes one command; its reply is filed under the returned id.
    pub(super) fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<u64> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        lock(&self.commands)
            .write_all(&bytes)
            .map_err(|source| BrowserError::Send {
                method: method.to_owned(),
                source,
            })?;
        Ok(id)
    }

    /// The number of events so far: a mark to look for later ones from.
    pub(super) fn mark(&self) -> usize {
        lock(&self.inbox.state).events.len()
    }

    /// Waits until `found` returns `Some` for the events since `mark`.
    pub(super) fn wait_events<T>(
        &self,
        mark: usize,
        timeout: Duration,
        mut found: impl FnMut(&[Value]) -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.inbox.state);
        loop {
            if let Some(value) = found(&state.events[mark.min(state.events.len())..]) {
                return Some(value);
            }
            let now = Instant::now();
            if state.closed || now >= deadline {
                return None;
            }
            state = self
                .inbox
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn stderr_tail(&self) -> String {
        let lines = lock(&self.stderr);
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Files every NUL-terminated message from `replies` into `inbox` until EOF.
fn read_messages(replies: File, inbox: Arc<Inbox>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(replies);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match reader.read_until(0, &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if buffer.last() == Some(&0) {
                buffer.pop();
            }
            // A message that is not JSON cannot be matched to anything.
            let Ok(message) = serde_json::from_slice::<Value>(&buffer) else {
                continue;
            };
            let mut state = lock(&inbox.state);
            match message.get("id").and_then(Value::as_u64) {
                Some(id) => {
                    state.replies.insert(id, message);
                }
                None => state.events.push(message),
            }
            inbox.changed.notify_all();
        }
        lock(&inbox.state).closed = true;
        inbox.changed.notify_all();
    })
}

/// Keeps Chromium's last stderr lines (it is chatty; they only matter when
/// something fails).
fn keep_stderr(stderr: std::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let mut tail = lock(&tail);
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });
}

/// A pipe as (read end, write end), both close-on-exec.
pub(super) fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) writes two new descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(BrowserError::Pipe(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub(super) fn reply_str(reply: &Value, key: &str, method: &str) -> Result<String> {
    reply[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| BrowserError::Reply {
            method: method.to_owned(),
            reply: reply.clone(),
        })
}
