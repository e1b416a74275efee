//! `arena export`: a tournament's standings or results, as JSON or CSV,
//! from the state directory of `arena run` or from Redis.
//!
//! A state directory is read through [`DiskStore::snapshot`]: a copy in
//! memory of its last commit, so the export works beside a run that is
//! going on there and never changes the directory. Redis is read in place.
//!
//! - Standings JSON is [`Standings::to_json`], exactly what `arena run
//!   --json` prints; standings CSV is [`Standings::to_csv`].
//! - Results JSON is the array of the tournament's [`MatchRecord`]s in
//!   schedule order, as the store holds them (each with its `round`), so
//!   it reads back as `Vec<MatchRecord>`.
//! - Results CSV has one row per seat of every recorded match:
//!   [`results_csv`] (the pages' download is the same text). `name` is the entrant's name in the tournament
//!   (a baseline seat's is the baseline's name); `forfeit` is empty when
//!   the seat did not forfeit, and the latency columns when it never
//!   replied in time.
//!
//! Both CSVs follow RFC 4180 with CRLF line endings: text fields are
//! quoted when they hold a comma, a double quote, CR or LF (quotes
//! doubled), and text a spreadsheet would take for a formula is prefixed
//! with `'`, as the standings CSV does.
//!
//! Written to a terminal (stdout, no `--output`), the text is shown with
//! control characters escaped, as every name this program prints is; a
//! pipe or a file gets it byte for byte.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arena_coordinator::service::{Coordinator, CoordinatorConfig};
use arena_coordinator::standings::{Standings, results_csv};
use arena_coordinator::store::{DiskStore, Store, TournamentSpec};

use crate::cli::{ExportArgs, ExportFormat, ExportWhat};
use crate::terminal::{shown, shown_lines};

/// Where the tournament is read from.
enum Source {
    State(PathBuf),
    Redis(String),
}

impl Source {
    fn of(args: &ExportArgs) -> anyhow::Result<Source> {
        match (&args.state, &args.redis) {
            (Some(dir), None) => Ok(Source::State(dir.clone())),
            (None, Some(url)) => Ok(Source::Redis(url.clone())),
            _ => anyhow::bail!("give exactly one of --state DIR and --redis URL"),
        }
    }

    /// For messages: "the state directory X" or "Redis".
    fn describe(&self) -> String {
        match self {
            Source::State(dir) => {
                format!("the state directory {}", shown(&dir.display().to_string()))
            }
            Source::Redis(_) => "Redis".to_owned(),
        }
    }
}

pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let source = Source::of(&args)?;
    let runtime = crate::distributed::runtime()?;
    let text = runtime.block_on(async {
        let store = match &source {
            Source::State(dir) => snapshot(dir)?,
            Source::Redis(url) => crate::distributed::open_store(Some(url)).await?,
        };
        let spec = choose(&store, args.tournament.as_deref(), &source).await?;
        export(store, &spec, args.what, args.format).await
    })?;
    drop(runtime);
    write(args.output.as_deref(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// The state in `dir`, as a store in memory.
fn snapshot(dir: &std::path::Path) -> anyhow::Result<Store> {
    let shown_dir = shown(&dir.display().to_string()).into_owned();
    anyhow::ensure!(
        dir.is_dir(),
        "there is no state directory {shown_dir} (`arena run` keeps its state in \
         arena-state/ beside the tournament file, or where its --state says)"
    );
    let copy = DiskStore::snapshot(dir)
        .with_context(|| format!("reading the state directory {shown_dir}"))?;
    Ok(Store::Memory(copy))
}

/// The tournament `wanted`, or the store's only one.
async fn choose(
    store: &Store,
    wanted: Option<&str>,
    source: &Source,
) -> anyhow::Result<TournamentSpec> {
    let place = source.describe();
    if let Some(id) = wanted
        && let Some(spec) = store.tournament(id).await?
    {
        return Ok(spec);
    }
    let ids = store.tournaments().await?;
    if let Some(id) = wanted {
        let holds = if ids.is_empty() {
            " it holds none".to_owned()
        } else {
            format!(" it holds:{}", listing(store, &ids).await?)
        };
        anyhow::bail!("{place} holds no tournament {};{holds}", shown(id));
    }
    match ids.as_slice() {
        [] => anyhow::bail!("{place} holds no tournament"),
        [only] => store
            .tournament(only)
            .await?
            .with_context(|| format!("{place} lost tournament {} while it was read", shown(only))),
        _ => anyhow::bail!(
            "{place} holds {} tournaments; choose one with --tournament ID:{}",
            ids.len(),
            listing(store, &ids).await?
        ),
    }
}

/// A line "  ID (NAME)" per tournament, each after a newline, for an
/// error message.
async fn listing(store: &Store, ids: &[String]) -> anyhow::Result<String> {
    let mut text = String::new();
    for id in ids {
        let name = store
            .tournament(id)
            .await?
            .map(|spec| spec.name)
            .unwrap_or_default();
        let _ = write!(text, "\n  {} ({})", shown(id), shown(&name));
    }
    Ok(text)
}

/// The text to write.
async fn export(
    store: Store,
    spec: &TournamentSpec,
    what: ExportWhat,
    format: ExportFormat,
) -> anyhow::Result<String> {
    match what {
        ExportWhat::Standings => {
            let coordinator = Coordinator::new(store, CoordinatorConfig::default());
            let standings: Standings = coordinator
                .standings(&spec.id)
                .await
                .with_context(|| format!("computing the standings of {}", shown(&spec.id)))?;
            Ok(match format {
                ExportFormat::Json => format!("{}\n", standings.to_json()),
                ExportFormat::Csv => standings.to_csv(),
            })
        }
        ExportWhat::Results => {
            let results = store.results(&spec.id).await?;
            Ok(match format {
                ExportFormat::Json => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&results).context("writing the results")?
                ),
                ExportFormat::Csv => results_csv(&spec.entrants, &results),
            })
        }
    }
}

/// Writes `text` to `output`, or to stdout (escaped for a terminal).
fn write(output: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    if let Some(path) = output {
        return std::fs::write(path, text)
            .with_context(|| format!("writing {}", shown(&path.display().to_string())));
    }
    let stdout = std::io::stdout();
    let shown_text;
    let bytes = if stdout.is_terminal() {
        shown_text = shown_lines(&text.replace("\r\n", "\n")).into_owned();
        shown_text.as_bytes()
    } else {
        text.as_bytes()
    };
    let mut out = stdout.lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A reader that stopped early (`| head`) wanted no more.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written.context("writing to stdout"),
    }
}
