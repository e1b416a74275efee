//! A Sentinel topology on loopback: a primary, one replica and three
//! sentinels monitoring them as `arena`, each a `redis-server` with a temp
//! dir of its own on a free TCP port of 127.0.0.1. Every process is killed
//! and every dir removed when the guard drops, also when the test fails.
//!
//! The sentinels are tuned to fail over fast (the primary counts as down
//! after [`DOWN_AFTER_MS`]), and [`Topology::start`] returns only once all
//! three have found each other and the replica: before that a dead primary
//! could not be replaced (promotion needs a majority of sentinels that
//! know one another).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::process::Proc;

/// The name the sentinels monitor the primary under.
pub const MASTER: &str = "arena";
/// How long the primary may be silent before a sentinel calls it down.
const DOWN_AFTER_MS: u64 = 500;
/// How long a failover may take before another sentinel may try again.
const FAILOVER_TIMEOUT_MS: u64 = 5000;
/// How long the whole topology may take to form.
const STARTUP: Duration = Duration::from_secs(30);

/// A port on 127.0.0.1 that was free a moment ago. The listener is closed
/// before the server binds it, so another process could take it in between;
/// the server then fails to start and the test says so.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding a free port on 127.0.0.1")
        .port()
}

/// A RESP reply, as far as these tests read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Vec<Reply>),
}

impl Reply {
    pub fn text(&self) -> Option<&str> {
        match self {
            Reply::Status(s) | Reply::Bulk(Some(s)) => Some(s),
            _ => None,
        }
    }

    pub fn items(&self) -> &[Reply] {
        match self {
            Reply::Array(items) => items,
            _ => &[],
        }
    }

    /// The value after `key` in a flat key/value array (`SENTINEL MASTER`).
    pub fn field(&self, key: &str) -> Option<&str> {
        self.items()
            .chunks(2)
            .find(|pair| pair.first().and_then(Reply::text) == Some(key))
            .and_then(|pair| pair.get(1)?.text())
    }
}

/// Sends one command to 127.0.0.1:`port` on a fresh connection; `Err` if
/// the server cannot be reached or the reply cannot be read.
pub fn command(port: u16, args: &[&str]) -> Result<Reply, String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect :{port}: {e}"))?;
    let timeout = Some(Duration::from_secs(2));
    stream
        .set_read_timeout(timeout)
        .map_err(|e| e.to_string())?;
    stream
        .set_write_timeout(timeout)
        .map_err(|e| e.to_string())?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("write :{port}: {e}"))?;
    read_reply(&mut BufReader::new(stream))
}

fn read_reply(reader: &mut impl BufRead) -> Result<Reply, String> {
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| format!("read: {e}"))?;
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at_checked(1).ok_or("an empty reply")?;
    let number = || rest.parse::<i64>().map_err(|e| format!("{line:?}: {e}"));
    Ok(match kind {
        "+" => Reply::Status(rest.to_owned()),
        "-" => Reply::Error(rest.to_owned()),
        ":" => Reply::Int(number()?),
        "$" => match usize::try_from(number()?) {
            Err(_) => Reply::Bulk(None),
            Ok(len) => {
                let mut body = vec![0; len + 2];
                reader
                    .read_exact(&mut body)
                    .map_err(|e| format!("read: {e}"))?;
                body.truncate(len);
                Reply::Bulk(Some(String::from_utf8_lossy(&body).into_owned()))
            }
        },
        "*" => match usize::try_from(number()?) {
            Err(_) => Reply::Array(Vec::new()),
            Ok(len) => Reply::Array(
                (0..len)
                    .map(|_| read_reply(reader))
                    .collect::<Result<_, _>>()?,
            ),
        },
        _ => return Err(format!("unexpected reply {line:?}")),
    })
}

/// Polls `probe` until it returns `Some`; panics naming `what` after `timeout`.
fn wait<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// One `redis-server` (data node or sentinel) on a port of its own.
pub struct Server {
    // Field order is drop order: the server dies before its directory goes.
    pub process: Proc,
    /// Its files (a sentinel's rewritten config); removed on drop.
    _dir: tempfile::TempDir,
    pub port: u16,
}

impl Server {
    /// A data node: no persistence, replicating `primary` if given.
    fn data(label: &str, primary: Option<u16>) -> Server {
        let dir = temp_dir(label);
        let port = free_port();
        let mut redis = Command::new("redis-server");
        redis
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path());
        if let Some(primary) = primary {
            redis.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
        }
        Server::started(label, redis, dir, port)
    }

    /// A sentinel monitoring the primary on `primary`. Sentinel rewrites its
    /// config file as it learns the topology, so the file is its own.
    fn sentinel(label: &str, primary: u16) -> Server {
        let dir = temp_dir(label);
        let port = free_port();
        let conf = dir.path().join("sentinel.conf");
        let text = format!(
            "port {port}\n\
             bind 127.0.0.1\n\
             dir {dir}\n\
             sentinel monitor {MASTER} 127.0.0.1 {primary} 2\n\
             sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n\
             sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n\
             sentinel parallel-syncs {MASTER} 1\n",
            dir = dir.path().display(),
        );
        std::fs::write(&conf, text).unwrap_or_else(|e| panic!("writing {}: {e}", conf.display()));
        let mut redis = Command::new("redis-server");
        redis.arg(&conf).arg("--sentinel");
        Server::started(label, redis, dir, port)
    }

    fn started(label: &str, redis: Command, dir: tempfile::TempDir, port: u16) -> Server {
        let mut server = Server {
            process: Proc::spawn(label, redis),
            _dir: dir,
            port,
        };
        let deadline = Instant::now() + STARTUP;
        while command(port, &["PING"]) != Ok(Reply::Status("PONG".into())) {
            if let Some(status) = server.process.try_exit() {
                panic!(
                    "{label} on port {port} exited with {status} (the port taken?):\n{}",
                    server.process.stdout.text()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{label} on port {port} did not answer PING within {STARTUP:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        server
    }

    pub fn command(&self, args: &[&str]) -> Result<Reply, String> {
        command(self.port, args)
    }
}

fn temp_dir(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("arena-e2e-{label}-"))
        .tempdir()
        .expect("temp dir for redis-server")
}

/// The primary, its replica and three sentinels.
pub struct Topology {
    // Sentinels first: they must not fail anything over while the data
    // nodes are being torn down.
    pub sentinels: Vec<Server>,
    pub replica: Server,
    pub primary: Server,
}

impl Topology {
    pub fn start() -> Topology {
        let primary = Server::data("redis-primary", None);
        let replica = Server::data("redis-replica", Some(primary.port));
        wait("the replica to sync with the primary", STARTUP, || {
            let info = replica.command(&["INFO", "replication"]).ok()?;
            info.text()?.contains("master_link_status:up").then_some(())
        });
        let sentinels: Vec<Server> = (1..=3)
            .map(|n| Server::sentinel(&format!("sentinel-{n}"), primary.port))
            .collect();
        for sentinel in &sentinels {
            wait(
                "each sentinel to know the other two and the replica",
                STARTUP,
                || {
                    let master = sentinel.command(&["SENTINEL", "MASTER", MASTER]).ok()?;
                    (master.field("num-other-sentinels") == Some("2")
                        && master.field("num-slaves") == Some("1"))
                    .then_some(())
                },
            );
        }
        Topology {
            sentinels,
            replica,
            primary,
        }
    }

    /// The coordinator's `--redis`: every sentinel, the master name, db 0.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        format!("redis+sentinel://{}/{MASTER}/0", hosts.join(","))
    }

    /// Waits until a majority of the sentinels name the replica as the
    /// primary and the replica says it is one.
    pub fn wait_promoted(&self, timeout: Duration) {
        let port = self.replica.port.to_string();
        wait("the sentinels to promote the replica", timeout, || {
            let naming = self
                .sentinels
                .iter()
                .filter(|s| {
                    s.command(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER])
                        .is_ok_and(|addr| addr.items().get(1).and_then(Reply::text) == Some(&port))
                })
                .count();
            let role = self.replica.command(&["ROLE"]).ok()?;
            (naming >= 2 && role.items().first().and_then(Reply::text) == Some("master"))
                .then_some(())
        });
    }
}
