//! A small, blocking Chrome DevTools Protocol client for headless Chromium.
//!
//! Chromium is started with `--remote-debugging-pipe`: it reads protocol
//! commands on its fd 3 and writes replies and events on its fd 4, each
//! message one JSON object followed by a NUL byte. That needs no websocket
//! client and no port. One reader thread files every message from fd 4 into
//! an [`Inbox`]: replies by command id, events in arrival order. Every call
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
//! the profile, also when a test panics.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The Chromium launcher; `ARENA_E2E_CHROMIUM` names another.
const CHROMIUM: &str = "chromium";
/// The viewport every page gets, so screenshots and layouts are comparable.
pub const VIEWPORT: (u32, u32) = (1280, 900);
/// How long Chromium may take to answer its first command (cold start on a
/// loaded 2-core machine).
const STARTUP: Duration = Duration::from_secs(30);
/// How long one protocol command may take.
const COMMAND: Duration = Duration::from_secs(30);
/// How long a navigation may take to reach its load event.
const NAVIGATION: Duration = Duration::from_secs(30);
/// How long Chromium gets to exit by itself after `Browser.close`.
const CLOSE: Duration = Duration::from_secs(5);
/// Pause between polls of a page condition; it only keeps the loop from spinning.
const POLL: Duration = Duration::from_millis(25);
/// Chromium's stderr lines kept for error messages.
const STDERR_LINES: usize = 40;

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
struct Connection {
    /// Our end of Chromium's fd 3.
    commands: Mutex<File>,
    next_id: AtomicU64,
    inbox: Arc<Inbox>,
    /// Chromium's last stderr lines, for errors.
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Connection {
    /// Sends `method` (to a tab's `session`, or to the browser) and waits
    /// up to `timeout` for its reply's `result`.
    fn call(
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
    fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<u64> {
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
    fn mark(&self) -> usize {
        lock(&self.inbox.state).events.len()
    }

    /// Waits until `found` returns `Some` for the events since `mark`.
    fn wait_events<T>(
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
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) writes two new descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(BrowserError::Pipe(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A headless Chromium of the test's own.
pub struct Browser {
    connection: Arc<Connection>,
    child: Child,
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
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(pipe) = child.stderr.take() {
            keep_stderr(pipe, Arc::clone(&stderr));
        }
        let inbox = Arc::new(Inbox::default());
        let reader = read_messages(File::from(reply_read), Arc::clone(&inbox));
        let browser = Browser {
            connection: Arc::new(Connection {
                commands: Mutex::new(File::from(command_write)),
                next_id: AtomicU64::new(1),
                inbox,
                stderr,
            }),
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
        let browser_call =
            |method: &str, params: Value| self.connection.call(None, method, params, COMMAND);
        let created = browser_call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let target = reply_str(&created, "targetId", "Target.createTarget")?;
        let attached = browser_call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        )?;
        let session = reply_str(&attached, "sessionId", "Target.attachToTarget")?;
        let page = Page {
            browser: self,
            target,
            session,
        };
        for domain in ["Page", "Runtime", "Log", "Network"] {
            page.call(&format!("{domain}.enable"), json!({}))?;
        }
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": VIEWPORT.0,
                "height": VIEWPORT.1,
                "deviceScaleFactor": 1,
                "mobile": false,
            }),
        )?;
        // Key events go to the focused page; a headless tab is not always focused.
        page.call(
            "Emulation.setFocusEmulationEnabled",
            json!({ "enabled": true }),
        )?;
        page.call("Page.bringToFront", json!({}))?;
        Ok(page)
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
        // Every writer of the reply pipe is dead, so the reader reaches EOF.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

fn reply_str(reply: &Value, key: &str, method: &str) -> Result<String> {
    reply[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| BrowserError::Reply {
            method: method.to_owned(),
            reply: reply.clone(),
        })
}

/// A canvas's pixels in brief: enough to tell that a drawing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanvasSnapshot {
    pub width: u64,
    pub height: u64,
    /// FNV-1a over the RGBA words of every pixel.
    pub hash: u64,
    /// Distinct colours, counted up to 4096 (1 means a blank canvas).
    pub colours: u64,
}

/// Copies the canvas into a 2D one first, so it works whatever context the
/// page draws with.
const CANVAS_SNAPSHOT_JS: &str = r#"((selector) => {
  const canvas = document.querySelector(selector);
  if (!(canvas instanceof HTMLCanvasElement)) return null;
  const { width, height } = canvas;
  if (width === 0 || height === 0) return { width, height, hash: 0, colours: 0 };
  const copy = document.createElement("canvas");
  copy.width = width;
  copy.height = height;
  const context = copy.getContext("2d");
  context.drawImage(canvas, 0, 0);
  const pixels = new Uint32Array(context.getImageData(0, 0, width, height).data.buffer);
  let hash = 0x811c9dc5;
  const colours = new Set();
  for (const pixel of pixels) {
    hash = Math.imul(hash ^ pixel, 16777619) >>> 0;
    if (colours.size < 4096) colours.add(pixel);
  }
  return { width, height, hash, colours: colours.size };
})"#;

/// A tab attached over the browser's pipe.
pub struct Page<'b> {
    browser: &'b Browser,
    target: String,
    session: String,
}

impl Page<'_> {
    fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.browser
            .connection
            .call(Some(&self.session), method, params, COMMAND)
    }

    fn is_mine(&self, event: &Value, method: &str) -> bool {
        event["method"] == method && event["sessionId"] == self.session.as_str()
    }

    /// Navigates to `url` and waits for its load event; returns the HTTP
    /// status of the document (`None` for a URL without one, e.g. `data:`).
    pub fn goto(&self, url: &str) -> Result<Option<u16>> {
        let connection = &self.browser.connection;
        let mark = connection.mark();
        let navigated = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(error) = navigated["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(BrowserError::Navigation {
                url: url.to_owned(),
                error: error.to_owned(),
            });
        }
        let loader = navigated["loaderId"].as_str().map(str::to_owned);
        let over_http = url.starts_with("http://") || url.starts_with("https://");
        self.wait_loaded(mark, loader.as_deref(), over_http, url)
    }

    /// Clicks the first element matching `selector` (see [`Page::click`]),
    /// which must start a navigation, and waits for the new document's load
    /// event; returns its HTTP status.
    pub fn click_to_navigate(&self, selector: &str) -> Result<Option<u16>> {
        let mark = self.browser.connection.mark();
        self.click(selector)?;
        self.wait_loaded(mark, None, true, selector)
    }

    /// Waits, among the events since `mark`, for the response of a document
    /// (of navigation `loader` when known) and then a load event; the
    /// response is required when the document comes `over_http`.
    fn wait_loaded(
        &self,
        mark: usize,
        loader: Option<&str>,
        over_http: bool,
        what: &str,
    ) -> Result<Option<u16>> {
        self.browser
            .connection
            .wait_events(mark, NAVIGATION, |events| {
                // The document's response comes first, then its load event;
                // requiring both in that order ignores a late load event of
                // the page before. After a redirect the last response counts.
                let response = events.iter().rposition(|e| {
                    self.is_mine(e, "Network.responseReceived")
                        && e["params"]["type"] == "Document"
                        && loader.is_none_or(|l| e["params"]["loaderId"] == l)
                });
                let status = response
                    .and_then(|i| events[i]["params"]["response"]["status"].as_u64())
                    .and_then(|s| u16::try_from(s).ok());
                let after = match response {
                    Some(i) => i + 1,
                    None if over_http => return None,
                    None => 0,
                };
                events[after..]
                    .iter()
                    .any(|e| self.is_mine(e, "Page.loadEventFired"))
                    .then_some(status)
            })
            .ok_or_else(|| BrowserError::LoadTimeout {
                url: what.to_owned(),
                timeout: NAVIGATION,
            })
    }

    /// Evaluates `js` in the page (awaiting a promise) and returns its value
    /// as JSON (`null` for `undefined` and for values JSON cannot hold).
    pub fn eval(&self, js: &str) -> Result<Value> {
        let mut evaluated = self.call(
            "Runtime.evaluate",
            json!({
                "expression": js,
                "returnByValue": true,
                "awaitPromise": true,
                "userGesture": true,
            }),
        )?;
        if let Some(details) = evaluated.get("exceptionDetails") {
            return Err(BrowserError::Script(describe_exception(details)));
        }
        Ok(evaluated["result"]["value"].take())
    }

    /// Polls `condition` until it is truthy and returns its value. A
    /// condition that throws, or finds no page to run in (mid-navigation),
    /// counts as not yet true; the timeout error then carries that error.
    pub fn wait_for(&self, condition: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.eval(condition) {
                Ok(value) if is_truthy(&value) => return Ok(value),
                Ok(value) => value,
                Err(
                    BrowserError::Script(error) | BrowserError::Protocol { message: error, .. },
                ) => Value::from(format!("error: {error}")),
                Err(other) => return Err(other),
            };
            if Instant::now() >= deadline {
                return Err(BrowserError::WaitTimeout {
                    condition: condition.to_owned(),
                    timeout,
                    last,
                });
            }
            std::thread::sleep(POLL);
        }
    }

    /// The text content of the first element matching `selector`.
    pub fn text(&self, selector: &str) -> Result<Option<String>> {
        let js = format!(
            "document.querySelector({})?.textContent ?? null",
            js_string(selector)
        );
        Ok(self.eval(&js)?.as_str().map(str::to_owned))
    }

    /// Clicks the centre of the first element matching `selector` with real
    /// mouse events (move, press, release), after scrolling it into view.
    pub fn click(&self, selector: &str) -> Result<()> {
        let js = format!(
            "(() => {{ const element = document.querySelector({});
               if (!element) return null;
               element.scrollIntoView({{ block: 'center', inline: 'center' }});
               const box = element.getBoundingClientRect();
               return {{ x: box.left + box.width / 2, y: box.top + box.height / 2,
                         width: box.width, height: box.height }}; }})()",
            js_string(selector)
        );
        let centre = self.eval(&js)?;
        let (Some(x), Some(y)) = (centre["x"].as_f64(), centre["y"].as_f64()) else {
            return Err(BrowserError::NoElement(selector.to_owned()));
        };
        if centre["width"].as_f64() == Some(0.0) || centre["height"].as_f64() == Some(0.0) {
            return Err(BrowserError::NoElement(selector.to_owned()));
        }
        self.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        )?;
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({
                    "type": kind, "x": x, "y": y,
                    "button": "left", "buttons": 1, "clickCount": 1,
                }),
            )?;
        }
        Ok(())
    }

    /// Presses and releases `key` (a DOM `key` value: `"ArrowRight"`, `" "`,
    /// `"Enter"`, a letter or a digit) as real keyboard events.
    pub fn press_key(&self, key: &str) -> Result<()> {
        let (code, key_code, text) =
            key_definition(key).ok_or_else(|| BrowserError::UnknownKey(key.to_owned()))?;
        let mut down = json!({
            "type": "keyDown",
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": key_code,
            "nativeVirtualKeyCode": key_code,
        });
        if let Some(text) = text {
            down["text"] = text.clone().into();
            down["unmodifiedText"] = text.into();
        }
        self.call("Input.dispatchKeyEvent", down)?;
        self.call(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp",
                "key": key,
                "code": code,
                "windowsVirtualKeyCode": key_code,
                "nativeVirtualKeyCode": key_code,
            }),
        )?;
        Ok(())
    }

    /// Types `text` into the focused element, as an input method would.
    pub fn type_text(&self, text: &str) -> Result<()> {
        self.call("Input.insertText", json!({ "text": text }))?;
        Ok(())
    }

    /// Writes a PNG of the viewport to `path` (creating its directory).
    pub fn screenshot(&self, path: &Path) -> Result<()> {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }))?;
        let data = reply_str(&shot, "data", "Page.captureScreenshot")?;
        let png = base64::engine::general_purpose::STANDARD.decode(data)?;
        let write = |source| BrowserError::WriteScreenshot {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(write)?;
        }
        std::fs::write(path, png).map_err(write)
    }

    /// The canvas matching `selector`, in brief (`None` if there is none).
    pub fn canvas_snapshot(&self, selector: &str) -> Result<Option<CanvasSnapshot>> {
        let value = self.eval(&format!("{CANVAS_SNAPSHOT_JS}({})", js_string(selector)))?;
        let field = |key: &str| value[key].as_u64();
        Ok(
            match (
                field("width"),
                field("height"),
                field("hash"),
                field("colours"),
            ) {
                (Some(width), Some(height), Some(hash), Some(colours)) => Some(CanvasSnapshot {
                    width,
                    height,
                    hash,
                    colours,
                }),
                _ => None,
            },
        )
    }

    /// Every error this page has reported so far: uncaught exceptions,
    /// `console.error` calls and error log entries (failed loads among
    /// them), each as `kind: text [url]`.
    pub fn console_errors(&self) -> Vec<String> {
        let state = lock(&self.browser.connection.inbox.state);
        state
            .events
            .iter()
            .filter(|e| e["sessionId"] == self.session.as_str())
            .filter_map(|e| {
                let params = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => Some(format!(
                        "exception: {}",
                        describe_exception(&params["exceptionDetails"])
                    )),
                    "Runtime.consoleAPICalled" if params["type"] == "error" => {
                        let args: Vec<String> = params["args"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(describe_remote_object)
                            .collect();
                        Some(format!("console.error: {}", args.join(" ")))
                    }
                    "Log.entryAdded" if params["entry"]["level"] == "error" => {
                        let entry = &params["entry"];
                        Some(format!(
                            "log ({}): {} [{}]",
                            entry["source"].as_str().unwrap_or("?"),
                            entry["text"].as_str().unwrap_or_default(),
                            entry["url"].as_str().unwrap_or_default()
                        ))
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        // Best effort: the browser's own Drop ends every tab anyway.
        let _ = self.browser.connection.call(
            None,
            "Target.closeTarget",
            json!({ "targetId": self.target }),
            Duration::from_secs(5),
        );
    }
}

/// `"..."`: `text` as a JavaScript string literal (JSON's escaping is JS's).
pub fn js_string(text: &str) -> String {
    Value::from(text).to_string()
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn describe_exception(details: &Value) -> String {
    let description = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("(no description)");
    match details["url"].as_str().filter(|u| !u.is_empty()) {
        Some(url) => format!(
            "{description} [{url}:{}]",
            details["lineNumber"].as_u64().unwrap_or(0) + 1
        ),
        None => description.to_owned(),
    }
}

fn describe_remote_object(object: &Value) -> String {
    match &object["value"] {
        Value::String(s) => s.clone(),
        Value::Null => object["description"]
            .as_str()
            .unwrap_or_else(|| object["type"].as_str().unwrap_or("?"))
            .to_owned(),
        other => other.to_string(),
    }
}

/// `code`, Windows key code and typed text of a DOM `key` value.
fn key_definition(key: &str) -> Option<(String, u32, Option<String>)> {
    let named = |code: &str, key_code: u32, text: Option<&str>| {
        Some((code.to_owned(), key_code, text.map(str::to_owned)))
    };
    match key {
        " " => named("Space", 32, Some(" ")),
        "Enter" => named("Enter", 13, Some("\r")),
        "Tab" => named("Tab", 9, None),
        "Escape" => named("Escape", 27, None),
        "Backspace" => named("Backspace", 8, None),
        "ArrowLeft" => named("ArrowLeft", 37, None),
        "ArrowUp" => named("ArrowUp", 38, None),
        "ArrowRight" => named("ArrowRight", 39, None),
        "ArrowDown" => named("ArrowDown", 40, None),
        "Home" => named("Home", 36, None),
        "End" => named("End", 35, None),
        _ => {
            let mut chars = key.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            let upper = c.to_ascii_uppercase();
            if c.is_ascii_alphabetic() {
                Some((format!("Key{upper}"), upper as u32, Some(key.to_owned())))
            } else if c.is_ascii_digit() {
                Some((format!("Digit{c}"), c as u32, Some(key.to_owned())))
            } else {
                None
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

#[cfg(test)]
mod tests {
    use super::{is_truthy, js_string, key_definition};
    use serde_json::json;

    #[test]
    fn keys_have_codes() {
        assert_eq!(
            key_definition(" "),
            Some(("Space".into(), 32, Some(" ".into())))
        );
        assert_eq!(
            key_definition("ArrowRight"),
            Some(("ArrowRight".into(), 39, None))
        );
        assert_eq!(
            key_definition("k"),
            Some(("KeyK".into(), 75, Some("k".into())))
        );
        assert_eq!(key_definition("F13"), None);
    }

    #[test]
    fn strings_and_truth_follow_javascript() {
        assert_eq!(js_string("a\"b\n"), r#""a\"b\n""#);
        assert!(!is_truthy(&json!(0)));
        assert!(!is_truthy(&json!("")));
        assert!(is_truthy(&json!([])));
        assert!(is_truthy(&json!("0")));
    }
}
