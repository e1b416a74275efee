//! The tournament's own pages beyond the standings, over real HTTP on
//! loopback: an entrant's page, the match filters, the crosstable of a
//! two-seat round robin, the downloads, and what live snapshots carry to
//! keep the tournament page right (row order, round progress, buttons).

mod support;

use std::sync::Arc;
use std::time::Duration;

use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament};
use arena_coordinator::standings::{RESULTS_HEADER, Standings};
use arena_coordinator::store::Store;
use support::{EventReader, Fixture, NAMES, Server, WORKER, report};

#[tokio::test]
async fn an_entrant_page_shows_its_standing_rounds_opponents_and_matches() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let pairing = fixture.done_pairing().await;
    // Seat 3 of the finished match came last, with 3 timeouts.
    let last = &pairing.seats[3];
    let page = server
        .get(&format!(
            "/tournaments/{}/entrants/{last}",
            fixture.tournament
        ))
        .await
        .expect(200);
    let name = fixture.name_of(last);
    assert!(page.contains(&format!("<h1>{name}</h1>")), "{page}");
    assert!(
        page.contains("<td data-field=\"places\">0/0/0/1</td>"),
        "{page}"
    );
    // After round 1 it stands last of four, with no points.
    assert!(
        page.contains("<tr data-round=\"0\"><td>1</td><td data-field=\"rank\">4</td>"),
        "{page}"
    );
    // It finished behind each of the three others once.
    for other in &pairing.seats[..3] {
        let row = row_of(&page, &format!("<tr data-opponent=\"{other}\">"));
        assert!(row.contains("<td data-field=\"ahead\">0</td>"), "{row}");
        assert!(row.contains("<td data-field=\"behind\">1</td>"), "{row}");
        assert!(row.contains(fixture.name_of(other)), "{row}");
    }
    // Its finished match: placed 4th, the reason in words, its faults.
    let row = row_of(&page, &format!("<tr data-match=\"{}\">", fixture.done));
    assert!(row.contains("<td data-field=\"place\">4th</td>"), "{row}");
    assert!(row.contains("turn cap · 150 turns"), "{row}");
    assert!(row.contains("3 timeouts"), "{row}");
    // Every match it is scheduled in is listed, and none it is not in.
    let matches = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap();
    for m in &matches {
        let listed = page.contains(&format!("<tr data-match=\"{}\">", m.match_id));
        let plays = m.pairing.seats.iter().any(|s| s == last);
        assert_eq!(listed, plays, "{}", m.match_id);
    }
    server
        .get(&format!(
            "/tournaments/{}/entrants/nobody",
            fixture.tournament
        ))
        .await
        .expect(404);
}

#[tokio::test]
async fn the_match_list_filters_by_entrant_round_and_state() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let matches = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap();
    let base = format!("/tournaments/{}", fixture.tournament);
    let rows = |page: &str| -> Vec<String> {
        matches
            .iter()
            .filter(|m| page.contains(&format!("<tr data-match=\"{}\">", m.match_id)))
            .map(|m| m.match_id.clone())
            .collect()
    };
    let all = server.get(&base).await.expect(200);
    assert_eq!(rows(&all).len(), matches.len());
    let done = server.get(&format!("{base}?state=done")).await.expect(200);
    assert_eq!(rows(&done), std::slice::from_ref(&fixture.done));
    assert!(done.contains("<option value=\"done\" selected>"), "{done}");
    let running = server
        .get(&format!("{base}?state=running"))
        .await
        .expect(200);
    assert_eq!(
        rows(&running),
        std::slice::from_ref(&fixture.running.lease.match_id)
    );
    let round = server.get(&format!("{base}?round=1")).await.expect(200);
    let in_round: Vec<String> = matches
        .iter()
        .filter(|m| m.round == 0)
        .map(|m| m.match_id.clone())
        .collect();
    assert_eq!(rows(&round), in_round);
    let entrant = &fixture.entrants[0];
    let theirs = server
        .get(&format!("{base}?entrant={entrant}"))
        .await
        .expect(200);
    let expected: Vec<String> = matches
        .iter()
        .filter(|m| m.pairing.seats.contains(entrant))
        .map(|m| m.match_id.clone())
        .collect();
    assert_eq!(rows(&theirs), expected);
    let none = server.get(&format!("{base}?state=stuck")).await.expect(200);
    assert!(rows(&none).is_empty());
    assert!(none.contains("No match fits the filter."), "{none}");
}

#[tokio::test]
async fn standings_and_results_download_as_csv_and_json() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let base = format!("/tournaments/{}", fixture.tournament);
    let page = server.get(&base).await.expect(200);
    for file in [
        "standings.csv",
        "standings.json",
        "results.csv",
        "results.json",
    ] {
        assert!(
            page.contains(&format!("href=\"{base}/{file}\" download")),
            "{file}"
        );
    }

    let csv = server.get(&format!("{base}/standings.csv")).await;
    assert_eq!(csv.status, 200);
    assert_eq!(csv.header("content-type"), "text/csv; charset=utf-8");
    assert_eq!(
        csv.header("content-disposition"),
        format!(
            "attachment; filename=\"{}-standings.csv\"",
            fixture.tournament
        )
    );
    let standings = fixture
        .coordinator
        .standings(&fixture.tournament)
        .await
        .unwrap();
    assert_eq!(csv.text(), standings.to_csv());

    let json = server.get(&format!("{base}/standings.json")).await;
    assert_eq!(json.header("content-type"), "application/json");
    let read = Standings::from_json(&json.text()).expect("standings JSON reads back");
    assert_eq!(read.rows.len(), NAMES.len());
    assert_eq!(read.rows[0].points, 1.0);

    let results = server.get(&format!("{base}/results.csv")).await.expect(200);
    let lines: Vec<&str> = results.split("\r\n").collect();
    assert_eq!(lines[0], RESULTS_HEADER.join(","));
    // One finished match of four seats: four rows, then the final CRLF.
    assert_eq!(lines.len(), 1 + 4 + 1, "{results}");
    assert!(
        lines[1].starts_with(&format!("{},0,0,", fixture.done)),
        "{results}"
    );

    let records = server
        .get(&format!("{base}/results.json"))
        .await
        .expect(200);
    let records: Vec<arena_coordinator::domain::MatchRecord> =
        serde_json::from_str(&records).expect("results JSON reads back");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].match_id, fixture.done);

    server.get(&format!("{base}/nothing.csv")).await.expect(404);
    // A four-seat game has no crosstable.
    server.get(&format!("{base}/crosstable")).await.expect(404);
}

#[tokio::test]
async fn a_two_seat_round_robin_has_a_crosstable() {
    let coordinator = Arc::new(Coordinator::new(
        Store::memory(),
        CoordinatorConfig::default(),
    ));
    let names = ["ann", "ben", "cat"];
    let mut ids = Vec::new();
    for name in names {
        ids.push(support::submit(&coordinator, name).await);
    }
    let field: Vec<(&str, String)> = names.iter().copied().zip(ids.clone()).collect();
    let tournament = coordinator
        .create_tournament(NewTournament {
            name: "Pairs".into(),
            base_seed: 3,
            ..support::tournament_of("generals", 2, &field)
        })
        .await
        .unwrap();
    support::register_worker(&coordinator).await;
    // Every match, seat 0 winning.
    let mut winners = Vec::new();
    while let Some(lease) = coordinator.lease(WORKER).await.unwrap() {
        winners.push((
            lease.lease.pairing.seats[0].clone(),
            lease.lease.pairing.seats[1].clone(),
        ));
        report(&coordinator, &lease).await;
    }
    assert_eq!(winners.len(), 3);
    let server = Server::start(Arc::clone(&coordinator)).await;
    let base = format!("/tournaments/{tournament}");
    let page = server.get(&base).await.expect(200);
    assert!(
        page.contains(&format!("href=\"{base}/crosstable\"")),
        "{page}"
    );
    // Two seats: W/D/L, not placements.
    assert!(page.contains("data-field=\"wdl\""), "{page}");
    let table = server.get(&format!("{base}/crosstable")).await.expect(200);
    for (winner, loser) in &winners {
        let row = row_of(&table, &format!("<tr data-entrant=\"{winner}\">"));
        assert!(
            row.contains(&format!("<td data-against=\"{loser}\" title=\"1 game(s)")),
            "{row}"
        );
        assert!(row.contains(">1</td>"), "{row}");
        let row = row_of(&table, &format!("<tr data-entrant=\"{loser}\">"));
        assert!(
            row.contains(&format!("data-against=\"{winner}\" title=\"1 game(s)")),
            "{row}"
        );
    }
}

#[tokio::test]
async fn live_snapshots_carry_row_order_round_progress_and_buttons() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let mut events = EventReader::new(
        server
            .open(
                "GET",
                &format!("/tournaments/{}/events", fixture.tournament),
                &[],
                Vec::new(),
            )
            .await,
    );
    let first = events.next_snapshot(Duration::from_secs(10)).await;
    let items = first["items"].as_array().expect("items");
    let item = |attr: &str, key: &str| {
        items
            .iter()
            .find(|i| i["attr"] == attr && i["key"] == key)
            .unwrap_or_else(|| panic!("no {attr} {key} in {first}"))
            .clone()
    };
    let pairing = fixture.done_pairing().await;
    // Standings rows come with their place, best first.
    for (place, seat) in pairing.seats.iter().enumerate() {
        assert_eq!(
            item("entrant", fixture.name_of(seat))["order"],
            place,
            "{first}"
        );
    }
    let round = item("round", "0");
    let total = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap()
        .iter()
        .filter(|m| m.round == 0)
        .count();
    assert_eq!(round["fields"]["progress"], format!("1/{total} done"));
    assert_eq!(item("match", &fixture.done)["show"]["rejudge"], true);
    assert_eq!(
        item("match", &fixture.running.lease.match_id)["show"]["rejudge"],
        false
    );
    assert_eq!(
        item("tournament", &fixture.tournament)["show"]["cancel"],
        true
    );

    // The running match finishes: its round's progress and its button follow.
    report(&fixture.coordinator, &fixture.running).await;
    let running = fixture.running.lease.match_id.clone();
    let later = events
        .snapshot_until(Duration::from_secs(10), |snapshot| {
            snapshot["items"].as_array().is_some_and(|items| {
                items.iter().any(|i| {
                    i["attr"] == "match"
                        && i["key"] == running.as_str()
                        && i["show"]["rejudge"] == true
                })
            })
        })
        .await;
    let round = later["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["attr"] == "round" && i["key"] == "0")
        .cloned()
        .unwrap();
    assert_eq!(round["fields"]["progress"], format!("2/{total} done"));
}

/// The `<tr …>` element that starts with `start` on `page`, up to its end.
fn row_of<'a>(page: &'a str, start: &str) -> &'a str {
    let at = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start} on the page: {page}"));
    &page[at..at + page[at..].find("</tr>").expect("the row ends")]
}
