//! What the worker and the wasm host say to each other over the host's
//! stdin and stdout: the shared host framing's wasm messages (see the
//! `arena-host-wire` crate), which the worker reads from the same code.

pub use arena_host_wire::wasm::*;
