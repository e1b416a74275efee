//! Matches with a WebAssembly seat go only to workers that run the
//! tournament's wasm runtime: a worker without wasm, one with another
//! runtime, and one registered before workers named their runtime get only
//! the tournament's other matches. Run against both stores, Redis on a
//! redis-server of the test's own.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use arena_coordinator::domain::Format;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::store::{LiveBoard, Store, WorkerInfo, keys};
use arena_engine::registry::{self, Rules};
use support::redis::RedisServer;

const RUNTIME: &str = "wasmtime-48.0.8-1a2b3c4d5e6f7a8b";
const OTHER_RUNTIME: &str = "wasmtime-48.0.8-ffffffffffffffff";

/// A submission archive of empty files, as `pack` lays one out.
fn archive(files: &[&str]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for name in files {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(0);
        header.set_mode(0o755);
        builder
            .append_data(&mut header, name, std::io::empty())
            .unwrap();
    }
    builder.into_inner().unwrap()
}

/// Stores `archive` with a tag file that makes it a submission of its own.
async fn submit(store: &Store, tag: &str, files: &[&str]) -> String {
    let mut files = files.to_vec();
    files.push(tag);
    let bytes = archive(&files);
    let hash = arena_coordinator::submission_id(&bytes);
    store.put_submission(&hash, bytes).await.unwrap();
    hash
}

/// The field: a shipped module, a C bot whose build makes its module, and
/// two process bots.
struct Field {
    shipped: String,
    built: String,
    python: String,
    rust: String,
}

impl Field {
    async fn submit(store: &Store) -> Field {
        Field {
            shipped: submit(store, "shipped", &["bot.wasm"]).await,
            built: submit(store, "built", &["bot.c", "build.sh"]).await,
            python: submit(store, "python", &["run.sh", "bot.py"]).await,
            rust: submit(store, "rust", &["run.sh", "build.sh", "src.rs"]).await,
        }
    }

    fn wasm(&self) -> BTreeSet<String> {
        [self.shipped.clone(), self.built.clone()].into()
    }

    fn entrants(&self) -> Vec<(String, String)> {
        [
            ("shipped", &self.shipped),
            ("built", &self.built),
            ("python", &self.python),
            ("rust", &self.rust),
        ]
        .iter()
        .map(|(name, hash)| (name.to_string(), hash.to_string()))
        .collect()
    }
}

/// A 2-seat round robin of `game` between `field`, each pair once: six
/// matches, five of them with a WebAssembly seat in a game with fuel.
fn tournament(game: &str, field: &Field, wasm_runtime: Option<&str>) -> NewTournament {
    let entry = registry::find(game).unwrap();
    NewTournament {
        name: format!("wasm leases {game} {wasm_runtime:?}"),
        game: game.into(),
        seats: 2,
        base_seed: 3,
        format: Format::RoundRobin {
            cycles: 1,
            games_per_pairing: 1,
        },
        rules: Rules::default(),
        limits: entry.limits,
        entrants: field.entrants(),
        environment: None,
        teams: None,
        wasm_runtime: wasm_runtime.map(str::to_owned),
        model_runtime: None,
        live_board: LiveBoard::default(),
    }
}

async fn register(coordinator: &Coordinator, id: &str, wasm_runtime: &str) {
    coordinator
        .register_worker(WorkerInfo {
            id: id.into(),
            cores: 1,
            memory_mb: 1024,
            environment_id: String::new(),
            cached: Vec::new(),
            wasm_runtime: wasm_runtime.into(),
            model_runtime: String::new(),
            slots: 0,
        })
        .await
        .unwrap();
}

/// Leases for `worker` until it gets nothing; returns each leased match's seats.
async fn lease_all(coordinator: &Coordinator, worker: &str) -> Vec<Vec<String>> {
    let mut leased = Vec::new();
    while let Some(m) = coordinator.lease(worker).await.unwrap() {
        leased.push(m.lease.pairing.seats.clone());
    }
    leased
}

fn has_wasm_seat(seats: &[String], field: &Field) -> bool {
    seats.iter().any(|s| field.wasm().contains(s))
}

/// Registers worker `id` as a coordinator from before workers named their
/// wasm runtime stored it: its JSON has no `wasm_runtime`.
async fn register_legacy(redis_url: &str, id: &str) {
    let client = redis::Client::open(redis_url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let info = serde_json::json!({
        "id": id, "cores": 1, "memory_mb": 1024, "environment_id": "", "cached": [],
    });
    let () = redis::pipe()
        .hset(keys::WORKERS, id, info.to_string())
        .ignore()
        .zadd(keys::WORKER_SEEN, id, arena_coordinator::service::now_ms())
        .ignore()
        .query_async(&mut conn)
        .await
        .unwrap();
}

/// The scenario, on a fresh store; with the store's Redis URL, a legacy
/// worker (see [`register_legacy`]) takes part too.
async fn only_the_matching_runtime_gets_wasm_seats(store: Store, redis_url: Option<&str>) {
    let coordinator: Arc<Coordinator> =
        Coordinator::new(store.clone(), CoordinatorConfig::default());
    let field = Field::submit(&store).await;
    let id = coordinator
        .create_tournament(tournament("grid-royale", &field, Some(RUNTIME)))
        .await
        .unwrap();
    let spec = store.tournament(&id).await.unwrap().unwrap();
    assert_eq!(
        spec.wasm_entrants.iter().cloned().collect::<BTreeSet<_>>(),
        field.wasm(),
        "a shipped bot.wasm, and a build.sh without run.sh, are WebAssembly"
    );
    assert_eq!(spec.wasm_runtime.as_deref(), Some(RUNTIME));

    register(&coordinator, "no-wasm", "").await;
    register(&coordinator, "other-wasm", OTHER_RUNTIME).await;
    register(&coordinator, "wasm", RUNTIME).await;
    if let Some(url) = redis_url {
        register_legacy(url, "legacy").await;
    }

    // Those that may not play a wasm seat get the one process-only match
    // between them and nothing else.
    let mut others = Vec::new();
    for worker in ["no-wasm", "other-wasm"]
        .into_iter()
        .chain(redis_url.map(|_| "legacy"))
    {
        let leased = lease_all(&coordinator, worker).await;
        for seats in &leased {
            assert!(!has_wasm_seat(seats, &field), "{worker} got {seats:?}");
        }
        others.extend(leased);
    }
    assert_eq!(others.len(), 1, "{others:?}");
    assert_eq!(
        others[0].iter().cloned().collect::<BTreeSet<_>>(),
        [field.python.clone(), field.rust.clone()].into(),
        "exactly the process-only match went to the others"
    );

    // The wasm runtime's worker gets every match with a wasm seat.
    let wasm = lease_all(&coordinator, "wasm").await;
    assert_eq!(wasm.len(), 5, "{wasm:?}");
    for seats in &wasm {
        assert!(has_wasm_seat(seats, &field), "{seats:?}");
    }
    let (status, _) = coordinator.status(&id).await.unwrap();
    assert_eq!((status.queued, status.leased), (0, 6));

    // Without a runtime named, any worker that runs wasm may play them; a
    // game without fuel has no WebAssembly seats at all.
    let any = coordinator
        .create_tournament(tournament("grid-royale", &field, None))
        .await
        .unwrap();
    assert_eq!(
        store.tournament(&any).await.unwrap().unwrap().wasm_runtime,
        None
    );
    let leased = lease_all(&coordinator, "no-wasm").await;
    assert_eq!(leased.len(), 1, "{leased:?}");
    assert!(!has_wasm_seat(&leased[0], &field));
    assert_eq!(lease_all(&coordinator, "other-wasm").await.len(), 5);

    let generals = coordinator
        .create_tournament(tournament("generals", &field, Some(RUNTIME)))
        .await
        .unwrap();
    let spec = store.tournament(&generals).await.unwrap().unwrap();
    assert!(spec.wasm_entrants.is_empty());
    assert_eq!(spec.wasm_runtime, None, "dropped without wasm entrants");
    assert_eq!(lease_all(&coordinator, "no-wasm").await.len(), 6);
}

#[tokio::test]
async fn memory_store() {
    only_the_matching_runtime_gets_wasm_seats(Store::memory(), None).await;
}

#[tokio::test]
async fn redis_store() {
    let server = RedisServer::start();
    only_the_matching_runtime_gets_wasm_seats(server.store().await, Some(&server.url())).await;
}
