//! Entrants and tournament files.
//!
//! Entrants alternate between the repository's random test bot
//! (`bots/test/random`, seeded from `$BOT_SEED`, which each entrant's
//! `run.sh` sets to a value of its own) and the Python starter bot (no
//! randomness), so games are reproducible and the standings are not all
//! draws (random bots against each other reach the turn cap). Every entrant
//! has a `name.txt` of its own, so no two are the same submission (the
//! coordinator refuses the same code twice). Each is wrapped in a gate:
//! before each reply the bot waits while the file named in its `gate.txt`
//! exists. Tests close the gate to hold matches in flight for as long as a
//! scenario needs (a worker killed or cut off mid-match, a coordinator
//! restarted with matches in flight) instead of guessing match lengths.
//! Limits are generous (a minute per move), so waiting at the gate is never
//! a timeout and results do not depend on timing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::arena::workspace;

/// Runs the entrant's `bot.py` with its stdout behind the gate.
const GATED_PY: &str = r#""""bot.py behind a gate (see the e2e tests' support/bots.rs)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bot  # noqa: E402  (the entrant, copied next to this file)

with open(os.path.join(HERE, "gate.txt")) as f:
    GATE = f.read().strip()


class Gated:
    """stdout that waits while the gate file exists before each write."""

    def __init__(self, inner):
        self.inner = inner

    def write(self, text):
        while GATE and os.path.exists(GATE):
            time.sleep(0.005)
        return self.inner.write(text)

    def flush(self):
        return self.inner.flush()


sys.stdout = Gated(sys.stdout)
try:
    bot.main()
except (BrokenPipeError, KeyboardInterrupt):
    pass
"#;

/// A file whose existence holds every gated bot before its next reply.
///
/// It lives in a directory of its own outside `/tmp` (the sandbox mounts a
/// private `/tmp` over it, and Cargo's target dir may be under `/tmp` too),
/// in [`GATES`], readable by everyone:
/// a sandboxed worker binds that directory read-only into every sandbox at
/// the same path (`--env-path`, see [`super::arena::Worker::start_gated`]),
/// so sandboxed bots see the gate close and open as plain processes do.
/// Where gates are made: not under `/tmp`, and on every FHS host.
const GATES: &str = "/var/tmp";

pub struct Gate {
    // Field order is drop order: the file goes before its directory.
    path: PathBuf,
    dir: tempfile::TempDir,
}

impl Gate {
    /// A fresh gate, initially open.
    pub fn create() -> Gate {
        let dir = tempfile::Builder::new()
            .prefix("arena-e2e-gate-")
            .tempdir_in(GATES)
            .expect("the gate's directory");
        // Bots run as unprivileged users: they must be able to look inside.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod the gate's directory");
        Gate {
            path: dir.path().join("closed"),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory a sandboxed worker binds into its sandboxes.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Bots stop before their next reply.
    pub fn close(&self) {
        std::fs::write(&self.path, b"closed\n").expect("closing the gate");
    }

    /// Bots carry on.
    pub fn open(&self) {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("opening the gate: {e}"),
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[derive(Clone, Debug)]
pub struct Bot {
    pub name: String,
    pub dir: PathBuf,
}

/// Writes `count` entrants under `root` (`random-0`, `starter-1`,
/// `random-2`, ...), each held by `gate` when it is given.
pub fn write_bots(root: &Path, count: usize, gate: Option<&Gate>) -> Vec<Bot> {
    let read = |relative: &str| {
        let path = workspace().join(relative);
        std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    };
    let kinds = [
        ("random", read("bots/test/random/bot.py")),
        ("starter", read("bots/starter-python/bot.py")),
    ];
    (0..count)
        .map(|n| {
            let (kind, source) = &kinds[n % kinds.len()];
            let name = format!("{kind}-{n}");
            let dir = root.join(&name);
            std::fs::create_dir_all(&dir).expect("bot dir");
            std::fs::write(dir.join("bot.py"), source).expect("bot.py");
            std::fs::write(dir.join("gated.py"), GATED_PY).expect("gated.py");
            std::fs::write(dir.join("name.txt"), format!("{name}\n")).expect("name.txt");
            let gate = gate
                .map(|g| g.path().display().to_string())
                .unwrap_or_default();
            std::fs::write(dir.join("gate.txt"), format!("{gate}\n")).expect("gate.txt");
            let run = dir.join("run.sh");
            std::fs::write(
                &run,
                format!(
                    "#!/bin/sh\nBOT_SEED={} exec python3 -B -u gated.py\n",
                    7919 * (n + 1)
                ),
            )
            .expect("run.sh");
            std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755))
                .expect("chmod run.sh");
            Bot { name, dir }
        })
        .collect()
}

/// Writes a round-robin tournament file (one cycle) and returns its path.
pub fn write_tournament(
    path: &Path,
    name: &str,
    seed: u64,
    games_per_pairing: u32,
    bots: &[Bot],
) -> PathBuf {
    let mut text = format!(
        "name = \"{name}\"\n\
         game = \"generals\"\n\
         seed = {seed}\n\
         \n\
         [format]\n\
         kind = \"round_robin\"\n\
         cycles = 1\n\
         games_per_pairing = {games_per_pairing}\n\
         \n\
         [limits]\n\
         move_ms = 60000\n\
         first_move_ms = 60000\n\
         fault_limit = 50\n"
    );
    text.push_str(&bots_toml(bots));
    std::fs::write(path, text).expect("writing the tournament file");
    path.to_owned()
}

/// The `[[bots]]` tables of a tournament file for `bots`.
pub fn bots_toml(bots: &[Bot]) -> String {
    bots.iter()
        .map(|bot| {
            format!(
                "\n[[bots]]\nname = \"{}\"\npath = \"{}\"\n",
                bot.name,
                bot.dir.display()
            )
        })
        .collect()
}

/// Matches of a one-cycle round robin of `bots` entrants.
pub fn round_robin_matches(bots: usize, games_per_pairing: usize) -> usize {
    bots * (bots - 1) / 2 * games_per_pairing
}

/// What a scenario starts from: a temp dir of its own (`arena-e2e-<tag>-...`)
/// holding `count` entrants, held by a gate there when gated (open until
/// the test closes it), and a round-robin tournament file for them.
pub struct Fixture {
    /// The gate, in a directory of its own (see [`Gate`]).
    gate: Option<Gate>,
    pub bots: Vec<Bot>,
    file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    /// Entrants held by the fixture's gate (see [`Fixture::gate`]).
    pub fn gated(tag: &str, count: usize, name: &str, seed: u64, games: u32) -> Fixture {
        Fixture::new(tag, count, true, name, seed, games)
    }

    /// Entrants that never wait.
    pub fn ungated(tag: &str, count: usize, name: &str, seed: u64, games: u32) -> Fixture {
        Fixture::new(tag, count, false, name, seed, games)
    }

    /// `count` entrants and a tournament named `name` with `seed` and
    /// `games` per pairing (see [`write_tournament`]).
    fn new(tag: &str, count: usize, gated: bool, name: &str, seed: u64, games: u32) -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix(&format!("arena-e2e-{tag}-"))
            .tempdir()
            .unwrap();
        let gate = gated.then(Gate::create);
        let bots = write_bots(&dir.path().join("bots"), count, gate.as_ref());
        let file = write_tournament(
            &dir.path().join("tournament.toml"),
            name,
            seed,
            games,
            &bots,
        );
        Fixture {
            gate,
            bots,
            file,
            _dir: dir,
        }
    }

    pub fn gate(&self) -> &Gate {
        self.gate.as_ref().expect("a gated fixture")
    }

    /// The tournament file, for `arena tournament create`.
    pub fn file(&self) -> &str {
        self.file.to_str().expect("a UTF-8 temp path")
    }
}

/// A bot directory `name` under `root` with `run.sh` and the files given.
pub fn write_bot(root: &Path, name: &str, run: &str, files: &[(&str, &[u8])]) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    for (file, content) in files {
        std::fs::write(dir.join(file), content).expect("bot file");
    }
    // Distinct content, so every entrant is a submission of its own.
    std::fs::write(dir.join("name.txt"), name).expect("name.txt");
    let path = dir.join("run.sh");
    std::fs::write(&path, run).expect("run.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
