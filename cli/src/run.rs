//! `arena run`: a whole tournament on this machine. An in-process
//! coordinator (embedded store, or Redis with `--redis`) serves gRPC on
//! loopback; local workers lease and play its matches over that connection,
//! exactly as remote workers would.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::tournament_file::TournamentFile;
use arena_coordinator::{grpc::Tokens, server};
use arena_worker::daemon::{self, WorkerOptions};
use arena_worker::metrics::WorkerMetrics;
use arena_worker::submission;
use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

use crate::cli::RunArgs;
use crate::launch::{self, CommandLauncher};

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let file = TournamentFile::load(&args.tournament)?;
    // Launchers fork bots; build them before the async runtime starts threads.
    let launcher = launch::launcher(&args.sandbox, file.seats)?;
    let runtime = crate::distributed::runtime()?;
    let result = runtime.block_on(async {
        // Dropped before the runtime: it flushes the spans still queued.
        let _telemetry = crate::telemetry::init("arena");
        tournament(&args, file, &launcher).await
    });
    drop(runtime);
    launcher.finish();
    result
}

async fn tournament(
    args: &RunArgs,
    file: TournamentFile,
    launcher: &CommandLauncher,
) -> anyhow::Result<ExitCode> {
    let store = crate::distributed::open_store(args.redis.as_deref()).await?;
    // Local workers play in this machine's environment; a tournament that
    // needs another one could never finish here.
    let environment_id = launch::environment_id(launcher);
    if let Some(needed) = &file.environment
        && needed != &environment_id
    {
        anyhow::bail!(
            "the tournament needs environment {needed}, but bots here run in {:?} \
             (use --store-paths or --env-path to match it)",
            environment_id
        );
    }
    let config = CoordinatorConfig::with_lease_ttl(Duration::from_secs(args.lease_ttl.max(1)));
    let coordinator = Coordinator::new(store, config);

    let mut entrants = Vec::with_capacity(file.bots.len());
    for bot in &file.bots {
        let archive = submission::pack(&bot.path)
            .with_context(|| format!("packing bot {:?} at {}", bot.name, bot.path.display()))?;
        let hash = arena_coordinator::submission_id(&archive);
        coordinator.store().put_submission(&hash, archive).await?;
        entrants.push((bot.name.clone(), hash));
    }
    let id = coordinator
        .create_tournament(NewTournament {
            name: file.name.clone(),
            game: file.game.clone(),
            seats: file.seats,
            base_seed: file.seed,
            format: file.format.clone(),
            rules: file.rules.clone(),
            limits: file.limits,
            entrants,
            environment: file.environment.clone(),
            teams: Some(file.teams.clone()),
        })
        .await?;

    // The coordinator on loopback, with a token made for this run.
    let token = fresh_token()?;
    let tokens = Tokens {
        workers: [token.clone()].into(),
        admins: Default::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let stop_server = CancellationToken::new();
    let server = tokio::spawn(server::serve(
        Arc::clone(&coordinator),
        tokens,
        listener,
        None,
        stop_server.clone().cancelled_owned(),
    ));

    let cache_dir = std::env::temp_dir().join(format!("arena-run-{}", std::process::id()));
    let launcher = launcher.shared();
    let stop_workers = CancellationToken::new();
    let mut workers = Vec::new();
    for n in 0..args.workers.max(1) {
        let options = WorkerOptions {
            coordinator: format!("http://{address}"),
            token: token.clone(),
            worker_id: format!("local-{n}"),
            slots: 1,
            // Local workers share one launcher; its core allocator shares
            // cores (logged) when a match has more bots than there are.
            bot_cores: None,
            cores: 1,
            memory_mb: 2048,
            environment_id: environment_id.clone(),
            cache_dir: cache_dir.join(format!("worker-{n}")),
            idle_poll: Duration::from_millis(50),
            // Loopback inside one process: nothing to protect.
            tls_ca: None,
        };
        workers.push(tokio::spawn(daemon::run(
            options,
            Arc::clone(&launcher),
            WorkerMetrics::new()?,
            stop_workers.clone(),
        )));
    }

    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} matches, {per_sec}, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    progress.set_message(file.name.clone());
    loop {
        let (status, rounds_total) = coordinator.status(&id).await?;
        progress.set_length(status.total as u64);
        progress.set_position(status.done as u64);
        if arena_coordinator::service::is_finished(&status, rounds_total) {
            break;
        }
        if workers.iter().all(|w| w.is_finished()) {
            anyhow::bail!("every worker stopped before the tournament finished");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    progress.finish_and_clear();

    stop_workers.cancel();
    for worker in workers {
        match worker.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => eprintln!("arena: worker: {e:#}"),
            Err(e) => eprintln!("arena: worker task: {e}"),
        }
    }
    stop_server.cancel();
    server.await??;
    let _ = std::fs::remove_dir_all(&cache_dir);

    let standings = coordinator.standings(&id).await?;
    if args.json {
        println!("{}", standings.to_json());
    } else {
        println!("{} ({id})", file.name);
        print!("{}", standings.to_table());
    }
    Ok(ExitCode::SUCCESS)
}

/// A random token for the in-process server.
fn fresh_token() -> anyhow::Result<String> {
    let bytes = crate::entropy::random_bytes::<16>().context("reading /dev/urandom for a token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
