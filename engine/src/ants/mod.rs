//! Temporary stand-in for the Ants engine module (replaced at merge).

pub mod adapters;
