//! A `redis-server` of the test's own, on a unix socket in a temp dir, with
//! persistence off, or with its append-only file on for tests that kill it
//! and start it again. Killed (and its dir removed) when the guard drops.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use super::process::Proc;

pub struct RedisServer {
    // Field order is drop order: the server dies before its directory goes.
    process: Proc,
    dir: tempfile::TempDir,
    /// Persistence arguments, the same on every start.
    persistence: Vec<String>,
}

impl RedisServer {
    const STARTUP: Duration = Duration::from_secs(20);

    /// A directory beside the server's data for a coordinator's blob store
    /// (replays and logs): it lives as long as the state that names them.
    pub fn blob_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("blobs")
    }

    pub fn start() -> RedisServer {
        RedisServer::start_with(&["--save", "", "--appendonly", "no"])
    }

    /// A server that writes every change to its append-only file with the
    /// given `appendfsync` policy (`always`, `everysec`), so
    /// [`RedisServer::kill`] and [`RedisServer::restart`] lose only what
    /// that policy allows.
    pub fn start_persistent(appendfsync: &str) -> RedisServer {
        RedisServer::start_with(&[
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            appendfsync,
        ])
    }

    fn start_with(persistence: &[&str]) -> RedisServer {
        let dir = tempfile::Builder::new()
            .prefix("arena-e2e-redis-")
            .tempdir()
            .expect("temp dir for redis-server");
        let persistence: Vec<String> = persistence.iter().map(|a| (*a).to_owned()).collect();
        let mut server = RedisServer {
            process: Proc::spawn("redis-server", server_command(dir.path(), &persistence)),
            dir,
            persistence,
        };
        server.wait_ready();
        server
    }

    /// SIGKILL, as a crash: nothing is flushed beyond what `appendfsync`
    /// already wrote.
    pub fn kill(&mut self) {
        self.process.kill();
    }

    /// Starts the server again on the same socket and directory (and so the
    /// same append-only file) and waits until it answers.
    pub fn restart(&mut self) {
        self.process.kill();
        self.process = Proc::spawn(
            "redis-server",
            server_command(self.dir.path(), &self.persistence),
        );
        self.wait_ready();
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    /// Runs `redis-cli --raw <args>` against this server; its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut command = Command::new("redis-cli");
        command.arg("-s").arg(self.socket()).arg("--raw").args(args);
        super::process::output(command)
    }

    /// The URL the coordinator connects with (the redis crate's unix form).
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    /// Polls PING over the socket until it answers PONG; the pause between
    /// attempts only keeps the loop from spinning.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Self::STARTUP;
        loop {
            if self.ping() {
                return;
            }
            if let Some(status) = self.process.try_exit() {
                panic!(
                    "redis-server exited with {status}:\n{}",
                    self.process.stdout.text()
                );
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING within {:?}:\n{}",
                Self::STARTUP,
                self.process.stdout.text()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn ping(&self) -> bool {
        let Ok(mut stream) = UnixStream::connect(self.socket()) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 7];
        stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }
}

/// `redis-server` on a unix socket in `dir`, no TCP port, files in `dir`.
fn server_command(dir: &std::path::Path, persistence: &[String]) -> Command {
    let mut command = Command::new("redis-server");
    command
        .args(["--port", "0", "--unixsocket"])
        .arg(dir.join("redis.sock"))
        .args(persistence)
        .arg("--dir")
        .arg(dir);
    command
}
