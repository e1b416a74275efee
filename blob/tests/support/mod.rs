//! Shared pieces of the integration tests.

pub mod moto;
