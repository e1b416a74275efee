//! A child process the test started, with its stdout and stderr collected
//! line by line (and echoed to the test's captured stderr, so a failing test
//! shows every log), killed and reaped when the guard is dropped.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines of one output stream, appended by a reader thread.
#[derive(Default)]
pub struct Lines {
    state: Mutex<LinesState>,
    changed: Condvar,
}

#[derive(Default)]
struct LinesState {
    lines: Vec<String>,
    /// The stream reached EOF (the process closed it, usually by exiting).
    closed: bool,
}

impl Lines {
    fn push(&self, line: String) {
        let mut state = lock(&self.state);
        state.lines.push(line);
        self.changed.notify_all();
    }

    fn close(&self) {
        lock(&self.state).closed = true;
        self.changed.notify_all();
    }

    pub fn text(&self) -> String {
        lock(&self.state).lines.join("\n")
    }

    /// Blocks until a line satisfies `matches` (returned), the stream closes
    /// or `timeout` passes (both `Err`, with what was read).
    pub fn wait_for(
        &self,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.state);
        let mut seen = 0;
        loop {
            if let Some(line) = state.lines[seen..].iter().find(|l| matches(l)) {
                return Ok(line.clone());
            }
            seen = state.lines.len();
            if state.closed {
                return Err(format!("the stream closed:\n{}", state.lines.join("\n")));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(format!(
                    "nothing after {timeout:?}:\n{}",
                    state.lines.join("\n")
                ));
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running child process; SIGKILLed and reaped on drop if still alive.
pub struct Proc {
    label: String,
    child: Child,
    exit: Option<ExitStatus>,
    pub stdout: Arc<Lines>,
    pub stderr: Arc<Lines>,
    readers: Vec<JoinHandle<()>>,
}

impl Proc {
    /// Spawns `command` with stdin closed and both output streams collected.
    pub fn spawn(label: impl Into<String>, mut command: Command) -> Proc {
        let label = label.into();
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {label} ({command:?}): {e}"));
        let stdout = Arc::new(Lines::default());
        let stderr = Arc::new(Lines::default());
        let readers = vec![
            reader(
                format!("{label} stdout"),
                child.stdout.take().expect("piped stdout"),
                Arc::clone(&stdout),
            ),
            reader(
                format!("{label} stderr"),
                child.stderr.take().expect("piped stderr"),
                Arc::clone(&stderr),
            ),
        ];
        Proc {
            label,
            child,
            exit: None,
            stdout,
            stderr,
            readers,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// Waits for a stdout line satisfying `matches`; panics with the logs if
    /// the process exits first or the deadline passes.
    pub fn wait_for_stdout(
        &self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        self.stdout.wait_for(timeout, matches).unwrap_or_else(|e| {
            panic!(
                "{}: waiting for {what} on stdout: {e}\nstderr:\n{}",
                self.label,
                self.stderr.text()
            )
        })
    }

    /// Like [`Proc::wait_for_stdout`], on stderr.
    pub fn wait_for_stderr(
        &self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        self.stderr
            .wait_for(timeout, matches)
            .unwrap_or_else(|e| panic!("{}: waiting for {what} on stderr: {e}", self.label))
    }

    /// The exit status, if the process has exited (reaping it).
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    pub fn signal(&self, signal: i32) {
        if self.exit.is_none() {
            // SAFETY: kill(2) on the pid of our own unreaped child: the pid
            // cannot have been reused by another process.
            unsafe {
                libc::kill(self.pid(), signal);
            }
        }
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_exit() {
                self.join_readers();
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then waits for a clean exit; panics (the drop guard then
    /// SIGKILLs it) if it does not stop in time or exits with an error.
    pub fn terminate(&mut self, timeout: Duration) -> ExitStatus {
        self.signal(libc::SIGTERM);
        let status = self.wait_exit(timeout).unwrap_or_else(|| {
            panic!(
                "{} did not stop within {timeout:?} of SIGTERM:\n{}",
                self.label,
                self.stderr.text()
            )
        });
        assert!(
            status.success(),
            "{} exited with {status}:\n{}",
            self.label,
            self.stderr.text()
        );
        status
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) -> ExitStatus {
        if let Some(status) = self.try_exit() {
            return status;
        }
        let _ = self.child.kill();
        let status = self.child.wait().expect("reaping a killed child");
        self.exit = Some(status);
        self.join_readers();
        status
    }

    /// Lets the reader threads take in the last lines of an exited process.
    /// The streams close when the process and anything that inherited them
    /// are gone (bots get pipes of their own), so this is bounded, not joined.
    fn join_readers(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        for reader in std::mem::take(&mut self.readers) {
            while !reader.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
        self.join_readers();
    }
}

fn reader(label: String, stream: impl Read + Send + 'static, lines: Arc<Lines>) -> JoinHandle<()> {
    // Threads spawned by a test inherit its output capture: these echoes show
    // only when the test fails.
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            eprintln!("[{label}] {line}");
            lines.push(line);
        }
        lines.close();
    })
}

/// Runs `command` to completion and returns its stdout; panics with its
/// output if it cannot start or fails.
pub fn output(mut command: Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}
