//! `arena run` keeps its tournament in a state directory and resumes it:
//! SIGKILLed at twenty-odd points of a real sandboxed Swiss (while it starts
//! up, between a lease and its report, right after a result or a round's
//! scheduling reached the disk), restarted each time, it ends with every
//! match recorded once and the standings of a run nobody disturbed. A
//! damaged state file stops it with an error naming the file.
//!
//! Kill points are driven by the state file, not by the clock: after each
//! start the test waits for the file to change a random number of times
//! (1 to 24; a commit of the store shows as one to three changes, a match
//! as about three commits), or for a new result to appear in it, and kills
//! the run on the spot, so every kill lands just after some write, wherever
//! in the run that write was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use arena_coordinator::domain::MatchRecord;
use arena_coordinator::store::{DISK_FILE_NAME, DiskStore, MatchState, Store};

use crate::support::arena::arena;
use crate::support::bots::{Bot, bots_toml, write_bots};
use crate::support::cgroups::CgroupParent;
use crate::support::process::Proc;
use crate::support::wait::poll_until;

/// SIGKILLs before the run may finish.
const KILLS: usize = 20;
/// Entrants and rounds: 5 matches a round, 45 in all. A run is killed as
/// soon as it records a new result, if not before, so it adds one result,
/// two at worst (one landing between seeing the first and the kill): the
/// twenty kills cannot run out of tournament.
const ENTRANTS: usize = 10;
const ROUNDS: u32 = 9;
/// The most file changes a run may see before it is killed.
const MOST_CHANGES: u64 = 24;
/// A whole run, undisturbed, takes seconds; this is for a loaded machine.
const RUN: Duration = Duration::from_secs(300);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_twenty_times_ends_as_an_undisturbed_one() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-resume-")
        .tempdir()
        .expect("temp dir");
    let bots = write_bots(&dir.path().join("bots"), ENTRANTS, None);
    let file = write_swiss(&dir.path().join("tournament.toml"), &bots);
    let cgroup = CgroupParent::new(format!("arena-e2e-{}-resume", std::process::id()));
    let run = |state: &Path| {
        let mut command = arena();
        command
            .arg("run")
            .arg(&file)
            .args(["--json", "--cgroup-parent", cgroup.name(), "--state"])
            .arg(state)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .env("TMPDIR", dir.path());
        command
    };

    // The run nobody disturbs.
    let calm = finish(run(&dir.path().join("calm")), "the undisturbed run");

    // The same tournament, killed again and again.
    let state = dir.path().join("state");
    let mut picks = Picks::new(0x5eed_0001 ^ u64::from(std::process::id()));
    let mut kept: BTreeMap<String, MatchRecord> = BTreeMap::new();
    let mut commits_before_kill = Vec::new();
    for kill in 0..KILLS {
        let mut proc = Proc::spawn(format!("arena run (to be killed, #{kill})"), run(&state));
        let commits = 1 + picks.below(MOST_CHANGES) as usize;
        let seen = wait_for_commits(&state, commits, kept.len(), &mut proc).await;
        assert!(
            proc.try_exit().is_none(),
            "the run ended by itself before kill #{kill} (after {seen} commits): {}",
            proc.stderr.text()
        );
        proc.kill();
        commits_before_kill.push(seen);
        // Its bots die with it (each sandbox's init is bound to its runner).
        poll_until(
            "the killed run's bots to be gone",
            Duration::from_secs(20),
            async || cgroup.pids().is_empty().then_some(()),
        )
        .await;
        // Nothing recorded so far is lost or changed.
        let copy = DiskStore::snapshot(&state).expect("reading the killed run's state");
        for record in recorded(&Store::Memory(copy)).await {
            match kept.get(&record.match_id) {
                Some(earlier) => assert_eq!(earlier, &record, "a recorded result changed"),
                None => {
                    kept.insert(record.match_id.clone(), record);
                }
            }
        }
    }
    let after_kills = kept.len();
    let resumed = finish(run(&state), "the resumed run");
    assert_eq!(
        resumed, calm,
        "standings after {KILLS} kills differ from the undisturbed run's"
    );

    // Every match recorded exactly once, everything recorded before a kill
    // unchanged.
    let copy = DiskStore::snapshot(&state).expect("reading the final state");
    let store = Store::Memory(copy);
    let ids = store.tournaments().await.expect("tournaments");
    assert_eq!(ids.len(), 1, "{ids:?}");
    let matches = store.matches(&ids[0]).await.expect("matches");
    assert_eq!(matches.len(), ENTRANTS / 2 * ROUNDS as usize);
    for m in &matches {
        assert!(matches!(m.state, MatchState::Done { .. }), "{m:#?}");
    }
    let results = recorded(&store).await;
    assert_eq!(results.len(), matches.len());
    for record in &results {
        if let Some(earlier) = kept.get(&record.match_id) {
            assert_eq!(earlier, record, "a result recorded before a kill changed");
        }
    }
    let replayed = matches.iter().filter(|m| m.attempt > 1).count();
    eprintln!(
        "e2e resume: {KILLS} kills after {commits_before_kill:?} file changes; \
         {after_kills} of {} results were in before the last restart; {replayed} matches replayed",
        matches.len(),
    );
    // The kills did land mid-tournament: results were recorded between
    // them, and matches in flight were taken back and played again.
    assert!(after_kills > 0, "no kill came after a result");
    assert!(replayed > 0, "no kill caught a match in flight");
}

#[test]
fn a_damaged_state_file_stops_the_run_with_its_name() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-damaged-")
        .tempdir()
        .expect("temp dir");
    let bots = write_bots(&dir.path().join("bots"), 2, None);
    let file = write_swiss(&dir.path().join("tournament.toml"), &bots);
    let state = dir.path().join("state");
    let run = || {
        let mut command = arena();
        command
            .arg("run")
            .arg(&file)
            .args(["--no-sandbox", "--state"])
            .arg(&state)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .env("TMPDIR", dir.path());
        command
    };
    finish(run(), "the first run");
    let path = state.join(DISK_FILE_NAME);
    let good = std::fs::read(&path).expect("the state file");
    for (what, damaged) in [
        ("torn", good[..good.len() / 2].to_vec()),
        (
            "garbled",
            good.iter()
                .enumerate()
                .map(|(i, b)| if i > 4096 { !b } else { *b })
                .collect(),
        ),
    ] {
        std::fs::write(&path, &damaged).expect("damaging the state file");
        let mut proc = Proc::spawn(format!("arena run ({what} state)"), run());
        let status = proc.wait_exit(RUN).expect("the run to give up");
        let stderr = proc.stderr.text();
        assert!(!status.success(), "{what}: {stderr}");
        assert!(
            stderr.contains(&path.display().to_string()),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        // Refused, not started afresh: the file is as it was found.
        assert_eq!(
            std::fs::read(&path).expect("the state file"),
            damaged,
            "{what}"
        );
    }
}

/// A Swiss of `bots` with deadlines no loaded machine misses, so results
/// depend on the bots alone.
fn write_swiss(path: &Path, bots: &[Bot]) -> PathBuf {
    let mut text = format!(
        "name = \"E2E resume\"\ngame = \"generals\"\nseed = 77\n\n\
         [format]\nkind = \"swiss\"\nrounds = {ROUNDS}\n\n\
         [limits]\nmove_ms = 60000\nfirst_move_ms = 60000\nfault_limit = 50\n"
    );
    text.push_str(&bots_toml(bots));
    std::fs::write(path, text).expect("writing the tournament file");
    path.to_owned()
}

/// Runs `command` to its end; its stdout (the standings as JSON).
fn finish(command: Command, what: &str) -> String {
    let mut proc = Proc::spawn(what, command);
    let status = proc
        .wait_exit(RUN)
        .unwrap_or_else(|| panic!("{what} did not finish within {RUN:?}"));
    assert!(status.success(), "{what}: {status}\n{}", proc.stderr.text());
    proc.stdout.text()
}

/// Waits until the state file under `state` has changed `commits` times
/// since `proc` started, or holds more than `results` results, or `proc`
/// ended; how many changes it saw.
async fn wait_for_commits(state: &Path, commits: usize, results: usize, proc: &mut Proc) -> usize {
    let path = state.join(DISK_FILE_NAME);
    let stamp = || {
        std::fs::metadata(&path)
            .ok()
            .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
    };
    let deadline = Instant::now() + RUN;
    let mut last = stamp();
    let mut seen = 0;
    while seen < commits && Instant::now() < deadline && proc.try_exit().is_none() {
        let now = stamp();
        if now != last {
            seen += 1;
            last = now;
            // A copy read beside the run; a read that fails (the file
            // mid-write) is tried again at the next change.
            if let Ok(copy) = DiskStore::snapshot(state)
                && recorded(&Store::Memory(copy)).await.len() > results
            {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    seen
}

/// Every result the store holds.
async fn recorded(store: &Store) -> Vec<MatchRecord> {
    let mut all = Vec::new();
    for id in store.tournaments().await.expect("tournaments") {
        all.extend(store.results(&id).await.expect("results"));
    }
    all
}

/// A small deterministic generator of kill points (xorshift), seeded per
/// test process and said in the failure message through the counts.
struct Picks(u64);

impl Picks {
    fn new(seed: u64) -> Picks {
        Picks(seed.max(1))
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
