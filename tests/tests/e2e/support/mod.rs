//! The harness: processes, Redis, the `arena` binary, bots, a proxy.

pub mod arena;
pub mod bots;
pub mod browser;
pub mod cgroups;
pub mod process;
pub mod proxy;
pub mod redis;
pub mod static_site;
pub mod tournament;
pub mod wait;
