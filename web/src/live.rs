//! Live updates: `GET /events` (the tournament list) and
//! `GET /tournaments/{id}/events` (one tournament) are server-sent-event
//! streams. Each connected page polls the store every [`POLL_INTERVAL`]
//! and is sent a `snapshot` event (a JSON object `{"items": [...]}` of
//! [`LiveItem`]s) whenever it differs from the last one sent, the first
//! one at once. Polling happens only while the stream is being read:
//! when the client goes away, the stream is dropped and so is its timer.
//! A keep-alive comment every [`KEEP_ALIVE`] makes a vanished client show
//! up as a failed write even when nothing changes. Every stream ends when
//! the server shuts down, so a graceful shutdown is not held up by them.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use crate::AppState;
use crate::error::WebResult;
use crate::ids::{PathParams, TournamentId};
use crate::pages::{index, tournament};
use crate::view::LiveItem;

/// How often a connected page's view is read again.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How often an idle stream writes a comment.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// What a stream reads on each poll.
#[derive(Clone)]
enum Topic {
    List,
    Tournament(TournamentId),
}

pub async fn list_events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    events(state, Topic::List)
}

pub async fn tournament_events(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
) -> WebResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let id = TournamentId::parse(&id)?;
    // An unknown tournament is a 404 now, not an empty stream.
    tournament::snapshot(&state, &id).await?;
    Ok(events(state, Topic::Tournament(id)))
}

/// One poll's JSON, or `None` if the store could not be read this time
/// (the next poll tries again; the page keeps what it shows).
async fn snapshot(state: &AppState, topic: &Topic) -> Option<String> {
    let items: WebResult<Vec<LiveItem>> = match topic {
        Topic::List => index::snapshot(state).await,
        Topic::Tournament(id) => tournament::snapshot(state, id).await,
    };
    match items {
        Ok(items) => serde_json::to_string(&serde_json::json!({ "items": items })).ok(),
        Err(e) => {
            tracing::debug!(error = %e, "live snapshot failed");
            None
        }
    }
}

fn events(state: AppState, topic: Topic) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stop = state.stop.clone();
    /// One stream's state between events.
    struct Poll {
        state: AppState,
        topic: Topic,
        /// Turns `true` at shutdown.
        stop: watch::Receiver<bool>,
        /// The JSON last sent, to send only what differs.
        last: Option<String>,
        /// The first snapshot goes out at once, without waiting a poll.
        first: bool,
    }
    let start = Poll {
        state,
        topic,
        stop,
        last: None,
        first: true,
    };
    let stream = stream::unfold(start, |mut poll| async move {
        loop {
            if *poll.stop.borrow() {
                return None;
            }
            if !poll.first {
                tokio::select! {
                    _ = tokio::time::sleep(POLL_INTERVAL) => {}
                    // Shutdown (or the server gone): end the stream.
                    _ = poll.stop.changed() => return None,
                }
            }
            poll.first = false;
            let Some(json) = snapshot(&poll.state, &poll.topic).await else {
                continue;
            };
            if poll.last.as_deref() != Some(json.as_str()) {
                let event = Event::default().event("snapshot").data(json.clone());
                poll.last = Some(json);
                return Some((Ok(event), poll));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}
