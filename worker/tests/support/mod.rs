//! Helpers shared by the worker's integration tests.

/// A cgroup parent named after `base` that no other test of this run uses:
/// tests run in parallel, and one removing a shared empty parent would pull
/// it from under another creating its leaf (or show it another's leaves).
pub fn own_parent(base: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{base}-{}-{n}", std::process::id())
}
