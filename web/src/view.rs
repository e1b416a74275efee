//! What the pages show, read from the coordinator and formatted once: the
//! tournament page and its live snapshots render the same cells from the
//! same functions, so a live update writes exactly the text a reload would.

use std::collections::HashMap;

use arena_coordinator::domain::{Format, MatchRecord, baseline_name};
use arena_coordinator::service::{Coordinator, is_finished};
use arena_coordinator::standings::{StandingRow, Standings};
use arena_coordinator::store::{MatchInfo, MatchState, Status, TournamentSpec};
use serde::Serialize;

use crate::error::{WebError, WebResult};
use crate::html::{num, place};
use crate::ids::TournamentId;
use crate::source;

/// Cells of one row, by `data-field` name, in column order.
pub type Fields = Vec<(&'static str, String)>;

/// A tournament as the list shows it.
pub struct Summary {
    /// The tournament as created, `cancelled` as it is now.
    pub spec: TournamentSpec,
    /// Its match counts and rounds scheduled.
    pub status: Status,
    /// `None` when the format's round count cannot be worked out (the
    /// game is no longer registered).
    pub rounds_total: Option<u32>,
}

/// Everything the tournament page shows.
pub struct TournamentView {
    /// The tournament and its progress.
    pub summary: Summary,
    /// The table; empty when not asked for.
    pub standings: Standings,
    /// Every match, in schedule order.
    pub matches: Vec<MatchInfo>,
    /// Accepted results by match id.
    pub results: HashMap<String, MatchRecord>,
}

pub async fn summary(coordinator: &Coordinator, id: &str) -> WebResult<Option<Summary>> {
    let Some(spec) = coordinator.store().tournament(id).await.map_err(into_web)? else {
        return Ok(None);
    };
    let status = coordinator.store().status(id).await.map_err(into_web)?;
    let rounds_total = Coordinator::rounds_total(&spec).ok();
    Ok(Some(Summary {
        spec,
        status,
        rounds_total,
    }))
}

/// Every tournament, in id order.
pub async fn summaries(coordinator: &Coordinator) -> WebResult<Vec<Summary>> {
    let mut all = Vec::new();
    for id in coordinator.store().tournaments().await.map_err(into_web)? {
        // A tournament listed but gone by the time it is read is skipped.
        if let Some(summary) = summary(coordinator, &id).await? {
            all.push(summary);
        }
    }
    Ok(all)
}

/// A tournament with its matches and results, and its standings when
/// `with_standings` (pages about one match need none, and computing them
/// replays every result).
pub async fn tournament(
    coordinator: &Coordinator,
    id: &TournamentId,
    with_standings: bool,
) -> WebResult<TournamentView> {
    let id = id.as_str();
    let summary = summary(coordinator, id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no tournament {id}")))?;
    let standings = if with_standings {
        coordinator.standings(id).await?
    } else {
        Standings::default()
    };
    let matches = coordinator.store().matches(id).await.map_err(into_web)?;
    let results = coordinator
        .store()
        .results(id)
        .await
        .map_err(into_web)?
        .into_iter()
        .map(|r| (r.match_id.clone(), r))
        .collect();
    Ok(TournamentView {
        summary,
        standings,
        matches,
        results,
    })
}

fn into_web(e: arena_coordinator::store::StoreError) -> WebError {
    WebError::Coordinator(e.into())
}

impl Summary {
    /// running, finished or cancelled.
    pub fn state(&self) -> &'static str {
        if self.spec.cancelled {
            "cancelled"
        } else if self
            .rounds_total
            .is_some_and(|total| is_finished(&self.status, total))
        {
            "finished"
        } else {
            "running"
        }
    }

    pub fn fields(&self) -> Fields {
        let rounds_total = self
            .rounds_total
            .map_or_else(|| "?".to_owned(), |t| t.to_string());
        vec![
            ("state", self.state().to_owned()),
            (
                "matches",
                format!("{}/{}", self.status.done, self.status.total),
            ),
            (
                "rounds",
                format!("{}/{rounds_total}", self.status.rounds_scheduled),
            ),
        ]
    }

    pub fn format(&self) -> String {
        match self.spec.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } => {
                format!("round robin ({cycles} cycle(s), {games_per_pairing} game(s) per pairing)")
            }
            Format::Swiss { rounds } => format!("Swiss ({rounds} rounds)"),
        }
    }
}

impl TournamentView {
    /// The display name of an entrant id (a baseline seat keeps its id).
    pub fn name_of<'a>(&'a self, entrant: &'a str) -> &'a str {
        if baseline_name(entrant).is_some() {
            return entrant;
        }
        self.summary
            .spec
            .entrants
            .iter()
            .find(|e| e.id == entrant)
            .map_or(entrant, |e| e.name.as_str())
    }
}

/// The standings cells of one row.
pub fn standing_fields(row: &StandingRow) -> Fields {
    let low = row.rating_mu - 2.0 * row.rating_sigma;
    let high = row.rating_mu + 2.0 * row.rating_sigma;
    let forfeits = if row.forfeits.is_empty() {
        "—".to_owned()
    } else {
        row.forfeits
            .iter()
            .map(|(kind, count)| format!("{} {count}", kind.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        ("rank", row.rank.to_string()),
        ("points", num(row.points)),
        (
            "rating",
            format!(
                "{:.1} ± {:.1} [{:.1}, {:.1}]",
                row.rating_mu,
                2.0 * row.rating_sigma,
                low,
                high
            ),
        ),
        ("conservative", num(row.rating_conservative)),
        ("buchholz", num(row.buchholz)),
        ("sb", num(row.sonneborn_berger)),
        ("games", row.games.to_string()),
        ("wdl", format!("{}/{}/{}", row.wins, row.draws, row.losses)),
        ("byes", row.byes.to_string()),
        ("timeouts", row.timeouts.to_string()),
        ("malformed", row.malformed.to_string()),
        ("illegal", row.illegal.to_string()),
        ("fuel", row.fuel_exhausted.to_string()),
        ("strikes", row.strikes.to_string()),
        ("forfeits", forfeits),
    ]
}

/// The column headings of [`standing_fields`], in its order.
pub const STANDING_HEADINGS: [&str; 15] = [
    "Rank",
    "Points",
    "Rating (μ ± 2σ)",
    "Conservative",
    "Buchholz",
    "SB",
    "Games",
    "W/D/L",
    "Byes",
    "Timeouts",
    "Malformed",
    "Illegal",
    "Fuel out",
    "Strikes",
    "Forfeits",
];

/// The word for a match's state.
pub fn state_word(state: &MatchState) -> &'static str {
    match state {
        MatchState::Queued => "queued",
        MatchState::Leased { .. } => "running",
        MatchState::Done { .. } => "done",
        MatchState::Dropped => "dropped",
        MatchState::Stuck => "stuck",
    }
}

/// The changing cells of one match row.
pub fn match_fields(coordinator: &Coordinator, view: &TournamentView, info: &MatchInfo) -> Fields {
    let record = view.results.get(&info.match_id);
    let (worker, turn) = match &info.state {
        MatchState::Leased { worker, .. } => (
            worker.clone(),
            source::progress(coordinator, &info.match_id)
                .map_or_else(String::new, |t| format!("turn {t}")),
        ),
        _ => (
            record.map_or_else(String::new, |r| source::record_worker(r).to_owned()),
            String::new(),
        ),
    };
    let result = record.map_or_else(String::new, |r| result_text(view, r));
    vec![
        ("state", state_word(&info.state).to_owned()),
        ("worker", worker),
        ("attempt", info.attempt.to_string()),
        ("turn", turn),
        ("result", result),
    ]
}

/// "1st alice, 2nd bob · reason · 120 turns".
pub fn result_text(view: &TournamentView, record: &MatchRecord) -> String {
    let mut seats: Vec<_> = record.seats.iter().collect();
    seats.sort_by_key(|s| s.rank);
    let placements: Vec<String> = seats
        .iter()
        .map(|s| format!("{} {}", place(s.rank), view.name_of(&s.entrant)))
        .collect();
    format!(
        "{} · {} · {} turns",
        placements.join(", "),
        record.reason,
        record.turns
    )
}

/// One keyed element of a live snapshot: the element with
/// `data-ATTR="KEY"` gets each field's text in its `data-field` child.
#[derive(Debug, Serialize, PartialEq)]
pub struct LiveItem {
    /// The data attribute naming the element, without `data-`.
    pub attr: &'static str,
    /// That attribute's value.
    pub key: String,
    /// Text by `data-field` name.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl LiveItem {
    pub fn new(attr: &'static str, key: &str, fields: Fields) -> LiveItem {
        LiveItem {
            attr,
            key: key.to_owned(),
            fields: fields
                .into_iter()
                .map(|(name, text)| (name.to_owned(), serde_json::Value::String(text)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> StandingRow {
        StandingRow {
            rank: 2,
            entrant: "e".into(),
            name: "alice".into(),
            points: 1.5,
            buchholz: 3.0,
            sonneborn_berger: 1.25,
            rating_mu: 25.0,
            rating_sigma: 2.5,
            rating_conservative: 17.5,
            games: 3,
            wins: 1,
            draws: 1,
            losses: 1,
            byes: 0,
            timeouts: 4,
            malformed: 0,
            illegal: 0,
            fuel_exhausted: 0,
            strikes: 0,
            forfeits: [(arena_engine::Forfeit::Crash, 1)].into(),
        }
    }

    #[test]
    fn standings_cells_show_the_rating_interval_and_forfeits_by_kind() {
        let fields = standing_fields(&row());
        assert_eq!(fields.len(), STANDING_HEADINGS.len());
        let cell = |name: &str| {
            fields
                .iter()
                .find(|(f, _)| *f == name)
                .map(|(_, text)| text.clone())
                .unwrap()
        };
        assert_eq!(cell("rating"), "25.0 ± 5.0 [20.0, 30.0]");
        assert_eq!(cell("conservative"), "17.50");
        assert_eq!(cell("wdl"), "1/1/1");
        assert_eq!(cell("forfeits"), "crash 1");
    }
}
