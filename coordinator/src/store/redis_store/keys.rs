//! Every Redis key the store touches, and nothing else names a key.
//!
//! Two kinds: fixed keys (constants), which hold one field per match,
//! lease or worker, and per-id keys (one function each), whose prefix is
//! used by no other key and whose id is the whole rest of the name, so no
//! id, whatever characters it contains, can make two keys collide.
//!
//! Per-match data lives in fixed hashes keyed by match id rather than in one
//! hash per match. That lets every script that has to find a match from a
//! queue entry or a lease id (lease, extend, expire, cancel) declare all of
//! its keys in `KEYS`, as Redis asks of scripts.
//!
//! `docs/redis-keys.md` documents each pattern in [`PATTERNS`]; a test below
//! keeps the two in step.

/// Prepended to every key, so the store can share a database.
pub const PREFIX: &str = "arena:";

/// SET of tournament ids.
pub const TOURNAMENTS: &str = "arena:tournaments";
/// SET of cancelled tournament ids.
pub const CANCELLED: &str = "arena:cancelled";
/// HASH tournament id → the environment id its matches must be played in
/// (absent: any worker).
pub const TOURNAMENT_ENV: &str = "arena:tournament_env";
/// HASH tournament id → the wasm runtime its matches with a WebAssembly
/// seat must be played with (`""`: any runtime); only tournaments with a
/// WebAssembly entrant have a field.
pub const TOURNAMENT_WASM: &str = "arena:tournament_wasm";
/// SET of the submissions that are WebAssembly bots (see
/// [`crate::wasm`]), as tournaments with a WebAssembly entrant found them.
pub const WASM_SUBMISSIONS: &str = "arena:wasm_submissions";
/// HASH tournament id → the model runtime its matches with a model-graph
/// seat must be played with (`""`: any runtime); only tournaments with a
/// model-graph entrant have a field.
pub const TOURNAMENT_MODEL: &str = "arena:tournament_model";
/// SET of the submissions that are model-graph bots (see
/// [`crate::model_graph`]), as tournaments with a model-graph entrant found
/// them.
pub const MODEL_SUBMISSIONS: &str = "arena:model_submissions";
/// LIST of queued match ids; the head is leased next.
pub const QUEUE: &str = "arena:queue";
/// ZSET of current lease ids scored by expiry (ms).
pub const LEASES: &str = "arena:leases";
/// HASH current lease id → match id.
pub const LEASE_MATCH: &str = "arena:lease_match";
/// SET of quarantined worker ids: they get no new leases.
pub const QUARANTINED: &str = "arena:quarantined";
/// HASH match id → tournament id.
pub const MATCH_TOURNAMENT: &str = "arena:match_tournament";
/// HASH match id → round.
pub const MATCH_ROUND: &str = "arena:match_round";
/// HASH match id → pairing JSON.
pub const MATCH_PAIRING: &str = "arena:match_pairing";
/// HASH match id → JSON array of the seats' entrant ids (read by the lease
/// script, which has no use for the rest of the pairing).
pub const MATCH_SEATS: &str = "arena:match_seats";
/// HASH match id → `queued` | `leased` | `done` | `dropped` | `stuck`.
pub const MATCH_STATE: &str = "arena:match_state";
/// HASH match id → attempt number of the current or next lease.
pub const MATCH_ATTEMPT: &str = "arena:match_attempt";
/// HASH match id → current lease id (only while leased).
pub const MATCH_LEASE: &str = "arena:match_lease";
/// HASH match id → worker holding the current lease (only while leased).
pub const MATCH_WORKER: &str = "arena:match_worker";
/// HASH match id → JSON array of every attempt that ended without a
/// result (`AttemptFailure`s, oldest first).
pub const MATCH_FAILURES: &str = "arena:match_failures";
/// HASH match id → attempts failed in a row since it was scheduled or last
/// requeued by an organiser.
pub const MATCH_STRIKES: &str = "arena:match_strikes";
/// HASH match id → accepted `MatchRecord` JSON.
pub const RESULTS: &str = "arena:results";
/// HASH worker id → `WorkerInfo` JSON (its `cached` field left empty).
pub const WORKERS: &str = "arena:workers";
/// HASH worker id → JSON array of the entrants it has built.
pub const WORKER_CACHED: &str = "arena:worker_cached";
/// ZSET worker id scored by when it was last heard from (ms).
pub const WORKER_SEEN: &str = "arena:worker_seen";
/// HASH sha256 of an entrant token → the submission whose logs it unlocks.
pub const ENTRANT_TOKENS: &str = "arena:entrant_tokens";

/// Prefix of [`spec`].
const SPEC: &str = "arena:spec:";
/// Prefix of [`rounds`].
const ROUNDS: &str = "arena:rounds:";
/// Prefix of [`matches`].
const MATCHES: &str = "arena:matches:";
/// Prefix of [`byes`].
const BYES: &str = "arena:byes:";
/// Prefix of [`replay`].
const REPLAY: &str = "arena:replay:";
/// Prefix of [`submission`].
const SUBMISSION: &str = "arena:submission:";
/// Prefix of [`upload`].
const UPLOAD: &str = "arena:upload:";
/// Prefix of [`lease_ends`].
const LEASE_ENDS: &str = "arena:lease_ends:";

/// STRING: a tournament's `TournamentSpec` JSON as created (its
/// `cancelled` flag is [`CANCELLED`]'s business).
pub fn spec(tournament: &str) -> String {
    format!("{SPEC}{tournament}")
}

/// STRING: how many rounds of a tournament are scheduled.
pub fn rounds(tournament: &str) -> String {
    format!("{ROUNDS}{tournament}")
}

/// LIST: a tournament's match ids in schedule order.
pub fn matches(tournament: &str) -> String {
    format!("{MATCHES}{tournament}")
}

/// LIST: a tournament's byes as JSON `[round, entrant]`, in schedule order.
pub fn byes(tournament: &str) -> String {
    format!("{BYES}{tournament}")
}

/// STRING: the replay of a match's accepted result.
pub fn replay(match_id: &str) -> String {
    format!("{REPLAY}{match_id}")
}

/// LIST: a submission archive in chunks of at most [`super::SUBMISSION_CHUNK`]
/// bytes, named by its sha256 (a STRING holding it whole in stores written
/// before submissions were chunked).
pub fn submission(hash: &str) -> String {
    format!("{SUBMISSION}{hash}")
}

/// LIST: a submission being stored, chunk by chunk, before it is renamed to
/// its [`submission`] key; `id` is the hash and a random suffix. It expires
/// by itself if the coordinator dies midway.
pub fn upload(id: &str) -> String {
    format!("{UPLOAD}{id}")
}

/// LIST: how a worker's most recent leases ended, newest first (`1`:
/// without a result, `0`: with one), trimmed to the quarantine window.
pub fn lease_ends(worker: &str) -> String {
    format!("{LEASE_ENDS}{worker}")
}

/// Every key pattern, as `docs/redis-keys.md` writes it.
pub const PATTERNS: &[&str] = &[
    TOURNAMENTS,
    CANCELLED,
    TOURNAMENT_ENV,
    TOURNAMENT_WASM,
    WASM_SUBMISSIONS,
    TOURNAMENT_MODEL,
    MODEL_SUBMISSIONS,
    QUEUE,
    LEASES,
    LEASE_MATCH,
    QUARANTINED,
    MATCH_TOURNAMENT,
    MATCH_ROUND,
    MATCH_PAIRING,
    MATCH_SEATS,
    MATCH_STATE,
    MATCH_ATTEMPT,
    MATCH_LEASE,
    MATCH_WORKER,
    MATCH_FAILURES,
    MATCH_STRIKES,
    RESULTS,
    WORKERS,
    WORKER_CACHED,
    WORKER_SEEN,
    ENTRANT_TOKENS,
    "arena:spec:{tournament}",
    "arena:rounds:{tournament}",
    "arena:matches:{tournament}",
    "arena:byes:{tournament}",
    "arena:replay:{match}",
    "arena:submission:{sha256}",
    "arena:upload:{upload}",
    "arena:lease_ends:{worker}",
];

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = include_str!("../../../../docs/redis-keys.md");

    /// The per-id functions, each with the placeholder its pattern uses.
    fn per_id() -> Vec<(String, &'static str)> {
        vec![
            (spec("{tournament}"), SPEC),
            (rounds("{tournament}"), ROUNDS),
            (matches("{tournament}"), MATCHES),
            (byes("{tournament}"), BYES),
            (replay("{match}"), REPLAY),
            (submission("{sha256}"), SUBMISSION),
            (upload("{upload}"), UPLOAD),
            (lease_ends("{worker}"), LEASE_ENDS),
        ]
    }

    #[test]
    fn every_pattern_is_documented() {
        for pattern in PATTERNS {
            assert!(
                DOC.contains(&format!("`{pattern}`")),
                "{pattern} is missing from docs/redis-keys.md"
            );
        }
    }

    #[test]
    fn every_documented_key_is_a_pattern() {
        // Any `arena:...` in backticks in the doc must be a real pattern, so
        // the doc can't keep describing a key the code dropped.
        for quoted in DOC.split('`').skip(1).step_by(2) {
            if quoted.starts_with(PREFIX) && quoted != PREFIX {
                assert!(PATTERNS.contains(&quoted), "doc names unknown key {quoted}");
            }
        }
    }

    #[test]
    fn per_id_functions_match_their_patterns() {
        for (key, _) in per_id() {
            assert!(PATTERNS.contains(&key.as_str()), "{key} not in PATTERNS");
        }
    }

    #[test]
    fn keys_cannot_collide() {
        // No fixed key starts with a per-id prefix, and no prefix starts
        // with another, so a key name determines which pattern made it.
        let prefixes: Vec<&str> = per_id().iter().map(|(_, p)| *p).collect();
        for key in PATTERNS.iter().filter(|p| !p.contains('{')) {
            assert!(key.starts_with(PREFIX));
            assert!(!prefixes.iter().any(|p| key.starts_with(p)), "{key}");
        }
        for a in &prefixes {
            for b in &prefixes {
                assert!(a == b || !a.starts_with(b), "{a} starts with {b}");
            }
        }
    }
}
