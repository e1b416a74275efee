//! Helpers shared by the coordinator's integration tests.

#![allow(dead_code)] // each test binary uses its own part of it

pub mod redis;
