//! Getting a report to the coordinator: which answers end the attempt, and
//! how long to wait before the next one.
//!
//! A report is idempotent by match and lease (the coordinator keeps the
//! first valid result for a match and acknowledges repeats), so resending
//! after a transient error can never record a match twice. The caller stops
//! when the coordinator answers, when it refuses the report outright, or
//! when the lease is gone: past that point the match belongs to someone
//! else and the report would only be dropped.

use std::future::Future;
use std::time::Duration;

use tonic::{Code, Status};

/// The pause after the first failed attempt; it doubles up to [`RETRY_CAP`].
pub const RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest pause between two attempts.
pub const RETRY_CAP: Duration = Duration::from_secs(5);
/// How long one attempt may take before it counts as a transient failure.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);

/// A status that may clear up by itself: the coordinator or its store is
/// restarting, the connection broke, the call timed out. Anything else is
/// an answer about the report itself (refused as invalid, unknown match,
/// not this worker's lease) and is never resent.
pub fn is_transient(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::Internal
            | Code::Unknown
            | Code::DeadlineExceeded
            | Code::ResourceExhausted
            | Code::Aborted
    )
}

/// How a delivery ended.
#[derive(Debug)]
pub enum Delivery<T> {
    /// The coordinator answered.
    Answered(T),
    /// The coordinator refused the report; resending would not help.
    Refused(Status),
    /// The lease was lost or has certainly expired; the last transient
    /// error is kept for the log.
    LeaseGone {
        why: &'static str,
        last: Option<Status>,
    },
}

/// Whether the lease a report is sent under still stands.
pub trait LeaseWatch {
    /// `Some(why)` once the lease is gone: the coordinator said so, or its
    /// TTL has passed since the last heartbeat that extended it.
    fn gone(&self) -> Option<&'static str>;
    /// Resolves when the coordinator says the lease is lost.
    fn lost(&self) -> impl Future<Output = ()> + Send;
}

/// Sends with `send` until an answer, a refusal or the end of the lease,
/// pausing with capped exponential backoff between transient failures
/// (`on_retry` is told of each, with the number of the failed attempt).
pub async fn deliver<T, F, Fut>(
    lease: &impl LeaseWatch,
    mut send: F,
    mut on_retry: impl FnMut(u32, &Status, Duration),
) -> Delivery<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Status>>,
{
    let mut pause = RETRY_FIRST;
    let mut attempt: u32 = 0;
    let mut last = None;
    loop {
        if let Some(why) = lease.gone() {
            return Delivery::LeaseGone { why, last };
        }
        attempt = attempt.saturating_add(1);
        let sent = match tokio::time::timeout(ATTEMPT_TIMEOUT, send()).await {
            Ok(sent) => sent,
            Err(_) => Err(Status::deadline_exceeded(format!(
                "no answer within {ATTEMPT_TIMEOUT:?}"
            ))),
        };
        match sent {
            Ok(answer) => return Delivery::Answered(answer),
            Err(status) if !is_transient(status.code()) => return Delivery::Refused(status),
            Err(status) => {
                on_retry(attempt, &status, pause);
                last = Some(status);
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = lease.lost() => {}
        }
        pause = (pause * 2).min(RETRY_CAP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    struct Holds(AtomicU32);

    impl LeaseWatch for Holds {
        fn gone(&self) -> Option<&'static str> {
            (self.0.load(Ordering::SeqCst) == 0).then_some("expired")
        }
        async fn lost(&self) {
            std::future::pending::<()>().await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn transient_errors_are_retried_with_a_capped_backoff_and_refusals_are_not() {
        let lease = Holds(AtomicU32::new(1));
        let calls = AtomicU32::new(0);
        let mut pauses = Vec::new();
        let answer = deliver(
            &lease,
            || {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < 8 {
                        Err(Status::unavailable("redis: broken pipe"))
                    } else {
                        Ok(n)
                    }
                }
            },
            |_, _, pause| pauses.push(pause),
        )
        .await;
        assert!(matches!(answer, Delivery::Answered(8)), "{answer:?}");
        assert_eq!(pauses.first(), Some(&RETRY_FIRST));
        assert_eq!(pauses.last(), Some(&RETRY_CAP));
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));

        for code in [
            Code::InvalidArgument,
            Code::NotFound,
            Code::PermissionDenied,
            Code::FailedPrecondition,
        ] {
            let calls = AtomicU32::new(0);
            let answer: Delivery<()> = deliver(
                &lease,
                || {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move { Err(Status::new(code, "no")) }
                },
                |_, _, _| {},
            )
            .await;
            assert!(matches!(answer, Delivery::Refused(_)), "{code:?}");
            assert_eq!(calls.load(Ordering::SeqCst), 1, "{code:?}");
        }

        // Once the lease is gone, nothing more is sent.
        lease.0.store(0, Ordering::SeqCst);
        let answer: Delivery<()> = deliver(
            &lease,
            || async { Err(Status::internal("broken pipe")) },
            |_, _, _| {},
        )
        .await;
        assert!(matches!(
            answer,
            Delivery::LeaseGone {
                why: "expired",
                last: None
            }
        ));
    }
}
