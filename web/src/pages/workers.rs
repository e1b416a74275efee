//! `/workers`: every registered worker, what it offers, when it was last
//! heard from, how many matches it played and how many attempts failed on it.

use std::collections::HashMap;
use std::fmt::Write as _;

use arena_coordinator::service::now_ms;
use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::html::{esc, page};
use crate::source;
use crate::viewer::Viewer;

/// Per worker id: (matches played, failed attempts), over every tournament.
async fn tallies(state: &AppState) -> WebResult<HashMap<String, (u64, u64)>> {
    let store = state.coordinator.store();
    let mut tally: HashMap<String, (u64, u64)> = HashMap::new();
    let store_error =
        |e| WebError::Coordinator(arena_coordinator::service::CoordinatorError::Store(e));
    for tournament in store.tournaments().await.map_err(store_error)? {
        for record in store.results(&tournament).await.map_err(store_error)? {
            let worker = source::record_worker(&record);
            if !worker.is_empty() {
                tally.entry(worker.to_owned()).or_default().0 += 1;
            }
        }
        for info in store.matches(&tournament).await.map_err(store_error)? {
            for failure in info.failures {
                tally.entry(failure.worker).or_default().1 += 1;
            }
        }
    }
    Ok(tally)
}

pub async fn workers(State(state): State<AppState>, viewer: Viewer) -> WebResult<Html<String>> {
    let workers = state.coordinator.workers().await?;
    let tally = tallies(&state).await?;
    let now = now_ms();
    let mut body = String::from("<h1>Workers</h1>\n");
    if workers.is_empty() {
        body.push_str("<p>No worker has registered.</p>\n");
        return Ok(page("Workers", &viewer, None, &body));
    }
    body.push_str(
        "<div class=\"scroll\"><table>\n<thead><tr><th>Id</th><th>Alive</th><th>Quarantined</th>\
         <th>Slots</th><th>Cores</th><th>Memory</th><th>Environment</th><th>Wasm runtime</th><th>Model runtime</th>\
         <th>Cached builds</th><th>Last heartbeat</th><th>Matches played</th><th>Failed attempts</th>\
         </tr></thead>\n<tbody>\n",
    );
    for worker in &workers {
        let info = &worker.info;
        let seen = state
            .coordinator
            .store()
            .worker_seen(&info.id)
            .await
            .map_err(|e| WebError::Coordinator(e.into()))?
            .map_or_else(
                || "never".to_owned(),
                |at| format!("{} s ago", now.saturating_sub(at) / 1000),
            );
        let (played, failed) = tally.get(&info.id).copied().unwrap_or_default();
        let _ = writeln!(
            body,
            "<tr data-worker=\"{}\"><td>{}</td><td data-field=\"alive\">{}</td><td data-field=\"quarantined\">{}</td>\
             <td data-field=\"slots\">{}</td><td>{}</td><td>{} MiB</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td data-field=\"seen\">{}</td>\
             <td data-field=\"played\">{played}</td><td data-field=\"failed\">{failed}</td></tr>",
            esc(&info.id),
            esc(&info.id),
            yes_no(worker.alive),
            yes_no(worker.quarantined),
            if info.slots == 0 {
                "—".to_owned()
            } else {
                info.slots.to_string()
            },
            info.cores,
            info.memory_mb,
            esc(or_dash(&info.environment_id)),
            esc(or_dash(&info.wasm_runtime)),
            esc(or_dash(&info.model_runtime)),
            info.cached.len(),
            esc(seen),
        );
    }
    body.push_str("</tbody></table></div>\n");
    Ok(page("Workers", &viewer, None, &body))
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn or_dash(value: &str) -> &str {
    if value.is_empty() { "—" } else { value }
}
