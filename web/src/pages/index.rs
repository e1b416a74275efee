//! `/`: every tournament with its state and progress.

use std::fmt::Write as _;

use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::WebResult;
use crate::html::{esc, field_cell, page, url_segment};
use crate::view::{self, LiveItem};
use crate::viewer::Viewer;

pub async fn index(State(state): State<AppState>, viewer: Viewer) -> WebResult<Html<String>> {
    let summaries = view::summaries(&state.coordinator).await?;
    let mut body = String::from("<h1>Tournaments</h1>\n");
    if summaries.is_empty() {
        body.push_str("<p>No tournaments yet.</p>\n");
    } else {
        body.push_str(
            "<div class=\"scroll\"><table>\n<thead><tr><th>Id</th><th>Name</th><th>State</th>\
             <th>Matches done</th><th>Rounds</th><th>Game</th><th>Format</th><th>Seats</th>\
             </tr></thead>\n<tbody>\n",
        );
        for summary in &summaries {
            let id = &summary.spec.id;
            let _ = write!(
                body,
                "<tr data-tournament=\"{}\"><td><a href=\"/tournaments/{}\">{}</a></td><td>{}</td>",
                esc(id),
                url_segment(id),
                esc(id),
                esc(&summary.spec.name)
            );
            for (field, text) in summary.fields() {
                field_cell(&mut body, field, &text);
            }
            let _ = writeln!(
                body,
                "<td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&summary.spec.game),
                esc(summary.format()),
                summary.spec.seats
            );
        }
        body.push_str("</tbody></table></div>\n");
    }
    Ok(page("Tournaments", &viewer, Some("/events"), &body))
}

/// The live snapshot of the list: each tournament's changing cells.
pub async fn snapshot(state: &AppState) -> WebResult<Vec<LiveItem>> {
    Ok(view::summaries(&state.coordinator)
        .await?
        .iter()
        .map(|s| LiveItem::new("tournament", &s.spec.id, s.fields()))
        .collect())
}
