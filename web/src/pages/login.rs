//! `GET /login` (the form), `POST /login` (checks the token and sets the
//! cookie) and `POST /logout` (clears it). The token travels only in the
//! form body and the cookie, never in a URL.

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;

use crate::AppState;
use crate::auth::{self, TOKEN_COOKIE};
use crate::error::{WebError, WebResult};
use crate::html::{esc, page};
use crate::viewer::Viewer;

#[derive(Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    token: String,
}

pub async fn login_form(viewer: Viewer) -> Html<String> {
    form_page(&viewer, None)
}

fn form_page(viewer: &Viewer, message: Option<&str>) -> Html<String> {
    let mut body = String::from("<h1>Log in</h1>\n");
    if let Some(message) = message {
        body.push_str(&format!("<p class=\"error\">{}</p>\n", esc(message)));
    }
    body.push_str(
        "<p>Organisers log in with an admin token, entrants with their entrant token \
         (it shows the logs of their own bots).</p>\n\
         <form method=\"post\" action=\"/login\" class=\"login\">\
         <label for=\"token\">Token</label> \
         <input type=\"password\" id=\"token\" name=\"token\" autocomplete=\"current-password\" required> \
         <button type=\"submit\">Log in</button></form>\n",
    );
    page("Log in", viewer, None, &body)
}

pub async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<LoginForm>, FormRejection>,
) -> WebResult<Response> {
    auth::check_origin(&headers)?;
    let Form(form) = form.map_err(|e| WebError::BadRequest(e.body_text()))?;
    let token = form.token.trim();
    let viewer = if auth::is_cookie_safe(token) {
        auth::resolve(&state, token).await?
    } else {
        Viewer::Public
    };
    if viewer == Viewer::Public {
        return Ok((
            StatusCode::UNAUTHORIZED,
            form_page(&Viewer::Public, Some("That token is not valid.")),
        )
            .into_response());
    }
    let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
    Ok(with_cookie(Redirect::to("/"), &cookie))
}

pub async fn logout(headers: HeaderMap) -> WebResult<Response> {
    auth::check_origin(&headers)?;
    let cookie = format!("{TOKEN_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    Ok(with_cookie(Redirect::to("/"), &cookie))
}

/// A 303 redirect that sets `cookie`.
fn with_cookie(redirect: Redirect, cookie: &str) -> Response {
    let mut response = redirect.into_response();
    // `cookie` holds only cookie-safe bytes (checked before), so this parses.
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
