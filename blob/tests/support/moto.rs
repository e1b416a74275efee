//! A real S3-compatible server for the tests: moto in server mode, started
//! on a free loopback port and killed (only that child) when dropped.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What CI must install for these tests.
pub const INSTALL_HINT: &str = "pip install 'moto[server]'";

/// How long moto may take to import and start answering (it is slow to
/// import on a busy two-core machine).
const START_DEADLINE: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// A running moto server; dropping it kills and reaps the process.
pub struct MotoServer {
    child: Child,
    /// Where moto writes its output, shown when it fails to start.
    log: tempfile::NamedTempFile,
    /// The loopback port it listens on.
    pub port: u16,
}

impl MotoServer {
    /// Starts moto and waits until it answers HTTP. Panics (failing the
    /// test, never skipping it) with the install line when moto is missing.
    pub fn start() -> MotoServer {
        let port = free_port();
        let log = tempfile::NamedTempFile::new().expect("create moto's log file");
        let log_out = log.reopen().expect("open moto's log file");
        let log_err = log.reopen().expect("open moto's log file");
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(log_out)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|error| {
                panic!("cannot run python3 ({error}); the S3 tests need python3 and {INSTALL_HINT}")
            });
        let mut server = MotoServer { child, log, port };
        server.wait_until_answering();
        server
    }

    /// The endpoint URL for clients.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto accepts unsigned requests).
    pub fn create_bucket(&self, bucket: &str) {
        let status = self
            .request(&format!("PUT /{bucket} HTTP/1.1"))
            .expect("send create-bucket request");
        assert!(
            status.contains(" 200 "),
            "creating bucket {bucket}: {status}"
        );
    }

    fn wait_until_answering(&mut self) {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let output = self.output();
                if output.contains("No module named") {
                    panic!("moto is not installed ({status}): run {INSTALL_HINT}\n{output}");
                }
                panic!(
                    "moto exited at start ({status}); is it installed? ({INSTALL_HINT})\n{output}"
                );
            }
            if self
                .request("GET / HTTP/1.1")
                .is_ok_and(|status| status.starts_with("HTTP/1."))
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "moto did not answer on port {} within {START_DEADLINE:?}\n{}",
                self.port,
                self.output()
            );
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Sends one bodiless request and returns the response's status line.
    fn request(&self, request_line: &str) -> std::io::Result<String> {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "{request_line}\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response)?;
        let text = String::from_utf8_lossy(&response);
        Ok(text.lines().next().unwrap_or_default().to_owned())
    }

    fn output(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        // Only our own child, by its handle; reaped so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago (the OS picks it; released at once).
fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a loopback port");
    listener.local_addr().expect("read the bound port").port()
}
