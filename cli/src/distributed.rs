//! The distributed setup: `arena coordinator`, `arena worker` and
//! `arena tournament ...`, each a thin layer over the coordinator and worker
//! crates.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use arena_coordinator::attachments::{Attachments, Blobs};
use arena_coordinator::grpc::Tokens;
use arena_coordinator::server;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, Quarantine};
use arena_coordinator::standings::Standings;
use arena_coordinator::store::{MemoryStore, RedisStore, Store};
use arena_coordinator::tournament_file::TournamentFile;
use arena_proto::v1::admin_client::AdminClient;
use arena_proto::v1::{
    CancelRequest, CreateTournamentRequest, MatchesRequest, ReleaseWorkerRequest, RequeueRequest,
    StandingsRequest, StatusRequest, UploadSubmissionChunk, WorkersRequest,
};
use std::sync::Arc;

use arena_worker::daemon::{self, Bearer, WorkerOptions};
use arena_worker::metrics::WorkerMetrics;
use arena_worker::submission;
use tokio_util::sync::CancellationToken;

use crate::cli::{BlobArgs, CoordinatorArgs, TournamentArgs, TournamentCommand, WorkerArgs};
use crate::launch;
use crate::terminal::{shown, shown_lines};

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Tournament state in Redis at `url` (one server, or the primary behind
/// Sentinel for a `redis+sentinel://` URL), or in memory without one.
pub async fn open_store(redis: Option<&str>) -> anyhow::Result<Store> {
    Ok(match redis {
        Some(url) => Store::Redis(
            RedisStore::connect(url)
                .await
                .with_context(|| format!("connecting to Redis at {}", without_password(url)))?,
        ),
        None => Store::Memory(MemoryStore::new()),
    })
}

/// `url` with the credentials before its host replaced by `***`, for error
/// messages that end up in logs.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    match authority.rsplit_once('@') {
        Some((_, hosts)) => {
            let after = &rest[authority.len()..];
            format!("{scheme}://***@{hosts}{after}")
        }
        None => url.to_owned(),
    }
}

/// The blob store `args` name, or else the one at `default` (a directory),
/// or else process memory.
pub async fn open_attachments(
    args: &BlobArgs,
    default: Option<PathBuf>,
) -> anyhow::Result<Attachments> {
    let location = match &args.blobs {
        Some(location) => Some(location.clone()),
        None => default.map(|dir| dir.display().to_string()),
    };
    let blobs = match location {
        Some(location) => Blobs::Stored(
            arena_blob::BlobStore::open(&location)
                .await
                .with_context(|| format!("opening the blob store {}", redacted_blobs(&location)))?,
        ),
        None => Blobs::default(),
    };
    Ok(Attachments {
        blobs,
        retention: args.retention.max_age,
    })
}

/// `$XDG_DATA_HOME/arena/blobs`, or `~/.local/share/arena/blobs`: where
/// replays and logs go beside a Redis store by default.
pub fn default_blob_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("arena/blobs")
}

/// A blob location fit for an error message: no query (it may carry keys).
fn redacted_blobs(location: &str) -> &str {
    location.split('?').next().unwrap_or(location)
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// Resolves on SIGTERM or Ctrl-C.
async fn termination() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

pub fn coordinator(args: CoordinatorArgs) -> anyhow::Result<ExitCode> {
    if args.worker_tokens.is_empty() || args.admin_tokens.is_empty() {
        anyhow::bail!(
            "the coordinator needs at least one --worker-token and one --admin-token \
             (or ARENA_WORKER_TOKEN / ARENA_ADMIN_TOKEN)"
        );
    }
    runtime()?.block_on(async {
        let _telemetry =
            crate::telemetry::init("arena-coordinator", crate::telemetry::LogStyle::Service);
        let coordinator = open_coordinator(&args).await?;
        if let Some(address) = &args.metrics {
            serve_coordinator_metrics(&coordinator, address).await?;
        }
        let pages = match &args.http {
            Some(address) => Some(serve_coordinator_pages(&coordinator, &args, address).await?),
            None => None,
        };
        serve_grpc(coordinator, &args).await?;
        if let Some(pages) = pages {
            // The same signal stops both; the pages are not waited for
            // beyond that (a browser may hold a live-update stream open).
            pages.abort();
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The coordinator `arena coordinator` serves: its store, configuration
/// and blob store from `args`.
async fn open_coordinator(args: &CoordinatorArgs) -> anyhow::Result<Arc<Coordinator>> {
    if args.redis.is_none() {
        crate::messages::say!(
            "arena coordinator: no --redis: state lives in memory and dies with this process"
        );
    }
    let store = open_store(args.redis.as_deref()).await?;
    if args.quarantine_failures > args.quarantine_window {
        anyhow::bail!(
            "--quarantine-failures {} can never be reached within --quarantine-window {}",
            args.quarantine_failures,
            args.quarantine_window
        );
    }
    let attachments =
        open_attachments(&args.blobs, args.redis.is_some().then(default_blob_dir)).await?;
    crate::messages::say!(
        "arena coordinator: replays and logs in {}",
        attachments.blobs.describe()
    );
    Ok(Coordinator::with_attachments(
        store,
        CoordinatorConfig {
            max_attempts: args.max_attempts,
            quarantine: Quarantine {
                window: args.quarantine_window,
                failures: args.quarantine_failures,
            },
            ..CoordinatorConfig::with_lease_ttl(Duration::from_secs(args.lease_ttl.max(1)))
        },
        attachments,
    ))
}

/// Serves the coordinator's metrics on `address` (`--metrics`).
async fn serve_coordinator_metrics(
    coordinator: &Arc<Coordinator>,
    address: &str,
) -> anyhow::Result<()> {
    let shared = Arc::clone(coordinator);
    let render: crate::metrics_http::Render = Arc::new(move || {
        let coordinator = Arc::clone(&shared);
        Box::pin(async move { coordinator.render_metrics().await })
    });
    let bound = crate::metrics_http::spawn(address, render).await?;
    println!("metrics on {bound}");
    Ok(())
}

/// Serves the web pages on `address` (`--http`) until a signal.
async fn serve_coordinator_pages(
    coordinator: &Arc<Coordinator>,
    args: &CoordinatorArgs,
    address: &str,
) -> anyhow::Result<tokio::task::JoinHandle<std::io::Result<()>>> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("listening for the web pages on {address}"))?;
    // Scripts and tests read this line to learn the address.
    println!("web pages on http://{}/", listener.local_addr()?);
    let options = arena_web::WebOptions {
        admin_tokens: args.admin_tokens.iter().cloned().collect(),
        ..arena_web::WebOptions::default()
    };
    Ok(tokio::spawn(arena_web::serve(
        listener,
        Arc::clone(coordinator),
        options,
        termination(),
    )))
}

/// Serves gRPC on `--listen` (with TLS when given a certificate and key)
/// until a signal.
async fn serve_grpc(coordinator: Arc<Coordinator>, args: &CoordinatorArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    // Scripts and tests read this line to learn the address.
    println!("listening on {}", listener.local_addr()?);
    let tokens = Tokens {
        workers: args.worker_tokens.iter().cloned().collect(),
        admins: args.admin_tokens.iter().cloned().collect(),
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(server::TlsIdentity {
            cert_pem: read(cert)?,
            key_pem: read(key)?,
        }),
        _ => None,
    };
    server::serve(coordinator, tokens, listener, tls, termination()).await?;
    Ok(())
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    let launcher = launch::worker_launcher(&args.sandbox, 2)?;
    let environment = WorkerEnvironment::of(&args, &launcher)?;
    let result = runtime()?.block_on(async {
        let _telemetry =
            crate::telemetry::init("arena-worker", crate::telemetry::LogStyle::Service);
        let stop = CancellationToken::new();
        let options = worker_options(&args, environment)?;
        let metrics = WorkerMetrics::new()?;
        if let Some(address) = &args.metrics {
            serve_worker_metrics(&metrics, address).await?;
        }
        let run = tokio::spawn(daemon::run(
            options,
            launcher.shared(),
            metrics,
            stop.clone(),
        ));
        drain_on_termination(stop.clone());
        let summary = run.await??;
        crate::messages::say!(
            "arena worker: played {}, accepted {}, dropped {}, failed {}, abandoned {}",
            summary.played,
            summary.accepted,
            summary.dropped,
            summary.failed,
            summary.abandoned
        );
        Ok::<_, anyhow::Error>(ExitCode::SUCCESS)
    });
    launcher.finish();
    result
}

/// What `arena worker` learns before its runtime starts: from its launcher
/// and from `args`.
struct WorkerEnvironment {
    slots: usize,
    bot_cores: Option<usize>,
    environment_id: String,
    cache_dir: PathBuf,
    id: String,
    tls_ca: Option<Vec<u8>>,
}

impl WorkerEnvironment {
    fn of(args: &WorkerArgs, launcher: &launch::CommandLauncher) -> anyhow::Result<Self> {
        // Slots for the smallest matches; the daemon holds each match until its
        // bots have cores (`bot_cores`), whatever its seat count.
        let slots = launch::match_slots(launcher, 2);
        let bot_cores = launch::bot_cores(launcher);
        let environment_id = launch::environment_id(launcher);
        let cache_dir = args
            .submissions_dir
            .clone()
            .unwrap_or_else(|| launch::cache_dir(&args.sandbox).join("../submissions"));
        let id = args.id.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        });
        let tls_ca = args.tls_ca.as_deref().map(read).transpose()?;
        Ok(WorkerEnvironment {
            slots,
            bot_cores,
            environment_id,
            cache_dir,
            id,
            tls_ca,
        })
    }
}

/// The daemon's options for `arena worker`.
fn worker_options(args: &WorkerArgs, env: WorkerEnvironment) -> anyhow::Result<WorkerOptions> {
    Ok(WorkerOptions {
        coordinator: args.coordinator.clone(),
        token: args.token.clone(),
        worker_id: env.id,
        slots: env.slots,
        bot_cores: env.bot_cores,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_mb: args.sandbox.memory_mb,
        environment_id: env.environment_id,
        cache_dir: env.cache_dir,
        idle_poll: Duration::from_millis(200),
        tls_ca: env.tls_ca,
        wasm: if args.no_wasm {
            None
        } else {
            Some(launch::wasm_support(&args.sandbox)?)
        },
        models: if args.no_models {
            None
        } else {
            Some(launch::model_support()?)
        },
    })
}

/// Serves the worker's metrics on `address` (`--metrics`).
async fn serve_worker_metrics(metrics: &WorkerMetrics, address: &str) -> anyhow::Result<()> {
    let shared = metrics.clone();
    let render: crate::metrics_http::Render = Arc::new(move || {
        let text = shared.encode();
        Box::pin(async move { text })
    });
    let bound = crate::metrics_http::spawn(address, render).await?;
    crate::messages::say!("arena worker: metrics on {bound}");
    Ok(())
}

/// Cancels `drain` at SIGTERM or Ctrl-C: the worker finishes the matches
/// in flight and leases no more.
fn drain_on_termination(drain: CancellationToken) {
    tokio::spawn(async move {
        termination().await;
        crate::messages::say!(
            "arena worker: draining: finishing matches in flight, leasing no more"
        );
        drain.cancel();
    });
}

type Admin =
    AdminClient<tonic::service::interceptor::InterceptedService<tonic::transport::Channel, Bearer>>;

async fn admin(args: &TournamentArgs) -> anyhow::Result<Admin> {
    let mut endpoint = tonic::transport::Endpoint::from_shared(args.coordinator.clone())
        .with_context(|| format!("invalid coordinator address {:?}", args.coordinator))?;
    if let Some(path) = &args.tls_ca {
        let ca = read(path)?;
        endpoint = endpoint
            .tls_config(
                tonic::transport::ClientTlsConfig::new()
                    .ca_certificate(tonic::transport::Certificate::from_pem(ca)),
            )
            .context("configuring TLS")?;
    }
    let channel = endpoint
        .connect()
        .await
        .with_context(|| format!("connecting to {}", args.coordinator))?;
    let bearer = Bearer::new(&args.token).context("invalid token")?;
    Ok(AdminClient::with_interceptor(channel, bearer))
}

/// Bytes per message of a streamed upload: far below gRPC's 4 MiB message
/// limit, large enough that per-message overhead does not matter.
const UPLOAD_CHUNK_BYTES: usize = 256 << 10;

/// Packs `dir` and uploads it in chunks (`Admin.UploadSubmissionChunks`),
/// so the size limit is [`arena_proto::MAX_SUBMISSION_BYTES`] here as in
/// `arena run`, not gRPC's message limit.
async fn upload(client: &mut Admin, name: &str, dir: &Path) -> anyhow::Result<Uploaded> {
    let archive = pack(dir)?;
    upload_archive(client, name, dir, archive).await
}

/// What the coordinator answers an upload with.
struct Uploaded {
    hash: String,
    /// Unlocks the submission's own bot logs on the web pages.
    entrant_token: String,
}

impl Uploaded {
    /// Tells the organiser the entrant's token, on stderr so that stdout
    /// stays what scripts read.
    fn announce_token(&self, name: &str) {
        if !self.entrant_token.is_empty() {
            crate::messages::say!(
                "entrant token for {} (unlocks its own bot logs on the web pages; \
                 give it to the entrant only): {}",
                shown(name),
                self.entrant_token
            );
        }
    }
}

/// Uploads `archive`, packed from `dir`, in chunks.
async fn upload_archive(
    client: &mut Admin,
    name: &str,
    dir: &Path,
    archive: Vec<u8>,
) -> anyhow::Result<Uploaded> {
    let name = name.to_owned();
    let count = archive.len().div_ceil(UPLOAD_CHUNK_BYTES);
    // Built as they are sent: only the chunk in flight is copied.
    let chunks = (0..count).map(move |index| {
        let start = index * UPLOAD_CHUNK_BYTES;
        let end = archive.len().min(start + UPLOAD_CHUNK_BYTES);
        UploadSubmissionChunk {
            // Read from the first chunk only.
            name: if index == 0 {
                name.clone()
            } else {
                String::new()
            },
            data: archive[start..end].to_vec(),
        }
    });
    let response = client
        .upload_submission_chunks(tonic::codegen::tokio_stream::iter(chunks))
        .await
        .map_err(|status| anyhow::anyhow!("{} ({:?})", status.message(), status.code()))
        .with_context(|| format!("uploading {}", dir.display()))?
        .into_inner();
    Ok(Uploaded {
        hash: response.hash,
        entrant_token: response.entrant_token,
    })
}

/// A bot directory as a submission archive, refused here when it is over
/// the limit every path applies ([`arena_proto::MAX_SUBMISSION_BYTES`]).
pub fn pack(dir: &Path) -> anyhow::Result<Vec<u8>> {
    let archive = submission::pack(dir).with_context(|| format!("packing {}", dir.display()))?;
    let limit = arena_proto::MAX_SUBMISSION_BYTES;
    if archive.len() as u64 > limit {
        anyhow::bail!(
            "{} packs to {} bytes, more than the {limit} bytes (2 GiB) a submission may be",
            dir.display(),
            archive.len()
        );
    }
    Ok(archive)
}

pub fn tournament(args: TournamentArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        // A bot that cannot be a submission is refused before connecting.
        let packed = match &args.command {
            TournamentCommand::Submit { bot } => Some(pack(bot)?),
            _ => None,
        };
        let mut client = admin(&args).await?;
        match &args.command {
            TournamentCommand::Submit { bot } => {
                submit(&mut client, bot, packed.unwrap_or_default()).await?
            }
            TournamentCommand::Create { file } => create(&mut client, &args, file).await?,
            TournamentCommand::Status { id } => print_status(&mut client, id).await?,
            TournamentCommand::Matches { id, stuck } => {
                print_matches(&mut client, id, *stuck).await?;
            }
            TournamentCommand::Requeue { match_id } => requeue(&mut client, match_id).await?,
            TournamentCommand::Workers => print_workers(&mut client).await?,
            TournamentCommand::ReleaseWorker { worker_id } => {
                release_worker(&mut client, worker_id).await?
            }
            TournamentCommand::Standings { id, json, csv } => {
                print_standings(&mut client, id, *json, *csv).await?
            }
            TournamentCommand::Cancel { id } => cancel(&mut client, id).await?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `arena tournament submit`: uploads `archive`, packed from `bot`, and
/// prints its hash.
async fn submit(client: &mut Admin, bot: &Path, archive: Vec<u8>) -> anyhow::Result<()> {
    let name = bot
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let uploaded = upload_archive(client, &name, bot, archive).await?;
    uploaded.announce_token(&name);
    println!("{}", uploaded.hash);
    Ok(())
}

/// `arena tournament create`: uploads the file's bots, creates the
/// tournament and prints its id.
async fn create(client: &mut Admin, args: &TournamentArgs, file: &Path) -> anyhow::Result<()> {
    let mut tournament = TournamentFile::load(file)?;
    tournament.wasm_runtime = wasm_runtime(&tournament, args.wasm_runtime.clone())?;
    tournament.model_runtime = model_runtime(&tournament, args.model_runtime.clone());
    for bot in &mut tournament.bots {
        let uploaded = upload(client, &bot.name, &bot.path).await?;
        uploaded.announce_token(&bot.name);
        bot.path = uploaded.hash.into();
    }
    let spec_toml = tournament
        .to_toml()
        .context("writing the tournament for the wire")?;
    let response = client
        .create_tournament(CreateTournamentRequest { spec_toml })
        .await
        .context("creating the tournament")?;
    println!("{}", response.into_inner().tournament_id);
    Ok(())
}

/// `arena tournament status`: one line, then the stuck matches if any.
async fn print_status(client: &mut Admin, id: &str) -> anyhow::Result<()> {
    let s = client
        .status(StatusRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .context("reading the status")?
        .into_inner();
    println!(
        "{id}: {}/{} matches done ({} queued, {} playing{}), round {}/{}, {} workers{}{}",
        s.done,
        s.total,
        s.queued,
        s.leased,
        if s.stuck > 0 {
            format!(", {} stuck", s.stuck)
        } else {
            String::new()
        },
        s.rounds_scheduled,
        s.rounds_total,
        s.workers_connected,
        if s.finished { ", finished" } else { "" },
        if s.cancelled { ", cancelled" } else { "" },
    );
    if s.stuck > 0 {
        print_matches(client, id, true).await?;
    }
    Ok(())
}

/// `arena tournament requeue`.
async fn requeue(client: &mut Admin, match_id: &str) -> anyhow::Result<()> {
    client
        .requeue(RequeueRequest {
            match_id: match_id.to_owned(),
        })
        .await
        .context("requeueing")?;
    println!("{match_id}: requeued");
    Ok(())
}

/// `arena tournament workers`: one line per worker.
async fn print_workers(client: &mut Admin) -> anyhow::Result<()> {
    let workers = client
        .workers(WorkersRequest {})
        .await
        .context("listing workers")?
        .into_inner()
        .workers;
    for w in workers {
        println!(
            "{}\t{}\t{} cores, {} MiB, environment {:?}, {} builds cached",
            shown(&w.worker_id),
            match (w.alive, w.quarantined) {
                (_, true) => "quarantined",
                (true, false) => "alive",
                (false, false) => "silent",
            },
            w.cores,
            w.memory_mb,
            w.environment_id,
            w.cached_builds,
        );
    }
    Ok(())
}

/// `arena tournament release-worker`.
async fn release_worker(client: &mut Admin, worker_id: &str) -> anyhow::Result<()> {
    client
        .release_worker(ReleaseWorkerRequest {
            worker_id: worker_id.to_owned(),
        })
        .await
        .context("releasing the worker")?;
    println!("{worker_id}: released");
    Ok(())
}

/// `arena tournament standings`: JSON, CSV or a table.
async fn print_standings(
    client: &mut Admin,
    id: &str,
    json: bool,
    csv: bool,
) -> anyhow::Result<()> {
    let s = client
        .standings(StandingsRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .context("reading the standings")?
        .into_inner();
    if json {
        println!("{}", s.json);
    } else if csv {
        print!("{}", s.csv);
    } else {
        print!(
            "{}",
            shown_lines(&Standings::from_json(&s.json)?.to_table())
        );
    }
    Ok(())
}

/// `arena tournament cancel`.
async fn cancel(client: &mut Admin, id: &str) -> anyhow::Result<()> {
    client
        .cancel(CancelRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .context("cancelling")?;
    println!("{id}: cancelled");
    Ok(())
}

/// The wasm runtime a new tournament's WebAssembly seats need: the one
/// named on the command line (`flag`), else in the tournament file, else
/// this build's own (the pinned wasmtime and its configuration, as this
/// build's workers report it); `None` for a game without WebAssembly seats.
/// The coordinator keeps it only for a tournament with a WebAssembly
/// entrant.
pub fn wasm_runtime(file: &TournamentFile, flag: Option<String>) -> anyhow::Result<Option<String>> {
    if file.limits.fuel.is_none() {
        return Ok(None);
    }
    if let Some(named) = flag
        .or_else(|| file.wasm_runtime.clone())
        .filter(|r| !r.is_empty())
    {
        return Ok(Some(named));
    }
    let engine = arena_wasm::engine()
        .map_err(|e| anyhow::anyhow!("cannot set up the WebAssembly engine: {e}"))?;
    Ok(Some(arena_wasm::fingerprint(&engine)))
}

/// The model runtime a new tournament's model-graph seats need: the one
/// named on the command line (`flag`), else in the tournament file, else
/// this build's own ([`launch::model_runtime_id`], as this build's workers
/// report it); `None` for a game without model-graph seats. The coordinator
/// keeps it only for a tournament with a model-graph entrant.
pub fn model_runtime(file: &TournamentFile, flag: Option<String>) -> Option<String> {
    file.limits.model.map(|_| {
        flag.or_else(|| file.model_runtime.clone())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(launch::model_runtime_id)
    })
}

/// One line per match (only the stuck ones with `stuck_only`), each failed
/// attempt indented under it.
async fn print_matches(client: &mut Admin, id: &str, stuck_only: bool) -> anyhow::Result<()> {
    let matches = client
        .matches(MatchesRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .context("listing the matches")?
        .into_inner()
        .matches;
    for m in matches.iter().filter(|m| !stuck_only || m.state == "stuck") {
        println!(
            "{}\tround {}\t{}\tattempt {}{}",
            m.match_id,
            m.round,
            m.state,
            m.attempt,
            if m.reason.is_empty() {
                String::new()
            } else {
                format!("\t{}", shown(&m.reason))
            }
        );
        for f in &m.failures {
            println!(
                "    attempt {} on {}: {}",
                f.attempt,
                shown(&f.worker),
                shown(&f.reason)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn credentials_stay_out_of_the_connect_error() {
        assert_eq!(
            without_password("redis+sentinel://app:s3cret@s1:26379,s2/arena/1"),
            "redis+sentinel://***@s1:26379,s2/arena/1"
        );
        assert_eq!(
            without_password("redis://:p@ss@db:6379/0"),
            "redis://***@db:6379/0"
        );
        assert_eq!(without_password("redis://127.0.0.1/"), "redis://127.0.0.1/");
        assert_eq!(
            without_password("unix:///run/redis.sock"),
            "unix:///run/redis.sock"
        );
        assert_eq!(without_password("garbage"), "garbage");
    }
}
