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

/// Which standings columns apply to a tournament: a column that cannot
/// hold anything but zero (fuel without WebAssembly entrants, strikes
/// without model-graph entrants, byes outside Swiss) is left out, and a
/// free-for-all shows placement counts instead of W/D/L.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandingColumns {
    pub byes: bool,
    pub fuel: bool,
    pub strikes: bool,
    /// `Some(seats)` in a free-for-all (more than two seats, no teams):
    /// the row counts each placement, 1st to `seats`th.
    pub placements: Option<usize>,
}

impl StandingColumns {
    pub fn of(spec: &TournamentSpec) -> StandingColumns {
        StandingColumns {
            byes: matches!(spec.format, Format::Swiss { .. }),
            fuel: !spec.wasm_entrants.is_empty(),
            strikes: !spec.model_entrants.is_empty(),
            placements: (spec.seats > 2 && spec.teams.is_empty()).then_some(spec.seats),
        }
    }

    /// `(data-field, heading, what it means)` of every column but the
    /// name, in order.
    pub fn headings(&self) -> Vec<(&'static str, String, &'static str)> {
        let mut all = vec![
            (
                "rank",
                "Rank".to_owned(),
                "entrants equal on every tie-break share a rank",
            ),
            ("points", "Points".to_owned(), "points from placements"),
            (
                "buchholz",
                "Buchholz".to_owned(),
                "the sum of the opponents' points",
            ),
            (
                "sb",
                "SB".to_owned(),
                "Sonneborn–Berger: the opponents' points, weighted by the result against each",
            ),
            ("rating", "Rating".to_owned(), RATING_MEANING),
            ("games", "Games".to_owned(), "matches played"),
        ];
        match self.placements {
            Some(seats) => all.push((
                "places",
                format!("1st…{}", place(seats as u32 - 1)),
                "how many times the entrant finished 1st, 2nd, …; a shared place counts for each",
            )),
            None => all.push((
                "wdl",
                "W/D/L".to_owned(),
                "wins, draws (a shared first place) and losses",
            )),
        }
        if self.byes {
            all.push((
                "byes",
                "Byes".to_owned(),
                "rounds without an opponent, scored as a win",
            ));
        }
        all.push((
            "forfeits",
            "Forfeits".to_owned(),
            "matches left early, by reason",
        ));
        all.push(("timeouts", "Timeouts".to_owned(), "turns answered too late"));
        all.push((
            "malformed",
            "Malformed".to_owned(),
            "replies that could not be read",
        ));
        all.push(("illegal", "Illegal".to_owned(), "replies the rules refused"));
        if self.fuel {
            all.push((
                "fuel",
                "Fuel out".to_owned(),
                "WebAssembly turns that ran out of fuel",
            ));
        }
        if self.strikes {
            all.push((
                "strikes",
                "Strikes".to_owned(),
                "model-graph turns that failed",
            ));
        }
        all
    }
}

/// What the rating column shows, in words.
pub const RATING_MEANING: &str = "μ − 3σ of a Weng–Lin rating (everyone starts at μ = 25, \
     σ = 8.33): a cautious estimate of skill that rises as results make it surer";

/// The order the standings are ranked in, in words.
pub const TIE_BREAKS: &str = "Ranked by points, then Buchholz, then Sonneborn–Berger, then \
     rating (as shown, to two decimals); entrants equal on all four share a rank.";

/// The standings cells of one row, for the columns that apply;
/// `placements` is the row's count of each placement when the columns
/// show them.
pub fn standing_fields(
    row: &StandingRow,
    columns: &StandingColumns,
    placements: Option<&[u32]>,
) -> Fields {
    let forfeits = if row.forfeits.is_empty() {
        "—".to_owned()
    } else {
        row.forfeits
            .iter()
            .map(|(kind, count)| format!("{} {count}", forfeit_words(*kind)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut fields = vec![
        ("rank", row.rank.to_string()),
        ("points", num(row.points)),
        ("buchholz", num(row.buchholz)),
        ("sb", num(row.sonneborn_berger)),
        ("rating", num(row.rating_conservative)),
        ("games", row.games.to_string()),
    ];
    match columns.placements {
        Some(seats) => {
            let counts: Vec<String> = (0..seats)
                .map(|p| {
                    placements
                        .and_then(|c| c.get(p))
                        .copied()
                        .unwrap_or(0)
                        .to_string()
                })
                .collect();
            fields.push(("places", counts.join("/")));
        }
        None => fields.push(("wdl", format!("{}/{}/{}", row.wins, row.draws, row.losses))),
    }
    if columns.byes {
        fields.push(("byes", row.byes.to_string()));
    }
    fields.push(("forfeits", forfeits));
    fields.push(("timeouts", row.timeouts.to_string()));
    fields.push(("malformed", row.malformed.to_string()));
    fields.push(("illegal", row.illegal.to_string()));
    if columns.fuel {
        fields.push(("fuel", row.fuel_exhausted.to_string()));
    }
    if columns.strikes {
        fields.push(("strikes", row.strikes.to_string()));
    }
    fields
}

impl TournamentView {
    /// Per entrant id, how many times it finished in each place (0-based
    /// ranks among all seats, so a place shared by two counts for both).
    pub fn placements(&self) -> HashMap<String, Vec<u32>> {
        let seats = self.summary.spec.seats;
        let mut counts: HashMap<String, Vec<u32>> = HashMap::new();
        for record in self.results.values() {
            for seat in &record.seats {
                if baseline_name(&seat.entrant).is_some() {
                    continue;
                }
                let row = counts
                    .entry(seat.entrant.clone())
                    .or_insert_with(|| vec![0; seats]);
                if let Some(count) = row.get_mut(seat.rank as usize) {
                    *count += 1;
                }
            }
        }
        counts
    }
}

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
        reason_words(&record.reason),
        record.turns
    )
}

/// A seat's forfeit in words (`build_failed` reads "build failed"), or
/// "—" for none.
pub fn forfeit_text(forfeit: Option<arena_engine::Forfeit>) -> String {
    forfeit.map_or_else(|| "—".to_owned(), forfeit_words)
}

fn forfeit_words(forfeit: arena_engine::Forfeit) -> String {
    forfeit.as_str().replace('_', " ")
}

/// A match's end reason in words: `general_captured` reads "general
/// captured"; the few codes that read badly that way have their own.
pub fn reason_words(reason: &str) -> String {
    let special = match reason {
        "turn_cap_draw" => Some("draw at the turn cap"),
        "double_capture_draw" => Some("draw: both generals captured at once"),
        "double_deathtouch_draw" => Some("draw: both crowns fell at once"),
        "turn_limit" => Some("turn limit reached"),
        "all_forfeited" => Some("every seat forfeited"),
        "forfeit" => Some("forfeit"),
        _ => None,
    };
    special.map_or_else(|| reason.replace('_', " "), str::to_owned)
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
    /// Its place among its siblings, where the page keeps them sorted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<usize>,
    /// Shown or hidden, by `data-show` name.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub show: serde_json::Map<String, serde_json::Value>,
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
            order: None,
            show: serde_json::Map::new(),
        }
    }

    /// The element's place among its siblings (`data-order`): the page
    /// re-sorts a `data-sorted` container's children by it.
    pub fn ordered(mut self, order: usize) -> LiveItem {
        self.order = Some(order);
        self
    }

    /// Whether the element's `data-show="NAME"` children are shown.
    pub fn showing(mut self, name: &str, shown: bool) -> LiveItem {
        self.show
            .insert(name.to_owned(), serde_json::Value::Bool(shown));
        self
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
    fn standings_cells_show_one_rating_and_only_the_columns_that_apply() {
        let two_seats = StandingColumns {
            byes: false,
            fuel: false,
            strikes: false,
            placements: None,
        };
        let fields = standing_fields(&row(), &two_seats, None);
        let names: Vec<&str> = fields.iter().map(|(f, _)| *f).collect();
        let headings: Vec<&str> = two_seats.headings().iter().map(|(f, _, _)| *f).collect();
        assert_eq!(names, headings);
        assert!(
            !names.contains(&"fuel") && !names.contains(&"strikes") && !names.contains(&"byes")
        );
        let cell = |fields: &Fields, name: &str| {
            fields
                .iter()
                .find(|(f, _)| *f == name)
                .map(|(_, text)| text.clone())
                .unwrap()
        };
        assert_eq!(cell(&fields, "rating"), "17.50");
        assert_eq!(cell(&fields, "wdl"), "1/1/1");
        assert_eq!(cell(&fields, "forfeits"), "crash 1");

        let ffa = StandingColumns {
            byes: true,
            fuel: true,
            strikes: true,
            placements: Some(4),
        };
        let fields = standing_fields(&row(), &ffa, Some(&[1, 0, 2, 0]));
        let names: Vec<&str> = fields.iter().map(|(f, _)| *f).collect();
        let headings = ffa.headings();
        assert_eq!(
            names,
            headings.iter().map(|(f, _, _)| *f).collect::<Vec<_>>()
        );
        assert_eq!(cell(&fields, "places"), "1/0/2/0");
        assert!(
            headings
                .iter()
                .any(|(f, h, _)| *f == "places" && h == "1st…4th")
        );
        assert!(!names.contains(&"wdl"));
    }
}
