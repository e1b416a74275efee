//! Code shared by the integration tests. A subdirectory module, so Cargo
//! does not build it as a test of its own; each test declares `mod support;`.

pub mod fixtures;
