//! The match runner against real bot processes: the test bots in `bots/test/`
//! (and a few written here) exercise every way a bot can misbehave, and each
//! test checks the verdict, the counters and that nothing is left running.
//!
//! Deadlines are chosen so that a loaded machine cannot move a count: a bot
//! meant to answer in time answers within milliseconds and is given seconds;
//! a bot meant to be late is late by sleeping, or never answers, so only
//! the referee can decide its fault, and no stall makes it any less late.

use std::path::Path;
use std::time::Duration;

use arena_engine::Session;
use arena_engine::generals::{ActionKind, Generals, Params};
use arena_worker::replay::Replay;
use arena_worker::report::FaultKind;
use arena_worker::{
    BotSpec, Forfeit, MatchOutput, ProcessLauncher, RunnerConfig, RunnerError, play_match,
};

/// The match's replay document, typed.
fn replay(out: &MatchOutput) -> Replay<Generals> {
    serde_json::from_slice(&out.replay).expect("the replay is a generals replay")
}

fn test_bot(name: &str) -> BotSpec {
    BotSpec::from_dir(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bots/test")
            .join(name),
    )
}

/// A bot called `name` under `dir`, made of `files` (name, content).
fn scripted_bot(dir: &Path, name: &str, files: &[(&str, &str)]) -> BotSpec {
    let bot = dir.join(name);
    std::fs::create_dir(&bot).unwrap();
    for (file, content) in files {
        std::fs::write(bot.join(file), content).unwrap();
    }
    BotSpec::from_dir(bot)
}

/// The pid a bot's script wrote into `file` of its directory.
fn pid_in(bot: &Path, file: &str) -> i32 {
    std::fs::read_to_string(bot.join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn game(seed: u64, max_turns: u32) -> Generals {
    Generals::from_seed(
        seed,
        Params {
            max_turns,
            ..Params::default()
        },
    )
}

/// Generous limits: only the bots meant to be late should ever be. A bot
/// that answers at once takes a few milliseconds; seconds are what no stall
/// of a loaded machine reaches.
fn config() -> RunnerConfig {
    RunnerConfig {
        first_move: Duration::from_secs(10),
        per_move: Duration::from_secs(5),
        ..RunnerConfig::default()
    }
}

/// A Python bot that answers frame `t` with `1 <t> 0 0 0` (a pass whose
/// ignored row field names the frame it answers), after sleeping `delay(t)`
/// seconds, a Python expression of `t`.
fn echo_bot(dir: &Path, name: &str, delay: &str) -> BotSpec {
    let bot = format!(
        r#"import sys
import time


def delay(t):
    return {delay}


def main():
    line = sys.stdin.readline()
    if not line:
        return
    h = int(line.split()[1])
    while True:
        header = sys.stdin.readline()
        if not header:
            return
        for _ in range(3 * h):
            sys.stdin.readline()
        t = int(header.split()[0])
        time.sleep(delay(t))
        sys.stdout.write("1 %d 0 0 0\n" % t)
        sys.stdout.flush()


try:
    main()
except (BrokenPipeError, KeyboardInterrupt):
    pass
"#
    );
    scripted_bot(
        dir,
        name,
        &[("run.sh", "exec python3 -u bot.py\n"), ("bot.py", &bot)],
    )
}

fn play(a: BotSpec, b: BotSpec, game: Generals, config: &RunnerConfig) -> MatchOutput {
    play_match(
        Session::boxed(game),
        7,
        &[a.into(), b.into()],
        &ProcessLauncher::default(),
        config,
    )
    .expect("match runs")
}

#[test]
fn random_bots_play_a_whole_game_that_replays_exactly() {
    let out = play(
        test_bot("random"),
        test_bot("random"),
        game(11, 1200),
        &config(),
    );
    let r = &out.report;
    assert!(
        [
            "general_captured",
            "deathtouch",
            "double_capture_draw",
            "double_deathtouch_draw",
            "turn_cap_draw"
        ]
        .contains(&r.reason.as_str()),
        "{}",
        r.reason
    );
    assert!(r.turns > 0 && r.turns <= 1200);
    for p in &r.players {
        assert_eq!(p.forfeit, None);
        assert_eq!(p.faults.total(), 0, "{p:?}");
        assert_eq!(p.moves, r.turns, "every frame answered");
        assert!(p.latency_ms.p50 > 0.0 && p.latency_ms.p50 <= p.latency_ms.max);
    }
    replay(&out).verify().expect("replay reproduces the match");

    // A replay whose record was altered no longer verifies.
    let mut forged = replay(&out);
    forged.result.as_mut().expect("finished").turns += 1;
    assert!(forged.verify().is_err());
    let mut forged = replay(&out);
    forged.turns.truncate(forged.turns.len() / 2);
    assert!(forged.verify().is_err());
}

#[test]
fn a_bot_late_once_is_not_shifted_by_a_turn() {
    // Late at frame 3 by sleeping past the deadline, so frame 4 is sent
    // before the late reply comes, which must then be dropped, not taken for
    // frame 4's. Frame 4's own reply follows the late one at once, well
    // within its deadline: DEADLINE - LATE_BY after frame 4 was sent.
    const DEADLINE: Duration = Duration::from_secs(2);
    const LATE_BY: Duration = Duration::from_millis(400);
    let dir = tempfile::tempdir().unwrap();
    let late = (DEADLINE + LATE_BY).as_secs_f64();
    let bot = echo_bot(dir.path(), "late-once", &format!("{late} if t == 3 else 0"));
    let cfg = RunnerConfig {
        per_move: DEADLINE,
        ..config()
    };
    let out = play(bot, test_bot("random"), game(12, 40), &cfg);
    let seat0 = &out.report.players[0];
    assert_eq!(seat0.faults.timeout, 1, "{seat0:?}");
    assert_eq!(seat0.faults.malformed, 0);
    for (t, turn) in replay(&out).turns.iter().enumerate() {
        let action = turn.actions[0].expect("seat 0 is due every turn");
        if t == 3 {
            assert_eq!(turn.faults[0], Some(FaultKind::Timeout));
        } else {
            assert_eq!(turn.faults[0], None, "turn {t}");
            assert_eq!(action.kind, ActionKind::Pass);
            assert_eq!(
                action.row, t as i64,
                "turn {t} got the reply to another frame"
            );
        }
    }
    assert_eq!(seat0.moves, out.report.turns - 1);
}

#[test]
fn a_sleeping_bot_faults_until_it_forfeits_without_delaying_the_other() {
    // The sleeper never answers: each of its frames costs a whole deadline,
    // so the deadlines are as short as lets the opponent (a Python bot that
    // answers in milliseconds once started) answer every frame in time.
    let cfg = RunnerConfig {
        first_move: Duration::from_secs(3),
        per_move: Duration::from_secs(1),
        fault_limit: 4,
        ..config()
    };
    let out = play(
        test_bot("sleeper"),
        test_bot("random"),
        game(13, 1200),
        &cfg,
    );
    let r = &out.report;
    assert_eq!(r.players[0].forfeit, Some(Forfeit::Faults));
    assert_eq!(r.players[0].faults.timeout, 4, "{r:?}");
    assert_eq!(r.players[0].moves, 0);
    assert_eq!(r.winner, Some(1));
    assert_eq!(r.reason, "forfeit");
    assert_eq!(r.turns, 3, "forfeit on the fourth fault, before its step");
    // The opponent answered every frame in time while the sleeper stalled.
    assert_eq!(r.players[1].faults.total(), 0, "{r:?}");
    assert_eq!(r.players[1].moves, 4);
    replay(&out).verify().expect("a forfeit replays too");
}

#[test]
fn late_replies_are_discarded_not_taken_for_the_next_frame() {
    // The bot answers every frame only after sleeping past the first move's
    // deadline (and so past every later one): always late, however loaded
    // the machine, and each reply comes while a later frame waits for its
    // own. The opponent has seconds to start and answer.
    let cfg = RunnerConfig {
        first_move: Duration::from_secs(2),
        per_move: Duration::from_secs(1),
        fault_limit: 4,
        ..config()
    };
    let dir = tempfile::tempdir().unwrap();
    let slow = echo_bot(dir.path(), "slow", "2.5");
    let out = play(slow, test_bot("random"), game(14, 1200), &cfg);
    let slow = &out.report.players[0];
    assert_eq!(slow.moves, 0, "no late reply may answer a later frame");
    assert_eq!(slow.faults.timeout, 4, "{slow:?}");
    assert_eq!(slow.faults.malformed, 0);
    assert_eq!(slow.forfeit, Some(Forfeit::Faults));
    let turns = replay(&out).turns;
    assert!(!turns.is_empty());
    for (t, turn) in turns.iter().enumerate() {
        assert_eq!(turn.faults[0], Some(FaultKind::Timeout), "turn {t}");
    }
}

#[test]
fn garbage_replies_are_malformed_faults() {
    let cfg = RunnerConfig {
        fault_limit: 10,
        ..config()
    };
    let out = play(
        test_bot("garbage"),
        test_bot("random"),
        game(15, 1200),
        &cfg,
    );
    let garbage = &out.report.players[0];
    assert_eq!(garbage.faults.malformed, 10, "{garbage:?}");
    assert_eq!(garbage.faults.timeout, 0);
    assert_eq!(garbage.forfeit, Some(Forfeit::Faults));
    assert!(
        replay(&out)
            .turns
            .iter()
            .all(|t| t.faults[0] == Some(FaultKind::Malformed))
    );
}

#[test]
fn an_endless_line_is_bounded_and_never_answers() {
    // The flooder never ends a line: each frame costs it a fault, the first
    // as soon as the line passes the cap, the others at their deadline.
    let cfg = RunnerConfig {
        first_move: Duration::from_secs(3),
        per_move: Duration::from_millis(500),
        fault_limit: 5,
        line_cap: 4096,
        ..config()
    };
    let out = play(
        test_bot("flooder"),
        test_bot("random"),
        game(16, 1200),
        &cfg,
    );
    let flooder = &out.report.players[0];
    assert_eq!(flooder.forfeit, Some(Forfeit::Faults));
    assert_eq!(flooder.moves, 0);
    assert_eq!(flooder.faults.total(), 5);
}

#[test]
fn a_bot_that_exits_forfeits_at_once() {
    let out = play(
        test_bot("random"),
        test_bot("early-exit"),
        game(17, 1200),
        &config(),
    );
    let r = &out.report;
    assert_eq!(r.players[1].forfeit, Some(Forfeit::Exit));
    assert_eq!(r.players[0].forfeit, None);
    assert_eq!(r.winner, Some(0));
    assert_eq!(r.reason, "forfeit");
    assert_eq!(r.turns, 1, "it answered frame 0 and left on frame 1");
    replay(&out).verify().expect("replays");
}

#[test]
fn a_crashing_bot_forfeits_with_crash() {
    let out = play(
        test_bot("crash"),
        test_bot("random"),
        game(18, 1200),
        &config(),
    );
    let r = &out.report;
    assert_eq!(r.players[0].forfeit, Some(Forfeit::Crash));
    assert_eq!(r.winner, Some(1));
    assert_eq!(r.turns, 0);
}

#[test]
fn stderr_is_kept_capped_and_the_game_goes_on() {
    let cfg = RunnerConfig {
        stderr_cap: 64 * 1024,
        ..config()
    };
    let out = play(
        test_bot("stderr-flood"),
        test_bot("random"),
        game(19, 30),
        &cfg,
    );
    let flood = &out.report.players[0];
    assert_eq!(flood.faults.total(), 0, "{flood:?}");
    assert_eq!(flood.moves, out.report.turns);
    let log = &out.logs[0];
    assert!(log.len() <= 64 * 1024 + 128, "log is {} bytes", log.len());
    assert!(
        log.starts_with(b"[arena: "),
        "the log says bytes were dropped"
    );
}

#[test]
fn a_failed_build_forfeits_without_playing() {
    let dir = tempfile::tempdir().unwrap();
    let bot = scripted_bot(
        dir.path(),
        "broken",
        &[
            ("run.sh", "#!/bin/sh\nexec cat\n"),
            (
                "build.sh",
                "#!/bin/sh\necho compiling\necho 'error: no' >&2\nexit 3\n",
            ),
        ],
    );
    let out = play(bot, test_bot("random"), game(20, 1200), &config());
    let r = &out.report;
    assert_eq!(r.players[0].forfeit, Some(Forfeit::BuildFailed));
    assert_eq!(r.winner, Some(1));
    assert_eq!(r.turns, 0);
    let log = String::from_utf8_lossy(&out.logs[0]);
    assert!(
        log.contains("compiling") && log.contains("error: no"),
        "{log}"
    );
    replay(&out).verify().expect("replays");
}

#[test]
fn a_build_over_its_wall_limit_is_killed_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bot = scripted_bot(
        dir.path(),
        "slow-build",
        &[
            ("run.sh", "exec cat\n"),
            ("build.sh", "echo $$ > build.pid\nexec sleep 300\n"),
        ],
    );
    let cfg = RunnerConfig {
        build_limit: Duration::from_millis(300),
        ..config()
    };
    let out = play(bot.clone(), test_bot("random"), game(21, 1200), &cfg);
    assert_eq!(out.report.players[0].forfeit, Some(Forfeit::BuildFailed));
    let pid = pid_in(&bot.dir, "build.pid");
    assert!(gone(pid), "the build process {pid} outlived its limit");
}

#[test]
fn every_process_a_bot_started_is_gone_after_the_match() {
    let dir = tempfile::tempdir().unwrap();
    let random = test_bot("random").dir.join("bot.py");
    let run = format!(
        "#!/bin/sh\nsleep 300 &\necho $! > child.pid\nexec python3 -u '{}'\n",
        random.display()
    );
    let bot = scripted_bot(dir.path(), "forker", &[("run.sh", &run)]);
    let mut perms = std::fs::metadata(bot.dir.join("run.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(bot.dir.join("run.sh"), perms).unwrap();
    let out = play(bot.clone(), test_bot("random"), game(22, 20), &config());
    assert_eq!(out.report.turns, 20);
    let pid = pid_in(&bot.dir, "child.pid");
    assert!(
        gone(pid),
        "the bot's background child {pid} survived the match"
    );
}

#[test]
fn a_bot_directory_without_run_sh_forfeits_build_failed_and_a_missing_one_is_an_error() {
    // The submission's fault: a result, its seat out with build_failed.
    let dir = tempfile::tempdir().unwrap();
    let out = play_match(
        Session::boxed(game(23, 1200)),
        1,
        &[
            BotSpec::from_dir(dir.path()).into(),
            test_bot("random").into(),
        ],
        &ProcessLauncher::default(),
        &config(),
    )
    .expect("a bot without run.sh is a result");
    assert_eq!(out.report.players[0].forfeit, Some(Forfeit::BuildFailed));
    assert_eq!(out.report.winner, Some(1));
    let log = String::from_utf8_lossy(&out.logs[0]);
    assert!(log.contains("has no run.sh"), "{log}");

    // A directory that is not there is the host's problem.
    let err = play_match(
        Session::boxed(game(23, 1200)),
        1,
        &[
            BotSpec::from_dir(dir.path().join("gone")).into(),
            test_bot("random").into(),
        ],
        &ProcessLauncher::default(),
        &config(),
    )
    .err()
    .expect("a missing directory cannot be played");
    assert!(matches!(err, RunnerError::Build { seat: 0, .. }), "{err:?}");
}

/// Whether `pid` has ended (waits up to ten seconds for it to be reaped:
/// the runner kills it before returning, but its new parent reaps it on its
/// own time).
fn gone(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Missing, or a zombie waiting for its new parent to reap it.
        let state = status.rsplit(") ").next().and_then(|s| s.chars().next());
        if status.is_empty() || state == Some('Z') {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_runner_publishes_the_turns_played_as_it_goes() {
    let progress = std::sync::Arc::new(arena_worker::progress::Progress::default());
    let config = config().with_progress(std::sync::Arc::clone(&progress));
    let out = play(
        test_bot("random"),
        test_bot("random"),
        game(13, 60),
        &config,
    );
    let turns = out.report.turns;
    assert!(turns > 0);
    assert_eq!(
        progress.turn(),
        turns,
        "the last turn played is the last one published"
    );
}
