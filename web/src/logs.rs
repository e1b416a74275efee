//! `GET /matches/{id}/logs/{seat}`: one seat's bot log as plain text, for
//! an organiser or the entrant who played that seat. Anyone else gets a
//! 403: the match itself is public, so refusing says nothing a reader could
//! not see on the match page.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::ids::{MatchId, PathParams};
use crate::pages::match_page;
use crate::source;
use crate::viewer::Viewer;

pub async fn seat_log(
    State(state): State<AppState>,
    PathParams((id, seat)): PathParams<(String, String)>,
    viewer: Viewer,
) -> WebResult<Response> {
    let id = MatchId::parse(&id)?;
    let seat: usize = seat.parse().map_err(|_| {
        WebError::BadRequest(format!(
            "{:?} is not a seat number",
            seat.chars().take(20).collect::<String>()
        ))
    })?;
    let found = match_page::find(&state, &id).await?;
    let entrant =
        found.info.pairing.seats.get(seat).ok_or_else(|| {
            WebError::NotFound(format!("match {} has no seat {seat}", id.as_str()))
        })?;
    if !viewer.may_see_log_of(entrant) {
        return Err(WebError::Forbidden(
            "bot logs are for organisers and for the entrant who played the seat".to_owned(),
        ));
    }
    let log = source::seat_log(&state.coordinator, id.as_str(), seat)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no log stored for seat {seat}")))?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, no-store"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        log,
    )
        .into_response())
}
