//! `arena run`: a whole tournament on this machine. An in-process
//! coordinator (embedded store, or Redis with `--redis`) serves gRPC on
//! loopback; local workers lease and play its matches over that connection,
//! exactly as remote workers would.
//!
//! The state is kept in a directory beside the tournament file unless
//! `--state` or `--redis` says otherwise ([`crate::run_state`]); running the
//! same file again resumes its tournament.
//!
//! SIGTERM or SIGINT stops the run and cleans up after it (see
//! [`stop_after_signal`]): the matches in flight are abandoned (nothing more
//! is reported), their bots are killed, and the temp directory and the
//! cgroups of this run are removed before `arena run` exits with 128 + the
//! signal's number.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament, Quarantine};
use arena_coordinator::store::MatchState;
use arena_coordinator::tournament_file::TournamentFile;
use arena_coordinator::{grpc::Tokens, server};
use arena_worker::daemon::{self, WorkerOptions};
use arena_worker::metrics::WorkerMetrics;
use indicatif::{ProgressBar, ProgressStyle};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::cli::RunArgs;
use crate::launch::{self, CommandLauncher};
use crate::run_state::{self, StateLocation};
use crate::terminal::{shown, shown_lines};

/// How long the matches abandoned on a signal may take to wind down once
/// their bots are killed (the referee sees every seat crash at once).
const WIND_DOWN: Duration = Duration::from_secs(30);

/// Pause between two sweeps for processes of this run to kill while it
/// winds down: a match may start its next bot (or a build its next step)
/// after a sweep.
const SWEEP: Duration = Duration::from_millis(10);

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.status {
        return crate::run_state::status(&args);
    }
    let file = TournamentFile::load(&args.tournament)?;
    // Launchers fork bots; build them before the async runtime starts threads.
    let launcher = launch::launcher(&args.sandbox, file.seats)?;
    let runtime = crate::distributed::runtime()?;
    let location = StateLocation::of(&args);
    // Local workers keep their submissions and builds here: in the state
    // directory when there is one, so what a killed run leaves behind is
    // cleared by the next run (which holds the state's lock first).
    let scratch = match &location {
        StateLocation::Dir(dir) => dir.join("work"),
        _ => std::env::temp_dir().join(format!("arena-run-{}", std::process::id())),
    };
    // Set once the tournament is over: a signal after that (stopping the
    // pages of `--web`) ends a finished run, not an interrupted one.
    let finished = Arc::new(OnceLock::new());
    let outcome = runtime.block_on(async {
        // Dropped before the runtime: it flushes the spans still queued.
        let _telemetry = crate::telemetry::init("arena", crate::telemetry::LogStyle::Terminal);
        // Installed before anything starts, so from here on a signal stops
        // the run through the clean-up below instead of killing it.
        let mut terminate = signal(SignalKind::terminate()).context("catching SIGTERM")?;
        let mut interrupt = signal(SignalKind::interrupt()).context("catching SIGINT")?;
        tokio::select! {
            result = tournament(&args, &location, file, &launcher, &scratch, &finished) => result.map(Outcome::Finished),
            _ = terminate.recv() => Ok(Outcome::Stopped(Stop::Terminate)),
            _ = interrupt.recv() => Ok(Outcome::Stopped(Stop::Interrupt)),
        }
    });
    let result = match outcome {
        Ok(Outcome::Stopped(_)) if finished.get().is_some() => {
            drop(runtime);
            Ok(finished.get().copied().unwrap_or(ExitCode::SUCCESS))
        }
        Ok(Outcome::Stopped(stop)) => {
            stop_after_signal(runtime, stop);
            Ok(ExitCode::from(stop.exit_status()))
        }
        Ok(Outcome::Finished(code)) => {
            drop(runtime);
            Ok(code)
        }
        Err(e) => {
            drop(runtime);
            Err(e)
        }
    };
    remove_scratch(&scratch);
    launcher.finish();
    result
}

/// How [`tournament`] ended.
enum Outcome {
    /// It played to the end (or failed; then `run` returns the error).
    Finished(ExitCode),
    /// A signal came first.
    Stopped(Stop),
}

/// The signal that stopped the run.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Terminate,
    Interrupt,
}

impl Stop {
    fn name(self) -> &'static str {
        match self {
            Stop::Terminate => "SIGTERM",
            Stop::Interrupt => "SIGINT",
        }
    }

    /// 128 + the signal's number, as a shell reports a process it killed.
    fn exit_status(self) -> u8 {
        128 + match self {
            Stop::Terminate => SIGTERM,
            Stop::Interrupt => SIGINT,
        }
    }
}

// Signal numbers (signal(7); the same on every architecture Linux runs on
// for these three).
const SIGINT: u8 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: u8 = 15;

unsafe extern "C" {
    /// kill(2) from the C library the standard library already links.
    fn kill(pid: i32, signal: i32) -> i32;
}

/// Abandons everything in flight after a signal. Shutting the runtime down
/// drops every task: the workers, their match tasks (so no result or
/// failure is reported: the coordinator's state, in Redis with `--redis`,
/// keeps those matches leased until their leases expire, as after a worker
/// crash) and the server. Each match itself plays on a blocking thread that
/// the runtime waits for; it ends as soon as its bots are gone, so a sweep
/// kills this process's children (the sandboxed bots, or plain processes
/// with `--no-sandbox`) until those threads are done. Each match's teardown
/// then removes its bots' cgroup leaves as usual.
fn stop_after_signal(runtime: tokio::runtime::Runtime, stop: Stop) {
    crate::messages::say!(
        "arena run: {}: stopping; the matches in flight are abandoned",
        stop.name()
    );
    let done = Arc::new(AtomicBool::new(false));
    let sweeper = {
        let done = Arc::clone(&done);
        std::thread::Builder::new()
            .name("arena-run-stop".to_owned())
            .spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    kill_children();
                    std::thread::sleep(SWEEP);
                }
            })
    };
    let started = Instant::now();
    runtime.shutdown_timeout(WIND_DOWN);
    if started.elapsed() >= WIND_DOWN {
        crate::messages::say!(
            "arena run: a match did not wind down within {WIND_DOWN:?} of its bots being killed"
        );
    }
    done.store(true, Ordering::Relaxed);
    match sweeper {
        Ok(sweeper) => {
            if sweeper.join().is_err() {
                crate::messages::say!("arena run: the clean-up thread panicked");
            }
        }
        Err(e) => crate::messages::say!("arena run: cannot start the clean-up thread: {e}"),
    }
}

/// SIGKILLs every live child of this process: `/proc/<pid>/stat` names
/// its parent. Only children are touched, never a process found by name.
fn kill_children() {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let Some(after_comm) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            continue;
        };
        let mut fields = after_comm.split_whitespace();
        let state = fields.next();
        let parent = fields.next().and_then(|p| p.parse::<u32>().ok());
        // A zombie is already dead; its reaper (the match's thread) collects it.
        if parent == Some(me) && state != Some("Z") {
            // SAFETY: kill(2) takes plain integers. The pid was this
            // process's child when its stat was read; it could name another
            // process only if the match's thread reaped it and the kernel
            // recycled the pid in between, which sequential pid allocation
            // makes practically impossible.
            unsafe {
                kill(pid, SIGKILL);
            }
        }
    }
}

/// Removes the run's temp directory; a failure is reported, not fatal.
fn remove_scratch(scratch: &Path) {
    match std::fs::remove_dir_all(scratch) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => crate::messages::say!("arena run: cannot remove {}: {e}", scratch.display()),
    }
}

/// The tournament of `arena run`, step by step: open the coordinator,
/// register the entrants, serve the coordinator (and the pages of `--web`),
/// run local workers until the tournament is over, stop them, and print the
/// standings.
async fn tournament(
    args: &RunArgs,
    location: &StateLocation,
    file: TournamentFile,
    launcher: &CommandLauncher,
    scratch: &Path,
    finished: &OnceLock<ExitCode>,
) -> anyhow::Result<ExitCode> {
    let environment_id = launch::environment_id(launcher);
    let coordinator = open_coordinator(args, location, &file, &environment_id).await?;
    // Left by a run that was killed: the state's lock says none is running.
    remove_scratch(scratch);
    let before = run_state::before(coordinator.store()).await?;
    let token_for = args.web.is_some().then_some(&*coordinator);
    let entrants = register_entrants(&coordinator, token_for, &file).await?;
    let id = create_tournament(&coordinator, &file, entrants).await?;
    let found = run_state::found(coordinator.store(), &before, &id, &file.name).await?;
    run_state::resume_or_start(&coordinator, location, &found, &id).await?;
    let server = LocalServer::start(&coordinator).await?;
    let pages = match &args.web {
        Some(address) => Some(serve_pages(&coordinator, address, &id).await?),
        None => None,
    };
    let workers = LocalWorkers::start(args, launcher, &server, &environment_id, scratch)?;
    let stuck = play(&coordinator, &id, &file, &workers).await?;
    workers.stop().await;
    // The pages may stay up, but nothing plays any more: a rejudge there
    // would leave the match waiting for good.
    coordinator.set_unplayable("this arena run has ended and its workers with it");
    server.stop().await?;
    print_standings(&coordinator, args, &id, &file).await?;
    if stuck > 0 {
        // Standings without them, and a failing exit: the run is incomplete.
        report_stuck(&coordinator, &id, stuck).await?;
        return finish(pages, finished, ExitCode::FAILURE).await;
    }
    finish(pages, finished, ExitCode::SUCCESS).await
}

/// The in-process coordinator of a run, refused when the tournament needs
/// another environment than the one bots run in here.
async fn open_coordinator(
    args: &RunArgs,
    location: &StateLocation,
    file: &TournamentFile,
    environment_id: &str,
) -> anyhow::Result<Arc<Coordinator>> {
    // Local workers play in this machine's environment; a tournament that
    // needs another one could never finish here.
    if let Some(needed) = &file.environment
        && needed != environment_id
    {
        anyhow::bail!(
            "the tournament needs environment {needed}, but bots here run in {:?} \
             (use --store-paths or --env-path to match it)",
            environment_id
        );
    }
    location.announce();
    let store = location.open().await?;
    let config = CoordinatorConfig {
        // Every local worker is this machine: quarantining one of them
        // would only stall the run.
        quarantine: Quarantine::OFF,
        ..CoordinatorConfig::with_lease_ttl(Duration::from_secs(args.lease_ttl.max(1)))
    };
    let attachments =
        crate::distributed::open_attachments(&args.blobs, location.blob_dir()).await?;
    Ok(Coordinator::with_attachments(store, config, attachments))
}

/// Packs and stores every bot of the file as a submission (saying each
/// entrant's token, issued by `token_for`, with `--web`); the entrants as
/// (name, submission hash).
pub(crate) async fn register_entrants(
    coordinator: &Coordinator,
    token_for: Option<&Coordinator>,
    file: &TournamentFile,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut entrants = Vec::with_capacity(file.bots.len());
    for bot in &file.bots {
        let archive =
            crate::distributed::pack(&bot.path).with_context(|| format!("bot {:?}", bot.name))?;
        let hash = arena_coordinator::submission_id(&archive);
        coordinator.store().put_submission(&hash, archive).await?;
        if let Some(issuer) = token_for {
            let token = issuer.issue_entrant_token(&hash).await?;
            crate::messages::say!("arena run: entrant token for {}: {token}", shown(&bot.name));
        }
        entrants.push((bot.name.clone(), hash));
    }
    Ok(entrants)
}

/// Creates the file's tournament with `entrants` (finding it, if the store
/// has it already); its id.
pub(crate) async fn create_tournament(
    coordinator: &Coordinator,
    file: &TournamentFile,
    entrants: Vec<(String, String)>,
) -> anyhow::Result<String> {
    Ok(coordinator
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
            wasm_runtime: crate::distributed::wasm_runtime(file, None)?,
            model_runtime: crate::distributed::model_runtime(file, None),
            live_board: file.live_board,
        })
        .await?)
}

/// The coordinator served on loopback, with a token made for this run.
struct LocalServer {
    address: std::net::SocketAddr,
    /// The workers' token.
    token: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), server::ServeError>>,
}

impl LocalServer {
    async fn start(coordinator: &Arc<Coordinator>) -> anyhow::Result<LocalServer> {
        let token = fresh_token()?;
        let tokens = Tokens {
            workers: [token.clone()].into(),
            admins: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let stop = CancellationToken::new();
        let task = tokio::spawn(server::serve(
            Arc::clone(coordinator),
            tokens,
            listener,
            None,
            stop.clone().cancelled_owned(),
        ));
        Ok(LocalServer {
            address,
            token,
            stop,
            task,
        })
    }

    async fn stop(self) -> anyhow::Result<()> {
        self.stop.cancel();
        self.task.await??;
        Ok(())
    }
}

/// The local workers of a run (`--workers` of them), leasing from the
/// [`LocalServer`] as remote workers would.
struct LocalWorkers {
    tasks: Vec<tokio::task::JoinHandle<Result<daemon::WorkerSummary, daemon::DaemonError>>>,
    stop: CancellationToken,
}

impl LocalWorkers {
    fn start(
        args: &RunArgs,
        launcher: &CommandLauncher,
        server: &LocalServer,
        environment_id: &str,
        scratch: &Path,
    ) -> anyhow::Result<LocalWorkers> {
        let launcher = launcher.shared();
        let wasm = launch::wasm_support(&args.sandbox)?;
        let models = launch::model_support()?;
        let stop = CancellationToken::new();
        let mut tasks = Vec::new();
        for n in 0..args.workers.max(1) {
            let options = WorkerOptions {
                coordinator: format!("http://{}", server.address),
                token: server.token.clone(),
                worker_id: format!("local-{n}"),
                slots: 1,
                // Local workers share one launcher; its core allocator shares
                // cores (logged) when a match has more bots than there are.
                bot_cores: None,
                cores: 1,
                memory_mb: 2048,
                environment_id: environment_id.to_owned(),
                cache_dir: scratch.join(format!("worker-{n}")),
                idle_poll: Duration::from_millis(50),
                // Loopback inside one process: nothing to protect.
                tls_ca: None,
                wasm: Some(Arc::clone(&wasm)),
                models: Some(Arc::clone(&models)),
            };
            tasks.push(tokio::spawn(daemon::run(
                options,
                Arc::clone(&launcher),
                WorkerMetrics::new()?,
                stop.clone(),
            )));
        }
        Ok(LocalWorkers { tasks, stop })
    }

    fn all_stopped(&self) -> bool {
        self.tasks.iter().all(|w| w.is_finished())
    }

    /// Stops the workers and waits for them; their errors are said, not
    /// returned.
    async fn stop(self) {
        self.stop.cancel();
        for worker in self.tasks {
            match worker.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => crate::messages::say!("arena: worker: {e:#}"),
                Err(e) => crate::messages::say!("arena: worker task: {e}"),
            }
        }
    }
}

/// Shows the run's progress until the tournament is finished; the number
/// of matches stuck after every allowed attempt failed.
async fn play(
    coordinator: &Coordinator,
    id: &str,
    file: &TournamentFile,
    workers: &LocalWorkers,
) -> anyhow::Result<usize> {
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} matches, {per_sec}, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    progress.set_message(file.name.clone());
    let stuck = loop {
        let (status, rounds_total) = coordinator.status(id).await?;
        progress.set_length(status.total as u64);
        progress.set_position(status.done as u64);
        if arena_coordinator::service::is_finished(&status, rounds_total) {
            break status.stuck;
        }
        if workers.all_stopped() {
            anyhow::bail!("every worker stopped before the tournament finished");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    progress.finish_and_clear();
    Ok(stuck)
}

/// The standings on stdout: JSON with `--json`, else a table under the
/// tournament's name.
async fn print_standings(
    coordinator: &Coordinator,
    args: &RunArgs,
    id: &str,
    file: &TournamentFile,
) -> anyhow::Result<()> {
    let standings = coordinator.standings(id).await?;
    if args.json {
        println!("{}", standings.to_json());
    } else {
        println!("{} ({id})", shown(&file.name));
        print!("{}", shown_lines(&standings.to_table()));
    }
    Ok(())
}

/// Says which matches are stuck, each failed attempt under it.
async fn report_stuck(coordinator: &Coordinator, id: &str, stuck: usize) -> anyhow::Result<()> {
    crate::messages::say!("arena: {stuck} match(es) stuck after every allowed attempt failed:");
    for m in coordinator.store().matches(id).await? {
        if m.state == MatchState::Stuck {
            crate::messages::say!("  {} (round {})", m.match_id, m.round);
            for f in &m.failures {
                crate::messages::say!(
                    "    attempt {} on {}: {}",
                    f.attempt,
                    shown(&f.worker),
                    shown(&f.reason)
                );
            }
        }
    }
    Ok(())
}

/// The web pages of `arena run --web`: served until the process ends
/// (`run` stops it at the signal), so the task only ever returns an error.
type Pages = tokio::task::JoinHandle<std::io::Result<()>>;

/// Serves the pages on `address` with a fresh organiser token, and says
/// where and with which token.
async fn serve_pages(
    coordinator: &Arc<Coordinator>,
    address: &str,
    id: &str,
) -> anyhow::Result<Pages> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("listening for the web pages on {address}"))?;
    let bound = listener.local_addr()?;
    let admin = fresh_token()?;
    crate::messages::say!(
        "arena run: organiser token (log in on the pages to cancel, rejudge and read every log): {admin}"
    );
    // Scripts and tests read this line to learn the address.
    println!("web pages on http://{bound}/tournaments/{id}");
    let options = arena_web::WebOptions {
        admin_tokens: [admin].into(),
        ..arena_web::WebOptions::default()
    };
    Ok(tokio::spawn(arena_web::serve(
        listener,
        Arc::clone(coordinator),
        options,
        std::future::pending(),
    )))
}

/// Ends a run: with `--web`, the pages stay up until a signal stops them.
async fn finish(
    pages: Option<Pages>,
    finished: &OnceLock<ExitCode>,
    code: ExitCode,
) -> anyhow::Result<ExitCode> {
    let Some(pages) = pages else {
        return Ok(code);
    };
    let _ = finished.set(code);
    crate::messages::say!("arena run: the tournament is over; the pages stay up until Ctrl-C");
    // `run` ends the process at the signal; until then the pages serve.
    match pages.await {
        Ok(Ok(())) => Ok(code),
        Ok(Err(e)) => Err(anyhow::Error::new(e).context("serving the web pages")),
        Err(e) => Err(anyhow::Error::new(e).context("the web pages' task")),
    }
}

/// A random token for the in-process server.
fn fresh_token() -> anyhow::Result<String> {
    let bytes = crate::entropy::random_bytes::<16>().context("reading /dev/urandom for a token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
