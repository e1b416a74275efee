//! `/tournaments/{id}/crosstable`: for a two-seat round robin, every
//! entrant against every other, in standings order: the row entrant's
//! points from their games (1 a win, ½ a draw), with the games played in
//! the cell's title. Other formats have no crosstable (404, saying so).

use std::collections::HashMap;
use std::fmt::Write as _;

use axum::extract::State;
use axum::response::Html;

use crate::AppState;
use crate::error::{WebError, WebResult};
use crate::html::{esc, page, url_segment};
use crate::ids::{PathParams, TournamentId};
use crate::pages::tournament::is_two_seat_round_robin;
use crate::view;
use crate::viewer::Viewer;

/// Points in halves and games, of one entrant against another.
#[derive(Default, Clone, Copy)]
struct Cell {
    halves: u32,
    games: u32,
}

/// "1½", "0", "½".
fn points(halves: u32) -> String {
    match (halves / 2, halves % 2) {
        (0, 1) => "½".to_owned(),
        (whole, 1) => format!("{whole}½"),
        (whole, _) => whole.to_string(),
    }
}

pub async fn crosstable(
    State(state): State<AppState>,
    PathParams(id): PathParams<String>,
    viewer: Viewer,
) -> WebResult<Html<String>> {
    let id = TournamentId::parse(&id)?;
    let view = view::tournament(&state.coordinator, &id, true).await?;
    if !is_two_seat_round_robin(&view) {
        return Err(WebError::NotFound(format!(
            "tournament {} is not a two-seat round robin, so it has no crosstable",
            id.as_str()
        )));
    }
    let mut cells: HashMap<(&str, &str), Cell> = HashMap::new();
    for record in view.results.values() {
        if let [a, b] = &record.seats[..] {
            for (me, other) in [(a, b), (b, a)] {
                let cell = cells
                    .entry((me.entrant.as_str(), other.entrant.as_str()))
                    .or_default();
                cell.games += 1;
                cell.halves += match me.rank.cmp(&other.rank) {
                    std::cmp::Ordering::Less => 2,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 0,
                };
            }
        }
    }
    let spec = &view.summary.spec;
    let seg = url_segment(&spec.id);
    let rows = &view.standings.rows;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>{} · crosstable</h1>\n<p><a href=\"/tournaments/{seg}\">Back to the standings</a>. \
         Each cell is the row entrant's points against the column entrant (1 a win, ½ a draw); \
         empty where they have not played yet.</p>",
        esc(&spec.name)
    );
    body.push_str(
        "<div class=\"scroll\"><table class=\"crosstable\"><thead><tr><th>#</th><th>Name</th>",
    );
    for (i, _) in rows.iter().enumerate() {
        let _ = write!(body, "<th>{}</th>", i + 1);
    }
    body.push_str("<th>Points</th></tr></thead><tbody>\n");
    for (i, row) in rows.iter().enumerate() {
        let _ = write!(
            body,
            "<tr data-entrant=\"{}\"><td>{}</td><th scope=\"row\"><a href=\"/tournaments/{seg}/entrants/{}\">{}</a></th>",
            esc(&row.entrant),
            i + 1,
            url_segment(&row.entrant),
            esc(&row.name)
        );
        for other in rows {
            if other.entrant == row.entrant {
                body.push_str("<td class=\"self\">—</td>");
                continue;
            }
            match cells.get(&(row.entrant.as_str(), other.entrant.as_str())) {
                Some(cell) => {
                    let _ = write!(
                        body,
                        "<td data-against=\"{}\" title=\"{} game(s) against {}\">{}</td>",
                        esc(&other.entrant),
                        cell.games,
                        esc(&other.name),
                        points(cell.halves)
                    );
                }
                None => {
                    let _ = write!(body, "<td data-against=\"{}\"></td>", esc(&other.entrant));
                }
            }
        }
        let _ = writeln!(body, "<td>{}</td></tr>", crate::html::num(row.points));
    }
    body.push_str("</tbody></table></div>\n");
    Ok(page(
        &format!("{} · crosstable", spec.name),
        &viewer,
        None,
        &body,
    ))
}

#[cfg(test)]
mod tests {
    use super::points;

    #[test]
    fn halves_read_as_points() {
        assert_eq!(points(0), "0");
        assert_eq!(points(1), "½");
        assert_eq!(points(2), "1");
        assert_eq!(points(5), "2½");
    }
}
