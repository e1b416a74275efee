//! Where `arena run` keeps a tournament, what it says when it finds one
//! there already, and `arena run --status`.
//!
//! By default the state is a directory beside the tournament file
//! (`arena-state/`): the on-disk store's file and a `blobs/` folder of
//! replays and logs. Running the same file again finds its tournament
//! there by id (the id is a digest of the file's definition and the bots'
//! archives) and resumes it; a changed file or bot is a new tournament,
//! and the run says so.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, is_finished};
use arena_coordinator::store::{DiskStore, Status, Store};
use arena_coordinator::tournament_file::TournamentFile;

use crate::cli::RunArgs;
use crate::terminal::{shown, shown_lines};

/// The reason recorded on the leases a resumed run takes back.
pub const INTERRUPTED: &str = "the arena run playing it was interrupted";

/// Where a run's state lives.
#[derive(Clone, Debug)]
pub enum StateLocation {
    /// A Redis server (`--redis`).
    Redis(String),
    /// A state directory.
    Dir(PathBuf),
    /// Process memory (`--state none`).
    Memory,
}

impl StateLocation {
    pub fn of(args: &RunArgs) -> StateLocation {
        if let Some(url) = &args.redis {
            return StateLocation::Redis(url.clone());
        }
        match &args.state {
            Some(dir) if dir.as_os_str() == "none" => StateLocation::Memory,
            Some(dir) => StateLocation::Dir(dir.clone()),
            None => StateLocation::Dir(default_state_dir(&args.tournament)),
        }
    }

    /// Opens the store it names.
    pub async fn open(&self) -> anyhow::Result<Store> {
        match self {
            StateLocation::Redis(url) => crate::distributed::open_store(Some(url)).await,
            StateLocation::Dir(dir) => Ok(Store::open_dir(dir)?),
            StateLocation::Memory => crate::distributed::open_store(None).await,
        }
    }

    /// Where replays and logs go unless `--blobs` says otherwise.
    pub fn blob_dir(&self) -> Option<PathBuf> {
        match self {
            StateLocation::Redis(_) => Some(crate::distributed::default_blob_dir()),
            StateLocation::Dir(dir) => Some(dir.join("blobs")),
            StateLocation::Memory => None,
        }
    }

    /// Says where the state goes, before anything runs.
    pub fn announce(&self) {
        match self {
            StateLocation::Redis(_) => {}
            StateLocation::Dir(dir) => crate::messages::say!(
                "arena run: state in {} (run the same command again to resume if interrupted)",
                shown(&dir.display().to_string())
            ),
            StateLocation::Memory => crate::messages::say!(
                "arena run: --state none: results, replays and logs are kept in memory only; \
                 an interrupted run starts over"
            ),
        }
    }
}

/// `arena-state/` in the tournament file's directory.
fn default_state_dir(tournament: &Path) -> PathBuf {
    let beside = tournament.parent().filter(|p| !p.as_os_str().is_empty());
    beside.unwrap_or(Path::new(".")).join("arena-state")
}

/// What `arena run` found of its tournament in the store before it began.
pub enum Found {
    /// Nothing: the tournament starts now.
    New {
        /// Other tournaments of the same name in the store: the file or a
        /// bot changed since they were played.
        earlier: Vec<String>,
    },
    /// The tournament, as an earlier run left it.
    Earlier,
}

/// The tournament ids in `store` before the run creates its own.
pub async fn before(store: &Store) -> anyhow::Result<Vec<String>> {
    Ok(store.tournaments().await?)
}

/// Compares the store's tournaments `before` the run with the one it
/// created, `id`, named `name`.
pub async fn found(
    store: &Store,
    before: &[String],
    id: &str,
    name: &str,
) -> anyhow::Result<Found> {
    if before.iter().any(|t| t == id) {
        return Ok(Found::Earlier);
    }
    let mut earlier = Vec::new();
    for other in before {
        if store
            .tournament(other)
            .await?
            .is_some_and(|spec| spec.name == name)
        {
            earlier.push(other.clone());
        }
    }
    Ok(Found::New { earlier })
}

/// Takes back what the earlier run held and says how far it got, or says
/// that a changed file made a new tournament.
pub async fn resume_or_start(
    coordinator: &Coordinator,
    location: &StateLocation,
    found: &Found,
    id: &str,
) -> anyhow::Result<()> {
    let place = match location {
        StateLocation::Dir(dir) => shown(&dir.display().to_string()).into_owned(),
        StateLocation::Redis(_) => "Redis".to_owned(),
        StateLocation::Memory => return Ok(()),
    };
    match found {
        Found::Earlier => {
            let released = coordinator.store().release_leases(id, INTERRUPTED).await?;
            let (status, rounds_total) = coordinator.status(id).await?;
            let state = if is_finished(&status, rounds_total) {
                "finished"
            } else {
                "resuming"
            };
            crate::messages::say!(
                "arena run: {state} tournament {id} from {place}: {} of {} matches recorded{}",
                status.done,
                status.total,
                if released > 0 {
                    format!(", {released} interrupted match(es) played again")
                } else {
                    String::new()
                }
            );
        }
        Found::New { earlier } if !earlier.is_empty() => crate::messages::say!(
            "arena run: the tournament file or a bot changed since {place} recorded {}; \
             this is a new tournament, {id} (the earlier one stays there)",
            earlier.join(", ")
        ),
        Found::New { .. } => {}
    }
    Ok(())
}

/// `arena run --status`: the progress and standings of the file's
/// tournament as its state directory holds them, without running anything.
/// The file's entrants are packed to find the tournament's id exactly, and
/// everything happens on a copy of the state in memory.
pub fn status(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let file = TournamentFile::load(&args.tournament)?;
    let dir = match StateLocation::of(args) {
        StateLocation::Dir(dir) => dir,
        StateLocation::Memory => {
            anyhow::bail!("--status reads a state directory; --state none keeps none")
        }
        StateLocation::Redis(_) => anyhow::bail!("--status reads a state directory, not Redis"),
    };
    let copy = DiskStore::snapshot(&dir)
        .with_context(|| format!("reading the state of {}", args.tournament.display()))?;
    let runtime = crate::distributed::runtime()?;
    runtime.block_on(async {
        let store = Store::Memory(copy);
        let before = before(&store).await?;
        let coordinator = Coordinator::new(store.clone(), CoordinatorConfig::default());
        let entrants = crate::run::register_entrants(&coordinator, None, &file).await?;
        let id = crate::run::create_tournament(&coordinator, &file, entrants).await?;
        let shown_dir = shown(&dir.display().to_string()).into_owned();
        match found(&store, &before, &id, &file.name).await? {
            Found::Earlier => {}
            Found::New { earlier } => {
                crate::messages::say!(
                    "arena run --status: {} has not been played with {shown_dir}{}",
                    shown(&args.tournament.display().to_string()),
                    if earlier.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " as it is now; the file or a bot changed since {} was played",
                            earlier.join(", ")
                        )
                    }
                );
                return Ok(ExitCode::FAILURE);
            }
        }
        let (status, rounds_total) = coordinator.status(&id).await?;
        let standings = coordinator.standings(&id).await?;
        if args.json {
            println!("{}", standings.to_json());
        } else {
            println!("{} ({id})", shown(&file.name));
            println!("{}", progress_line(&status, rounds_total));
            print!("{}", shown_lines(&standings.to_table()));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// "12 of 20 matches recorded, 2 of 3 round(s) scheduled, 1 being played;
/// not finished".
fn progress_line(status: &Status, rounds_total: u32) -> String {
    let mut line = format!("{} of {} matches recorded", status.done, status.total);
    line.push_str(&format!(
        ", {} of {rounds_total} round(s) scheduled",
        status.rounds_scheduled
    ));
    if status.leased > 0 {
        line.push_str(&format!(", {} being played", status.leased));
    }
    if status.stuck > 0 {
        line.push_str(&format!(", {} stuck", status.stuck));
    }
    line.push_str(if is_finished(status, rounds_total) {
        "; finished"
    } else {
        "; not finished (if no run is going on, run it again to resume)"
    });
    line
}
