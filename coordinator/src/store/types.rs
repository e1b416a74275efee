//! The values that go into and come out of a store. Both backends speak
//! exactly these types, so the conformance suite can compare them directly.

use serde::{Deserialize, Serialize};

use arena_engine::Rules;
use arena_engine::registry::Limits;

use crate::domain::{EntrantId, Format, Pairing};

/// One entrant as the tournament was created with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    /// The submission's content hash; also the entrant's identity in pairings.
    pub id: EntrantId,
    /// Display name, only for people reading standings.
    pub name: String,
}

/// Everything needed to recreate a tournament after a restart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentSpec {
    /// Unique id chosen by whoever creates the tournament.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The game every match is played in (an engine game id).
    pub game: String,
    /// Round robin or Swiss, with that format's parameters.
    pub format: Format,
    /// Seats per match.
    pub seats: usize,
    /// Seed the schedulers derive every map seed from.
    pub base_seed: u64,
    /// The field, in registration order.
    pub entrants: Vec<Entrant>,
    /// Whether the tournament has been cancelled. On read this reflects
    /// [`Store::cancel`](super::Store::cancel); passing `true` to
    /// `create_tournament` creates it already cancelled.
    pub cancelled: bool,
    /// The game's options, resolved (every option present), sent with every
    /// lease.
    #[serde(default)]
    pub rules: Rules,
    /// The runner's limits for every match of the tournament, resolved from
    /// the game's defaults and the tournament's overrides.
    pub limits: Limits,
    /// The environment id its matches must be played in; `None`: any worker.
    #[serde(default)]
    pub environment: Option<String>,
    /// The side each seat plays for, resolved from the game on creation
    /// (see [`crate::teams`]); empty when every seat plays for itself, and in
    /// specs stored before team games existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<u32>,
    /// The entrants that are WebAssembly bots (see [`crate::wasm`]); empty
    /// when none is, and always in a game without fuel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wasm_entrants: Vec<EntrantId>,
    /// The wasm runtime (a fingerprint such as
    /// `wasmtime-48.0.8-1a2b3c4d5e6f7a8b`) a match with a seat of
    /// [`Self::wasm_entrants`] must be played with: only workers that
    /// registered this runtime lease such a match. `None` with wasm
    /// entrants: any worker that runs wasm at all. Always `None` without
    /// wasm entrants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wasm_runtime: Option<String>,
    /// The entrants that are model-graph bots (see [`crate::model_graph`]);
    /// empty when none is, and always in a game without model limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_entrants: Vec<EntrantId>,
    /// The model runtime (such as `tract-onnx-0.23.9`) a match with a seat
    /// of [`Self::model_entrants`] must be played with: only workers that
    /// registered this runtime lease such a match. `None` with model
    /// entrants: any worker that plays models at all. Always `None` without
    /// model entrants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_runtime: Option<String>,
    /// Who may watch a running match's board on the web pages.
    #[serde(default)]
    pub live_board: LiveBoard,
}

/// Who may watch a running match's board (its turn count is public):
/// in a game with fog, a spectator who sees the whole board could tell a
/// bot's author what the bot cannot see, so by default only organisers do
/// and everyone else sees the board once the match has finished.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LiveBoard {
    /// Organisers only.
    #[default]
    Organisers,
    /// Everyone who may read the tournament's pages.
    Everyone,
}

impl TournamentSpec {
    /// Whether `worker` (as it registered: its wasm and model runtimes,
    /// empty for none) may play a match seating `seats` as far as runtimes
    /// go: always, unless a seat is a WebAssembly or a model-graph bot; then
    /// only a worker with the tournament's runtime of that kind (any
    /// runtime of the kind, if the tournament names none). A match seating
    /// both kinds needs both.
    pub fn may_play(&self, worker: &WorkerInfo, seats: &[EntrantId]) -> bool {
        runtime_allows(
            &self.wasm_entrants,
            self.wasm_runtime.as_deref(),
            &worker.wasm_runtime,
            seats,
        ) && runtime_allows(
            &self.model_entrants,
            self.model_runtime.as_deref(),
            &worker.model_runtime,
            seats,
        )
    }
}

/// Whether a worker with `worker_runtime` (empty: none) may play `seats`
/// as far as one kind of runtime goes: `entrants` are the tournament's bots
/// of that kind and `needed` the runtime they must be played with.
fn runtime_allows(
    entrants: &[EntrantId],
    needed: Option<&str>,
    worker_runtime: &str,
    seats: &[EntrantId],
) -> bool {
    if entrants.is_empty() || !seats.iter().any(|s| entrants.contains(s)) {
        return true;
    }
    !worker_runtime.is_empty() && needed.is_none_or(|needed| needed == worker_runtime)
}

/// A match handed to [`Store::schedule_round`](super::Store::schedule_round).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledMatch {
    /// Globally unique: results and leases refer to a match by this id alone,
    /// so two tournaments must never reuse one.
    pub match_id: String,
    /// Who plays, in seat order, on which map.
    pub pairing: Pairing,
}

/// A worker's claim on one queued match, valid until `expires_at_ms` unless
/// extended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// Unique per lease and unguessable (chosen by the coordinator, 128
    /// random bits); results, heartbeats and failures must quote it, and only
    /// the worker it was granted to may.
    pub lease_id: String,
    /// The worker it was granted to.
    pub worker: String,
    /// The match to play.
    pub match_id: String,
    /// The tournament the match belongs to.
    pub tournament: String,
    /// The round the match was scheduled in.
    pub round: u32,
    /// Who plays, in seat order, on which map.
    pub pairing: Pairing,
    /// 1 for the first lease of a match; each expiry or failure adds one.
    pub attempt: u32,
    /// The caller's clock (the `now_ms` it passed) plus the ttl.
    pub expires_at_ms: u64,
}

/// What happened to a reported result. Only `Accepted` changed anything;
/// the others are answers, not errors, because a worker retrying a report
/// or reporting after its lease expired is ordinary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompleteOutcome {
    /// The first valid result: stored, the match is done, the lease is gone.
    Accepted,
    /// The match already has a result; this one was dropped.
    Duplicate,
    /// The match has no result yet, but this lease is no longer its current
    /// one (it expired or failed, and the match was requeued or reassigned).
    StaleLease,
    /// No such match.
    Unknown,
}

/// What [`Store::report`](super::Store::report) came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reported {
    /// The record seats the match's entrants, in order, and this is what
    /// became of it.
    Checked(CompleteOutcome),
    /// The record seats other entrants than the match does, or another
    /// number of them: nothing was written, whatever the match's state.
    WrongSeats,
}

/// How the ends of a worker's leases count towards its quarantine: the last
/// `window` endings are kept, and a failure that leaves `failures` or more
/// failed ones among them quarantines the worker. A store is given `None`
/// instead of a rule that can never quarantine anyone (`failures == 0`),
/// and then keeps no count at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuarantineRule {
    /// How many of the worker's most recent lease endings are kept.
    pub window: u32,
    /// How many failed ones among them quarantine the worker (at least 1).
    pub failures: u32,
}

/// What [`Store::fail_counted`](super::Store::fail_counted) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailedLease {
    /// What became of the match.
    pub end: AttemptEnd,
    /// Whether this failure brought the worker's recent failures to the
    /// rule's count, so the worker is now quarantined (it may have been
    /// already: each such failure says so, as each one is counted).
    pub quarantined: bool,
}

/// Counts over one tournament's matches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Matches scheduled so far, in all rounds.
    pub total: usize,
    /// Waiting for a worker.
    pub queued: usize,
    /// Held by a worker.
    pub leased: usize,
    /// With an accepted result.
    pub done: usize,
    /// Dropped unplayed because the tournament was cancelled.
    pub dropped: usize,
    /// Set aside after too many failed attempts: neither queued nor a
    /// result, until an organiser requeues them.
    pub stuck: usize,
    /// Rounds scheduled so far; also the number of the next round to schedule.
    pub rounds_scheduled: u32,
    /// Whether the tournament has been cancelled.
    pub cancelled: bool,
}

/// Where one match stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchState {
    /// Waiting in the queue.
    Queued,
    /// Held by `worker` under its `attempt`-th lease.
    Leased {
        /// The worker holding the current lease.
        worker: String,
        /// Which lease of this match it is (1-based).
        attempt: u32,
    },
    /// Finished with an accepted result.
    Done {
        /// Why the game ended, from the record.
        reason: String,
        /// Each seat's rank, in seat order.
        ranks: Vec<u32>,
    },
    /// Never played: the tournament was cancelled while it was queued, or its
    /// lease ran out after the cancel.
    Dropped,
    /// Its attempts failed the attempt cap's number of times in
    /// a row: out of the queue, no result, until an organiser requeues it.
    Stuck,
}

/// One match of a tournament, for operators and the status page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchInfo {
    /// The match's id.
    pub match_id: String,
    /// The round it was scheduled in.
    pub round: u32,
    /// Who plays, in seat order, on which map.
    pub pairing: Pairing,
    /// Where it stands.
    pub state: MatchState,
    /// The current or next lease's attempt number (1-based).
    pub attempt: u32,
    /// Why the previous attempt ended without a result (a failure reason
    /// from [`Store::fail_counted`](super::Store::fail_counted), or "lease
    /// expired").
    pub last_error: Option<String>,
    /// Every attempt that ended without a result, oldest first.
    pub failures: Vec<AttemptFailure>,
}

/// One attempt of a match that ended without a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptFailure {
    /// Which attempt (1-based).
    pub attempt: u32,
    /// The worker that held its lease.
    pub worker: String,
    /// The worker's failure reason, or [`LEASE_EXPIRED`].
    pub reason: String,
}

/// What ending an attempt without a result did to its match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttemptEnd {
    /// Back at the front of the queue for its next attempt.
    Requeued,
    /// That was its last allowed attempt: set aside as [`MatchState::Stuck`].
    Stuck,
    /// Its tournament was cancelled: dropped unplayed.
    Dropped,
}

/// A lease that ran out, as [`Store::expire`](super::Store::expire) ended it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiredLease {
    /// The match it was for.
    pub match_id: String,
    /// The worker that held it.
    pub worker: String,
    /// What became of the match.
    pub end: AttemptEnd,
}

/// How many attempts of a match may fail in a row (infrastructure failures
/// and expired leases) before it is set aside as stuck.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// A worker as it registered, with the entrants it has built so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// Unique worker id; every lease is bound to the worker it was granted to.
    pub id: String,
    /// Cores it offers to matches.
    pub cores: u32,
    /// Memory it offers to matches, in MiB.
    pub memory_mb: u64,
    /// The build environment it runs submissions in.
    pub environment_id: String,
    /// Entrants it has already built, as of its last heartbeat.
    pub cached: Vec<EntrantId>,
    /// The wasm runtime it plays WebAssembly seats with (a fingerprint);
    /// empty when it runs no wasm, and for workers registered before
    /// workers said.
    #[serde(default)]
    pub wasm_runtime: String,
    /// The model runtime it plays model-graph seats with (such as
    /// `tract-onnx-0.23.9`); empty when it plays none (`arena worker
    /// --no-models`), and for workers registered before workers said.
    #[serde(default)]
    pub model_runtime: String,
    /// Matches it plays at once; 0 for workers registered before workers
    /// said.
    #[serde(default)]
    pub slots: u32,
}

/// The reason recorded on a match whose lease ran out.
pub const LEASE_EXPIRED: &str = "lease expired";

/// How many queued matches, from the front, `lease` looks through for one
/// whose entrants the worker already has built. Bounded so that a worker with
/// a warm cache cannot starve the oldest match for long.
pub const LEASE_PREFERENCE_WINDOW: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(wasm: &str, model: &str) -> WorkerInfo {
        WorkerInfo {
            id: "w".into(),
            cores: 1,
            memory_mb: 1,
            environment_id: String::new(),
            cached: Vec::new(),
            wasm_runtime: wasm.into(),
            model_runtime: model.into(),
            slots: 0,
        }
    }

    #[test]
    fn a_seat_of_each_kind_needs_its_runtime_and_both_need_both() {
        let spec = TournamentSpec {
            id: "t".into(),
            name: "t".into(),
            game: "grid-royale".into(),
            format: Format::Swiss { rounds: 1 },
            seats: 2,
            base_seed: 0,
            entrants: Vec::new(),
            cancelled: false,
            rules: Rules::default(),
            limits: arena_engine::registry::find("grid-royale").unwrap().limits,
            environment: None,
            teams: Vec::new(),
            wasm_entrants: vec!["w".into()],
            wasm_runtime: Some("wasm-1".into()),
            model_entrants: vec!["m".into()],
            model_runtime: Some("model-1".into()),
            live_board: LiveBoard::default(),
        };
        let seats = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (plain, wasm, model, mixed) = (
            seats(&["p", "q"]),
            seats(&["w", "p"]),
            seats(&["p", "m"]),
            seats(&["m", "w"]),
        );
        let cases = [
            (worker("", ""), [true, false, false, false]),
            (worker("wasm-1", ""), [true, true, false, false]),
            (worker("", "model-1"), [true, false, true, false]),
            (worker("wasm-1", "model-2"), [true, true, false, false]),
            (worker("wasm-2", "model-1"), [true, false, true, false]),
            (worker("wasm-1", "model-1"), [true, true, true, true]),
        ];
        for (w, expected) in cases {
            let got = [&plain, &wasm, &model, &mixed].map(|s| spec.may_play(&w, s));
            assert_eq!(got, expected, "{w:?}");
        }
        // No runtime named: any of the kind.
        let any = TournamentSpec {
            model_runtime: None,
            ..spec
        };
        assert!(any.may_play(&worker("", "model-9"), &model));
        assert!(!any.may_play(&worker("wasm-1", ""), &model));
    }
}
