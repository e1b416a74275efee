//! The organiser's actions: `POST /tournaments/{id}/cancel` and
//! `POST /matches/{id}/rejudge`. Both need an admin viewer and pass the
//! CSRF origin check; both answer with a 303 back to the page they came from.

use arena_coordinator::store::MatchState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Redirect;

use crate::AppState;
use crate::auth;
use crate::error::{WebError, WebResult};
use crate::html::url_segment;
use crate::ids::{MatchId, PathParams, TournamentId};
use crate::pages::match_page;
use crate::source;
use crate::viewer::Viewer;

fn require_admin(viewer: &Viewer, headers: &HeaderMap) -> WebResult<()> {
    auth::check_origin(headers)?;
    if viewer.is_admin() {
        Ok(())
    } else {
        Err(WebError::Forbidden(
            "only an organiser may do this; log in with an admin token".to_owned(),
        ))
    }
}

pub async fn cancel(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
    headers: HeaderMap,
) -> WebResult<Redirect> {
    require_admin(&viewer, &headers)?;
    let id = TournamentId::parse(&id)?;
    state.coordinator.cancel(id.as_str()).await?;
    Ok(Redirect::to(&format!(
        "/tournaments/{}",
        url_segment(id.as_str())
    )))
}

pub async fn rejudge(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
    headers: HeaderMap,
) -> WebResult<Redirect> {
    require_admin(&viewer, &headers)?;
    let id = MatchId::parse(&id)?;
    let found = match_page::find(&state, &id).await?;
    if !matches!(found.info.state, MatchState::Done { .. }) {
        return Err(WebError::Conflict(format!(
            "match {} has no result to rejudge",
            id.as_str()
        )));
    }
    source::rejudge(&state.coordinator, id.as_str()).await?;
    state.frames.forget(id.as_str());
    Ok(Redirect::to(&format!(
        "/matches/{}",
        url_segment(id.as_str())
    )))
}
