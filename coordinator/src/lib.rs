//! Tournaments: who plays whom, on which worker, and how it all adds up.
//!
//! Layout: [`model`] holds the domain types every other module shares.

pub mod model;
