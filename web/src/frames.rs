//! A finished match's replay for the viewer: `replay.json` (the stored
//! file as it is) and `frames.json` (the replay re-simulated into the JSON
//! lines `arena_engine::replay` dumps, as one array). Dumping re-plays the
//! whole game, so it runs on the blocking pool and the last few are kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

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

/// Recently dumped replays, newest last. Each entry is keyed by the match
/// and a fingerprint of the replay's bytes, so a rejudged match's new
/// replay is never answered with the old dump.
#[derive(Clone, Default)]
pub struct FramesCache {
    entries: Arc<Mutex<VecDeque<(String, u64, Bytes)>>>,
}

impl FramesCache {
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
        if entries.len() >= CACHED_DUMPS {
            entries.pop_front();
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
    if let Some(frames) = state.frames.get(id.as_str(), print) {
        return Ok(json(frames));
    }
    let frames = tokio::task::spawn_blocking(move || dump(&replay))
        .await
        .map_err(|e| WebError::Internal(format!("the replay dump task failed: {e}")))??;
    let frames = Bytes::from(frames);
    state.frames.put(id.as_str(), print, frames.clone());
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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(dump(b"not json").is_err());
        assert!(dump(b"{\"format\":\"other\"}").is_err());
    }
}
