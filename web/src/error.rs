//! What a request can come to besides its page, each as its own HTML page
//! with the matching status: a malformed id is a 400, something missing a
//! 404, a refused action a 403 (or 409 when the state forbids it), and a
//! store failure a 500 whose page says little and whose log says more.

use std::fmt::Write as _;

use arena_coordinator::service::{CoordinatorError, chain};
use arena_coordinator::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::html::{esc, page};
use crate::viewer::Viewer;

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The URL or form names something in a shape no id has.
    #[error("{0}")]
    BadRequest(String),
    /// Well formed, but there is no such thing.
    #[error("{0}")]
    NotFound(String),
    /// The viewer may not do or see this.
    #[error("{0}")]
    Forbidden(String),
    /// The action does not fit what the thing is now (rejudging a match
    /// that has no result).
    #[error("{0}")]
    Conflict(String),
    /// Too many live streams are open (for this client, or in all).
    #[error("{0}")]
    TooMany(String),
    /// The coordinator or its store failed.
    #[error("coordinator")]
    Coordinator(#[from] CoordinatorError),
    /// A stored value could not be read (a replay that does not parse).
    #[error("{0}")]
    Internal(String),
}

impl WebError {
    pub fn status(&self) -> StatusCode {
        match self {
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::Forbidden(_) => StatusCode::FORBIDDEN,
            WebError::Conflict(_) => StatusCode::CONFLICT,
            WebError::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
            WebError::Coordinator(e) => match e {
                CoordinatorError::UnknownTournament(_) | CoordinatorError::UnknownMatch(_) => {
                    StatusCode::NOT_FOUND
                }
                CoordinatorError::Cancelled(_)
                | CoordinatorError::NotStuck(_)
                | CoordinatorError::NotDone(_)
                | CoordinatorError::Unplayable { .. }
                | CoordinatorError::Store(StoreError::Cancelled(_)) => StatusCode::CONFLICT,
                CoordinatorError::Store(StoreError::UnknownMatch(_)) => StatusCode::NOT_FOUND,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// What the page says: the whole message for the viewer's own mistakes,
    /// a short one for failures inside (the details go to the log).
    fn public_message(&self) -> String {
        match self {
            WebError::Coordinator(e) => match self.status() {
                StatusCode::INTERNAL_SERVER_ERROR => {
                    "the coordinator's store could not be read; try again shortly".to_owned()
                }
                _ => e.to_string(),
            },
            WebError::Internal(_) => "a stored value could not be read".to_owned(),
            other => other.to_string(),
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            match &self {
                WebError::Coordinator(e) => tracing::warn!(error = %chain(e), "web request failed"),
                other => tracing::warn!(error = %other, "web request failed"),
            }
        }
        let title = status.canonical_reason().unwrap_or("Error");
        let mut body = String::new();
        let _ = write!(
            body,
            "<h1>{} {}</h1>\n<p class=\"error\">{}</p>\n<p><a href=\"/\">All tournaments</a></p>\n",
            status.as_u16(),
            esc(title),
            esc(self.public_message())
        );
        // The error page does not know who asked; it offers the log-in link.
        (status, page(title, &Viewer::Public, None, &body)).into_response()
    }
}

pub type WebResult<T> = Result<T, WebError>;
