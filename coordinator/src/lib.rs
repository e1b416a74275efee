//! Tournaments: who plays whom, on which worker, and how it all adds up.
//!
//! # Layout
//!
//! * [`domain`]: the domain types every other module shares (formats,
//!   pairings, rounds, match records, seat results, baseline ids).
//! * [`tournament_file`]: the TOML file organisers write, resolved against
//!   the engine's game registry (`arena_engine::registry`), which is where
//!   every default (seats, rules, limits, baselines) comes from.
//! * [`schedule`]: pairs entrants (round-robin by the circle method, Swiss
//!   by maximum-weight matching).
//! * [`store`]: keeps every piece of tournament state, in Redis or in
//!   memory, behind one interface.
//! * [`standings`]: turns match records into points, tie-breaks and
//!   ratings; [`teams`] translates between the seats of a team game and the
//!   sides the schedulers and standings work in.
//! * [`report`]: checks a reported result against its match before
//!   anything records it.
//! * [`attachments`]: replays and bot logs, kept in the blob store.
//! * [`service`]: the coordinator's logic over those; [`grpc`] exposes it
//!   to workers and admins, and [`server`] serves it.
//! * [`metrics`]: counts what happens, for Prometheus.
//! * [`wasm`] and [`model_graph`]: tell WebAssembly and model-graph bots
//!   from process bots by their archives (`archive_root` lists the entries
//!   at an archive's root).

mod archive_root;
pub mod attachments;
pub mod domain;
pub mod grpc;
pub mod metrics;
pub mod model_graph;
pub mod report;
pub mod schedule;
pub mod server;
pub mod service;
pub mod standings;
pub mod store;
pub mod teams;
pub mod tournament_file;
pub mod wasm;

use sha2::{Digest, Sha256};

/// A submission's id: the sha256 of its archive, in hex (the same value the
/// worker checks what it fetched against).
pub fn submission_id(archive: &[u8]) -> String {
    Sha256::digest(archive)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
