//! grid-royale: every rule and pinned point on hand-made positions, the
//! wire protocol, the generated maps' symmetry, and replays.

mod mapgen;
mod protocol;
mod replay;
mod rules;
mod support;
