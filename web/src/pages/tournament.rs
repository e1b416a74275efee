//! `/tournaments/{id}`: the standings (with what they mean and the
//! downloads), then the matches by round, filtered by entrant, round and
//! state when the query asks; the organiser's cancel and rejudge buttons
//! for an admin. Every element a live update may touch is rendered, hidden
//! where it does not apply yet, so the page stays right without a reload.

use std::fmt::Write as _;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Html;
use serde::Deserialize;

use crate::AppState;
use crate::error::WebResult;
use crate::html::{esc, field_cell, page, url_segment};
use crate::ids::{PathParams, TournamentId};
use crate::view::{self, LiveItem, RATING_MEANING, StandingColumns, TIE_BREAKS, TournamentView};
use crate::viewer::Viewer;
use arena_coordinator::domain::Format;
use arena_coordinator::store::{MatchInfo, MatchState};

/// The match list's filters, from the query string; empty means all.
#[derive(Debug, Default, Deserialize)]
pub struct MatchFilter {
    /// An entrant id: matches it plays in.
    #[serde(default)]
    pub entrant: Option<String>,
    /// A round, 1-based as shown.
    #[serde(default)]
    pub round: Option<String>,
    /// A state word (`queued`, `running`, `done`, `dropped`, `stuck`).
    #[serde(default)]
    pub state: Option<String>,
}

impl MatchFilter {
    fn given(value: &Option<String>) -> Option<&str> {
        value.as_deref().filter(|v| !v.is_empty())
    }

    fn keeps(&self, info: &MatchInfo) -> bool {
        let entrant =
            Self::given(&self.entrant).is_none_or(|e| info.pairing.seats.iter().any(|s| s == e));
        let round = Self::given(&self.round)
            .is_none_or(|r| r.parse::<u32>().is_ok_and(|r| r == info.round + 1));
        let state = Self::given(&self.state).is_none_or(|s| view::state_word(&info.state) == s);
        entrant && round && state
    }

    fn any(&self) -> bool {
        [&self.entrant, &self.round, &self.state]
            .iter()
            .any(|v| Self::given(v).is_some())
    }
}

pub async fn tournament(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    filter: Result<Query<MatchFilter>, QueryRejection>,
    viewer: Viewer,
) -> WebResult<Html<String>> {
    let id = TournamentId::parse(&id)?;
    let Query(filter) = filter.map_err(|e| crate::error::WebError::BadRequest(e.body_text()))?;
    let view = view::tournament(&state.coordinator, &id, true).await?;
    let spec = &view.summary.spec;
    let seg = url_segment(&spec.id);
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1>\n<div class=\"summary\" data-tournament=\"{}\"><p><span class=\"id\">{}</span> · {} · {} · {} seats · \
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
    if viewer.is_admin() {
        // Only a running tournament can be cancelled; the button follows
        // the state live, and the server refuses it otherwise anyway.
        let _ = writeln!(
            body,
            "<form method=\"post\" action=\"/tournaments/{seg}/cancel\" class=\"admin\" data-show=\"cancel\"{}>\
             <button type=\"submit\" class=\"danger\">Cancel tournament</button></form>",
            hidden_unless(view.summary.state() == "running")
        );
    }
    body.push_str("</div>\n");
    standings_table(&mut body, &view);
    matches_table(&mut body, &state, &view, &viewer, &filter);
    let live = format!("/tournaments/{seg}/events");
    Ok(page(&spec.name, &viewer, Some(&live), &body))
}

fn hidden_unless(shown: bool) -> &'static str {
    if shown { "" } else { " hidden" }
}

fn field<'a>(fields: &'a view::Fields, name: &str) -> &'a str {
    fields
        .iter()
        .find(|(f, _)| *f == name)
        .map_or("", |(_, text)| text.as_str())
}

fn standings_table(body: &mut String, view: &TournamentView) {
    let spec = &view.summary.spec;
    let seg = url_segment(&spec.id);
    let columns = StandingColumns::of(spec);
    let placements = view.placements();
    let _ = writeln!(
        body,
        "<h2>Standings</h2>\n<p class=\"downloads\">Download: \
         <a href=\"/tournaments/{seg}/standings.csv\" download>standings CSV</a> · \
         <a href=\"/tournaments/{seg}/standings.json\" download>standings JSON</a> · \
         <a href=\"/tournaments/{seg}/results.csv\" download>results CSV</a> · \
         <a href=\"/tournaments/{seg}/results.json\" download>results JSON</a>{}</p>",
        if is_two_seat_round_robin(view) {
            format!(" · <a href=\"/tournaments/{seg}/crosstable\">crosstable</a>")
        } else {
            String::new()
        }
    );
    body.push_str("<div class=\"scroll\"><table class=\"standings\">\n<thead><tr><th>Name</th>");
    for (_, heading, meaning) in columns.headings() {
        let _ = write!(body, "<th title=\"{}\">{}</th>", esc(meaning), esc(heading));
    }
    body.push_str("</tr></thead>\n<tbody data-sorted>\n");
    for (order, row) in view.standings.rows.iter().enumerate() {
        let _ = write!(
            body,
            "<tr data-entrant=\"{}\" data-order=\"{order}\"><th scope=\"row\">\
             <a href=\"/tournaments/{seg}/entrants/{}\">{}</a></th>",
            esc(&row.name),
            url_segment(&row.entrant),
            esc(&row.name)
        );
        let counts = placements.get(&row.entrant).map(Vec::as_slice);
        for (field, text) in view::standing_fields(row, &columns, counts) {
            field_cell(body, field, &text);
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div>\n");
    let _ = writeln!(
        body,
        "<p class=\"explain\">{} Rating: {}. Hover over a heading for what its column counts.</p>",
        esc(TIE_BREAKS),
        esc(RATING_MEANING)
    );
}

/// Whether the crosstable applies: two seats a match, everyone meeting
/// everyone.
pub fn is_two_seat_round_robin(view: &TournamentView) -> bool {
    let spec = &view.summary.spec;
    spec.seats == 2 && spec.teams.is_empty() && matches!(spec.format, Format::RoundRobin { .. })
}

/// The filter form above the match list: entrant, round and state, each
/// keeping what the query chose.
fn filter_form(body: &mut String, view: &TournamentView, filter: &MatchFilter) {
    let spec = &view.summary.spec;
    let _ = write!(
        body,
        "<form method=\"get\" class=\"filters\" action=\"/tournaments/{}\">\
         <label>Entrant <select name=\"entrant\"><option value=\"\">all</option>",
        url_segment(&spec.id)
    );
    let chosen = |value: &Option<String>, option: &str| {
        if value.as_deref() == Some(option) {
            " selected"
        } else {
            ""
        }
    };
    for entrant in &spec.entrants {
        let _ = write!(
            body,
            "<option value=\"{}\"{}>{}</option>",
            esc(&entrant.id),
            chosen(&filter.entrant, &entrant.id),
            esc(&entrant.name)
        );
    }
    body.push_str(
        "</select></label> <label>Round <select name=\"round\"><option value=\"\">all</option>",
    );
    let mut rounds: Vec<u32> = view.matches.iter().map(|m| m.round + 1).collect();
    rounds.dedup();
    for round in rounds {
        let text = round.to_string();
        let _ = write!(
            body,
            "<option value=\"{text}\"{}>{text}</option>",
            chosen(&filter.round, &text)
        );
    }
    body.push_str(
        "</select></label> <label>State <select name=\"state\"><option value=\"\">all</option>",
    );
    for word in ["queued", "running", "done", "dropped", "stuck"] {
        let _ = write!(
            body,
            "<option value=\"{word}\"{}>{word}</option>",
            chosen(&filter.state, word)
        );
    }
    body.push_str("</select></label> <button type=\"submit\">Filter</button>");
    if filter.any() {
        let _ = write!(
            body,
            " <a href=\"/tournaments/{}\">show all</a>",
            url_segment(&spec.id)
        );
    }
    body.push_str("</form>\n");
}

fn matches_table(
    body: &mut String,
    state: &AppState,
    view: &TournamentView,
    viewer: &Viewer,
    filter: &MatchFilter,
) {
    body.push_str("<h2>Matches</h2>\n");
    if view.matches.is_empty() {
        body.push_str("<p>No matches scheduled yet.</p>\n");
        return;
    }
    filter_form(body, view, filter);
    let shown: Vec<&MatchInfo> = view.matches.iter().filter(|m| filter.keeps(m)).collect();
    if shown.is_empty() {
        body.push_str("<p class=\"none\">No match fits the filter.</p>\n");
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
    for info in shown {
        // Matches come in schedule order: each round opens its own body.
        if round != Some(info.round) {
            if round.is_some() {
                body.push_str("</tbody>\n");
            }
            round = Some(info.round);
            let _ = writeln!(
                body,
                "<tbody data-round=\"{0}\"><tr class=\"round\"><th colspan=\"{columns}\">Round {1} \
                 · <span data-field=\"progress\">{2}</span></th></tr>",
                info.round,
                info.round + 1,
                esc(round_progress(view, info.round)),
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
            let _ = write!(
                body,
                "<td><form method=\"post\" action=\"/matches/{}/rejudge\" class=\"inline\" \
                 data-show=\"rejudge\"{}><button type=\"submit\">Rejudge</button></form></td>",
                url_segment(&info.match_id),
                hidden_unless(is_done(info))
            );
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div>\n");
}

fn is_done(info: &MatchInfo) -> bool {
    matches!(info.state, MatchState::Done { .. })
}

/// "3/4 done" for one round.
fn round_progress(view: &TournamentView, round: u32) -> String {
    let in_round = view.matches.iter().filter(|m| m.round == round);
    let done = in_round.clone().filter(|m| is_done(m)).count();
    format!("{done}/{} done", in_round.count())
}

/// The live snapshot of one tournament: its summary (and whether it can
/// still be cancelled), every standings row in rank order, every round's
/// progress and every match's changing cells (and whether it can be
/// rejudged).
pub async fn snapshot(state: &AppState, id: &TournamentId) -> WebResult<Vec<LiveItem>> {
    let view = view::tournament(&state.coordinator, id, true).await?;
    let running = view.summary.state() == "running";
    let mut items = vec![
        LiveItem::new("tournament", &view.summary.spec.id, view.summary.fields())
            .showing("cancel", running),
    ];
    let columns = StandingColumns::of(&view.summary.spec);
    let placements = view.placements();
    items.extend(view.standings.rows.iter().enumerate().map(|(order, row)| {
        let counts = placements.get(&row.entrant).map(Vec::as_slice);
        LiveItem::new(
            "entrant",
            &row.name,
            view::standing_fields(row, &columns, counts),
        )
        .ordered(order)
    }));
    let mut rounds: Vec<u32> = view.matches.iter().map(|m| m.round).collect();
    rounds.dedup();
    items.extend(rounds.into_iter().map(|round| {
        LiveItem::new(
            "round",
            &round.to_string(),
            vec![("progress", round_progress(&view, round))],
        )
    }));
    items.extend(view.matches.iter().map(|info| {
        LiveItem::new(
            "match",
            &info.match_id,
            view::match_fields(&state.coordinator, &view, info),
        )
        .showing("rejudge", is_done(info))
    }));
    Ok(items)
}
