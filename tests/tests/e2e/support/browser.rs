//! A small, blocking Chrome DevTools Protocol client for headless Chromium.
//!
//! Layout: this module starts and stops Chromium ([`Browser`]);
//! `connection` carries the protocol over its pipes; `page` drives one tab
//! ([`Page`]).
//!
//! Chromium is started with `--remote-debugging-pipe`: it reads protocol
//! commands on its fd 3 and writes replies and events on its fd 4, each
//! message one JSON object followed by a NUL byte. That needs no websocket
//! client and no port. One reader thread files every message from fd 4 into
//! an inbox: replies by command id, events in arrival order. Every call
//! waits on that inbox with a deadline, so nothing here blocks forever.
//!
//! Each [`Page`] is a tab attached in "flat" mode: its commands and events
//! carry the tab's session id over the one pipe. A page enables the Page,
//! Runtime, Log and Network domains, so its console errors, uncaught
//! exceptions and document statuses are all in the inbox when asked for.
//!
//! Chromium runs in a process group of its own (its renderers and helpers
//! join it), in a fresh profile directory. Dropping the [`Browser`] asks it
//! to close, SIGKILLs whatever of that group is left, reaps it and removes
//! the profile, also when a test panics. (Debian's build also starts two
//! crash handlers, which detach into sessions of their own; they watch the
//! browser and exit by themselves once it is gone.)

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod connection;
pub mod page;

use connection::{Connection, pipe};
use page::Page;

/// The Chromium launcher; `ARENA_E2E_CHROMIUM` names another.
const CHROMIUM: &str = "chromium";
/// The viewport every page gets, so screenshots and layouts are comparable.
pub const VIEWPORT: (u32, u32) = (1280, 900);
/// How long Chromium may take to answer its first command (cold start on a
/// loaded 2-core machine).
const STARTUP: Duration = Duration::from_secs(30);
/// How long one browser-level command may take.
const COMMAND: Duration = Duration::from_secs(30);
/// How long Chromium gets to exit by itself after `Browser.close`.
const CLOSE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    // Starting Chromium.
    #[error("cannot create Chromium's profile directory: {0}")]
    ProfileDir(#[source] std::io::Error),
    #[error("cannot create the DevTools pipes: {0}")]
    Pipe(#[source] std::io::Error),
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    // Talking to it.
    #[error("cannot send {method} to Chromium: {source}")]
    Send {
        method: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "Chromium closed its DevTools pipe while {method} was pending; its stderr ends:\n{stderr}"
    )]
    Closed { method: String, stderr: String },
    #[error("no reply to {method} within {timeout:?}")]
    Timeout { method: String, timeout: Duration },
    #[error("{method} failed: {message}")]
    Protocol { method: String, message: String },
    #[error("unexpected reply to {method}: {reply}")]
    Reply { method: String, reply: Value },

    // What a page did.
    #[error("navigating to {url} failed: {error}")]
    Navigation { url: String, error: String },
    #[error("no load event from {url} within {timeout:?}")]
    LoadTimeout { url: String, timeout: Duration },
    #[error("the page's script threw: {0}")]
    Script(String),
    #[error("timed out after {timeout:?} waiting for `{condition}` (last value: {last})")]
    WaitTimeout {
        condition: String,
        timeout: Duration,
        last: Value,
    },
    #[error("no visible element matches {0:?}")]
    NoElement(String),
    #[error("no key definition for {0:?}")]
    UnknownKey(String),

    // Screenshots.
    #[error("the screenshot is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("cannot write the screenshot {path}: {source}")]
    WriteScreenshot {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = BrowserError> = std::result::Result<T, E>;

/// A headless Chromium of the test's own.
pub struct Browser {
    /// The protocol over Chromium's pipes; pages borrow it.
    connection: Connection,
    /// Chromium's main process, leader of its process group.
    child: Child,
    /// The thread reading Chromium's replies, joined on drop.
    reader: Option<JoinHandle<()>>,
    /// Removed after the processes using it are dead (fields drop after `drop`).
    profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium on a fresh profile and waits until it answers.
    pub fn launch() -> Result<Browser> {
        let program = std::env::var("ARENA_E2E_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_owned());
        let profile = tempfile::Builder::new()
            .prefix("arena-e2e-chromium-")
            .tempdir()
            .map_err(BrowserError::ProfileDir)?;
        let (command_read, command_write) = pipe()?;
        let (reply_read, reply_write) = pipe()?;
        let (their_commands, their_replies) = (command_read.as_raw_fd(), reply_write.as_raw_fd());
        let mut command = Command::new(&program);
        command
            .args([
                "--headless=new",
                "--remote-debugging-pipe",
                // Tests run as root, where the sandbox refuses to start.
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                // /dev/shm is small in containers.
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--mute-audio",
                "--hide-scrollbars",
            ])
            .arg(format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // A group of its own, so Drop can kill its helpers too.
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Copy both ends above 4 first: either may itself be 3 or 4,
                // and dup2 onto 3 must not close the other before it is copied.
                let commands = libc::fcntl(their_commands, libc::F_DUPFD_CLOEXEC, 10);
                let replies = libc::fcntl(their_replies, libc::F_DUPFD_CLOEXEC, 10);
                if commands < 0 || replies < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // dup2 clears close-on-exec on 3 and 4, so only they survive exec.
                if libc::dup2(commands, 3) < 0 || libc::dup2(replies, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|source| BrowserError::Spawn {
            program: program.clone(),
            source,
        })?;
        // Chromium holds its ends now; ours must close, or EOF never comes.
        drop((command_read, reply_write));
        let (connection, reader) = Connection::open(
            File::from(command_write),
            File::from(reply_read),
            child.stderr.take(),
        );
        let browser = Browser {
            connection,
            child,
            reader: Some(reader),
            profile,
        };
        browser
            .connection
            .call(None, "Browser.getVersion", json!({}), STARTUP)?;
        Ok(browser)
    }

    /// Chromium's product string, e.g. `HeadlessChrome/156.0.8078.114`.
    pub fn version(&self) -> Result<String> {
        let version = self
            .connection
            .call(None, "Browser.getVersion", json!({}), COMMAND)?;
        Ok(version["product"].as_str().unwrap_or_default().to_owned())
    }

    /// Opens a new tab on `about:blank`, attached, with its domains enabled
    /// and the [`VIEWPORT`] size.
    pub fn new_page(&self) -> Result<Page<'_>> {
        Page::open(&self.connection)
    }

    /// Chromium's pid, which is also its process group's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The profile directory (removed when the browser is dropped).
    pub fn profile_dir(&self) -> &Path {
        self.profile.path()
    }

    /// Whether Chromium's main process has exited, without reaping it.
    fn has_exited(&self) -> bool {
        // SAFETY: waitid(2) with WNOWAIT only inspects our own child, and an
        // all-zero siginfo_t is a valid value to fill in.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let pid = self.child.id() as libc::id_t;
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            libc::waitid(libc::P_PID, pid, &mut info, flags) == 0 && info.si_pid() != 0
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Asked to close, Chromium ends its helpers and leaves the profile
        // alone; a failed send just means it is gone already.
        let _ = self.connection.send(None, "Browser.close", json!({}));
        let deadline = Instant::now() + CLOSE;
        while !self.has_exited() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: killpg(2) on the group Chromium leads. Its leader is not
        // reaped yet, so that group id cannot belong to anyone else.
        unsafe {
            libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.wait();
        // Every writer of the reply pipe is dead, so the reader reaches EOF;
        // bounded all the same, in case a helper left the group holding it.
        if let Some(reader) = self.reader.take() {
            let deadline = Instant::now() + CLOSE;
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
    }
}

/// Where screenshots go: `web-screenshots/` in the Cargo target directory
/// this test runs from (found by its `CACHEDIR.TAG`), so they outlive the
/// test as artefacts.
pub fn screenshot_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_owned)
        .unwrap_or_else(std::env::temp_dir);
    target.join("web-screenshots")
}
