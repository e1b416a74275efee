//! `/matches/{id}`: one match's replay viewer first (so its controls are in
//! view on a laptop's screen), then its attempts, placements, per-seat
//! faults and stats, the replay download and the seat logs the viewer may
//! read. The result (reason, turns, placements) is marked `data-spoiler`:
//! the viewer hides it while its "hide result" is on.

use std::fmt::Write as _;

use arena_coordinator::domain::{
    FUEL_EXHAUSTED_STAT, FUEL_MAX_STAT, FUEL_P50_STAT, ILLEGAL_STAT, LATENCY_P50_STAT,
    LATENCY_P99_STAT, MatchRecord, STRIKE_STAT, baseline_name,
};
use arena_coordinator::store::{MatchInfo, MatchState};
use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::html::{esc, num, page, place, url_segment};
use crate::ids::{MatchId, PathParams};
use crate::source;
use crate::view::{self, TournamentView};
use crate::viewer::Viewer;

/// A match with its tournament, as the match's pages need it.
pub struct Found {
    /// Its tournament, without standings.
    pub view: TournamentView,
    /// The match itself.
    pub info: MatchInfo,
}

/// Looks a match up: 404 if its tournament or the match is unknown.
pub async fn find(state: &AppState, id: &MatchId) -> WebResult<Found> {
    let view = match view::tournament(&state.coordinator, id.tournament(), false).await {
        Err(WebError::NotFound(_)) => {
            return Err(WebError::NotFound(format!("no match {}", id.as_str())));
        }
        other => other?,
    };
    let info = view
        .matches
        .iter()
        .find(|m| m.match_id == id.as_str())
        .cloned()
        .ok_or_else(|| WebError::NotFound(format!("no match {}", id.as_str())))?;
    Ok(Found { view, info })
}

pub async fn match_page(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
) -> WebResult<Html<String>> {
    let id = MatchId::parse(&id)?;
    let Found { view, info } = find(&state, &id).await?;
    let spec = &view.summary.spec;
    let record = view.results.get(&info.match_id);
    let seg = url_segment(&info.match_id);
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>Match {}</h1>\n<p><a href=\"/tournaments/{}\">{}</a> · {} · round {} · \
         <span class=\"state\">{}</span></p>",
        esc(&info.match_id),
        url_segment(&spec.id),
        esc(&spec.name),
        esc(&spec.game),
        info.round + 1,
        esc(view::state_word(&info.state)),
    );
    if viewer.is_admin() && matches!(info.state, MatchState::Done { .. }) {
        let _ = writeln!(
            body,
            "<form method=\"post\" action=\"/matches/{seg}/rejudge\" class=\"admin\">\
             <button type=\"submit\">Rejudge</button></form>"
        );
    }
    if source::has_replay(&state.coordinator, &info.match_id).await? {
        replay_viewer(&mut body, &view, &info, record);
    } else if matches!(info.state, MatchState::Leased { .. }) {
        live_board(&mut body, &view, &info, &viewer);
    }
    attempts(&mut body, &state, &info, record);
    match record {
        Some(record) => placements(&mut body, &view, record),
        None => {
            body.push_str("<h2>Seats</h2>\n<ol class=\"seats\">\n");
            for seat in &info.pairing.seats {
                let _ = writeln!(body, "<li>{}</li>", esc(view.name_of(seat)));
            }
            body.push_str("</ol>\n");
        }
    }
    logs(&mut body, &state, &viewer, &view, &info).await?;
    Ok(page(
        &format!("Match {}", info.match_id),
        &viewer,
        None,
        &body,
    ))
}

/// The replay viewer (`web/assets/viewer/README.md`): the frames, the seats'
/// names, each seat's colour index ([`seat_colours`]) and each seat's
/// forfeit from the stored result (a forfeit that ended the match has no
/// turn of its own in the frames).
fn replay_viewer(
    body: &mut String,
    view: &TournamentView,
    info: &MatchInfo,
    record: Option<&MatchRecord>,
) {
    let spec = &view.summary.spec;
    let seg = url_segment(&info.match_id);
    let names: Vec<&str> = info.pairing.seats.iter().map(|s| view.name_of(s)).collect();
    let colours = seat_colours(view, info);
    let forfeits: Vec<Option<&str>> = record.map_or_else(Vec::new, |r| {
        r.seats
            .iter()
            .map(|s| s.forfeit.map(|f| f.as_str()))
            .collect()
    });
    let _ = writeln!(
        body,
        "<h2>Replay</h2>\n<div id=\"viewer\" class=\"viewer\" data-game=\"{}\" \
         data-frames=\"/matches/{seg}/frames.json\" data-replay=\"/matches/{seg}/replay.json\" \
         data-seats='{}' data-colors='{}' data-forfeits='{}'></div>\n\
         <script type=\"module\" src=\"/assets/viewer/viewer.js\"></script>\n\
         <p><a href=\"/matches/{seg}/replay.json\" download>Download the replay</a></p>",
        esc(&spec.game),
        esc(json_list(&names)),
        esc(json_list(&colours)),
        esc(json_list(&forfeits)),
    );
}

/// Each seat's colour index: its entrant's place in the tournament's
/// entrants, so an entrant keeps its colour from match to match; baselines
/// come after the entrants, in the game's order of baselines.
fn seat_colours(view: &TournamentView, info: &MatchInfo) -> Vec<usize> {
    let spec = &view.summary.spec;
    let baselines = arena_engine::registry::find(&spec.game).map_or(&[][..], |g| g.baselines);
    info.pairing
        .seats
        .iter()
        .map(|seat| match baseline_name(seat) {
            Some(name) => {
                spec.entrants.len() + baselines.iter().position(|b| *b == name).unwrap_or(0)
            }
            None => spec
                .entrants
                .iter()
                .position(|e| &e.id == seat)
                .unwrap_or(spec.entrants.len()),
        })
        .collect()
}

/// A running match: its stream (`/matches/{id}/live`, read by
/// `live-match.js`, which moves the turn and reloads the page when the
/// match ends) and, for viewers the tournament lets watch it, the viewer in
/// live mode, drawing each board the stream brings.
fn live_board(body: &mut String, view: &TournamentView, info: &MatchInfo, viewer: &Viewer) {
    let spec = &view.summary.spec;
    let seg = url_segment(&info.match_id);
    let _ = write!(
        body,
        "<section class=\"live-match\" data-match-live=\"/matches/{seg}/live\">\n<h2>Live</h2>\n"
    );
    if viewer.may_watch_live_board(spec.live_board) {
        let names: Vec<&str> = info.pairing.seats.iter().map(|s| view.name_of(s)).collect();
        let _ = writeln!(
            body,
            "<div id=\"viewer\" class=\"viewer\" data-game=\"{}\" data-live=\"true\" \
             data-seats='{}' data-colors='{}'></div>\n\
             <script type=\"module\" src=\"/assets/viewer/viewer.js\"></script>\n\
             <p class=\"note\">The board is the one the worker last reported: it lags the match \
             by a second or two. The replay takes its place when the match has finished.</p>",
            esc(&spec.game),
            esc(json_list(&names)),
            esc(json_list(&seat_colours(view, info))),
        );
    } else {
        body.push_str(
            "<p class=\"note\" data-live-board=\"hidden\">This tournament shows the board of a \
             running match to its organisers only (a spectator could tell a bot's author what \
             the bot cannot see). Everyone can watch the whole match here once it has finished.</p>\n",
        );
    }
    body.push_str("</section>\n<script type=\"module\" src=\"/assets/live-match.js\"></script>\n");
}

/// A list as JSON for a data attribute (escaped by the caller).
fn json_list<T: serde::Serialize>(list: &[T]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".to_owned())
}

fn attempts(body: &mut String, state: &AppState, info: &MatchInfo, record: Option<&MatchRecord>) {
    body.push_str("<dl class=\"facts\">");
    let _ = write!(body, "<dt>Attempt</dt><dd>{}</dd>", info.attempt);
    match &info.state {
        MatchState::Leased { worker, .. } => {
            let _ = write!(body, "<dt>Worker</dt><dd>{}</dd>", esc(worker));
            let turn = source::progress(&state.coordinator, &info.match_id)
                .map_or_else(|| "not reported yet".to_owned(), |t| t.to_string());
            let _ = write!(body, "<dt>Turn</dt><dd data-live-turn>{turn}</dd>");
        }
        _ => {
            let worker = record.map_or("", source::record_worker);
            if !worker.is_empty() {
                let _ = write!(body, "<dt>Worker</dt><dd>{}</dd>", esc(worker));
            }
        }
    }
    body.push_str("</dl>\n");
    if let Some(record) = record {
        let _ = writeln!(
            body,
            "<dl class=\"facts\" data-spoiler><dt>Reason</dt><dd>{}</dd><dt>Turns</dt><dd>{}</dd></dl>",
            esc(crate::view::reason_words(&record.reason)),
            record.turns
        );
    }
    if !info.failures.is_empty() {
        body.push_str("<h2>Failed attempts</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>Attempt</th><th>Worker</th><th>Reason</th></tr></thead>\n<tbody>\n");
        for failure in &info.failures {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                failure.attempt,
                esc(&failure.worker),
                esc(&failure.reason)
            );
        }
        body.push_str("</tbody></table></div>\n");
    }
}

/// Stats shown in their own columns, so not again among the others.
const OWN_COLUMNS: [&str; 7] = [
    ILLEGAL_STAT,
    FUEL_EXHAUSTED_STAT,
    FUEL_P50_STAT,
    FUEL_MAX_STAT,
    STRIKE_STAT,
    LATENCY_P50_STAT,
    LATENCY_P99_STAT,
];

fn placements(body: &mut String, view: &TournamentView, record: &MatchRecord) {
    body.push_str(
        "<section data-spoiler>\n<h2>Placements</h2>\n<div class=\"scroll\"><table class=\"placements\">\n<thead><tr>\
         <th>Seat</th><th>Entrant</th><th>Place</th><th>Score</th><th>Forfeit</th><th>Moves</th>\
         <th>Timeouts</th><th>Malformed</th><th>Illegal</th><th>Latency p50/p99 ms</th><th>Fuel out</th>\
         <th>Fuel p50/max</th><th>Strikes</th><th>Other stats</th></tr></thead>\n<tbody>\n",
    );
    for (seat, result) in record.seats.iter().enumerate() {
        let fuel = match (
            result.stats.get(FUEL_P50_STAT),
            result.stats.get(FUEL_MAX_STAT),
        ) {
            (None, None) => "—".to_owned(),
            (p50, max) => format!(
                "{}/{}",
                p50.copied().unwrap_or(0),
                max.copied().unwrap_or(0)
            ),
        };
        let latency = result
            .latency_ms()
            .map_or("—".to_owned(), |(p50, p99)| format!("{p50:.2}/{p99:.2}"));
        let others: Vec<String> = result
            .stats
            .iter()
            .filter(|(k, _)| !OWN_COLUMNS.contains(&k.as_str()))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            body,
            "<tr data-seat=\"{seat}\"><td>{seat}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(view.name_of(&result.entrant)),
            place(result.rank),
            num(result.score),
            crate::view::forfeit_text(result.forfeit),
            result.moves,
            result.timeouts,
            result.malformed,
            result.illegal(),
            esc(latency),
            result.fuel_exhausted(),
            esc(fuel),
            result.strikes(),
            esc(if others.is_empty() {
                "—".to_owned()
            } else {
                others.join(", ")
            }),
        );
    }
    body.push_str("</tbody></table></div>\n</section>\n");
}

/// The logs section: only the seats the viewer may read, each inline.
async fn logs(
    body: &mut String,
    state: &AppState,
    viewer: &Viewer,
    view: &TournamentView,
    info: &MatchInfo,
) -> WebResult<()> {
    let visible: Vec<(usize, &String)> = info
        .pairing
        .seats
        .iter()
        .enumerate()
        .filter(|(_, entrant)| viewer.may_see_log_of(entrant))
        .collect();
    if visible.is_empty() {
        return Ok(());
    }
    body.push_str("<h2>Bot logs</h2>\n");
    let seg = url_segment(&info.match_id);
    for (seat, entrant) in visible {
        let _ = write!(
            body,
            "<section class=\"log\" data-log-seat=\"{seat}\"><h3><a href=\"/matches/{seg}/logs/{seat}\">Seat {seat}</a> · {}</h3>",
            esc(view.name_of(entrant))
        );
        match source::seat_log(&state.coordinator, &info.match_id, seat).await? {
            Some(log) => {
                let _ = write!(body, "<pre>{}</pre>", esc(String::from_utf8_lossy(&log)));
            }
            None => body.push_str("<p>No log stored.</p>"),
        }
        body.push_str("</section>\n");
    }
    Ok(())
}
