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
//!
//! Streams are capped, in all ([`MAX_STREAMS`]) and per client address
//! ([`MAX_STREAMS_PER_CLIENT`]): one more is refused with 429, which a
//! browser's `EventSource` does not retry. The streams of one topic share
//! its snapshot ([`Snapshots`]): the store is read for a topic at most once
//! a poll interval however many pages watch it, so a crowd of pages costs
//! the store what one page costs, and never starves the workers.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, State};
use axum::http::Extensions;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::ids::{PathParams, TournamentId};
use crate::pages::{index, tournament};
use crate::view::LiveItem;

/// How often a connected page's view is read again.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How often an idle stream writes a comment.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Live streams open at once, in all, by default.
pub const MAX_STREAMS: usize = 512;

/// Live streams open at once from one client address, by default: a few
/// tabs of an organiser watching several tournaments.
pub const MAX_STREAMS_PER_CLIENT: usize = 16;

/// What a stream reads on each poll.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Topic {
    List,
    Tournament(TournamentId),
}

/// The live streams open: in all, and per client address.
pub(crate) struct StreamSlots {
    max: usize,
    per_client: usize,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One open stream's place; given back when the stream is dropped.
pub(crate) struct StreamSlot {
    slots: Arc<StreamSlots>,
    client: Option<IpAddr>,
}

impl StreamSlots {
    pub(crate) fn new(max: usize, per_client: usize) -> StreamSlots {
        StreamSlots {
            max,
            per_client,
            open: Mutex::new((0, HashMap::new())),
        }
    }

    /// A place for one more stream from `client`, or why there is none.
    pub(crate) fn take(self: &Arc<Self>, client: Option<IpAddr>) -> WebResult<StreamSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, clients) = &mut *open;
        if *total >= self.max {
            return Err(WebError::TooMany(format!(
                "{} live pages are open on this server, its limit; try again later",
                self.max
            )));
        }
        if let Some(ip) = client {
            let mine = clients.entry(ip).or_default();
            if *mine >= self.per_client {
                return Err(WebError::TooMany(format!(
                    "{} live pages are open from your address, the limit; close one",
                    self.per_client
                )));
            }
            *mine += 1;
        }
        *total += 1;
        Ok(StreamSlot {
            slots: Arc::clone(self),
            client,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, clients) = &mut *open;
        *total = total.saturating_sub(1);
        if let Some(ip) = self.client
            && let Some(mine) = clients.get_mut(&ip)
        {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                clients.remove(&ip);
            }
        }
    }
}

/// The latest snapshot of each topic and when it was read.
#[derive(Default)]
pub(crate) struct Snapshots {
    latest: tokio::sync::Mutex<HashMap<Topic, (Instant, Option<String>)>>,
}

/// The client's address, when the server knows it.
pub(crate) fn client_of(extensions: &Extensions) -> Option<IpAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
}

pub async fn list_events(
    State(state): State<AppState>,
    extensions: Extensions,
) -> WebResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let slot = state.streams.take(client_of(&extensions))?;
    Ok(events(state, Topic::List, slot))
}

pub async fn tournament_events(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    extensions: Extensions,
) -> WebResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let id = TournamentId::parse(&id)?;
    // An unknown tournament is a 404 now, not an empty stream.
    tournament::snapshot(&state, &id).await?;
    let slot = state.streams.take(client_of(&extensions))?;
    Ok(events(state, Topic::Tournament(id), slot))
}

/// The topic's snapshot, read from the store at most once a poll interval
/// whatever the number of streams asking.
async fn snapshot(state: &AppState, topic: &Topic) -> Option<String> {
    // Held while reading, so that streams arriving together wait for one
    // read instead of each making their own.
    let mut latest = state.snapshots.latest.lock().await;
    if let Some((at, json)) = latest.get(topic)
        && at.elapsed() < POLL_INTERVAL
    {
        return json.clone();
    }
    let json = read_snapshot(state, topic).await;
    latest.insert(topic.clone(), (Instant::now(), json.clone()));
    // Topics nobody asked for in a while are forgotten.
    latest.retain(|_, (at, _)| at.elapsed() < 10 * POLL_INTERVAL);
    json
}

/// One read of the store for a topic's JSON, or `None` if the store could
/// not be read this time (the next poll tries again; the page keeps what it
/// shows).
async fn read_snapshot(state: &AppState, topic: &Topic) -> Option<String> {
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

/// Waits for a stream's next poll: at once the first time (`first` is
/// then cleared), a [`POLL_INTERVAL`] after that. `false` at shutdown (or
/// with the server gone): the stream ends.
pub(crate) async fn next_poll(first: &mut bool, stop: &mut watch::Receiver<bool>) -> bool {
    if *stop.borrow() {
        return false;
    }
    if !std::mem::take(first) {
        tokio::select! {
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            _ = stop.changed() => return false,
        }
    }
    true
}

fn events(
    state: AppState,
    topic: Topic,
    slot: StreamSlot,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
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
        /// Given back when the stream ends.
        _slot: StreamSlot,
    }
    let start = Poll {
        state,
        topic,
        stop,
        last: None,
        first: true,
        _slot: slot,
    };
    let stream = stream::unfold(start, |mut poll| async move {
        loop {
            if !next_poll(&mut poll.first, &mut poll.stop).await {
                return None;
            }
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
