//! The Lua scripts, each compiled into the binary and hashed once per
//! process. `Script::invoke_async` sends `EVALSHA` and falls back to loading
//! the source when the server answers `NOSCRIPT` (after a Redis restart or
//! `SCRIPT FLUSH`), so nothing has to be loaded up front.
//!
//! Every script that changes state checks all of its conditions before its
//! first write: Redis does not roll a script back when it errors halfway, so
//! "validate, then mutate" is what makes each one all-or-nothing.
//!
//! `lua/end_attempt.lua` is not a script of its own: it defines the one
//! function that ends an attempt, and is prepended to the two scripts that
//! end attempts (`fail`, `expire`), so both apply the same rules. Likewise
//! `lua/count_lease_end.lua` defines the one function that counts a
//! worker's lease endings for the quarantine, prepended to `lease_end` and
//! to the two scripts that count the lease they end (`complete`, `fail`).
//! `lua/take.lua`, the function that picks and leases a queued match, is
//! prepended to `lease_worker` alone: it keeps the choice of a match apart
//! from the checks on the worker.

use std::sync::LazyLock;

use redis::Script;

/// One handle per script; see each `.lua` file's header for its
/// KEYS/ARGV contract.
pub(super) struct Scripts {
    /// `lua/create_tournament.lua`.
    pub create_tournament: Script,
    /// `lua/schedule_round.lua`.
    pub schedule_round: Script,
    /// `lua/cancel.lua`.
    pub cancel: Script,
    /// `lua/lease_worker.lua`.
    pub lease_worker: Script,
    /// `lua/expire.lua`.
    pub expire: Script,
    /// `lua/complete.lua`.
    pub complete: Script,
    /// `lua/fail.lua`.
    pub fail: Script,
    /// `lua/heartbeat_leases.lua`.
    pub heartbeat_leases: Script,
    /// `lua/requeue.lua`.
    pub requeue: Script,
    /// `lua/rejudge.lua`.
    pub rejudge: Script,
    /// `lua/lease_end.lua`.
    pub lease_end: Script,
    /// `lua/push_chunk.lua`.
    pub push_chunk: Script,
}

/// The scripts, hashed on first use.
pub(super) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    push_chunk: Script::new(include_str!("lua/push_chunk.lua")),
    create_tournament: Script::new(include_str!("lua/create_tournament.lua")),
    schedule_round: Script::new(include_str!("lua/schedule_round.lua")),
    cancel: Script::new(include_str!("lua/cancel.lua")),
    lease_worker: Script::new(concat!(
        include_str!("lua/take.lua"),
        include_str!("lua/lease_worker.lua")
    )),
    expire: Script::new(concat!(
        include_str!("lua/end_attempt.lua"),
        include_str!("lua/expire.lua")
    )),
    complete: Script::new(concat!(
        include_str!("lua/count_lease_end.lua"),
        include_str!("lua/complete.lua")
    )),
    fail: Script::new(concat!(
        include_str!("lua/end_attempt.lua"),
        include_str!("lua/count_lease_end.lua"),
        include_str!("lua/fail.lua")
    )),
    heartbeat_leases: Script::new(include_str!("lua/heartbeat_leases.lua")),
    requeue: Script::new(include_str!("lua/requeue.lua")),
    rejudge: Script::new(include_str!("lua/rejudge.lua")),
    lease_end: Script::new(concat!(
        include_str!("lua/count_lease_end.lua"),
        include_str!("lua/lease_end.lua")
    )),
});
