//! Waiting on conditions: poll against a deadline, never sleep a fixed time.

use std::time::{Duration, Instant};

/// Pause between polls; it only keeps the loop from spinning.
const POLL: Duration = Duration::from_millis(25);

/// Calls `probe` until it returns `Some`, and returns that; panics naming
/// `what` once `timeout` has passed.
pub async fn poll_until<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}
