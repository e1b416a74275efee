//! Matches with a model-graph seat go only to workers that run the
//! tournament's model runtime, and a match seating both a model-graph and
//! a WebAssembly bot only to a worker with both runtimes: a worker without
//! models, one with another model runtime, one with models but no wasm,
//! and one registered before workers named their model runtime get only
//! what they may play. Run against both stores, Redis on a redis-server of
//! the test's own.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use arena_coordinator::domain::Format;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::store::{LiveBoard, Store, WorkerInfo, keys};
use arena_engine::registry::{self, ModelLimits, Rules};
use support::redis::RedisServer;

const WASM: &str = "wasmtime-48.0.8-1a2b3c4d5e6f7a8b";
const MODEL: &str = "tract-onnx-0.23.9";
const OTHER_MODEL: &str = "tract-onnx-0.22.0";

/// A submission archive of empty regular files, as `pack` lays one out.
fn archive(files: &[&str]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for name in files {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(0);
        header.set_mode(0o644);
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

/// The field: a model graph, a WebAssembly module, a process bot that
/// happens to ship a `model.onnx` without a manifest, and a plain process
/// bot.
struct Field {
    model: String,
    wasm: String,
    onnx_only: String,
    python: String,
}

impl Field {
    async fn submit(store: &Store) -> Field {
        Field {
            model: submit(store, "model", &["model.onnx", "bot.toml"]).await,
            wasm: submit(store, "wasm", &["bot.wasm"]).await,
            onnx_only: submit(store, "onnx-only", &["run.sh", "model.onnx"]).await,
            python: submit(store, "python", &["run.sh", "bot.py"]).await,
        }
    }

    fn entrants(&self) -> Vec<(String, String)> {
        [
            ("model", &self.model),
            ("wasm", &self.wasm),
            ("onnx-only", &self.onnx_only),
            ("python", &self.python),
        ]
        .iter()
        .map(|(name, hash)| (name.to_string(), hash.to_string()))
        .collect()
    }

    /// The seats of a match, as a set of field names.
    fn names(&self, seats: &[String]) -> BTreeSet<&'static str> {
        seats
            .iter()
            .map(|s| match s {
                s if *s == self.model => "model",
                s if *s == self.wasm => "wasm",
                s if *s == self.onnx_only => "onnx-only",
                s if *s == self.python => "python",
                other => panic!("unknown seat {other}"),
            })
            .collect()
    }

    /// Each match's seats as names, sorted.
    fn matches(&self, leased: &[Vec<String>]) -> BTreeSet<Vec<&'static str>> {
        leased
            .iter()
            .map(|seats| self.names(seats).into_iter().collect())
            .collect()
    }
}

/// A 2-seat round robin of grid-royale (a game with fuel) between `field`,
/// each pair once: six matches. With `models` its limits carry model limits
/// too (as a game with model-graph seats' do), so the field's model graph is
/// a model-graph bot.
fn tournament(field: &Field, models: bool, model_runtime: Option<&str>) -> NewTournament {
    let entry = registry::find("grid-royale").unwrap();
    let mut limits = entry.limits;
    if models {
        limits.model = Some(ModelLimits {
            max_bytes: 1 << 20,
            max_macs: 1_000_000,
        });
    }
    NewTournament {
        name: format!("model leases {models} {model_runtime:?}"),
        game: "grid-royale".into(),
        seats: 2,
        base_seed: 3,
        format: Format::RoundRobin {
            cycles: 1,
            games_per_pairing: 1,
        },
        rules: Rules::default(),
        limits,
        entrants: field.entrants(),
        environment: None,
        teams: None,
        wasm_runtime: Some(WASM.into()),
        model_runtime: model_runtime.map(str::to_owned),
        live_board: LiveBoard::default(),
    }
}

async fn register(coordinator: &Coordinator, id: &str, wasm_runtime: &str, model_runtime: &str) {
    coordinator
        .register_worker(WorkerInfo {
            id: id.into(),
            cores: 1,
            memory_mb: 1024,
            environment_id: String::new(),
            cached: Vec::new(),
            wasm_runtime: wasm_runtime.into(),
            model_runtime: model_runtime.into(),
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

/// Registers worker `id` as a coordinator from before workers named their
/// model runtime stored it: its JSON has no `model_runtime` (it runs this
/// tournament's wasm runtime, so only the models keep matches from it).
async fn register_legacy(redis_url: &str, id: &str) {
    let client = redis::Client::open(redis_url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let info = serde_json::json!({
        "id": id, "cores": 1, "memory_mb": 1024, "environment_id": "", "cached": [],
        "wasm_runtime": WASM,
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

/// What `create_tournament.lua` wrote for tournament `id`: its model
/// runtime field, and both sets of submissions.
async fn lease_keys(
    redis_url: &str,
    id: &str,
) -> (
    Option<String>,
    Option<String>,
    BTreeSet<String>,
    BTreeSet<String>,
) {
    let client = redis::Client::open(redis_url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    redis::pipe()
        .hget(keys::TOURNAMENT_MODEL, id)
        .hget(keys::TOURNAMENT_WASM, id)
        .smembers(keys::MODEL_SUBMISSIONS)
        .smembers(keys::WASM_SUBMISSIONS)
        .query_async(&mut conn)
        .await
        .unwrap()
}

fn set<'a>(matches: impl IntoIterator<Item = &'a [&'static str]>) -> BTreeSet<Vec<&'static str>> {
    matches.into_iter().map(<[_]>::to_vec).collect()
}

/// The scenario, on a fresh store; with the store's Redis URL, a legacy
/// worker (see [`register_legacy`]) takes part too.
async fn only_the_matching_runtimes_get_model_seats(store: Store, redis_url: Option<&str>) {
    let coordinator: Arc<Coordinator> =
        Coordinator::new(store.clone(), CoordinatorConfig::default());
    let field = Field::submit(&store).await;
    let id = coordinator
        .create_tournament(tournament(&field, true, Some(MODEL)))
        .await
        .unwrap();
    let spec = store.tournament(&id).await.unwrap().unwrap();
    assert_eq!(
        spec.model_entrants,
        vec![field.model.clone()],
        "a model.onnx with its bot.toml is a model graph; one without is not"
    );
    assert_eq!(spec.model_runtime.as_deref(), Some(MODEL));
    assert_eq!(spec.wasm_entrants, vec![field.wasm.clone()]);
    assert_eq!(spec.wasm_runtime.as_deref(), Some(WASM));
    if let Some(url) = redis_url {
        let (model, wasm, models, wasms) = lease_keys(url, &id).await;
        assert_eq!(model.as_deref(), Some(MODEL));
        assert_eq!(wasm.as_deref(), Some(WASM));
        assert_eq!(models, [field.model.clone()].into());
        assert_eq!(wasms, [field.wasm.clone()].into());
    }

    register(&coordinator, "nothing", "", "").await;
    register(&coordinator, "wasm-other-model", WASM, OTHER_MODEL).await;
    register(&coordinator, "model-only", "", MODEL).await;
    register(&coordinator, "both", WASM, MODEL).await;
    if let Some(url) = redis_url {
        register_legacy(url, "legacy").await;
    }

    // A worker with neither runtime gets the process bots' matches only.
    let nothing = lease_all(&coordinator, "nothing").await;
    assert_eq!(
        field.matches(&nothing),
        set([&["onnx-only", "python"][..]]),
        "{nothing:?}"
    );
    // The wasm runtime and another model runtime, or no model runtime
    // named at all: the wasm matches without the model graph.
    let wasm_seats = set([&["onnx-only", "wasm"][..], &["python", "wasm"][..]]);
    let legacy = match redis_url {
        Some(_) => lease_all(&coordinator, "legacy").await,
        None => Vec::new(),
    };
    let other = lease_all(&coordinator, "wasm-other-model").await;
    let mut wasm_only = legacy.clone();
    wasm_only.extend(other.iter().cloned());
    assert_eq!(field.matches(&wasm_only), wasm_seats, "{wasm_only:?}");
    assert_eq!(wasm_only.len(), 2);
    if redis_url.is_some() {
        assert_eq!(legacy.len(), 2, "the legacy worker came first: {legacy:?}");
    }
    // The model runtime without wasm: the model graph's matches against
    // process bots, not the one against the WebAssembly bot.
    let model_only = lease_all(&coordinator, "model-only").await;
    assert_eq!(
        field.matches(&model_only),
        set([&["model", "onnx-only"][..], &["model", "python"][..]]),
        "{model_only:?}"
    );
    // Both runtimes: the match seating both kinds.
    let both = lease_all(&coordinator, "both").await;
    assert_eq!(
        field.matches(&both),
        set([&["model", "wasm"][..]]),
        "{both:?}"
    );
    let (status, _) = coordinator.status(&id).await.unwrap();
    assert_eq!((status.queued, status.leased), (0, 6));

    // Without a model runtime named, any worker that plays models may play
    // the model graph's matches.
    let any = coordinator
        .create_tournament(tournament(&field, true, None))
        .await
        .unwrap();
    assert_ne!(any, id, "the model runtime is part of the id");
    let spec = store.tournament(&any).await.unwrap().unwrap();
    assert_eq!(spec.model_entrants, vec![field.model.clone()]);
    assert_eq!(spec.model_runtime, None);
    if let Some(url) = redis_url {
        let (model, ..) = lease_keys(url, &any).await;
        assert_eq!(model.as_deref(), Some(""), "any model runtime");
    }
    assert_eq!(lease_all(&coordinator, "nothing").await.len(), 1);
    let other = lease_all(&coordinator, "wasm-other-model").await;
    assert_eq!(
        field.matches(&other),
        set([
            &["model", "onnx-only"][..],
            &["model", "python"][..],
            &["model", "wasm"][..],
            &["onnx-only", "wasm"][..],
            &["python", "wasm"][..],
        ]),
        "{other:?}"
    );

    // A game without model limits has no model-graph seats at all: the
    // runtime is dropped, and the model graph plays as a process bot.
    let plain = coordinator
        .create_tournament(tournament(&field, false, Some(MODEL)))
        .await
        .unwrap();
    let spec = store.tournament(&plain).await.unwrap().unwrap();
    assert!(spec.model_entrants.is_empty());
    assert_eq!(spec.model_runtime, None, "dropped without model entrants");
    if let Some(url) = redis_url {
        let (model, ..) = lease_keys(url, &plain).await;
        assert_eq!(model, None);
    }
    let nothing = lease_all(&coordinator, "nothing").await;
    assert_eq!(
        field.matches(&nothing),
        set([
            &["model", "onnx-only"][..],
            &["model", "python"][..],
            &["onnx-only", "python"][..]
        ]),
        "{nothing:?}"
    );
}

#[tokio::test]
async fn memory_store() {
    only_the_matching_runtimes_get_model_seats(Store::memory(), None).await;
}

#[tokio::test]
async fn redis_store() {
    let server = RedisServer::start();
    only_the_matching_runtimes_get_model_seats(server.store().await, Some(&server.url())).await;
}
