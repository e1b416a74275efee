//! `GET /matches/{id}/live`: a running match as its worker reports it, as
//! server-sent events. Every [`live::POLL_INTERVAL`] the stream reads the
//! coordinator's memory (not the store) and sends what changed:
//!
//! * `board` `{"turn": N, "board": {...}}`: the engine's live view of the
//!   match (`Match::live_json`: game, turn, state, forfeits, faults), to
//!   viewers the tournament lets watch it
//!   ([`Viewer::may_watch_live_board`]);
//! * `turn` `{"turn": N}`: the turn reached, to everyone else, and to
//!   watchers while no new board has come;
//! * `ended` `{}`: the match, heard of on this stream, is no longer
//!   running (its result landed, or the attempt failed); the stream ends
//!   and the page reloads.
//!
//! Workers report a board every progress interval (a second by default),
//! written after the step that follows the previous report, so the board
//! shown lags the match by one to two intervals. The streams count
//! against the same caps as the pages' other live streams.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::Extensions;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use crate::AppState;
use crate::error::WebResult;
use crate::ids::{MatchId, PathParams};
use crate::live::{self, StreamSlot};
use crate::pages::match_page;
use crate::source;
use crate::viewer::Viewer;

pub async fn match_events(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
    extensions: Extensions,
) -> WebResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let id = MatchId::parse(&id)?;
    let found = match_page::find(&state, &id).await?;
    let boards = viewer.may_watch_live_board(found.view.summary.spec.live_board);
    let slot = state.streams.take(live::client_of(&extensions))?;
    Ok(events(state, id, boards, slot))
}

/// One stream's state between events.
struct Poll {
    state: AppState,
    match_id: MatchId,
    /// Whether boards are sent, or only turns.
    boards: bool,
    /// Turns `true` at shutdown.
    stop: watch::Receiver<bool>,
    /// The turn and board last sent.
    sent_turn: Option<u32>,
    sent_board: Option<Arc<[u8]>>,
    /// Whether the match has been heard of on this stream: only then does
    /// its absence mean it ended. (A worker reports every match it plays
    /// with each heartbeat, so a running match is heard of within one
    /// heartbeat interval.)
    heard: bool,
    first: bool,
    done: bool,
    _slot: StreamSlot,
}

fn events(
    state: AppState,
    match_id: MatchId,
    boards: bool,
    slot: StreamSlot,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start = Poll {
        stop: state.stop.clone(),
        state,
        match_id,
        boards,
        sent_turn: None,
        sent_board: None,
        heard: false,
        first: true,
        done: false,
        _slot: slot,
    };
    let stream = stream::unfold(start, |mut poll| async move {
        loop {
            if poll.done || !live::next_poll(&mut poll.first, &mut poll.stop).await {
                return None;
            }
            if let Some(event) = poll.next_event() {
                return Some((Ok(event), poll));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(live::KEEP_ALIVE))
}

impl Poll {
    /// What to send now, if anything changed.
    fn next_event(&mut self) -> Option<Event> {
        let Some(live) = source::live_match(&self.state.coordinator, self.match_id.as_str()) else {
            if self.heard {
                self.done = true;
                return Some(Event::default().event("ended").data("{}"));
            }
            return None;
        };
        self.heard = true;
        if self.boards
            && let Some(board) = &live.board
            && !self
                .sent_board
                .as_ref()
                .is_some_and(|sent| Arc::ptr_eq(sent, board))
        {
            self.sent_board = Some(Arc::clone(board));
            // Checked, not rebuilt: the board goes out as the worker wrote
            // it. One that is not JSON (or holds a carriage return, which
            // would cut the event's line) is the worker's fault: it is
            // skipped, and the turn still goes out below.
            if let Some(board) = as_json_text(board) {
                self.sent_turn = Some(live.turn);
                let data = format!("{{\"turn\":{},\"board\":{board}}}", live.turn);
                return Some(Event::default().event("board").data(data));
            }
        }
        if self.sent_turn != Some(live.turn) {
            self.sent_turn = Some(live.turn);
            let data = serde_json::json!({ "turn": live.turn });
            return Some(Event::default().event("turn").data(data.to_string()));
        }
        None
    }
}

/// `bytes` as text, if they are one JSON value that fits in an event's
/// data (newlines are split across data lines and joined again by the
/// browser; a carriage return would end the line).
fn as_json_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let valid = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    (valid && !text.contains('\r')).then_some(text)
}
