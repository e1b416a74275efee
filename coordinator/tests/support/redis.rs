//! A redis-server of a test's own, on a unix socket in a temp dir, killed
//! when the test ends (even by a panic). Shared by the store conformance
//! suite and the coordinator's recovery tests.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arena_coordinator::store::{RedisStore, Store};

/// A throwaway redis-server on a unix socket in a temp dir. Dropping it
/// (including while a failed test unwinds) kills the server and removes
/// the dir.
pub struct RedisServer {
    /// The server process.
    child: Child,
    /// Holds the socket and log; removed after the child is dead.
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// How long a server may take to answer its first PING.
    const STARTUP: Duration = Duration::from_secs(10);

    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir for redis-server");
        let child = spawn(dir.path());
        let mut server = RedisServer { child, dir };
        server.wait_ready();
        server
    }

    /// Kills the server (SIGKILL) and starts a fresh, empty one on the same
    /// socket: what a client sees of a Redis restart without persistence.
    pub fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(self.dir.path());
        self.wait_ready();
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    pub fn url(&self) -> String {
        format!("unix://{}", self.socket().display())
    }

    /// Polls PING until the server answers, it exits, or the deadline
    /// passes. The pause between polls only stops the loop from spinning;
    /// readiness is decided by the PING alone.
    fn wait_ready(&mut self) {
        let client = redis::Client::open(self.url()).expect("redis url");
        let deadline = Instant::now() + Self::STARTUP;
        let mut pause = Duration::from_micros(200);
        loop {
            let pong: redis::RedisResult<String> = client
                .get_connection()
                .and_then(|mut conn| redis::cmd("PING").query(&mut conn));
            match pong {
                Ok(reply) if reply == "PONG" => return,
                Ok(reply) => panic!("PING answered {reply:?}"),
                Err(_) => {}
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("redis-server exited with {status}:\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "redis-server not ready after {:?}:\n{}",
                Self::STARTUP,
                self.log()
            );
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }

    pub async fn store(&self) -> Store {
        Store::Redis(
            RedisStore::connect(&self.url())
                .await
                .expect("connect to redis"),
        )
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // SIGKILL: there is nothing to persist, and it can't be ignored.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `redis-server` on `dir`'s socket, without persistence or a TCP port.
fn spawn(dir: &std::path::Path) -> Child {
    Command::new("redis-server")
        .args(["--port", "0", "--unixsocket"])
        .arg(dir.join("redis.sock"))
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(dir)
        .arg("--logfile")
        .arg(dir.join("redis.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server (install Debian's redis-server package)")
}
