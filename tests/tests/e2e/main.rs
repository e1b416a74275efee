//! End-to-end tests: `redis-server`, `arena coordinator` and `arena worker`
//! as separate processes over loopback, driven through `arena tournament`
//! and the Admin gRPC service. Every test starts its own Redis (on a unix
//! socket in a temp dir), coordinator and workers, and its guards stop them
//! and remove their files and cgroups when it ends, also when it fails.
//!
//! Nothing waits a fixed time: processes are ready when they print their
//! readiness line, and everything else is a condition polled against a
//! deadline. Matches that must be caught in flight are held at a gate the
//! test controls (see `support/bots.rs`).

mod support;

mod admin_commands;
mod ants_tournaments;
mod auth;
mod classic_tournaments;
mod coordinator_restart;
mod cut_off_worker;
mod drain;
mod ffa_tournament;
mod generals_models;
mod grid_royale_tournaments;
mod lease_ttl;
mod quick_start;
mod redis_restart;
mod round_robin;
mod run_resume;
mod run_web;
mod starter_rust;
mod upload;
mod viewer_games;
mod wasm_tournaments;
mod web_organiser;
mod web_pages;
mod web_viewer;
mod worker_killed;
