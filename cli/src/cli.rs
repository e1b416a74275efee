//! The command line, defined once: clap derive structs whose doc comments are
//! the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "arena",
    version,
    about = "Arena: referee bot matches and tournaments"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play one match of a registered game between bots (or baselines).
    Play(PlayArgs),
    /// List the registered games: seats, options, limits, runtimes.
    Games(GamesArgs),
    /// Build a bot in the sandbox (cached) and print its artifact id.
    Build(BuildArgs),
    /// Play a whole tournament on this machine and print the standings.
    Run(RunArgs),
    /// Serve tournaments to remote workers over gRPC.
    Coordinator(CoordinatorArgs),
    /// Lease and play matches from a coordinator.
    Worker(WorkerArgs),
    /// Manage tournaments on a coordinator.
    Tournament(TournamentArgs),
    /// Work with replay files.
    Replay(ReplayArgs),
    /// Write a tournament's standings or results as JSON or CSV, from a
    /// state directory (also beside a run going on) or from Redis.
    Export(ExportArgs),
    /// Measure the engine or the runner.
    Bench(BenchArgs),
    /// A built-in bot for benchmarks (reads frames on stdin, replies instantly).
    #[command(hide = true)]
    InternalBot(InternalBotArgs),
    /// The WebAssembly host a worker starts in a seat's sandbox (speaks the
    /// host wire on stdin and stdout; not for people).
    #[command(hide = true)]
    WasmHost(WasmHostArgs),
    /// The WebAssembly compiler a worker starts confined as a seat: a
    /// module on stdin, its compiled form on stdout (not for people).
    #[command(hide = true)]
    WasmCompile(WasmCompileArgs),
    /// The model-graph host a worker starts in a seat's sandbox (speaks the
    /// model wire on stdin and stdout; not for people).
    #[command(hide = true)]
    ModelHost(ModelHostArgs),
    /// Work with model-graph bots (`bot.toml` + `model.onnx`).
    Model(ModelArgs),
}

#[derive(Debug, Args)]
pub struct ModelHostArgs {
    /// The game whose adapters feed the graph.
    #[arg(long)]
    pub game: String,
    /// The largest `model.onnx`, in bytes.
    #[arg(long)]
    pub max_bytes: u64,
    /// The most multiply-accumulates a turn may be estimated to cost.
    #[arg(long)]
    pub max_macs: u64,
    /// The bot's built directory (holds bot.toml and model.onnx).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub command: ModelCommand,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Run the build-time check on a model directory, as the platform will,
    /// and print its report (exit 1 with the reason if it is refused).
    Check(ModelCheckArgs),
}

#[derive(Debug, Args)]
pub struct ModelCheckArgs {
    /// The model directory (holds bot.toml and model.onnx).
    pub dir: PathBuf,
    /// The game (see `arena games`).
    #[arg(long)]
    pub game: String,
    /// Overrides the game's size limit, in bytes.
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Overrides the game's cost limit, in multiply-accumulates a turn.
    #[arg(long)]
    pub max_macs: Option<u64>,
    /// The memory the check may use, in MiB: a seat's cap, which the model
    /// host loading it in a match has too (0: no cap).
    #[arg(long, default_value_t = 2048, value_name = "MIB")]
    pub memory_mb: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WasmCompileArgs {
    /// The guest's linear memory limit, in bytes.
    #[arg(long)]
    pub memory_bytes: usize,
    /// The guest's table elements limit.
    #[arg(long)]
    pub table_elements: usize,
}

#[derive(Debug, Args)]
pub struct WasmHostArgs {
    /// Seeds the guest's `random_get`.
    #[arg(long)]
    pub seed: u64,
    /// The guest's linear memory limit, in bytes.
    #[arg(long)]
    pub memory_bytes: usize,
    /// The guest's table elements limit.
    #[arg(long)]
    pub table_elements: usize,
    /// The longest reply line, in bytes.
    #[arg(long)]
    pub line_cap: usize,
}

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The seats in order: bot directories (holding run.sh, maybe build.sh)
    /// or `baseline:NAME` for one of the game's in-engine baselines.
    #[arg(required = true, num_args = 1.., value_name = "BOT")]
    pub bots: Vec<String>,
    /// The game (see `arena games`).
    #[arg(long, default_value = arena_engine::registry::DEFAULT_GAME)]
    pub game: String,
    /// Ruleset options, `K=V,...` (see `arena games`).
    #[arg(long, value_name = "K=V,...", default_value = "")]
    pub rules: String,
    /// Map seed; a random one is drawn (and printed) when omitted.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write a replay of the match to this file.
    #[arg(long, value_name = "PATH")]
    pub replay: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Milliseconds per move [default: the game's].
    #[arg(long, value_name = "MS")]
    pub move_ms: Option<u64>,
    /// Milliseconds for the first move [default: the game's].
    #[arg(long, value_name = "MS")]
    pub first_move_ms: Option<u64>,
    /// Faults that forfeit a seat [default: the game's].
    #[arg(long)]
    pub fault_limit: Option<u32>,
    /// WebAssembly seats: fuel added each turn [default: the game's].
    #[arg(long, value_name = "FUEL")]
    pub fuel_per_turn: Option<u64>,
    /// WebAssembly seats: the most fuel the bank holds [default: the game's].
    #[arg(long, value_name = "FUEL")]
    pub fuel_bank: Option<u64>,
    /// WebAssembly seats: fuel added once, to the first turn [default: the game's].
    #[arg(long, value_name = "FUEL")]
    pub init_fuel: Option<u64>,
    /// WebAssembly seats: the wall-clock backstop per turn [default: the game's].
    #[arg(long, value_name = "MS")]
    pub wall_ms: Option<u64>,
    /// Model-graph seats: the largest model.onnx, in bytes [default: the game's].
    #[arg(long, value_name = "BYTES")]
    pub model_bytes: Option<u64>,
    /// Model-graph seats: the most estimated multiply-accumulates per turn
    /// [default: the game's].
    #[arg(long, value_name = "MACS")]
    pub model_macs: Option<u64>,
    /// Wall limit for each build.sh, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub build_timeout: u64,
    /// Write each bot's stderr (capped) to DIR/seat-<n>.log.
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct GamesArgs {
    /// Print the registry as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The bot directory (holds run.sh, maybe build.sh).
    pub bot: PathBuf,
    /// Wall limit for build.sh, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub build_timeout: u64,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tournament file (TOML).
    pub tournament: PathBuf,
    /// Local workers playing matches in parallel.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Keep tournament state in Redis instead of the state directory:
    /// redis://HOST[:PORT][/DB], unix:///PATH, or
    /// redis+sentinel://SENTINEL[:PORT][,SENTINEL[:PORT]...]/MASTER[/DB]
    /// to follow the primary through Sentinel failovers.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// Where the tournament's state, replays and logs are kept, so an
    /// interrupted run resumes when started again [default: arena-state/
    /// beside the tournament file]; `none` keeps everything in memory only.
    /// Unused with --redis.
    #[arg(long, value_name = "DIR", env = "ARENA_STATE")]
    pub state: Option<PathBuf>,
    /// Print the progress and standings kept in the state directory, then
    /// exit, without running anything (beside a run that is going on, too).
    #[arg(long, conflicts_with_all = ["redis", "web"])]
    pub status: bool,
    /// Print the standings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Seconds a lease lives without a heartbeat (1 or more).
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_ttl: u64,
    /// Serve the web pages while the tournament runs, and after it until
    /// Ctrl-C; prints the address to open, the organiser's token and each
    /// entrant's token.
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = "127.0.0.1:8080")]
    pub web: Option<String>,
    #[command(flatten)]
    pub blobs: BlobArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Address to serve gRPC on.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR")]
    pub listen: String,
    /// Keep all state in Redis (restart-safe); without it, state lives in memory.
    /// redis://HOST[:PORT][/DB] or unix:///PATH for one server;
    /// redis+sentinel://SENTINEL[:PORT][,SENTINEL[:PORT]...]/MASTER[/DB] to reach the
    /// primary through Sentinel and follow it through failovers (docs/operations.md).
    #[arg(long, value_name = "URL", env = "ARENA_REDIS_URL")]
    pub redis: Option<String>,
    /// Token admitting workers; repeatable.
    #[arg(
        long = "worker-token",
        value_name = "TOKEN",
        env = "ARENA_WORKER_TOKEN",
        value_delimiter = ','
    )]
    pub worker_tokens: Vec<String>,
    /// Token admitting admins; repeatable.
    #[arg(
        long = "admin-token",
        value_name = "TOKEN",
        env = "ARENA_ADMIN_TOKEN",
        value_delimiter = ','
    )]
    pub admin_tokens: Vec<String>,
    /// Seconds a lease lives without a heartbeat (1 or more).
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_ttl: u64,
    /// Failed attempts in a row (infrastructure failures, expired leases)
    /// after which a match is set aside as stuck until requeued.
    #[arg(long, default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_attempts: u32,
    /// Quarantine a worker once this many of its last --quarantine-window
    /// leases ended without a result (0: never).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub quarantine_failures: u32,
    /// How many of a worker's most recent leases the quarantine looks at.
    #[arg(long, default_value_t = 10, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub quarantine_window: u32,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Serve the web pages (tournaments, standings, matches, replays,
    /// workers) at http://ADDR/; the admin tokens unlock the organiser's
    /// actions there.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    #[command(flatten)]
    pub blobs: BlobArgs,
    /// Serve over TLS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// Where replays and bot logs are kept, and for how long.
#[derive(Clone, Debug, Args)]
pub struct BlobArgs {
    /// Where replays and bot logs go: a directory (a path or file:///PATH),
    /// or an S3-compatible bucket, s3://BUCKET[/PREFIX]?endpoint=URL&region=R
    /// (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY).
    /// Default: with --redis, $XDG_DATA_HOME/arena/blobs (or
    /// ~/.local/share/arena/blobs); for `arena run`, blobs/ in its state
    /// directory; otherwise process memory.
    #[arg(long, value_name = "LOCATION", env = "ARENA_BLOBS")]
    pub blobs: Option<String>,
    /// How long replays and logs are kept: e.g. 90d, 12h, 30m, or forever.
    #[arg(long, default_value = "forever", value_name = "AGE")]
    pub retention: arena_blob::Retention,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The coordinator, e.g. http://10.0.0.1:50051.
    #[arg(long, value_name = "URL")]
    pub coordinator: String,
    /// This worker's token.
    #[arg(long, value_name = "TOKEN", env = "ARENA_WORKER_TOKEN")]
    pub token: String,
    /// This worker's id [default: the host name and process id].
    #[arg(long)]
    pub id: Option<String>,
    /// Where submissions are cached [default: the build cache's parent].
    #[arg(long, value_name = "DIR")]
    pub submissions_dir: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Trust this PEM CA certificate for an https:// coordinator.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
    /// Run no WebAssembly seats: the worker announces no wasm runtime and is
    /// never given a match with a WebAssembly bot.
    #[arg(long)]
    pub no_wasm: bool,
    /// Run no model-graph seats: the worker announces no model runtime and
    /// is never given a match with a model-graph bot.
    #[arg(long)]
    pub no_models: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct TournamentArgs {
    /// The coordinator, e.g. http://127.0.0.1:50051.
    #[arg(
        long,
        global = true,
        default_value = "http://127.0.0.1:50051",
        value_name = "URL"
    )]
    pub coordinator: String,
    /// An admin token.
    #[arg(
        long,
        global = true,
        value_name = "TOKEN",
        env = "ARENA_ADMIN_TOKEN",
        default_value = ""
    )]
    pub token: String,
    /// Trust this PEM CA certificate for an https:// coordinator.
    #[arg(long, global = true, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
    /// `create`: the wasm runtime (a fingerprint, as `arena worker` reports
    /// it) WebAssembly seats must be played with [default: the tournament
    /// file's `wasm_runtime`, else this build's own].
    #[arg(long, global = true, value_name = "FINGERPRINT")]
    pub wasm_runtime: Option<String>,
    /// `create`: the model runtime (as `arena worker` reports it, such as
    /// `tract-onnx-0.23.9`) model-graph seats must be played with [default:
    /// the tournament file's `model_runtime`, else this build's own].
    #[arg(long, global = true, value_name = "RUNTIME")]
    pub model_runtime: Option<String>,
    #[command(subcommand)]
    pub command: TournamentCommand,
}

#[derive(Debug, Subcommand)]
pub enum TournamentCommand {
    /// Upload every bot of a tournament file and create the tournament; prints its id.
    Create { file: PathBuf },
    /// Upload one bot directory; prints its submission hash.
    Submit { bot: PathBuf },
    /// Progress of a tournament.
    Status { id: String },
    /// Standings of a tournament (a table, or `--json` / `--csv`).
    Standings {
        id: String,
        #[arg(long)]
        json: bool,
        #[arg(long, conflicts_with = "json")]
        csv: bool,
    },
    /// Stop scheduling and leasing a tournament.
    Cancel { id: String },
    /// Matches of a tournament: state, attempt, and every failed attempt.
    Matches {
        id: String,
        /// Only the stuck ones.
        #[arg(long)]
        stuck: bool,
    },
    /// Put a stuck match back in the queue with a fresh allowance of attempts.
    Requeue { match_id: String },
    /// Registered workers: alive, quarantined.
    Workers,
    /// Lift a worker's quarantine.
    ReleaseWorker { worker_id: String },
}

/// How bots are confined.
#[derive(Debug, Args, Clone)]
pub struct SandboxArgs {
    /// Run bots and builds as plain processes, unconfined (development only).
    #[arg(long)]
    pub no_sandbox: bool,
    /// Memory cap per bot and per build, in MiB (swap included).
    #[arg(long, default_value_t = 2048, value_name = "MIB")]
    pub memory_mb: u64,
    /// Cores to use, e.g. `0-3` or `1,3`; default: every core this process may use.
    #[arg(long, value_name = "LIST", value_parser = parse_core_list)]
    pub cores: Option<CoreList>,
    /// Bind exactly the Nix closure in this store-paths file instead of the
    /// host's system directories.
    #[arg(long, value_name = "FILE")]
    pub store_paths: Option<PathBuf>,
    /// Another host path to bind read-only (its bin/ goes first on PATH); repeatable.
    #[arg(long = "env-path", value_name = "PATH")]
    pub env_paths: Vec<PathBuf>,
    /// Where builds are cached [default: $XDG_CACHE_HOME/arena/builds or ~/.cache/arena/builds].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Largest artifact one build may leave (the submission plus what
    /// build.sh writes, by apparent size: sparse files count at their
    /// length), in MiB; past it the build is stopped and fails.
    #[arg(long, default_value_t = 1024, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub build_output_mb: u64,
    /// Largest the build cache may grow, in MiB; past it the least recently
    /// used builds are removed.
    #[arg(long, default_value_t = 10240, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub cache_mb: u64,
    /// The cgroup under which every bot's cgroup is made (in each hierarchy).
    #[arg(long, default_value = "arena", value_name = "NAME")]
    pub cgroup_parent: String,
}

/// Core numbers from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreList(pub Vec<usize>);

/// Parses `0-3,5` into `[0, 1, 2, 3, 5]`.
pub fn parse_core_list(text: &str) -> Result<CoreList, String> {
    let mut cores = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let number = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("{s:?} is not a core number"))
        };
        match part.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (number(low)?, number(high)?);
                if low > high {
                    return Err(format!("{part:?} is an empty range"));
                }
                cores.extend(low..=high);
            }
            None => cores.push(number(part)?),
        }
    }
    if cores.is_empty() {
        return Err("no cores given".to_owned());
    }
    Ok(CoreList(cores))
}

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("source")
        .required(true)
        .multiple(false)
        .args(["state", "redis"])
))]
pub struct ExportArgs {
    /// Read the state directory of `arena run` (a copy of its last commit,
    /// so a run may be going on there).
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Read the tournament from Redis: redis://HOST[:PORT][/DB], unix:///PATH
    /// or redis+sentinel://SENTINEL[:PORT][,SENTINEL[:PORT]...]/MASTER[/DB].
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// The tournament's id [default: the only tournament the store holds].
    #[arg(long, value_name = "ID")]
    pub tournament: Option<String>,
    /// What to write: the standings, or every recorded match result.
    #[arg(long, value_enum, default_value_t = ExportWhat::Standings)]
    pub what: ExportWhat,
    /// JSON, or CSV (RFC 4180, CRLF line endings; results: one row per seat).
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// What `arena export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportWhat {
    Standings,
    Results,
}

/// How `arena export` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub command: ReplayCommand,
}

#[derive(Debug, Subcommand)]
pub enum ReplayCommand {
    /// Re-simulate a replay; exit 3 on any difference from what it records.
    Verify {
        /// The replay file written by `arena play --replay`.
        path: PathBuf,
    },
    /// Print a replay as JSON lines: the initial state, then each turn's
    /// actions, faults, forfeits and state, then the result.
    Dump {
        /// The replay file.
        path: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub target: BenchTarget,
}

#[derive(Debug, Subcommand)]
pub enum BenchTarget {
    /// Engine throughput on one core: raw steps/s and rendered turns/s.
    Engine {
        /// The game to measure.
        #[arg(long, default_value = arena_engine::registry::DEFAULT_GAME)]
        game: String,
        /// Seconds to measure each figure for.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Print the figures as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Runner overhead: full matches between two instant bots as plain processes.
    Runner {
        /// Matches to play.
        #[arg(long, default_value_t = 5)]
        matches: u32,
        #[arg(long)]
        json: bool,
    },
    /// Sandbox cost: spawn to first line of a confined trivial bot beside
    /// `bwrap --unshare-all` doing the same, and the per-move round trip of
    /// an instant bot through the sandbox beside the same bot unconfined.
    Sandbox {
        /// Spawns to time, each way.
        #[arg(long, default_value_t = 200,
              value_parser = clap::value_parser!(u32).range(1..=100_000))]
        runs: u32,
        /// 1200-turn matches to play, each way, for the round trip.
        #[arg(long, default_value_t = 3,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        matches: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// WebAssembly seats: the per-turn round trip of a trivial module
    /// through the sandboxed wasm host beside a trivial process bot, and a
    /// compute-bound module with fuel metering on and off.
    Wasm {
        /// 400-turn Grid Royale matches to play, each way.
        #[arg(long, default_value_t = 3,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        matches: u32,
        /// Runs of the compute-bound module, each way.
        #[arg(long, default_value_t = 5,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Coordinator throughput on the embedded store (a fresh state
    /// directory) and on a Redis of its own: the time to queue a large
    /// round robin, then lease + heartbeat + result operations per second
    /// from simulated workers over loopback gRPC.
    Coordinator {
        /// Which store to measure; `both` measures one after the other and
        /// shows them side by side.
        #[arg(long, value_enum, default_value_t = BenchStore::Both)]
        store: BenchStore,
        /// Entrants of the round robin (1000: 499,500 two-seat matches).
        #[arg(long, default_value_t = 1000,
              value_parser = clap::value_parser!(u64).range(2..=2000))]
        entrants: u64,
        /// Simulated workers playing at once.
        #[arg(long, default_value_t = 64,
              value_parser = clap::value_parser!(u64).range(1..=10_000))]
        workers: u64,
        /// HTTP/2 connections the workers share.
        #[arg(long, default_value_t = 8,
              value_parser = clap::value_parser!(u64).range(1..=1000))]
        connections: u64,
        /// Seconds the workers play for.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long)]
        json: bool,
    },
    /// A model-graph seat's turn in the sandbox: the model plays whole
    /// matches against copies of itself, deadline lifted; p50, p99 and max
    /// of every turn (frame, adapters, evaluation, reply) beside the game's
    /// deadline, and its estimated cost beside the game's limit.
    Model {
        /// The model directory (bot.toml and model.onnx).
        dir: std::path::PathBuf,
        /// The game it plays.
        #[arg(long, default_value = arena_engine::registry::DEFAULT_GAME)]
        game: String,
        /// Matches to play.
        #[arg(long, default_value_t = 1,
              value_parser = clap::value_parser!(u32).range(1..=1000))]
        matches: u32,
        /// The game's options, `K=V,...` (e.g. `max_turns=300`).
        #[arg(long, value_name = "K=V,...", default_value = "")]
        rules: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Scheduler speed, in memory: one Swiss round for 1 000, 10 000 and
    /// 100 000 entrants after a few rounds of random results (and four
    /// seats for 10 000), round 15 of 10 000 after fourteen Swiss rounds,
    /// and a whole 1 000-entrant round robin.
    Pairing {
        /// Skip the fields larger than this (e.g. `--max-entrants 10000`
        /// leaves out the 100,000-entrant round, a few seconds).
        #[arg(long, default_value_t = 100_000)]
        max_entrants: usize,
        /// Print the figures as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// The store `arena bench coordinator` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchStore {
    /// The on-disk store `arena run` uses, in a temp directory.
    Embedded,
    /// A `redis-server` the bench starts.
    Redis,
    /// Both, one after the other.
    Both,
}

#[derive(Debug, Args)]
pub struct InternalBotArgs {
    /// `pass` answers every frame with a pass; `random` with a random legal move.
    #[arg(value_enum)]
    pub kind: InternalBotKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InternalBotKind {
    Pass,
    Random,
    /// Grid Royale's empty order batch, for every line.
    NoOrders,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn play_parses_the_documented_flags() {
        let cli = Cli::try_parse_from([
            "arena", "play", "a", "b", "--seed", "7", "--json", "--replay", "r.json",
        ])
        .unwrap();
        let Command::Play(args) = cli.command else {
            panic!("expected play");
        };
        assert_eq!(args.seed, Some(7));
        assert!(args.json);
        assert_eq!(args.replay, Some(PathBuf::from("r.json")));
        assert_eq!(args.bots, ["a", "b"]);
        assert_eq!(args.move_ms, None);
        assert_eq!(args.game, arena_engine::registry::DEFAULT_GAME);
    }

    #[test]
    fn sandbox_flags_parse() {
        let cli = Cli::try_parse_from([
            "arena",
            "play",
            "a",
            "b",
            "--no-sandbox",
            "--cores",
            "1-2,4",
            "--memory-mb",
            "512",
        ])
        .unwrap();
        let Command::Play(args) = cli.command else {
            panic!("expected play");
        };
        assert!(args.sandbox.no_sandbox);
        assert_eq!(args.sandbox.cores, Some(CoreList(vec![1, 2, 4])));
        assert_eq!(args.sandbox.memory_mb, 512);
        assert_eq!(args.sandbox.build_output_mb, 1024);
        assert_eq!(args.sandbox.cache_mb, 10240);
        let cli = Cli::try_parse_from(["arena", "build", "bot", "--env-path", "/opt/x"]).unwrap();
        let Command::Build(args) = cli.command else {
            panic!("expected build");
        };
        assert!(!args.sandbox.no_sandbox);
        assert_eq!(args.sandbox.env_paths, vec![PathBuf::from("/opt/x")]);
        let cli = Cli::try_parse_from([
            "arena",
            "worker",
            "--coordinator",
            "http://c:1",
            "--token",
            "t",
            "--build-output-mb",
            "64",
            "--cache-mb",
            "512",
        ])
        .unwrap();
        let Command::Worker(args) = cli.command else {
            panic!("expected worker");
        };
        assert_eq!(args.sandbox.build_output_mb, 64);
        assert_eq!(args.sandbox.cache_mb, 512);
        assert!(Cli::try_parse_from(["arena", "build", "bot", "--cache-mb", "0"]).is_err());
    }

    #[test]
    fn a_lease_ttl_of_zero_is_a_usage_error() {
        for command in ["run", "coordinator"] {
            let mut args = vec!["arena", command];
            if command == "run" {
                args.push("t.toml");
            }
            let zero = [args.clone(), vec!["--lease-ttl", "0"]].concat();
            assert!(Cli::try_parse_from(&zero).is_err(), "{command}");
            let one = [args, vec!["--lease-ttl", "1"]].concat();
            assert!(Cli::try_parse_from(&one).is_ok(), "{command}");
        }
    }

    #[test]
    fn model_host_and_model_check_parse() {
        let cli = Cli::try_parse_from([
            "arena",
            "model-host",
            "--game",
            "ants",
            "--max-bytes",
            "1000",
            "--max-macs",
            "5",
        ])
        .unwrap();
        let Command::ModelHost(args) = cli.command else {
            panic!("not model-host");
        };
        assert_eq!((args.max_bytes, args.max_macs), (1000, 5));
        assert_eq!(args.dir, PathBuf::from("."));
        let cli =
            Cli::try_parse_from(["arena", "model", "check", "bots/x", "--game", "ants"]).unwrap();
        let Command::Model(ModelArgs {
            command: ModelCommand::Check(args),
        }) = cli.command
        else {
            panic!("not model check");
        };
        assert_eq!(args.dir, PathBuf::from("bots/x"));
        assert_eq!(args.max_macs, None);
    }

    #[test]
    fn core_lists() {
        assert_eq!(parse_core_list("0-2,5").unwrap().0, vec![0, 1, 2, 5]);
        assert_eq!(parse_core_list("3").unwrap().0, vec![3]);
        assert!(parse_core_list("2-1").is_err());
        assert!(parse_core_list("x").is_err());
        assert!(parse_core_list("").is_err());
    }

    #[test]
    fn play_takes_any_number_of_seats_and_rules() {
        assert!(Cli::try_parse_from(["arena", "play"]).is_err());
        let cli = Cli::try_parse_from([
            "arena",
            "play",
            "--game",
            arena_engine::generals_ffa::ENTRY.name,
            "a",
            "baseline:sprawl",
            "b",
            "baseline:crown",
            "--rules",
            "blitz=true",
        ])
        .unwrap();
        let Command::Play(args) = cli.command else {
            panic!("expected play");
        };
        assert_eq!(args.bots.len(), 4);
        assert_eq!(args.game, arena_engine::generals_ffa::ENTRY.name);
        assert_eq!(args.rules, "blitz=true");
    }

    #[test]
    fn replay_verify_and_bench_parse() {
        assert!(Cli::try_parse_from(["arena", "replay", "verify", "x.json"]).is_ok());
        assert!(Cli::try_parse_from(["arena", "bench", "engine", "--json"]).is_ok());
        assert!(Cli::try_parse_from(["arena", "bench", "runner", "--matches", "2"]).is_ok());
        assert!(
            Cli::try_parse_from(["arena", "bench", "coordinator", "--workers", "8", "--json"])
                .is_ok()
        );
        assert!(matches!(
            Cli::try_parse_from(["arena", "bench", "pairing", "--json"]).map(|c| c.command),
            Ok(Command::Bench(BenchArgs {
                target: BenchTarget::Pairing {
                    json: true,
                    max_entrants: 100_000
                }
            }))
        ));
    }
}
