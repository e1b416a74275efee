//! Ants: the seed's scripted replays, every rule on hand-made positions,
//! the map format and generator, the wire protocol, sessions and replays,
//! and random-order invariants.

mod maps;
mod properties;
mod protocol;
mod rules;
mod scripted;
mod session;
mod support;
