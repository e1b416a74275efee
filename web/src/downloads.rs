//! The tournament's standings and results as files:
//! `/tournaments/{id}/standings.csv`, `standings.json`, `results.csv` and
//! `results.json`, the same text `arena export` writes (the coordinator
//! crate formats both), served as attachments named after the tournament.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::ids::{PathParams, TournamentId};
use arena_coordinator::standings::results_csv;

/// What is downloaded, from the file name in the path.
enum Download {
    StandingsCsv,
    StandingsJson,
    ResultsCsv,
    ResultsJson,
}

impl Download {
    fn of(file: &str) -> Option<Download> {
        match file {
            "standings.csv" => Some(Download::StandingsCsv),
            "standings.json" => Some(Download::StandingsJson),
            "results.csv" => Some(Download::ResultsCsv),
            "results.json" => Some(Download::ResultsJson),
            _ => None,
        }
    }

    fn content_type(&self) -> &'static str {
        match self {
            Download::StandingsCsv | Download::ResultsCsv => "text/csv; charset=utf-8",
            Download::StandingsJson | Download::ResultsJson => "application/json",
        }
    }
}

pub async fn download(
    State(state): State<AppState>,
    PathParams((id, file)): PathParams<(String, String)>,
) -> WebResult<Response> {
    let id = TournamentId::parse(&id)?;
    let Some(what) = Download::of(&file) else {
        return Err(WebError::NotFound(
            "no such download: standings.csv, standings.json, results.csv and results.json exist"
                .to_owned(),
        ));
    };
    let coordinator = &state.coordinator;
    let store_error =
        |e| WebError::Coordinator(arena_coordinator::service::CoordinatorError::from(e));
    let text = match what {
        // An unknown tournament is the coordinator's 404.
        Download::StandingsCsv => coordinator.standings(id.as_str()).await?.to_csv(),
        Download::StandingsJson => {
            format!("{}\n", coordinator.standings(id.as_str()).await?.to_json())
        }
        Download::ResultsCsv | Download::ResultsJson => {
            let spec = coordinator
                .store()
                .tournament(id.as_str())
                .await
                .map_err(store_error)?
                .ok_or_else(|| WebError::NotFound(format!("no tournament {}", id.as_str())))?;
            let results = coordinator
                .store()
                .results(id.as_str())
                .await
                .map_err(store_error)?;
            if matches!(what, Download::ResultsCsv) {
                results_csv(&spec.entrants, &results)
            } else {
                let json = serde_json::to_string_pretty(&results)
                    .map_err(|e| WebError::Internal(format!("writing the results: {e}")))?;
                format!("{json}\n")
            }
        }
    };
    let disposition = format!("attachment; filename=\"{}-{file}\"", id.as_str());
    Ok((
        [
            (header::CONTENT_TYPE, what.content_type().to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        text,
    )
        .into_response())
}
