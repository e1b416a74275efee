//! A finished match's replay for the viewer: `replay.json` (the stored
//! file as it is) and `frames.json` (the replay re-simulated into the JSON
//! lines `arena_engine::replay` dumps, as one array). Dumping re-plays the
//! whole game, so it runs on the blocking pool, the last few are kept, and
//! it is bounded: requests for one replay share one dump however many
//! arrive together, and at most [`DUMPS_AT_ONCE`] dumps run at a time, so a
//! flood of anonymous requests costs a few dumps' memory, not one each.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OnceCell, Semaphore};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::ids::{MatchId, PathParams};
use crate::source;

/// How many dumped replays are kept.
const CACHED_DUMPS: usize = 8;

/// How many bytes of dumps are kept at most (a long game's dump is several
/// megabytes).
const CACHED_BYTES: usize = 64 << 20;

/// How many dumps may run at once; more wait their turn.
pub const DUMPS_AT_ONCE: usize = 2;

/// One dump in progress, which every request for the same replay awaits.
type InFlight = Arc<OnceCell<Bytes>>;

/// Recently dumped replays, newest last. Each entry is keyed by the match
/// and a fingerprint of the replay's bytes, so a rejudged match's new
/// replay is never answered with the old dump.
#[derive(Clone)]
pub struct FramesCache {
    entries: Arc<Mutex<VecDeque<(String, u64, Bytes)>>>,
    in_flight: Arc<Mutex<HashMap<(String, u64), InFlight>>>,
    dumping: Arc<Semaphore>,
}

impl Default for FramesCache {
    fn default() -> FramesCache {
        FramesCache {
            entries: Arc::default(),
            in_flight: Arc::default(),
            dumping: Arc::new(Semaphore::new(DUMPS_AT_ONCE)),
        }
    }
}

impl FramesCache {
    /// The dump of `(match_id, fingerprint)`: kept, being made by another
    /// request (then shared), or made by `make` once a dump slot is free.
    async fn get_or_dump<F, Fut>(
        &self,
        match_id: &str,
        fingerprint: u64,
        make: F,
    ) -> WebResult<Bytes>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = WebResult<Bytes>>,
    {
        if let Some(frames) = self.get(match_id, fingerprint) {
            return Ok(frames);
        }
        let key = (match_id.to_owned(), fingerprint);
        let cell = Arc::clone(
            self.in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key.clone())
                .or_default(),
        );
        let made = cell
            .get_or_try_init(|| async {
                let _slot = self
                    .dumping
                    .acquire()
                    .await
                    .map_err(|_| WebError::Internal("the dump slots are closed".to_owned()))?;
                make().await
            })
            .await
            .cloned();
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if in_flight.get(&key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            in_flight.remove(&key);
        }
        drop(in_flight);
        if let Ok(frames) = &made {
            self.put(match_id, fingerprint, frames.clone());
        }
        made
    }

    fn get(&self, match_id: &str, fingerprint: u64) -> Option<Bytes> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .find(|(id, f, _)| id == match_id && *f == fingerprint)
            .map(|(_, _, bytes)| bytes.clone())
    }

    fn put(&self, match_id: &str, fingerprint: u64, frames: Bytes) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|(id, _, _)| id != match_id);
        if frames.len() > CACHED_BYTES {
            return;
        }
        let mut kept: usize = entries.iter().map(|(_, _, b)| b.len()).sum();
        while entries.len() >= CACHED_DUMPS || kept + frames.len() > CACHED_BYTES {
            let Some((_, _, dropped)) = entries.pop_front() else {
                break;
            };
            kept -= dropped.len();
        }
        entries.push_back((match_id.to_owned(), fingerprint, frames));
    }

    /// Drops a match's dump (after a rejudge).
    pub fn forget(&self, match_id: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|(id, _, _)| id != match_id);
    }
}

/// FNV-1a 64 of the replay's bytes.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

async fn stored_replay(state: &AppState, raw_id: &str) -> WebResult<(MatchId, Vec<u8>)> {
    let id = MatchId::parse(raw_id)?;
    let replay = source::replay(&state.coordinator, id.as_str())
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no replay stored for match {}", id.as_str())))?;
    Ok((id, replay))
}

fn json(bytes: impl Into<Bytes>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes.into(),
    )
        .into_response()
}

pub async fn replay_json(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
) -> WebResult<Response> {
    let (_, replay) = stored_replay(&state, &id).await?;
    Ok(json(replay))
}

pub async fn frames_json(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
) -> WebResult<Response> {
    let (id, replay) = stored_replay(&state, &id).await?;
    let print = fingerprint(&replay);
    let frames = state
        .frames
        .get_or_dump(id.as_str(), print, || async move {
            let frames = tokio::task::spawn_blocking(move || dump(&replay))
                .await
                .map_err(|e| WebError::Internal(format!("the replay dump task failed: {e}")))??;
            Ok(Bytes::from(frames))
        })
        .await?;
    Ok(json(frames))
}

/// The dump lines of a replay, as one JSON array.
fn dump(replay: &[u8]) -> WebResult<Vec<u8>> {
    let unreadable = |what: String| WebError::Internal(format!("the stored replay {what}"));
    let opened = arena_engine::replay::open_any(replay)
        .map_err(|e| unreadable(format!("cannot be read: {e}")))?;
    let lines = opened
        .dump()
        .map_err(|e| unreadable(format!("does not re-simulate: {e}")))?;
    serde_json::to_vec(&lines).map_err(|e| unreadable(format!("cannot be written out: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_newest_and_tells_replays_apart() {
        let cache = FramesCache::default();
        for i in 0..CACHED_DUMPS + 1 {
            cache.put(&format!("m{i}"), 1, Bytes::from(vec![i as u8]));
        }
        assert!(cache.get("m0", 1).is_none());
        assert_eq!(cache.get("m1", 1).as_deref(), Some(&[1u8][..]));
        assert!(cache.get("m1", 2).is_none());
        cache.forget("m1");
        assert!(cache.get("m1", 1).is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_together_share_one_dump_and_dumps_are_bounded() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cache = FramesCache::default();
        let made = Arc::new(AtomicUsize::new(0));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        // Sixteen requests for each of four replays, all at once.
        for i in 0..64 {
            let (cache, made, running, most) =
                (cache.clone(), made.clone(), running.clone(), most.clone());
            tasks.push(tokio::spawn(async move {
                let id = format!("m{}", i % 4);
                let body = id.clone();
                cache
                    .get_or_dump(&id, 7, || async move {
                        made.fetch_add(1, Ordering::SeqCst);
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        running.fetch_sub(1, Ordering::SeqCst);
                        Ok(Bytes::from(body.into_bytes()))
                    })
                    .await
                    .unwrap()
            }));
        }
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), format!("m{}", i % 4).into_bytes());
        }
        assert_eq!(made.load(Ordering::SeqCst), 4, "one dump per replay");
        assert!(most.load(Ordering::SeqCst) <= DUMPS_AT_ONCE);
        // A failed dump is not kept: the next request tries again.
        let failed = cache
            .get_or_dump("bad", 1, || async {
                Err(WebError::Internal("no".to_owned()))
            })
            .await;
        assert!(failed.is_err());
        let again = cache
            .get_or_dump("bad", 1, || async { Ok(Bytes::from_static(b"ok")) })
            .await
            .unwrap();
        assert_eq!(&again[..], b"ok");
    }

    #[test]
    fn the_cache_holds_a_bounded_number_of_bytes() {
        let cache = FramesCache::default();
        let big = Bytes::from(vec![0u8; CACHED_BYTES / 2 + 1]);
        cache.put("a", 1, big.clone());
        cache.put("b", 1, big.clone());
        assert!(cache.get("a", 1).is_none(), "the oldest went to make room");
        assert!(cache.get("b", 1).is_some());
        cache.put("huge", 1, Bytes::from(vec![0u8; CACHED_BYTES + 1]));
        assert!(cache.get("huge", 1).is_none(), "too large to keep at all");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(dump(b"not json").is_err());
        assert!(dump(b"{\"format\":\"other\"}").is_err());
    }
}
