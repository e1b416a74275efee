//! The pinned engine configuration.
//!
//! Fuel is what makes a turn's budget the same on every worker, and the
//! fuel an operator costs is a property of one wasmtime version with one
//! configuration. So every worker builds its engine here and nowhere else,
//! and advertises [`fingerprint`]: a match with WebAssembly seats only goes
//! to a worker with the same one.

use std::hash::{Hash, Hasher};

use sha2::{Digest, Sha256};

use wasmtime::{Config, Engine, OperatorCost, OptLevel};

/// The wasmtime this host is built with (Cargo.toml pins it with `=`).
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The most a guest's stack may use; deeper recursion traps.
pub const MAX_WASM_STACK: usize = 1 << 20;

/// What one guest may hold, besides its fuel and wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostLimits {
    /// Linear memory, in bytes, over all of the guest's memories. The seat's
    /// cgroup caps the whole host process (2 GiB); this leaves the host and
    /// the compiled code room under it.
    pub memory_bytes: usize,
    /// Elements over all of the guest's tables.
    pub table_elements: usize,
    /// The longest reply line accepted, in bytes, without its newline.
    pub line_cap: usize,
}

impl Default for HostLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 1 << 30,
            table_elements: 1 << 20,
            line_cap: 1 << 20,
        }
    }
}

/// The configuration, before the engine is made from it.
fn config() -> Config {
    let mut config = Config::new();
    config
        // Metering: every operator's cost from wasmtime's default table,
        // named explicitly so the table is part of the fingerprint.
        .consume_fuel(true)
        .operator_cost(OperatorCost::new())
        // The wall backstop and the hand-back between turns.
        .epoch_interruption(true)
        // Determinism: the same bits on every CPU. (Threads are not even
        // compiled in: the crate's `threads` feature is off.)
        .cranelift_nan_canonicalization(true)
        .relaxed_simd_deterministic(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(MAX_WASM_STACK + (1 << 20))
        .cranelift_opt_level(OptLevel::Speed);
    config
}

/// The engine every compile and every guest uses.
pub fn engine() -> Result<Engine, wasmtime::Error> {
    Engine::new(&config())
}

/// The same engine with fuel metering off: only for measuring what
/// metering costs (`arena bench wasm`); guests never run on it.
pub fn unmetered_engine() -> Result<Engine, wasmtime::Error> {
    let mut config = config();
    config.consume_fuel(false);
    Engine::new(&config)
}

/// Names the wasmtime version and configuration: equal fingerprints run
/// the same module with the same fuel costs and the same compiled code.
pub fn fingerprint(engine: &Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = hasher.0.finalize();
    let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("wasmtime-{WASMTIME_VERSION}-{short}")
}

/// Feeds `Hash` into SHA-256, so the fingerprint does not depend on the
/// standard library's hasher (which may change between Rust releases).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        u64::from_le_bytes(digest[..8].try_into().unwrap_or([0; 8]))
    }
}
