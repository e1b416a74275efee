//! A `redis-server` of the test's own, on a unix socket in a temp dir, with
//! persistence off. Killed (and its dir removed) when the guard drops.

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
}

impl RedisServer {
    const STARTUP: Duration = Duration::from_secs(20);

    pub fn start() -> RedisServer {
        let dir = tempfile::Builder::new()
            .prefix("arena-e2e-redis-")
            .tempdir()
            .expect("temp dir for redis-server");
        let mut command = Command::new("redis-server");
        command
            .args(["--port", "0", "--unixsocket"])
            .arg(dir.path().join("redis.sock"))
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path());
        let mut server = RedisServer {
            process: Proc::spawn("redis-server", command),
            dir,
        };
        server.wait_ready();
        server
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
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
