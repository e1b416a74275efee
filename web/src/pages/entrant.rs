//! `/tournaments/{id}/entrants/{entrant}`: one entrant in one tournament:
//! its standing, its rating and rank after each round, how it fared
//! against each opponent, and every match it is in with its placement,
//! faults and forfeit.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use arena_coordinator::domain::{MatchRecord, baseline_name};
use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::html::{esc, num, page, place, url_segment};
use crate::ids::{PathParams, TournamentId};
use crate::view::{self, RATING_MEANING, StandingColumns, TournamentView};
use crate::viewer::Viewer;

/// Against one opponent: how often the entrant finished ahead, level
/// and behind.
#[derive(Default)]
struct HeadToHead {
    ahead: u32,
    level: u32,
    behind: u32,
}

pub async fn entrant(
    State(state): State<AppState>,
    PathParams((id, entrant)): PathParams<(String, String)>,
    viewer: Viewer,
) -> WebResult<Html<String>> {
    let id = TournamentId::parse(&id)?;
    let view = view::tournament(&state.coordinator, &id, true).await?;
    let spec = &view.summary.spec;
    let Some(me) = spec.entrants.iter().find(|e| e.id == entrant) else {
        return Err(WebError::NotFound(format!(
            "tournament {} has no entrant {:?}",
            id.as_str(),
            entrant.chars().take(80).collect::<String>()
        )));
    };
    let seg = url_segment(&spec.id);
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>{}</h1>\n<p class=\"summary\" data-entrant-page=\"{}\">in <a href=\"/tournaments/{seg}\">{}</a></p>",
        esc(&me.name),
        esc(&me.id),
        esc(&spec.name)
    );
    standing(&mut body, &view, &me.id);
    let by_round = state.coordinator.standings_by_round(id.as_str()).await?;
    rating_by_round(&mut body, &by_round, &me.id);
    head_to_head(&mut body, &view, &me.id);
    match_list(&mut body, &view, &me.id);
    Ok(page(&me.name, &viewer, None, &body))
}

fn standing(body: &mut String, view: &TournamentView, entrant: &str) {
    let Some(row) = view.standings.row(entrant) else {
        return;
    };
    let columns = StandingColumns::of(&view.summary.spec);
    let placements = view.placements();
    let fields = view::standing_fields(row, &columns, placements.get(entrant).map(Vec::as_slice));
    body.push_str(
        "<h2>Standing</h2>\n<div class=\"scroll\"><table class=\"standings one\"><thead><tr>",
    );
    for (_, heading, meaning) in columns.headings() {
        let _ = write!(body, "<th title=\"{}\">{}</th>", esc(meaning), esc(heading));
    }
    body.push_str("</tr></thead><tbody><tr>");
    for (field, text) in fields {
        let _ = write!(body, "<td data-field=\"{}\">{}</td>", esc(field), esc(text));
    }
    body.push_str("</tr></tbody></table></div>\n");
}

fn rating_by_round(
    body: &mut String,
    by_round: &[(u32, arena_coordinator::standings::Standings)],
    entrant: &str,
) {
    body.push_str("<h2>By round</h2>\n");
    if by_round.is_empty() {
        body.push_str("<p>No results yet.</p>\n");
        return;
    }
    let _ = writeln!(
        body,
        "<div class=\"scroll\"><table class=\"by-round\"><thead><tr><th>After round</th><th>Rank</th>\
         <th>Points</th><th title=\"{}\">Rating</th><th>Games</th></tr></thead><tbody>",
        esc(RATING_MEANING)
    );
    for (round, standings) in by_round {
        if let Some(row) = standings.row(entrant) {
            let _ = writeln!(
                body,
                "<tr data-round=\"{round}\"><td>{}</td><td data-field=\"rank\">{}</td>\
                 <td data-field=\"points\">{}</td><td data-field=\"rating\">{}</td>\
                 <td data-field=\"games\">{}</td></tr>",
                round + 1,
                row.rank,
                num(row.points),
                num(row.rating_conservative),
                row.games
            );
        }
    }
    body.push_str("</tbody></table></div>\n");
}

/// The seat `entrant` played in `record`, if it played.
fn seat_of<'a>(
    record: &'a MatchRecord,
    entrant: &str,
) -> Option<&'a arena_coordinator::domain::SeatResult> {
    record.seats.iter().find(|s| s.entrant == entrant)
}

fn head_to_head(body: &mut String, view: &TournamentView, entrant: &str) {
    let mut against: BTreeMap<String, HeadToHead> = BTreeMap::new();
    for record in view.results.values() {
        let Some(mine) = seat_of(record, entrant) else {
            continue;
        };
        for other in &record.seats {
            // Teammates are not opponents; nor is the entrant itself.
            if other.entrant == entrant
                || (!view.summary.spec.teams.is_empty() && other.team == mine.team)
            {
                continue;
            }
            let tally = against.entry(other.entrant.clone()).or_default();
            match mine.rank.cmp(&other.rank) {
                std::cmp::Ordering::Less => tally.ahead += 1,
                std::cmp::Ordering::Equal => tally.level += 1,
                std::cmp::Ordering::Greater => tally.behind += 1,
            }
        }
    }
    body.push_str("<h2>Against each opponent</h2>\n");
    if against.is_empty() {
        body.push_str("<p>No results yet.</p>\n");
        return;
    }
    body.push_str(
        "<div class=\"scroll\"><table class=\"head-to-head\"><thead><tr><th>Opponent</th>\
         <th title=\"finished ahead of the opponent\">Ahead</th><th title=\"finished level\">Level</th>\
         <th title=\"finished behind\">Behind</th></tr></thead><tbody>\n",
    );
    let seg = url_segment(&view.summary.spec.id);
    for (opponent, tally) in &against {
        let name = view.name_of(opponent);
        let cell = if baseline_name(opponent).is_some() {
            esc(name).to_string()
        } else {
            format!(
                "<a href=\"/tournaments/{seg}/entrants/{}\">{}</a>",
                url_segment(opponent),
                esc(name)
            )
        };
        let _ = writeln!(
            body,
            "<tr data-opponent=\"{}\"><th scope=\"row\">{cell}</th><td data-field=\"ahead\">{}</td>\
             <td data-field=\"level\">{}</td><td data-field=\"behind\">{}</td></tr>",
            esc(opponent),
            tally.ahead,
            tally.level,
            tally.behind
        );
    }
    body.push_str("</tbody></table></div>\n");
}

fn match_list(body: &mut String, view: &TournamentView, entrant: &str) {
    let mine: Vec<_> = view
        .matches
        .iter()
        .filter(|m| m.pairing.seats.iter().any(|s| s == entrant))
        .collect();
    body.push_str("<h2>Matches</h2>\n");
    if mine.is_empty() {
        body.push_str("<p>No matches scheduled yet.</p>\n");
        return;
    }
    body.push_str(
        "<div class=\"scroll\"><table class=\"matches\"><thead><tr><th>Match</th><th>Round</th>\
         <th>Seats</th><th>State</th><th>Place</th><th>Result</th><th>Faults</th><th>Forfeit</th>\
         </tr></thead><tbody>\n",
    );
    for info in mine {
        let seats: Vec<&str> = info.pairing.seats.iter().map(|s| view.name_of(s)).collect();
        let record = view.results.get(&info.match_id);
        let seat = record.and_then(|r| seat_of(r, entrant));
        let (placed, result, faults, forfeit) = match (record, seat) {
            (Some(r), Some(s)) => (
                place(s.rank),
                format!("{} · {} turns", view::reason_words(&r.reason), r.turns),
                format!(
                    "{} timeouts, {} malformed, {} illegal",
                    s.timeouts,
                    s.malformed,
                    s.illegal()
                ),
                view::forfeit_text(s.forfeit),
            ),
            _ => (String::new(), String::new(), String::new(), String::new()),
        };
        let _ = writeln!(
            body,
            "<tr data-match=\"{}\"><td><a href=\"/matches/{}\">{}</a></td><td>{}</td><td>{}</td>\
             <td data-field=\"state\">{}</td><td data-field=\"place\">{}</td><td data-field=\"result\">{}</td>\
             <td data-field=\"faults\">{}</td><td data-field=\"forfeit\">{}</td></tr>",
            esc(&info.match_id),
            url_segment(&info.match_id),
            esc(&info.match_id),
            info.round + 1,
            esc(seats.join(", ")),
            view::state_word(&info.state),
            esc(placed),
            esc(result),
            esc(faults),
            esc(forfeit)
        );
    }
    body.push_str("</tbody></table></div>\n");
}
