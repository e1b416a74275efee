//! What the worker and the model host say to each other over the host's
//! stdin and stdout: the shared host framing's model messages (see the
//! `arena-host-wire` crate), which the worker reads from the same code.

pub use arena_host_wire::model::*;
