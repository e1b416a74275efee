//! What the web tests share: a coordinator with a tournament in a known
//! state, the web server on a loopback port (stopped when dropped), and a
//! minimal HTTP/1.1 client over hyper's connection API.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arena_coordinator::domain::{Format, MatchRecord, SeatResult};
use arena_coordinator::service::{Coordinator, CoordinatorConfig, LeasedMatch, NewTournament};
use arena_coordinator::store::{LiveBoard, Store, WorkerInfo};
use arena_engine::registry::{self, Rules};
use arena_web::WebOptions;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::HeaderMap;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const ADMIN_TOKEN: &str = "admin-secret-token";
pub const WORKER: &str = "worker-one";
pub const NAMES: [&str; 4] = ["alice", "bob", "carol", "dave"];

/// The sample 4-seat Ants replay stored with the finished match.
pub fn sample_replay() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ants.replay.json"
    ))
    .expect("reading the sample replay")
}

/// A submission archive: one `run.sh` that names its bot (no worker
/// builds it here; it only has to be a distinct upload).
fn archive(name: &str) -> Vec<u8> {
    let script = format!("#!/bin/sh\nexec echo {name}\n");
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(script.len() as u64);
    header.set_mode(0o755);
    let mut builder = tar::Builder::new(Vec::new());
    builder
        .append_data(&mut header, "run.sh", script.as_bytes())
        .expect("appending run.sh");
    builder.into_inner().expect("finishing the archive")
}

/// A coordinator with one Ants tournament of four entrants: one match
/// finished (with the sample replay), one leased and running, the rest queued.
pub struct Fixture {
    pub coordinator: Arc<Coordinator>,
    pub tournament: String,
    /// Entrant ids (submission hashes) by name order of [`NAMES`].
    pub entrants: Vec<String>,
    /// The finished match.
    pub done: String,
    /// The leased match, still running.
    pub running: LeasedMatch,
}

impl Fixture {
    pub async fn new() -> Fixture {
        Fixture::with_live_board(LiveBoard::default()).await
    }

    /// The same, its running boards shown as `live_board` says.
    pub async fn with_live_board(live_board: LiveBoard) -> Fixture {
        let coordinator = Coordinator::new(Store::memory(), CoordinatorConfig::default());
        let mut entrants = Vec::new();
        for name in NAMES {
            entrants.push(submit(&coordinator, name).await);
        }
        let field: Vec<(&str, String)> = NAMES.iter().copied().zip(entrants.clone()).collect();
        let tournament = coordinator
            .create_tournament(NewTournament {
                name: "Web <test> cup".into(),
                base_seed: 7,
                format: Format::RoundRobin {
                    cycles: 1,
                    games_per_pairing: 3,
                },
                live_board,
                ..tournament_of("ants", 4, &field)
            })
            .await
            .expect("creating the tournament");
        register_worker(&coordinator).await;
        let first = coordinator
            .lease(WORKER)
            .await
            .expect("leasing")
            .expect("a queued match");
        let done = first.lease.match_id.clone();
        report(&coordinator, &first).await;
        let running = coordinator
            .lease(WORKER)
            .await
            .expect("leasing")
            .expect("a second queued match");
        Fixture {
            coordinator,
            tournament,
            entrants,
            done,
            running,
        }
    }

    /// Who sat where in the finished match.
    pub async fn done_pairing(&self) -> arena_coordinator::domain::Pairing {
        self.coordinator
            .store()
            .pairing(&self.done)
            .await
            .unwrap()
            .expect("the finished match's pairing")
    }

    pub fn name_of(&self, entrant: &str) -> &'static str {
        let index = self
            .entrants
            .iter()
            .position(|e| e == entrant)
            .expect("an entrant of the fixture");
        NAMES[index]
    }

    pub async fn serve(&self) -> Server {
        Server::start(Arc::clone(&self.coordinator)).await
    }
}

/// Uploads the submission [`archive`] makes for `name`; its id.
pub async fn submit(coordinator: &Coordinator, name: &str) -> String {
    let bytes = archive(name);
    let id = arena_coordinator::submission_id(&bytes);
    coordinator
        .store()
        .put_submission(&id, bytes)
        .await
        .expect("uploading a submission");
    id
}

/// A one-game-per-pairing round robin of `game` with `seats` seats between
/// `field` (name, submission id), with the game's rules and limits;
/// callers change what they need with struct update syntax.
pub fn tournament_of(game: &str, seats: usize, field: &[(&str, String)]) -> NewTournament {
    let entry = registry::find(game).expect("a registered game");
    NewTournament {
        name: format!("Web test {game}"),
        game: game.to_owned(),
        seats,
        base_seed: 1,
        format: Format::RoundRobin {
            cycles: 1,
            games_per_pairing: 1,
        },
        rules: Rules::default(),
        limits: entry.limits,
        entrants: field
            .iter()
            .map(|(name, id)| (name.to_string(), id.clone()))
            .collect(),
        environment: None,
        teams: None,
        wasm_runtime: None,
        model_runtime: None,
        live_board: LiveBoard::default(),
    }
}

/// Registers the simulated worker [`WORKER`].
pub async fn register_worker(coordinator: &Coordinator) {
    coordinator
        .register_worker(WorkerInfo {
            id: WORKER.into(),
            cores: 2,
            memory_mb: 2048,
            environment_id: "env-test".into(),
            cached: Vec::new(),
            wasm_runtime: String::new(),
            model_runtime: String::new(),
            slots: 3,
        })
        .await
        .expect("registering the worker");
}

/// Reports `lease`'s match finished: seats ranked in seat order, with the
/// sample replay.
pub async fn report(coordinator: &Coordinator, lease: &LeasedMatch) {
    report_with(coordinator, lease, sample_replay()).await;
}

/// Reports `lease`'s match finished as [`report`] does, with `replay`.
pub async fn report_with(coordinator: &Coordinator, lease: &LeasedMatch, replay: Vec<u8>) {
    let seats = &lease.lease.pairing.seats;
    let ranks: Vec<u32> = (0..seats.len() as u32).collect();
    let points = arena_engine::placement_points(&ranks);
    let record = MatchRecord {
        match_id: lease.lease.match_id.clone(),
        round: lease.lease.round,
        seats: seats
            .iter()
            .zip(ranks.iter().zip(points))
            .map(|(entrant, (rank, score))| SeatResult {
                entrant: entrant.clone(),
                rank: *rank,
                score,
                timeouts: *rank,
                moves: 100,
                ..SeatResult::default()
            })
            .collect(),
        reason: "turn_cap".into(),
        turns: 150,
        // The coordinator fills it in from the lease.
        worker: String::new(),
    };
    let logs = seats
        .iter()
        .enumerate()
        .map(|(seat, entrant)| seat_log_text(seat, entrant).into_bytes())
        .collect();
    coordinator
        .report(
            WORKER,
            &lease.lease.lease_id,
            record,
            Some(replay),
            logs,
            1.0,
        )
        .await
        .expect("reporting the result");
}

/// The web server on a loopback port; stopped (and its task ended) on drop.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(coordinator: Arc<Coordinator>) -> Server {
        Server::start_with(coordinator, WebOptions::default()).await
    }

    /// [`Server::start`] with `options` (the admin token always added).
    pub async fn start_with(coordinator: Arc<Coordinator>, options: WebOptions) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding a loopback port");
        let addr = listener.local_addr().expect("its address");
        let (stop, stopped) = oneshot::channel::<()>();
        let mut options = options;
        options.admin_tokens = BTreeSet::from([ADMIN_TOKEN.to_owned()]);
        let task = tokio::spawn(arena_web::serve(listener, coordinator, options, async {
            let _ = stopped.await;
        }));
        Server {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops the server and waits (up to a deadline) for `serve` to return.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take().expect("the server task");
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("serve returned within the deadline")
            .expect("the server task did not panic")
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, &[], Vec::new()).await
    }

    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.send("GET", path, headers, Vec::new()).await
    }

    pub async fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut all = vec![("content-type", "application/x-www-form-urlencoded")];
        all.extend_from_slice(headers);
        self.send("POST", path, &all, body.as_bytes().to_vec())
            .await
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Reply {
        let response = self.open(method, path, headers, body).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = tokio::time::timeout(Duration::from_secs(30), response.into_body().collect())
            .await
            .expect("the body within the deadline")
            .expect("reading the body")
            .to_bytes()
            .to_vec();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends a request and returns the response with its body unread.
    pub async fn open(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> hyper::Response<hyper::body::Incoming> {
        let tcp = TcpStream::connect(self.addr).await.expect("connecting");
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .expect("the HTTP handshake");
        tokio::spawn(connection);
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .expect("a valid request");
        tokio::time::timeout(Duration::from_secs(30), sender.send_request(request))
            .await
            .expect("a response within the deadline")
            .expect("the response")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A whole response.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The text, after checking the status (with the body in the message).
    pub fn expect(&self, status: u16) -> String {
        let text = self.text();
        assert_eq!(self.status, status, "body: {text}");
        text
    }
}

/// Server-sent events read off a streaming response body.
pub struct EventReader {
    body: hyper::body::Incoming,
    buffer: String,
}

impl EventReader {
    pub fn new(response: hyper::Response<hyper::body::Incoming>) -> EventReader {
        EventReader {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The data of the next `snapshot` event, parsed; panics after `deadline`.
    pub async fn next_snapshot(&mut self, deadline: Duration) -> serde_json::Value {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            let (name, data) = self.next_event(left).await;
            if name == "snapshot" {
                return data;
            }
        }
    }

    /// The next event's name and data (parsed as JSON); panics after
    /// `deadline`, or if the stream ends first.
    pub async fn next_event(&mut self, deadline: Duration) -> (String, serde_json::Value) {
        tokio::time::timeout(deadline, async {
            loop {
                while let Some(end) = self.buffer.find("\n\n") {
                    let event: String = self.buffer.drain(..end + 2).collect();
                    let mut name = String::new();
                    let mut data = String::new();
                    for line in event.lines() {
                        if let Some(value) = line.strip_prefix("event:") {
                            name = value.trim().to_owned();
                        } else if let Some(value) = line.strip_prefix("data:") {
                            data.push_str(value.strip_prefix(' ').unwrap_or(value));
                        }
                    }
                    // Keep-alive comments have neither.
                    if !name.is_empty() {
                        let data = serde_json::from_str(&data).expect("an event's data is JSON");
                        return (name, data);
                    }
                }
                let frame = self
                    .body
                    .frame()
                    .await
                    .expect("the stream stays open")
                    .expect("reading the stream");
                if let Some(chunk) = frame.data_ref() {
                    self.buffer.push_str(&String::from_utf8_lossy(chunk));
                }
            }
        })
        .await
        .expect("an event within the deadline")
    }

    /// Whether the stream ends (its body finishes) within `deadline`,
    /// skipping anything still sent.
    pub async fn ends_within(&mut self, deadline: Duration) -> bool {
        tokio::time::timeout(deadline, async {
            while let Some(frame) = self.body.frame().await {
                if frame.is_err() {
                    break;
                }
            }
        })
        .await
        .is_ok()
    }
}

impl EventReader {
    /// The first snapshot within `deadline` that `wanted` accepts; every
    /// snapshot must differ from the one before it.
    pub async fn snapshot_until(
        &mut self,
        deadline: Duration,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let until = tokio::time::Instant::now() + deadline;
        let mut last: Option<serde_json::Value> = None;
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            let snapshot = self.next_snapshot(left).await;
            assert_ne!(last.as_ref(), Some(&snapshot), "a snapshot sent twice");
            if wanted(&snapshot) {
                return snapshot;
            }
            last = Some(snapshot);
        }
    }
}

/// The `fields` of the item with `attr` and `key` in a snapshot.
pub fn snapshot_fields<'a>(
    snapshot: &'a serde_json::Value,
    attr: &str,
    key: &str,
) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
    snapshot["items"]
        .as_array()?
        .iter()
        .find(|item| item["attr"] == attr && item["key"] == key)?["fields"]
        .as_object()
}

/// A fresh entrant token for `entrant`.
pub async fn entrant_token(fixture: &Fixture, entrant: &str) -> String {
    fixture
        .coordinator
        .issue_entrant_token(entrant)
        .await
        .expect("issuing an entrant token")
}

/// The bot log [`report`] stores for a seat: it names the seat and its
/// entrant, and holds markup that must come out escaped.
pub fn seat_log_text(seat: usize, entrant: &str) -> String {
    format!("seat {seat} log of {entrant} <b>bold</b>\n")
}
