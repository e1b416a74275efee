//! The runner with bots confined by the sandbox: a bot over its memory cap
//! forfeits with `memory`, a bot that signals itself forfeits with `crash`
//! as it does unsandboxed, an exit that cannot be read is a runner error,
//! builds run offline and are cached by content, and matches see their
//! build's output read-only.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::own_parent;

use arena_engine::Session;
use arena_engine::generals::{Generals, Params};
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::launcher::{BotExit, BotHandle, BuildReport, LaunchError, LaunchedBot, Launcher};
use arena_worker::replay::Replay;
use arena_worker::{
    BotSpec, Forfeit, ProcessLauncher, RunnerConfig, RunnerError, SandboxLauncher, play_match,
};

fn bot(path: &str) -> BotSpec {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = if path.starts_with("test/") {
        root.join("../bots").join(path)
    } else {
        root.join("tests/bots").join(path)
    };
    BotSpec::from_dir(dir)
}

/// Removes the test's own cgroup parent when the test is over, and checks
/// that nothing was left in it (see [`support::remove_parent`]).
struct Tidy<'a>(&'a SandboxLauncher);

impl Drop for Tidy<'_> {
    fn drop(&mut self) {
        support::remove_parent(self.0);
    }
}

fn launcher(cache: &Path) -> SandboxLauncher {
    launcher_under(cache, &own_parent("arena-worker-test"))
}

/// A launcher whose leaves go under `parent`: a test that must not have its
/// parent removed by another test's [`Tidy`] halfway through uses its own.
fn launcher_under(cache: &Path, parent: &str) -> SandboxLauncher {
    let config = SandboxConfig {
        limits: Limits {
            memory_bytes: 256 << 20,
            ..Limits::default()
        },
        env: RuntimeEnv::host_default(),
        cgroup_parent: parent.to_owned(),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::new(config).expect("the sandbox needs root and cgroups");
    let cores = CoreAllocator::new(&CoreAllocator::available().unwrap(), 2).unwrap();
    SandboxLauncher::new(sandbox, cores, cache.to_owned())
}

/// A bot whose `run.sh` is `cat` and whose `build.sh` is `build` (kept
/// alive by the returned directory).
fn bot_building_with(build: &str) -> (tempfile::TempDir, BotSpec) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.sh"), "exec cat\n").unwrap();
    std::fs::write(dir.path().join("build.sh"), build).unwrap();
    let bot = BotSpec::from_dir(dir.path());
    (dir, bot)
}

fn config() -> RunnerConfig {
    RunnerConfig {
        per_move: Duration::from_millis(500),
        ..RunnerConfig::default()
    }
}

fn game(max_turns: u32) -> Generals {
    Generals::from_seed(
        3,
        Params {
            max_turns,
            ..Params::default()
        },
    )
}

#[test]
fn a_bot_over_its_memory_cap_forfeits_with_memory() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path());
    let _tidy = Tidy(&launcher);
    let out = play_match(
        Session::boxed(game(1200)),
        3,
        &[bot("memory-hog").into(), bot("test/random").into()],
        &launcher,
        &config(),
    )
    .unwrap();
    let r = &out.report;
    assert_eq!(r.players[0].forfeit, Some(Forfeit::Memory), "{r:?}");
    assert_eq!(r.players[1].forfeit, None);
    assert_eq!(r.winner, Some(1));
    assert_eq!(r.reason, "forfeit");
    serde_json::from_slice::<Replay<Generals>>(&out.replay)
        .unwrap()
        .verify()
        .unwrap();
}

#[test]
fn builds_are_offline_cached_and_read_only_in_matches() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path());
    let _tidy = Tidy(&launcher);
    let probe = bot("probe");

    let first = launcher.build(&probe, Duration::from_secs(60)).unwrap();
    assert!(first.succeeded, "{:?}", first.failure);
    let log = String::from_utf8_lossy(&first.log).into_owned();
    assert!(log.contains("network: unreachable"), "{log}");
    let artifact: PathBuf = first
        .artifact
        .clone()
        .expect("a sandboxed build has an artifact");
    assert_eq!(
        std::fs::read_to_string(artifact.join("built.txt")).unwrap(),
        "built\n"
    );
    // The build wrote into its copy, never into the submission.
    assert!(!probe.dir.join("built.txt").exists());

    let second = launcher.build(&probe, Duration::from_secs(60)).unwrap();
    assert_eq!(
        second.artifact, first.artifact,
        "same tree, same environment: cached"
    );
    assert_eq!(second.duration, Duration::ZERO);

    let out = play_match(
        Session::boxed(game(5)),
        3,
        &[probe.clone().into(), probe.into()],
        &launcher,
        &config(),
    )
    .unwrap();
    assert_eq!(out.report.turns, 5);
    for log in &out.logs {
        let log = String::from_utf8_lossy(log);
        assert!(log.contains("bot dir: read-only"), "{log}");
        assert!(log.contains("built"), "{log}");
    }
    let uids: Vec<String> = out
        .logs
        .iter()
        .map(|l| {
            let text = String::from_utf8_lossy(l);
            text.lines()
                .find(|l| l.starts_with("uid: "))
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_ne!(uids[0], uids[1], "each seat runs as its own uid");
    assert!(!uids[0].contains("uid: 0"));
}

#[test]
fn a_failing_sandboxed_build_forfeits_and_is_cached_as_failed() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path());
    let _tidy = Tidy(&launcher);
    let (_dir, broken) = bot_building_with("echo nope >&2; exit 4\n");
    let out = play_match(
        Session::boxed(game(1200)),
        3,
        &[broken.clone().into(), bot("test/random").into()],
        &launcher,
        &config(),
    )
    .unwrap();
    assert_eq!(out.report.players[0].forfeit, Some(Forfeit::BuildFailed));
    let log = String::from_utf8_lossy(&out.logs[0]);
    assert!(log.contains("nope") && log.contains("status 4"), "{log}");
    let again = launcher.build(&broken, Duration::from_secs(60)).unwrap();
    assert!(!again.succeeded);
    assert_eq!(again.duration, Duration::ZERO, "the failure was cached");
}

#[test]
fn a_build_over_its_limit_fails_and_is_not_cached() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path());
    let _tidy = Tidy(&launcher);
    let (_dir, slow) = bot_building_with("sleep 30\n");
    let report = launcher.build(&slow, Duration::from_millis(500)).unwrap();
    assert!(!report.succeeded);
    assert!(report.failure.unwrap().contains("wall limit"));
    let entries: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert!(
        entries.is_empty(),
        "nothing cached or left over: {entries:?}"
    );
}

/// A bot whose `run.sh` sends itself `signal` (by name) with its default
/// disposition and, should it survive, exits 3 (kept alive by the returned
/// directory).
fn bot_signalling_itself(signal: &str) -> (tempfile::TempDir, BotSpec) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bot.py"),
        "import os, signal, sys\n\
         sig = getattr(signal, sys.argv[1])\n\
         if sig != signal.SIGKILL:\n    signal.signal(sig, signal.SIG_DFL)\n\
         os.kill(os.getpid(), sig)\n\
         sys.exit(3)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("run.sh"),
        format!("exec python3 -u bot.py {signal}\n"),
    )
    .unwrap();
    let bot = BotSpec::from_dir(dir.path());
    (dir, bot)
}

/// A bot that sends itself SIGSEGV, SIGABRT, SIGKILL or SIGTERM forfeits
/// with `crash`, sandboxed as unsandboxed.
///
/// Guards against the sandboxed bot being pid 1 of its namespace, where the
/// kernel dropped the signal: it exited 3 instead and forfeited `exit`.
#[test]
fn a_bot_that_signals_itself_forfeits_with_crash() {
    let cache = tempfile::tempdir().unwrap();
    // Eight matches in a row: long enough for another test's Tidy to remove
    // a shared parent under it.
    let sandboxed = launcher_under(cache.path(), &own_parent("arena-worker-test-signals"));
    let _tidy = Tidy(&sandboxed);
    let plain = ProcessLauncher::default();
    for signal in ["SIGSEGV", "SIGABRT", "SIGKILL", "SIGTERM"] {
        let (_dir, crasher) = bot_signalling_itself(signal);
        for (name, launcher) in [
            ("sandboxed", &sandboxed as &dyn Launcher),
            ("unsandboxed", &plain),
        ] {
            let out = play_match(
                Session::boxed(game(1200)),
                3,
                &[crasher.clone().into(), bot("test/random").into()],
                launcher,
                &config(),
            )
            .unwrap();
            let r = &out.report;
            assert_eq!(
                r.players[0].forfeit,
                Some(Forfeit::Crash),
                "{signal}, {name}: {r:?}"
            );
            assert_eq!(r.winner, Some(1), "{signal}, {name}: {r:?}");
        }
    }
}

/// Wraps a launcher so that once a bot has exited, its exit cannot be read:
/// what the sandbox reports when it cannot tell a memory kill from a crash
/// (an unreadable OOM counter).
struct UnreadableExits<L>(L);

struct UnreadableExit(Box<dyn BotHandle>);

impl BotHandle for UnreadableExit {
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>> {
        match self.0.try_wait()? {
            Some(_) => Err(std::io::Error::other(
                "reading the OOM-kill counter: a memory kill cannot be told from a crash",
            )),
            None => Ok(None),
        }
    }

    fn kill(&mut self) -> std::io::Result<()> {
        self.0.kill()
    }

    fn wait(&mut self) -> std::io::Result<BotExit> {
        self.0.wait()
    }
}

impl<L: Launcher> Launcher for UnreadableExits<L> {
    fn launch(&self, bot: &BotSpec, seat: usize) -> Result<LaunchedBot, LaunchError> {
        let mut launched = self.0.launch(bot, seat)?;
        launched.handle = Box::new(UnreadableExit(launched.handle));
        Ok(launched)
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        self.0.build(bot, wall_limit)
    }
}

/// A seat whose exit cannot be read fails the match as a runner error (an
/// infrastructure failure, so the match is played again), never a forfeit.
///
/// Guards against the seat reading "cannot tell" as a plain exit: it
/// forfeited `exit`, which hides a memory kill.
#[test]
fn an_exit_that_cannot_be_read_is_a_runner_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.sh"), "exit 0\n").unwrap();
    let leaver = BotSpec::from_dir(dir.path());
    let result = play_match(
        Session::boxed(game(1200)),
        3,
        &[leaver.into(), bot("test/random").into()],
        &UnreadableExits(ProcessLauncher::default()),
        &config(),
    );
    match result {
        Err(RunnerError::Pipe { seat: 0, source }) => {
            assert!(source.to_string().contains("OOM"), "{source}");
        }
        Err(other) => panic!("another runner error: {other}"),
        Ok(out) => panic!("played to a result: {:?}", out.report),
    }
}
