//! A thousand workers against one `arena coordinator` on a real
//! `redis-server` with its append-only file on, while the test SIGKILLs
//! and restarts the coordinator and Redis mid-tournament, with
//! `appendfsync everysec` and with `always`. Every match must end up
//! recorded exactly once, none stuck or missing, and the standings must
//! equal those of an undisturbed run of the same tournament.
//!
//! The workers are simulated: lightweight tonic clients in this process
//! that register, lease, heartbeat once and report a result derived from
//! the match id alone (so any replay of a match reports the same ranks and
//! the standings are reproducible). They never report a failure: whatever
//! a crash costs must come back through lease expiry, report retries and
//! the coordinator's recovery step. They retry whatever a restart makes
//! fail, with a short growing pause between attempts. One accepted report
//! in four is sent a second time, as by a worker whose answer was lost.
//!
//! Every report's answer is accounted for, per match (see [`Ledger`] and
//! [`assert_accounting`]): nothing is counted twice (a match is accepted
//! twice only when a Redis crash came between, which may lose the first
//! acceptance; a resend with no crash between it and its acceptance is a
//! `duplicate`), nothing is recorded that no report made, and a
//! `duplicate` answers only a report on a match that was accepted. Without
//! crashes the accounting is exact: one acceptance per match, and every
//! resend a duplicate.
//!
//! `ARENA_THOUSAND_WORKERS` sets the number of workers: 1000 by default
//! (three runs of 13,366 matches, about a minute in the debug build on a
//! loaded 2-core machine); its figures are printed with `--nocapture`.

#[path = "e2e/support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arena_proto::v1::{
    CreateTournamentRequest, HeartbeatRequest, LeaseRequest, LeasedMatch, MatchSummary,
    MatchesRequest, ReportOutcome, ReportResultRequest, SeatResult, StandingsRequest,
    StatusRequest, StatusResponse, UploadSubmissionRequest,
};
use support::arena::{self, Admin, Coordinator, WorkerRpc};
use support::redis::RedisServer;
use support::wait::poll_until;
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

/// Entrants of the round robin: more workers play faster, so the field
/// grows with them and the crashes still land mid-tournament (84 entrants,
/// 3,486 matches for 200 workers; 164 and 13,366 for 1000).
fn entrants(workers: usize) -> usize {
    64 + workers / 10
}
/// Short, so a lease whose result a crash lost runs out soon.
const LEASE_TTL_S: u64 = 3;
/// One accepted report in this many is sent again.
const RESEND_EVERY: u64 = 4;
/// How long a worker keeps resending a report that gets no answer before it
/// gives up (and fails the test): the coordinator is never down that long.
const REPORT_PATIENCE: Duration = Duration::from_secs(60);
/// Workers per HTTP/2 connection.
const WORKERS_PER_CHANNEL: usize = 50;
/// How long one run may take (debug build, 2 shared cores).
const RUN: Duration = Duration::from_secs(240);
/// Expiries caused by the test's crashes are nobody's fault: no worker may
/// be quarantined for them and no match set aside as stuck.
const COORDINATOR_FLAGS: &[&str] = &["--max-attempts", "100", "--quarantine-failures", "0"];

fn worker_count() -> usize {
    std::env::var("ARENA_THOUSAND_WORKERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_workers_ride_out_coordinator_and_redis_crashes() {
    let workers = worker_count();
    let undisturbed = play(workers, None).await;
    eprintln!("thousand_workers: undisturbed: {}", undisturbed.figures());
    // Without crashes, every answer is known: one acceptance per match.
    let c = &undisturbed.counts;
    assert_eq!(c.unconfirmed(), 0, "{}", undisturbed.figures());
    assert_eq!(
        c.accepted.load(Ordering::Relaxed),
        undisturbed.matches as u64,
        "{}",
        undisturbed.figures()
    );
    assert_eq!(
        c.resent_clean.load(Ordering::Relaxed),
        c.resent.load(Ordering::Relaxed),
        "{}",
        undisturbed.figures()
    );
    for appendfsync in ["everysec", "always"] {
        let disturbed = play(workers, Some(appendfsync)).await;
        eprintln!(
            "thousand_workers: appendfsync {appendfsync}: {}",
            disturbed.figures()
        );
        assert_eq!(
            disturbed.restarts, 4,
            "two coordinator and two Redis crashes"
        );
        assert_eq!(
            disturbed.standings, undisturbed.standings,
            "standings after crashes (appendfsync {appendfsync}) differ from an undisturbed run"
        );
    }
}

/// What one run saw.
struct Run {
    workers: usize,
    matches: usize,
    restarts: u32,
    /// Matches done when each crash was triggered.
    done_at_crash: Vec<u64>,
    wall: Duration,
    /// The standings' rows, as JSON.
    standings: serde_json::Value,
    counts: Arc<Counts>,
    /// Matches whose result needed more than one attempt.
    replayed: usize,
}

impl Run {
    fn figures(&self) -> String {
        let c = &self.counts;
        format!(
            "{} workers, {} matches in {:.1?}, {} restarts (at {:?} done); reports accepted {}, duplicate {} \
             ({} of them to a report a crash overlapped), stale {}; resent {} ({} with no crash \
             between, answered duplicate {}); leases lost {}; matches replayed {}",
            self.workers,
            self.matches,
            self.wall,
            self.restarts,
            self.done_at_crash,
            c.accepted.load(Ordering::Relaxed),
            c.duplicate.load(Ordering::Relaxed),
            c.unconfirmed(),
            c.stale.load(Ordering::Relaxed),
            c.resent.load(Ordering::Relaxed),
            c.resent_clean.load(Ordering::Relaxed),
            c.resent_clean_duplicate.load(Ordering::Relaxed),
            c.lost.load(Ordering::Relaxed),
            self.replayed,
        )
    }
}

/// Plays the round robin with `workers` simulated workers on a fresh Redis
/// and coordinator. With `disturb` (an `appendfsync` policy), Redis keeps an
/// append-only file under that policy, and the coordinator, Redis, the
/// coordinator and Redis again are SIGKILLed and restarted as the
/// tournament passes 20, 40, 60 and 80 % done.
async fn play(workers: usize, disturb: Option<&str>) -> Run {
    let started = Instant::now();
    let mut redis = match disturb {
        Some(appendfsync) => RedisServer::start_persistent(appendfsync),
        None => RedisServer::start(),
    };
    let mut coordinator =
        Coordinator::start_with(&redis, "127.0.0.1:0", LEASE_TTL_S, COORDINATOR_FLAGS);
    let addr = coordinator.addr;
    let url = coordinator.url();
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let entrants = entrants(workers);
    let id = create_round_robin(&mut admin, entrants).await;
    let total = entrants * (entrants - 1) / 2;

    let fleet = Fleet::start(&url, workers);
    let counts = Arc::clone(&fleet.counts);
    let mut restarts = 0;
    let mut done_at_crash = Vec::new();
    if disturb.is_some() {
        for step in 1..=4 {
            let done = total * step / 5;
            let reached = poll_until(
                &format!("{done} of {total} matches done"),
                RUN,
                async || {
                    status(&mut admin, &id)
                        .await
                        .filter(|s| s.done as usize >= done)
                },
            )
            .await;
            done_at_crash.push(reached.done);
            // Counted before the kill, so that whatever the kill touches
            // sees the count already raised.
            counts.crashes.fetch_add(1, Ordering::SeqCst);
            if step % 2 == 1 {
                coordinator.process.kill();
                // The same address, so workers find it again.
                coordinator = Coordinator::start_with(
                    &redis,
                    &addr.to_string(),
                    LEASE_TTL_S,
                    COORDINATOR_FLAGS,
                );
            } else {
                counts.redis_crashes.fetch_add(1, Ordering::SeqCst);
                redis.kill();
                redis.restart();
            }
            restarts += 1;
        }
    }
    let finished = poll_until("the tournament to finish", RUN, async || {
        status(&mut admin, &id).await.filter(|s| s.finished)
    })
    .await;
    let counts = fleet.stop().await;

    assert_eq!(finished.total as usize, total, "{finished:?}");
    assert_eq!(finished.stuck, 0, "{finished:?}");
    let all = matches(&mut admin, &id).await;
    let replayed = assert_each_recorded_once(&all, total);
    assert_accounting(&counts, &all);
    let standings = admin
        .standings(StandingsRequest {
            tournament_id: id.clone(),
        })
        .await
        .expect("Admin.Standings")
        .into_inner()
        .json;
    let standings: serde_json::Value = serde_json::from_str(&standings).expect("standings JSON");
    drop(coordinator);
    Run {
        workers,
        matches: total,
        restarts,
        done_at_crash,
        wall: started.elapsed(),
        standings: standings["rows"].clone(),
        counts,
        replayed,
    }
}

/// Uploads the entrants (tiny distinct archives: nothing ever runs them)
/// and creates the round robin; returns its id.
async fn create_round_robin(admin: &mut Admin, entrants: usize) -> String {
    let mut toml = String::from(
        "name = \"thousand workers\"\ngame = \"generals\"\nseed = 12\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n",
    );
    for i in 0..entrants {
        let hash = admin
            .upload_submission(UploadSubmissionRequest {
                name: format!("bot-{i}"),
                archive: format!("thousand workers entrant {i}").into_bytes(),
            })
            .await
            .expect("Admin.UploadSubmission")
            .into_inner()
            .hash;
        toml.push_str(&format!(
            "\n[[bots]]\nname = \"bot-{i}\"\npath = \"{hash}\"\n"
        ));
    }
    admin
        .create_tournament(CreateTournamentRequest { spec_toml: toml })
        .await
        .expect("Admin.CreateTournament")
        .into_inner()
        .tournament_id
}

/// The tournament's status, or `None` while the coordinator or Redis is
/// down (a restart in progress).
async fn status(admin: &mut Admin, id: &str) -> Option<StatusResponse> {
    admin
        .status(StatusRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .ok()
        .map(|r| r.into_inner())
}

async fn matches(admin: &mut Admin, id: &str) -> Vec<MatchSummary> {
    admin
        .matches(MatchesRequest {
            tournament_id: id.to_owned(),
        })
        .await
        .expect("Admin.Matches")
        .into_inner()
        .matches
}

/// Every one of `total` matches appears once, is done with one rank per
/// seat equal to what its id dictates, and failed only by running out of
/// lease (the workers never report failures). Returns how many needed more
/// than one attempt.
fn assert_each_recorded_once(all: &[MatchSummary], total: usize) -> usize {
    assert_eq!(all.len(), total, "matches listed");
    let ids: BTreeSet<&str> = all.iter().map(|m| m.match_id.as_str()).collect();
    assert_eq!(ids.len(), total, "match ids repeat");
    for m in all {
        assert_eq!(m.state, "done", "{m:#?}");
        assert_eq!(m.ranks, ranks_for(&m.match_id, m.seats.len()), "{m:#?}");
        for failure in &m.failures {
            assert_eq!(failure.reason, "lease expired", "{m:#?}");
        }
    }
    all.iter().filter(|m| m.attempt > 1).count()
}

/// The ranks a match's result gives, from its id alone: one seat wins.
fn ranks_for(match_id: &str, seats: usize) -> Vec<u32> {
    let winner = (fnv(match_id) % seats.max(1) as u64) as usize;
    (0..seats).map(|seat| u32::from(seat != winner)).collect()
}

/// FNV-1a of a match id, so neighbouring ids spread evenly.
fn fnv(match_id: &str) -> u64 {
    match_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What the simulated workers did, over all of them.
#[derive(Default)]
struct Counts {
    /// Answers to reports and resends, by outcome (a report on a match the
    /// store no longer knows counts as stale).
    accepted: AtomicU64,
    duplicate: AtomicU64,
    stale: AtomicU64,
    /// Leases a heartbeat said were lost (the match was abandoned).
    lost: AtomicU64,
    /// Accepted reports sent again.
    resent: AtomicU64,
    /// Of those, the ones with no crash from the first sending to the
    /// second answer, and how many of these were answered `duplicate`.
    resent_clean: AtomicU64,
    resent_clean_duplicate: AtomicU64,
    /// Crashes (coordinator or Redis) triggered so far, and Redis crashes
    /// alone: each raised just before its kill.
    crashes: AtomicU64,
    redis_crashes: AtomicU64,
    /// Per match, every answer its reports got.
    ledger: Mutex<HashMap<String, Ledger>>,
}

/// The answers the reports on one match got.
#[derive(Debug, Default, Clone)]
struct Ledger {
    /// Each acceptance: the Redis crash count read before its report was
    /// first sent, and after the acceptance came.
    acceptances: Vec<(u64, u64)>,
    /// `duplicate` answers.
    duplicates: u32,
    /// `duplicate` answers to a report that a crash overlapped: the report
    /// may itself have been accepted, its answer lost with a crashing
    /// coordinator (the worker tries again), or its script run twice by a
    /// coordinator that sends it again over a new connection to a restarted
    /// Redis (`coordinator/src/store/redis_store/retry.rs`).
    unconfirmed: u32,
}

impl Counts {
    fn record(&self, match_id: &str, answer: &Answered) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        let entry = ledger.entry(match_id.to_owned()).or_default();
        let counter = match answer.outcome {
            Outcome::Accepted => {
                entry
                    .acceptances
                    .push((answer.redis_crashes_before, answer.redis_crashes_after));
                &self.accepted
            }
            Outcome::Duplicate => {
                entry.duplicates += 1;
                if answer.retried || answer.crashes_after > answer.crashes_before {
                    entry.unconfirmed += 1;
                }
                &self.duplicate
            }
            Outcome::Stale => &self.stale,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// `duplicate` answers that may stand for an acceptance whose answer
    /// was lost.
    fn unconfirmed(&self) -> u64 {
        let ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        ledger.values().map(|l| u64::from(l.unconfirmed)).sum()
    }
}

/// Checks the fleet's answers against each other and against the
/// tournament's matches (`all`, every one recorded once):
/// - every recorded match had a report accepted: an acceptance was
///   answered, or a report that a crash overlapped was answered `duplicate`
///   (see [`Ledger::unconfirmed`]);
/// - every `duplicate` answered a report on a match accepted so;
/// - a match accepted twice had a Redis crash after the first acceptance
///   was sent (a crash can lose an acknowledged write under `everysec`);
///   without one, the second acceptance counted a result twice;
/// - every resend with no crash between its first sending and its answer
///   was a `duplicate`, and there were such resends.
fn assert_accounting(counts: &Counts, all: &[MatchSummary]) {
    let ledger = counts.ledger.lock().unwrap_or_else(|p| p.into_inner());
    let accepted = |l: &Ledger| !l.acceptances.is_empty() || l.unconfirmed > 0;
    for m in all {
        let entry = ledger.get(&m.match_id).cloned().unwrap_or_default();
        assert!(
            accepted(&entry),
            "{}: recorded, but no report on it was accepted: {entry:?}",
            m.match_id
        );
    }
    let known: BTreeSet<&str> = all.iter().map(|m| m.match_id.as_str()).collect();
    for (match_id, entry) in ledger.iter() {
        assert!(
            known.contains(match_id.as_str()),
            "a report on an unknown match {match_id}"
        );
        if entry.duplicates > 0 {
            assert!(
                accepted(entry),
                "{match_id}: `duplicate` for a match no report was accepted on: {entry:?}"
            );
        }
        if let [(first_sent, _), rest @ ..] = &entry.acceptances[..] {
            for &(_, answered) in rest {
                assert!(
                    answered > *first_sent,
                    "{match_id}: accepted twice with no Redis crash between: {entry:?}"
                );
            }
        }
    }
    let resent_clean = counts.resent_clean.load(Ordering::Relaxed);
    assert!(resent_clean > 0, "no resend went without a crash between");
    assert_eq!(
        counts.resent_clean_duplicate.load(Ordering::Relaxed),
        resent_clean,
        "a resend with no crash between was not a duplicate"
    );
}

/// A report's outcome, as the fleet tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Accepted,
    Duplicate,
    /// A stale lease, or a match the store no longer knows.
    Stale,
}

/// One report's answer, and what was going on while it was sent.
#[derive(Clone, Copy, Debug)]
struct Answered {
    outcome: Outcome,
    /// Some try before the answered one got no answer.
    retried: bool,
    /// The crash counts read before the first try and after the answer.
    crashes_before: u64,
    crashes_after: u64,
    redis_crashes_before: u64,
    redis_crashes_after: u64,
}

/// The simulated workers, running until [`Fleet::stop`].
struct Fleet {
    tasks: tokio::task::JoinSet<()>,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    /// The first thing a worker could not make sense of (a refusal no
    /// restart explains); the test fails with it.
    error: Arc<Mutex<Option<String>>>,
}

impl Fleet {
    fn start(url: &str, workers: usize) -> Fleet {
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let error = Arc::new(Mutex::new(None));
        // Lazy channels reconnect by themselves after a coordinator restart.
        let channels: Vec<Channel> = (0..workers.div_ceil(WORKERS_PER_CHANNEL))
            .map(|_| {
                Endpoint::from_shared(url.to_owned())
                    .expect("a coordinator URL")
                    .connect_timeout(Duration::from_secs(5))
                    .connect_lazy()
            })
            .collect();
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..workers {
            let worker = SimulatedWorker {
                id: format!("sim-{n}"),
                rpc: arena_proto::v1::worker_client::WorkerClient::with_interceptor(
                    channels[n % channels.len()].clone(),
                    arena::Bearer::new(Some(arena::WORKER_TOKEN)),
                ),
                stop: Arc::clone(&stop),
                counts: Arc::clone(&counts),
                error: Arc::clone(&error),
            };
            tasks.spawn(worker.run());
        }
        Fleet {
            tasks,
            stop,
            counts,
            error,
        }
    }

    async fn stop(mut self) -> Arc<Counts> {
        self.stop.store(true, Ordering::Relaxed);
        while let Some(done) = self.tasks.join_next().await {
            done.expect("a simulated worker panicked");
        }
        if let Some(error) = self.error.lock().expect("error slot").take() {
            panic!("a simulated worker failed: {error}");
        }
        self.counts
    }
}

struct SimulatedWorker {
    id: String,
    rpc: WorkerRpc,
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    error: Arc<Mutex<Option<String>>>,
}

/// Whether a call failed because the coordinator or its Redis is down or
/// restarting, so trying again later is right.
fn transient(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            | Code::Unknown
            | Code::Internal
            | Code::Cancelled
            | Code::DeadlineExceeded
    )
}

impl SimulatedWorker {
    async fn run(mut self) {
        let mut registered = false;
        let mut pause = Pause::default();
        while !self.stopped() {
            if !registered {
                match self.rpc.register(arena::register_request(&self.id)).await {
                    Ok(_) => registered = true,
                    Err(status) => {
                        self.unless_transient(&status, "Register");
                        pause.wait().await;
                        continue;
                    }
                }
            }
            let leased = self
                .rpc
                .lease(LeaseRequest {
                    worker_id: self.id.clone(),
                })
                .await;
            let leased = match leased {
                Ok(response) => response.into_inner().r#match,
                // Forgotten (a Redis that lost the registration) or not
                // heard from for too long (the coordinator was down).
                Err(status) if status.code() == Code::FailedPrecondition => {
                    registered = false;
                    continue;
                }
                Err(status) => {
                    self.unless_transient(&status, "Lease");
                    pause.wait().await;
                    continue;
                }
            };
            let Some(leased) = leased else {
                // Nothing queued now: the tournament is ending, or a lease
                // lost in a crash has yet to run out.
                pause.wait().await;
                continue;
            };
            pause = Pause::default();
            if self.heartbeat(&leased).await {
                self.report(&leased).await;
            }
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One heartbeat on the lease, as a worker playing it would send;
    /// `false` if the coordinator says the lease is lost (the match is then
    /// abandoned unreported, as a real worker does).
    async fn heartbeat(&mut self, leased: &LeasedMatch) -> bool {
        let beat = self
            .rpc
            .heartbeat(HeartbeatRequest {
                worker_id: self.id.clone(),
                lease_ids: vec![leased.lease_id.clone()],
                cached_builds: Vec::new(),
                progress: Vec::new(),
            })
            .await;
        match beat {
            Ok(response) if response.get_ref().lost_lease_ids.is_empty() => true,
            Ok(_) => {
                self.counts.lost.fetch_add(1, Ordering::Relaxed);
                false
            }
            // A heartbeat that does not arrive costs nothing yet: the lease
            // runs for its TTL, and the report says whether it held.
            Err(status) => {
                if status.code() != Code::FailedPrecondition {
                    self.unless_transient(&status, "Heartbeat");
                }
                true
            }
        }
    }

    /// Reports the match's result, retrying through restarts until the
    /// coordinator gives an outcome, and sends it again once accepted if the
    /// match is one of those resent.
    async fn report(&mut self, leased: &LeasedMatch) {
        let request = result_for(&self.id, leased);
        let Some(first) = self.send(&request).await else {
            return;
        };
        self.counts.record(&leased.match_id, &first);
        if first.outcome != Outcome::Accepted || !fnv(&leased.match_id).is_multiple_of(RESEND_EVERY)
        {
            return;
        }
        let Some(again) = self.send(&request).await else {
            return;
        };
        self.counts.record(&leased.match_id, &again);
        self.counts.resent.fetch_add(1, Ordering::Relaxed);
        if first.crashes_before == again.crashes_after {
            self.counts.resent_clean.fetch_add(1, Ordering::Relaxed);
            if again.outcome == Outcome::Duplicate {
                self.counts
                    .resent_clean_duplicate
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Sends `request` until the coordinator answers it. The fleet's stop
    /// does not cut this short: every report sent is answered and counted
    /// (the coordinator is up when the fleet stops). `None` if a refusal no
    /// restart explains was recorded, or no answer came in
    /// [`REPORT_PATIENCE`].
    async fn send(&mut self, request: &ReportResultRequest) -> Option<Answered> {
        let crashes = || self.counts.crashes.load(Ordering::SeqCst);
        let redis_crashes = || self.counts.redis_crashes.load(Ordering::SeqCst);
        let (crashes_before, redis_crashes_before) = (crashes(), redis_crashes());
        let give_up = Instant::now() + REPORT_PATIENCE;
        let mut pause = Pause::default();
        let mut retried = false;
        let outcome = loop {
            match self.rpc.report_result(request.clone()).await {
                Ok(response) => {
                    let outcome = response.into_inner().outcome;
                    break if outcome == ReportOutcome::Accepted as i32 {
                        Outcome::Accepted
                    } else if outcome == ReportOutcome::Duplicate as i32 {
                        Outcome::Duplicate
                    } else {
                        Outcome::Stale
                    };
                }
                // A match Redis lost with a crash (a schedule the recovery
                // step has yet to write again): nothing to report on.
                Err(status) if status.code() == Code::NotFound => break Outcome::Stale,
                Err(status) => {
                    if !self.unless_transient(&status, "ReportResult") {
                        return None;
                    }
                    if Instant::now() >= give_up {
                        self.fail(format!("ReportResult unanswered for {REPORT_PATIENCE:?}"));
                        return None;
                    }
                    retried = true;
                    pause.wait().await;
                }
            }
        };
        Some(Answered {
            outcome,
            retried,
            crashes_before,
            crashes_after: crashes(),
            redis_crashes_before,
            redis_crashes_after: redis_crashes(),
        })
    }

    /// Records a refusal no restart explains, and stops the fleet; whether
    /// `status` was transient (worth trying again).
    fn unless_transient(&self, status: &tonic::Status, call: &str) -> bool {
        if transient(status) {
            return true;
        }
        self.fail(format!("{call}: {status:?}"));
        false
    }

    /// Records the first failure of the fleet, and stops it.
    fn fail(&self, error: String) {
        let mut slot = self.error.lock().expect("error slot");
        slot.get_or_insert_with(|| format!("{}: {error}", self.id));
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The synthetic result of a leased match: the ranks [`ranks_for`] gives,
/// with the placement points of a two-seat game.
fn result_for(worker: &str, leased: &LeasedMatch) -> ReportResultRequest {
    let ranks = ranks_for(&leased.match_id, leased.seats.len());
    ReportResultRequest {
        worker_id: worker.to_owned(),
        lease_id: leased.lease_id.clone(),
        match_id: leased.match_id.clone(),
        seats: leased
            .seats
            .iter()
            .zip(ranks)
            .map(|(seat, rank)| SeatResult {
                submission: seat.submission.clone(),
                baseline: seat.baseline.clone(),
                rank,
                score: if rank == 0 { 1.0 } else { 0.0 },
                moves: 1,
                ..Default::default()
            })
            .collect(),
        reason: "simulated".into(),
        turns: 1,
        replay: Vec::new(),
        duration_s: 0.0,
        seat_logs: Vec::new(),
    }
}

/// A pause between retries that doubles from 10 ms up to one second, so a
/// thousand idle workers do not flood a coordinator that is coming back.
struct Pause(Duration);

impl Default for Pause {
    fn default() -> Pause {
        Pause(Duration::from_millis(10))
    }
}

impl Pause {
    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Duration::from_secs(1));
    }
}
