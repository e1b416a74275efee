//! The organiser's actions: `POST /tournaments/{id}/cancel` and
//! `POST /matches/{id}/rejudge`. Both need an admin viewer and pass the
//! CSRF origin check. Neither acts on the first post: that one answers
//! with a page saying what the action will do, whose button posts again
//! with `confirm=yes` (so a stray click, or a page without scripts, never
//! cancels anything). The confirmed post acts and answers with a 303 back
//! to the page it came from; what cannot be done (cancelling a tournament
//! that is over, rejudging a match without a result or that nothing could
//! play again) is refused with the reason, before and after confirming.

use arena_coordinator::store::MatchState;
use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::AppState;
use crate::auth;
use crate::error::{WebError, WebResult};
use crate::html::{esc, page, url_segment};
use crate::ids::{MatchId, PathParams, TournamentId};
use crate::pages::match_page;
use crate::source;
use crate::view;
use crate::viewer::Viewer;

/// The confirming post's body.
#[derive(Debug, Default, Deserialize)]
pub struct Confirmation {
    #[serde(default)]
    confirm: Option<String>,
}

impl Confirmation {
    /// Whether the post was confirmed. A body that is not a form (none at
    /// all, say) is an unconfirmed first post.
    fn given(form: Result<Form<Confirmation>, FormRejection>) -> bool {
        form.is_ok_and(|Form(c)| c.confirm.as_deref() == Some("yes"))
    }
}

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

/// The page asking to confirm: what the action does, a button that posts
/// it again confirmed, and a way back.
fn confirm_page(
    viewer: &Viewer,
    title: &str,
    what: &str,
    action: &str,
    button: &str,
    back: &str,
) -> Response {
    let body = format!(
        "<h1>{}</h1>\n<p class=\"confirm-what\">{}</p>\n\
         <form method=\"post\" action=\"{}\" class=\"confirm\">\
         <input type=\"hidden\" name=\"confirm\" value=\"yes\">\
         <button type=\"submit\" class=\"danger\">{}</button> \
         <a href=\"{}\" class=\"back\">No, go back</a></form>\n",
        esc(title),
        esc(what),
        esc(action),
        esc(button),
        esc(back)
    );
    page(title, viewer, None, &body).into_response()
}

pub async fn cancel(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Result<Form<Confirmation>, FormRejection>,
) -> WebResult<Response> {
    require_admin(&viewer, &headers)?;
    let id = TournamentId::parse(&id)?;
    let summary = view::summary(&state.coordinator, id.as_str())
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no tournament {}", id.as_str())))?;
    let now = summary.state();
    if now != "running" {
        return Err(WebError::Conflict(format!(
            "tournament {} is {now}: only a running tournament can be cancelled",
            id.as_str()
        )));
    }
    let back = format!("/tournaments/{}", url_segment(id.as_str()));
    if !Confirmation::given(form) {
        let status = &summary.status;
        return Ok(confirm_page(
            &viewer,
            &format!("Cancel {}?", summary.spec.name),
            &format!(
                "{} of {} matches are recorded; they stay, with the standings they give. \
                 The matches not played yet are dropped, and a match being played is \
                 abandoned. This cannot be undone.",
                status.done, status.total
            ),
            &format!("{back}/cancel"),
            "Cancel the tournament",
            &back,
        ));
    }
    state.coordinator.cancel(id.as_str()).await?;
    Ok(Redirect::to(&back).into_response())
}

pub async fn rejudge(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
    headers: HeaderMap,
    form: Result<Form<Confirmation>, FormRejection>,
) -> WebResult<Response> {
    require_admin(&viewer, &headers)?;
    let id = MatchId::parse(&id)?;
    let found = match_page::find(&state, &id).await?;
    if !matches!(found.info.state, MatchState::Done { .. }) {
        return Err(WebError::Conflict(format!(
            "match {} has no result to rejudge",
            id.as_str()
        )));
    }
    let back = format!("/matches/{}", url_segment(id.as_str()));
    if !Confirmation::given(form) {
        // Refused before asking, when nothing could play it again.
        source::rejudge_possible(&state.coordinator, id.as_str()).await?;
        return Ok(confirm_page(
            &viewer,
            &format!("Rejudge match {}?", id.as_str()),
            "The match is played again from the start. Its current result and replay \
             stand, in the standings too, until the new result is recorded; then the \
             new one replaces them.",
            &format!("{back}/rejudge"),
            "Rejudge the match",
            &back,
        ));
    }
    source::rejudge(&state.coordinator, id.as_str()).await?;
    state.frames.forget(id.as_str());
    Ok(Redirect::to(&back).into_response())
}
