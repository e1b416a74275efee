//! `/tournaments/{id}`: the standings, then every match by round, with the
//! organiser's cancel and rejudge buttons for an admin.

use std::fmt::Write as _;

use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::WebResult;
use crate::html::{esc, field_cell, page, url_segment};
use crate::ids::{PathParams, TournamentId};
use crate::view::{self, LiveItem, STANDING_HEADINGS, TournamentView};
use crate::viewer::Viewer;
use arena_coordinator::store::MatchState;

pub async fn tournament(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
) -> WebResult<Html<String>> {
    let id = TournamentId::parse(&id)?;
    let view = view::tournament(&state.coordinator, &id, true).await?;
    let spec = &view.summary.spec;
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1>\n<p class=\"summary\" data-tournament=\"{}\"><span class=\"id\">{}</span> · {} · {} · {} seats · \
         <span data-field=\"state\">{}</span> · matches <span data-field=\"matches\">{}</span> · \
         rounds <span data-field=\"rounds\">{}</span></p>\n",
        esc(&spec.name),
        esc(&spec.id),
        esc(&spec.id),
        esc(&spec.game),
        esc(view.summary.format()),
        spec.seats,
        esc(view.summary.state()),
        esc(field(&view.summary.fields(), "matches")),
        esc(field(&view.summary.fields(), "rounds")),
    );
    if viewer.is_admin() && !spec.cancelled {
        let _ = writeln!(
            body,
            "<form method=\"post\" action=\"/tournaments/{}/cancel\" class=\"admin\">\
             <button type=\"submit\" class=\"danger\">Cancel tournament</button></form>",
            url_segment(&spec.id)
        );
    }
    standings_table(&mut body, &view);
    matches_table(&mut body, &state, &view, &viewer);
    let live = format!("/tournaments/{}/events", url_segment(id.as_str()));
    Ok(page(&spec.name, &viewer, Some(&live), &body))
}

fn field<'a>(fields: &'a view::Fields, name: &str) -> &'a str {
    fields
        .iter()
        .find(|(f, _)| *f == name)
        .map_or("", |(_, text)| text.as_str())
}

fn standings_table(body: &mut String, view: &TournamentView) {
    body.push_str("<h2>Standings</h2>\n<div class=\"scroll\"><table class=\"standings\">\n<thead><tr><th>Name</th>");
    for heading in STANDING_HEADINGS {
        let _ = write!(body, "<th>{}</th>", esc(heading));
    }
    body.push_str("</tr></thead>\n<tbody>\n");
    for row in &view.standings.rows {
        let _ = write!(
            body,
            "<tr data-entrant=\"{}\"><th scope=\"row\">{}</th>",
            esc(&row.name),
            esc(&row.name)
        );
        for (field, text) in view::standing_fields(row) {
            field_cell(body, field, &text);
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div>\n");
}

fn matches_table(body: &mut String, state: &AppState, view: &TournamentView, viewer: &Viewer) {
    body.push_str("<h2>Matches</h2>\n");
    if view.matches.is_empty() {
        body.push_str("<p>No matches scheduled yet.</p>\n");
        return;
    }
    body.push_str(
        "<div class=\"scroll\"><table class=\"matches\">\n<thead><tr><th>Match</th><th>Round</th>\
         <th>Seats</th><th>State</th><th>Worker</th><th>Attempt</th><th>Turn</th><th>Result</th>",
    );
    if viewer.is_admin() {
        body.push_str("<th>Organiser</th>");
    }
    body.push_str("</tr></thead>\n");
    let columns = if viewer.is_admin() { 9 } else { 8 };
    let mut round = None;
    for info in &view.matches {
        // Matches come in schedule order: each round opens its own body.
        if round != Some(info.round) {
            if round.is_some() {
                body.push_str("</tbody>\n");
            }
            round = Some(info.round);
            let in_round = view.matches.iter().filter(|m| m.round == info.round);
            let done = in_round
                .clone()
                .filter(|m| matches!(m.state, MatchState::Done { .. }))
                .count();
            let _ = writeln!(
                body,
                "<tbody data-round=\"{0}\"><tr class=\"round\"><th colspan=\"{columns}\">Round {1} \
                 · {done}/{2} done</th></tr>",
                info.round,
                info.round + 1,
                in_round.count(),
            );
        }
        let seats: Vec<&str> = info.pairing.seats.iter().map(|s| view.name_of(s)).collect();
        let _ = write!(
            body,
            "<tr data-match=\"{}\"><td><a href=\"/matches/{}\">{}</a></td><td>{}</td><td>{}</td>",
            esc(&info.match_id),
            url_segment(&info.match_id),
            esc(&info.match_id),
            info.round + 1,
            esc(seats.join(", ")),
        );
        for (field, text) in view::match_fields(&state.coordinator, view, info) {
            field_cell(body, field, &text);
        }
        if viewer.is_admin() {
            body.push_str("<td>");
            if matches!(info.state, MatchState::Done { .. }) {
                let _ = write!(
                    body,
                    "<form method=\"post\" action=\"/matches/{}/rejudge\" class=\"inline\">\
                     <button type=\"submit\">Rejudge</button></form>",
                    url_segment(&info.match_id)
                );
            }
            body.push_str("</td>");
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div>\n");
}

/// The live snapshot of one tournament: its summary, every standings row
/// and every match's changing cells.
pub async fn snapshot(state: &AppState, id: &TournamentId) -> WebResult<Vec<LiveItem>> {
    let view = view::tournament(&state.coordinator, id, true).await?;
    let mut items = vec![LiveItem::new(
        "tournament",
        &view.summary.spec.id,
        view.summary.fields(),
    )];
    items.extend(
        view.standings
            .rows
            .iter()
            .map(|row| LiveItem::new("entrant", &row.name, view::standing_fields(row))),
    );
    items.extend(view.matches.iter().map(|info| {
        LiveItem::new(
            "match",
            &info.match_id,
            view::match_fields(&state.coordinator, &view, info),
        )
    }));
    Ok(items)
}
