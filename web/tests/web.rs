//! The web pages over real HTTP on loopback, against a coordinator with an
//! in-memory store: what each page shows, status pages, assets, replays,
//! who may see and do what, and live updates.

mod support;

use std::time::Duration;

use arena_coordinator::store::LiveBoard;

use support::{ADMIN_TOKEN, EventReader, Fixture, NAMES, WORKER, report, snapshot_fields};

const ADMIN: (&str, &str) = ("authorization", "Bearer admin-secret-token");

#[tokio::test]
async fn the_list_shows_each_tournament_with_its_progress() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let page = server.get("/").await.expect(200);
    assert!(page.contains(&format!("data-tournament=\"{}\"", fixture.tournament)));
    assert!(page.contains(&format!("href=\"/tournaments/{}\"", fixture.tournament)));
    // The name is escaped, never markup.
    assert!(page.contains("Web &lt;test&gt; cup"), "{page}");
    assert!(!page.contains("<test>"));
    assert!(
        page.contains("<td data-field=\"state\">running</td>"),
        "{page}"
    );
    let (status, _) = fixture
        .coordinator
        .status(&fixture.tournament)
        .await
        .unwrap();
    assert_eq!(status.done, 1);
    assert!(page.contains(&format!(
        "<td data-field=\"matches\">1/{}</td>",
        status.total
    )));
    assert!(page.contains("<td>ants</td>"));
    assert!(page.contains("data-live=\"/events\""));
    assert!(page.contains("Log in"));
}

#[tokio::test]
async fn the_tournament_page_shows_standings_and_matches() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let page = server
        .get(&format!("/tournaments/{}", fixture.tournament))
        .await
        .expect(200);
    // Seat 0 of the finished match won it: that entrant leads with 1 point.
    let pairing = fixture.done_pairing().await;
    let winner = fixture.name_of(&pairing.seats[0]);
    let row_start = page
        .find(&format!("<tr data-entrant=\"{winner}\""))
        .expect("the winner's standings row");
    let row = &page[row_start..row_start + page[row_start..].find("</tr>").unwrap()];
    assert!(row.contains("data-order=\"0\""), "{row}");
    assert!(row.contains("<td data-field=\"rank\">1</td>"), "{row}");
    assert!(row.contains("<td data-field=\"points\">1.00</td>"), "{row}");
    // Four seats, no teams: placements counted, not W/D/L.
    assert!(
        row.contains("<td data-field=\"places\">1/0/0/0</td>"),
        "{row}"
    );
    assert!(!page.contains("data-field=\"wdl\""));
    // One rating, as μ − 3σ, explained on the page with the tie-breaks.
    assert!(!row.contains("±"), "{row}");
    assert!(page.contains("μ − 3σ"), "the rating is explained");
    assert!(
        page.contains("Ranked by points, then Buchholz"),
        "the tie-breaks are explained"
    );
    // No WebAssembly or model-graph entrants, no Swiss: no such columns.
    for absent in ["fuel", "strikes", "byes"] {
        assert!(
            !page.contains(&format!("data-field=\"{absent}\"")),
            "{absent}"
        );
    }
    // The entrant's name links to its page.
    assert!(
        row.contains(&format!(
            "href=\"/tournaments/{}/entrants/{}\"",
            fixture.tournament, pairing.seats[0]
        )),
        "{row}"
    );
    for name in NAMES {
        assert!(page.contains(&format!("data-entrant=\"{name}\"")), "{name}");
    }
    let done_row = match_row(&page, &fixture.done);
    assert!(
        done_row.contains("<td data-field=\"state\">done</td>"),
        "{done_row}"
    );
    assert!(done_row.contains(&format!("1st {winner}")), "{done_row}");
    // The reason in words.
    assert!(done_row.contains("turn cap · 150 turns"), "{done_row}");
    assert!(done_row.contains(&format!("<td data-field=\"worker\">{WORKER}</td>")));
    let running_row = match_row(&page, &fixture.running.lease.match_id);
    assert!(
        running_row.contains("<td data-field=\"turn\"></td>"),
        "{running_row}"
    );
    // The worker's heartbeats report the turn it has reached.
    fixture
        .coordinator
        .record_progress(WORKER, [(fixture.running.lease.match_id.clone(), 42)]);
    let page = server
        .get(&format!("/tournaments/{}", fixture.tournament))
        .await
        .expect(200);
    let running_row = match_row(&page, &fixture.running.lease.match_id);
    assert!(
        running_row.contains("<td data-field=\"turn\">turn 42</td>"),
        "{running_row}"
    );
    assert!(
        running_row.contains("<td data-field=\"state\">running</td>"),
        "{running_row}"
    );
    assert!(running_row.contains(&format!("<td data-field=\"worker\">{WORKER}</td>")));
    assert!(page.contains("<td data-field=\"state\">queued</td>"));
    assert!(page.contains(&format!(
        "data-live=\"/tournaments/{}/events\"",
        fixture.tournament
    )));
}

/// The `<tr>` of a match on the tournament page.
fn match_row<'a>(page: &'a str, match_id: &str) -> &'a str {
    let start = page
        .find(&format!("<tr data-match=\"{match_id}\""))
        .unwrap_or_else(|| panic!("a row for {match_id}"));
    &page[start..start + page[start..].find("</tr>").unwrap()]
}

#[tokio::test]
async fn the_match_page_shows_placements_the_viewer_and_the_replay() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let page = server
        .get(&format!("/matches/{}", fixture.done))
        .await
        .expect(200);
    let pairing = fixture.done_pairing().await;
    let names: Vec<&str> = pairing.seats.iter().map(|s| fixture.name_of(s)).collect();
    let seats_json = serde_json::to_string(&names)
        .unwrap()
        .replace('"', "&quot;");
    // Each seat's colour is its entrant's, by registration order.
    let colors: Vec<String> = pairing
        .seats
        .iter()
        .map(|s| {
            fixture
                .entrants
                .iter()
                .position(|e| e == s)
                .expect("an entrant")
                .to_string()
        })
        .collect();
    let viewer = format!(
        "<div id=\"viewer\" class=\"viewer\" data-game=\"ants\" data-frames=\"/matches/{0}/frames.json\" \
         data-replay=\"/matches/{0}/replay.json\" data-seats='{seats_json}' data-colors='[{1}]' \
         data-forfeits='[null,null,null,null]'></div>",
        fixture.done,
        colors.join(",")
    );
    assert!(page.contains(&viewer), "{page}");
    assert!(page.contains("<script type=\"module\" src=\"/assets/viewer/viewer.js\"></script>"));
    assert!(page.contains(&format!(
        "<a href=\"/matches/{}/replay.json\" download>",
        fixture.done
    )));
    let seat0 = page.find("<tr data-seat=\"0\">").expect("seat 0's row");
    assert!(page[seat0..].starts_with(&format!(
        "<tr data-seat=\"0\"><td>0</td><td>{}</td><td>1st</td>",
        names[0]
    )));
    assert!(page.contains("<dt>Reason</dt><dd>turn cap</dd>"), "{page}");
    assert!(page.contains("<dt>Turns</dt><dd>150</dd>"));

    // A running match has no replay yet: no viewer, its worker shown.
    let running = server
        .get(&format!("/matches/{}", fixture.running.lease.match_id))
        .await
        .expect(200);
    assert!(!running.contains("id=\"viewer\""));
    assert!(running.contains(&format!("<dt>Worker</dt><dd>{WORKER}</dd>")));
    assert!(
        running.contains("<dt>Turn</dt><dd data-live-turn>not reported yet</dd>"),
        "{running}"
    );
    fixture
        .coordinator
        .record_progress(WORKER, [(fixture.running.lease.match_id.clone(), 7)]);
    let running = server
        .get(&format!("/matches/{}", fixture.running.lease.match_id))
        .await
        .expect(200);
    assert!(
        running.contains("<dt>Turn</dt><dd data-live-turn>7</dd>"),
        "{running}"
    );
    // The finished match's page names the worker that played it.
    assert!(page.contains(&format!("<dt>Worker</dt><dd>{WORKER}</dd>")));
    assert!(running.contains("running"));
}

/// The engine's live view of a fresh match of the fixture's game after
/// `steps` steps with every seat's fallback, as a worker reports it.
fn live_board(steps: u32) -> Vec<u8> {
    let entry = arena_engine::registry::find("ants").unwrap();
    let mut game = entry.create(7, 4, &arena_engine::Rules::default()).unwrap();
    for _ in 0..steps {
        for seat in 0..4 {
            if game.is_due(seat) {
                game.offer_fallback(seat, None);
            }
        }
        assert!(game.step().is_none());
    }
    serde_json::to_vec(&game.live_json()).unwrap()
}

#[tokio::test]
async fn a_running_match_streams_its_turns_to_everyone_and_its_board_to_organisers() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let id = fixture.running.lease.match_id.clone();
    let path = format!("/matches/{id}");

    // The public page follows the match but shows no board; the
    // organiser's has the viewer in live mode.
    let public = server.get(&path).await.expect(200);
    assert!(public.contains("data-match-live="), "{public}");
    assert!(public.contains("<script type=\"module\" src=\"/assets/live-match.js\">"));
    assert!(public.contains("data-live-board=\"hidden\""), "{public}");
    assert!(!public.contains("id=\"viewer\""), "{public}");
    let organiser = server.get_with(&path, &[ADMIN]).await.expect(200);
    assert!(organiser.contains("data-live=\"true\""), "{organiser}");
    assert!(!organiser.contains("data-live-board=\"hidden\""));

    let open = async |headers: &[(&str, &str)]| {
        let response = server
            .open("GET", &format!("{path}/live"), headers, Vec::new())
            .await;
        assert_eq!(response.status(), 200);
        EventReader::new(response)
    };
    let mut public = open(&[]).await;
    let mut organiser = open(&[ADMIN]).await;
    let within = Duration::from_secs(10);

    // A heartbeat's turn, then a board: everyone sees the turn, only the
    // organiser the board, exactly as the worker sent it.
    fixture
        .coordinator
        .record_progress(WORKER, [(id.clone(), 3)]);
    let turn = |n: u32| ("turn".to_owned(), serde_json::json!({ "turn": n }));
    assert_eq!(public.next_event(within).await, turn(3));
    assert_eq!(organiser.next_event(within).await, turn(3));
    let board = live_board(6);
    let taken = fixture
        .coordinator
        .record_boards(WORKER, [(id.clone(), 6, board.clone())]);
    assert_eq!(taken, 1);
    assert_eq!(public.next_event(within).await, turn(6));
    let (name, data) = organiser.next_event(within).await;
    assert_eq!(name, "board");
    assert_eq!(data["turn"], 6);
    let sent: serde_json::Value = serde_json::from_slice(&board).unwrap();
    assert_eq!(data["board"], sent);
    assert_eq!(
        (sent["game"].as_str(), sent["turn"].as_u64()),
        (Some("ants"), Some(6))
    );

    // The result lands: both streams say so and end.
    report(&fixture.coordinator, &fixture.running).await;
    for stream in [&mut public, &mut organiser] {
        assert_eq!(stream.next_event(within).await.0, "ended");
        assert!(stream.ends_within(within).await, "the stream ends");
    }
}

#[tokio::test]
async fn a_tournament_may_show_running_boards_to_everyone() {
    let fixture = Fixture::with_live_board(LiveBoard::Everyone).await;
    let server = fixture.serve().await;
    let id = fixture.running.lease.match_id.clone();
    let page = server.get(&format!("/matches/{id}")).await.expect(200);
    assert!(page.contains("data-live=\"true\""), "{page}");
    fixture
        .coordinator
        .record_progress(WORKER, [(id.clone(), 1)]);
    fixture
        .coordinator
        .record_boards(WORKER, [(id.clone(), 2, live_board(2))]);
    let response = server
        .open("GET", &format!("/matches/{id}/live"), &[], Vec::new())
        .await;
    let (name, data) = EventReader::new(response)
        .next_event(Duration::from_secs(10))
        .await;
    assert_eq!(
        (name.as_str(), &data["turn"]),
        ("board", &serde_json::json!(2))
    );
    // A finished match has no stream to follow.
    let done = server
        .get(&format!("/matches/{}", fixture.done))
        .await
        .expect(200);
    assert!(!done.contains("data-match-live"), "{done}");
}

#[tokio::test]
async fn frames_are_the_replay_dump_as_one_array_and_the_replay_is_raw() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let frames = server
        .get(&format!("/matches/{}/frames.json", fixture.done))
        .await;
    assert_eq!(frames.status, 200);
    assert_eq!(frames.header("content-type"), "application/json");
    let got: serde_json::Value = serde_json::from_slice(&frames.body).expect("frames are JSON");
    let expected = arena_engine::replay::open_any(&support::sample_replay())
        .unwrap()
        .dump()
        .unwrap();
    assert_eq!(got, serde_json::Value::Array(expected));
    // The second answer comes from the cache, byte for byte the same.
    let again = server
        .get(&format!("/matches/{}/frames.json", fixture.done))
        .await;
    assert_eq!(again.body, frames.body);
    // A client that accepts gzip gets it.
    let zipped = server
        .get_with(
            &format!("/matches/{}/frames.json", fixture.done),
            &[("accept-encoding", "gzip")],
        )
        .await;
    assert_eq!(zipped.status, 200);
    assert_eq!(zipped.header("content-encoding"), "gzip");
    assert!(zipped.body.len() < frames.body.len() / 2);

    let replay = server
        .get(&format!("/matches/{}/replay.json", fixture.done))
        .await;
    assert_eq!(replay.status, 200);
    assert_eq!(replay.body, support::sample_replay());
    // No replay for a match still running.
    server
        .get(&format!(
            "/matches/{}/frames.json",
            fixture.running.lease.match_id
        ))
        .await
        .expect(404);
}

#[tokio::test]
async fn an_unreadable_replay_is_a_500_page_not_a_crash() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    support::report_with(
        &fixture.coordinator,
        &fixture.running,
        b"{\"format\":\"arena-replay/3\",\"game\":\"ants\"".to_vec(),
    )
    .await;
    let reply = server
        .get(&format!(
            "/matches/{}/frames.json",
            fixture.running.lease.match_id
        ))
        .await;
    assert_eq!(reply.status, 500, "{}", reply.text());
    assert!(reply.header("content-type").starts_with("text/html"));
    assert!(reply.text().contains("<h1>500"), "{}", reply.text());
    // The server carries on.
    server.get("/").await.expect(200);
}

#[tokio::test]
async fn unknown_things_are_404_and_malformed_ids_400() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    for path in [
        "/tournaments/t-000000000000".to_owned(),
        "/matches/t-000000000000:0:0".to_owned(),
        format!("/matches/{}:0:999", fixture.tournament),
        "/matches/t-000000000000:0:0/frames.json".to_owned(),
        "/no/such/page".to_owned(),
        "/assets/missing.css".to_owned(),
    ] {
        let reply = server.get(&path).await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(
            reply.header("content-type").starts_with("text/html"),
            "{path}"
        );
        assert!(reply.text().contains("<h1>404"), "{path}");
    }
    for path in [
        "/tournaments/nope",
        "/tournaments/t-ABCDEF000000",
        "/matches/nope",
        "/matches/t-000000000000:x:0",
        "/matches/%3Cscript%3E/frames.json",
        "/matches/t-000000000000:0:0/logs/seat",
        "/tournaments/bad/events",
        // Not UTF-8 once decoded.
        "/tournaments/%FF",
        "/matches/%FF%FE/replay.json",
    ] {
        let reply = server.get(path).await;
        assert_eq!(reply.status, 400, "{path}");
        assert!(reply.text().contains("<h1>400"), "{path}");
        assert!(!reply.text().contains("<script>"), "{path}");
    }
    // A seat the match does not have, even for an organiser.
    let reply = server
        .get_with(&format!("/matches/{}/logs/9", fixture.done), &[ADMIN])
        .await;
    assert_eq!(reply.status, 404);
}

#[tokio::test]
async fn assets_have_their_content_type_and_cache_headers() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let css = server.get("/assets/style.css").await;
    assert_eq!(css.status, 200);
    assert_eq!(css.header("content-type"), "text/css; charset=utf-8");
    assert!(css.header("cache-control").contains("max-age="));
    assert!(css.text().contains("prefers-color-scheme"));
    let etag = css.header("etag").to_owned();
    assert!(!etag.is_empty());
    let unchanged = server
        .get_with("/assets/style.css", &[("if-none-match", &etag)])
        .await;
    assert_eq!(unchanged.status, 304);
    assert!(unchanged.body.is_empty());
    let js = server.get("/assets/live.js").await;
    assert_eq!(js.status, 200);
    assert_eq!(js.header("content-type"), "text/javascript; charset=utf-8");
    assert!(js.text().contains("EventSource"));
    // The replay viewer's modules, whatever their depth.
    for path in ["/assets/viewer/viewer.js", "/assets/viewer/games/ants.js"] {
        let module = server.get(path).await;
        assert_eq!(module.status, 200, "{path}");
        assert_eq!(
            module.header("content-type"),
            "text/javascript; charset=utf-8"
        );
    }
    // The viewer's own stylesheet, which viewer.js links.
    let viewer_css = server.get("/assets/viewer/viewer.css").await;
    assert_eq!(viewer_css.status, 200);
    assert_eq!(viewer_css.header("content-type"), "text/css; charset=utf-8");
    assert!(viewer_css.text().contains(".viewer-controls"));
    server.get("/assets/viewer/../style.css").await.expect(404);
    // Pages with live updates load live.js as a module.
    assert!(
        server
            .get("/")
            .await
            .text()
            .contains("<script type=\"module\" src=\"/assets/live.js\"></script>")
    );
    // Every page links the stylesheet.
    assert!(
        server
            .get("/workers")
            .await
            .text()
            .contains("href=\"/assets/style.css\"")
    );
}

#[tokio::test]
async fn the_workers_page_lists_each_worker() {
    let fixture = Fixture::new().await;
    // One attempt fails on the worker: it counts against the worker.
    let third = fixture
        .coordinator
        .lease(WORKER)
        .await
        .unwrap()
        .expect("a third queued match");
    fixture
        .coordinator
        .fail(
            WORKER,
            &third.lease.match_id,
            &third.lease.lease_id,
            "disk full",
        )
        .await
        .unwrap()
        .expect("the lease was current");
    let server = fixture.serve().await;
    let page = server.get("/workers").await.expect(200);
    let start = page
        .find(&format!("<tr data-worker=\"{WORKER}\">"))
        .expect("the worker's row");
    let row = &page[start..start + page[start..].find("</tr>").unwrap()];
    assert!(row.contains("<td data-field=\"alive\">yes</td>"), "{row}");
    assert!(
        row.contains("<td data-field=\"quarantined\">no</td>"),
        "{row}"
    );
    assert!(
        row.contains("<td data-field=\"slots\">3</td><td>2</td><td>2048 MiB</td><td>env-test</td>"),
        "{row}"
    );
    assert!(row.contains(" s ago</td>"), "{row}");
    assert!(row.contains("<td data-field=\"played\">1</td>"), "{row}");
    assert!(row.contains("<td data-field=\"failed\">1</td>"), "{row}");
}

#[tokio::test]
async fn the_public_sees_no_logs_and_no_organiser_buttons() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let tournament = format!("/tournaments/{}", fixture.tournament);
    let page = server.get(&tournament).await.expect(200);
    assert!(!page.contains("Cancel tournament"));
    assert!(!page.contains("Rejudge"));
    let match_page = server
        .get(&format!("/matches/{}", fixture.done))
        .await
        .expect(200);
    assert!(!match_page.contains("Bot logs"));
    assert!(!match_page.contains("/logs/"));
    server
        .get(&format!("/matches/{}/logs/0", fixture.done))
        .await
        .expect(403);
    server
        .post(&format!("{tournament}/cancel"), &[], "")
        .await
        .expect(403);
    server
        .post(&format!("/matches/{}/rejudge", fixture.done), &[], "")
        .await
        .expect(403);
    // A token in the query string grants nothing.
    let with_query = server
        .get(&format!("{tournament}?token={ADMIN_TOKEN}"))
        .await
        .expect(200);
    assert!(!with_query.contains("Cancel tournament"));
    server
        .get(&format!(
            "/matches/{}/logs/0?token={ADMIN_TOKEN}",
            fixture.done
        ))
        .await
        .expect(403);
    server
        .post(&format!("{tournament}/cancel?token={ADMIN_TOKEN}"), &[], "")
        .await
        .expect(403);
    // A wrong bearer token is no one.
    server
        .post(
            &format!("{tournament}/cancel"),
            &[("authorization", "Bearer admin-secret-tokeN")],
            "",
        )
        .await
        .expect(403);
    let (status, _) = fixture
        .coordinator
        .status(&fixture.tournament)
        .await
        .unwrap();
    assert!(!status.cancelled);
}

#[tokio::test]
async fn an_admin_sees_every_log_and_can_cancel() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let tournament = format!("/tournaments/{}", fixture.tournament);
    let page = server.get_with(&tournament, &[ADMIN]).await.expect(200);
    assert!(page.contains(&format!("action=\"{tournament}/cancel\"")));
    // Only finished matches can be rejudged: the running one's button is
    // there for when it finishes, hidden.
    let done_row = match_row(&page, &fixture.done);
    assert!(
        done_row.contains(&format!(
            "action=\"/matches/{}/rejudge\" class=\"inline\" data-show=\"rejudge\">",
            fixture.done
        )),
        "{done_row}"
    );
    let running_row = match_row(&page, &fixture.running.lease.match_id);
    assert!(
        running_row.contains("data-show=\"rejudge\" hidden>"),
        "{running_row}"
    );
    let match_page = server
        .get_with(&format!("/matches/{}", fixture.done), &[ADMIN])
        .await
        .expect(200);
    let pairing = fixture.done_pairing().await;
    for seat in 0..4 {
        assert!(
            match_page.contains(&format!("data-log-seat=\"{seat}\"")),
            "{seat}"
        );
        let log = server
            .get_with(&format!("/matches/{}/logs/{seat}", fixture.done), &[ADMIN])
            .await;
        assert_eq!(log.status, 200, "seat {seat}: {}", log.text());
        assert_eq!(log.header("content-type"), "text/plain; charset=utf-8");
        let entrant = &pairing.seats[seat];
        assert_eq!(log.text(), support::seat_log_text(seat, entrant));
        // Inline on the page too, escaped.
        assert!(match_page.contains(&format!(
            "seat {seat} log of {entrant} &lt;b&gt;bold&lt;/b&gt;"
        )));
    }
    // A post from another site is refused even with the admin's token.
    server
        .post(
            &format!("{tournament}/cancel"),
            &[ADMIN, ("origin", "https://elsewhere.example")],
            "",
        )
        .await
        .expect(403);
    assert!(
        !fixture
            .coordinator
            .status(&fixture.tournament)
            .await
            .unwrap()
            .0
            .cancelled
    );
    let origin = format!("http://{}", server.addr);
    // The first post only asks: what cancelling does, and a button that
    // confirms it.
    let asked = server
        .post(
            &format!("{tournament}/cancel"),
            &[ADMIN, ("origin", &origin)],
            "",
        )
        .await;
    assert_eq!(asked.status, 200, "{}", asked.text());
    let text = asked.text();
    assert!(text.contains("matches are recorded; they stay"), "{text}");
    assert!(text.contains("name=\"confirm\" value=\"yes\""), "{text}");
    assert!(
        text.contains(&format!("action=\"{tournament}/cancel\"")),
        "{text}"
    );
    assert!(
        !fixture
            .coordinator
            .status(&fixture.tournament)
            .await
            .unwrap()
            .0
            .cancelled,
        "cancelled before it was confirmed"
    );
    let cancelled = server
        .post(
            &format!("{tournament}/cancel"),
            &[ADMIN, ("origin", &origin)],
            "confirm=yes",
        )
        .await;
    assert_eq!(cancelled.status, 303, "{}", cancelled.text());
    assert_eq!(cancelled.header("location"), tournament);
    assert!(
        fixture
            .coordinator
            .status(&fixture.tournament)
            .await
            .unwrap()
            .0
            .cancelled
    );
    let page = server.get(&tournament).await.expect(200);
    assert!(
        page.contains("<span data-field=\"state\">cancelled</span>"),
        "{page}"
    );
    // Over now: the button is hidden, and a post is refused with the reason.
    let page = server.get_with(&tournament, &[ADMIN]).await.expect(200);
    assert!(page.contains("data-show=\"cancel\" hidden>"), "{page}");
    let again = server
        .post(&format!("{tournament}/cancel"), &[ADMIN], "confirm=yes")
        .await;
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(
        again
            .text()
            .contains("only a running tournament can be cancelled"),
        "{}",
        again.text()
    );
}

#[tokio::test]
async fn an_admin_can_rejudge_a_finished_match() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    // A match without a result cannot be rejudged.
    server
        .post(
            &format!("/matches/{}/rejudge", fixture.running.lease.match_id),
            &[ADMIN],
            "",
        )
        .await
        .expect(409);
    // Dumped once, so the cache holds it: a rejudge must not leave it served.
    server
        .get(&format!("/matches/{}/frames.json", fixture.done))
        .await
        .expect(200);
    // Asked first: what a rejudge does; nothing changes yet.
    let asked = server
        .post(&format!("/matches/{}/rejudge", fixture.done), &[ADMIN], "")
        .await;
    assert_eq!(asked.status, 200, "{}", asked.text());
    assert!(
        asked.text().contains("current result and replay stand"),
        "{}",
        asked.text()
    );
    let still = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap();
    assert!(matches!(
        still
            .iter()
            .find(|m| m.match_id == fixture.done)
            .unwrap()
            .state,
        arena_coordinator::store::MatchState::Done { .. }
    ));
    let reply = server
        .post(
            &format!("/matches/{}/rejudge", fixture.done),
            &[ADMIN],
            "confirm=yes",
        )
        .await;
    assert_eq!(reply.status, 303, "{}", reply.text());
    assert_eq!(
        reply.header("location"),
        format!("/matches/{}", fixture.done)
    );
    let matches = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap();
    let info = matches.iter().find(|m| m.match_id == fixture.done).unwrap();
    assert_eq!(info.state, arena_coordinator::store::MatchState::Queued);
    // Its result and replay stay until the new ones land.
    assert_eq!(
        fixture
            .coordinator
            .store()
            .results(&fixture.tournament)
            .await
            .unwrap()
            .iter()
            .filter(|r| r.match_id == fixture.done)
            .count(),
        1
    );
    server
        .get(&format!("/matches/{}/frames.json", fixture.done))
        .await
        .expect(200);
    // Rejudging it again, before a new result, is refused.
    server
        .post(&format!("/matches/{}/rejudge", fixture.done), &[ADMIN], "")
        .await
        .expect(409);
}

#[tokio::test]
async fn a_rejudge_nothing_could_play_is_refused_and_the_result_kept() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    // The only worker has gone silent: the match would wait for good.
    let store = fixture.coordinator.store();
    let info = store
        .worker(WORKER)
        .await
        .unwrap()
        .expect("the fixture's worker");
    store.register_worker(info.clone(), 0).await.unwrap();
    let reply = server
        .post(&format!("/matches/{}/rejudge", fixture.done), &[ADMIN], "")
        .await;
    assert_eq!(reply.status, 409, "{}", reply.text());
    assert!(reply.text().contains("no live worker"), "{}", reply.text());
    // Back again, it could: but `arena run` says nothing will play.
    store
        .register_worker(info, arena_coordinator::service::now_ms())
        .await
        .unwrap();
    // As `arena run` says once its workers have finished.
    fixture
        .coordinator
        .set_unplayable("this arena run has ended and its workers with it");
    let reply = server
        .post(&format!("/matches/{}/rejudge", fixture.done), &[ADMIN], "")
        .await;
    assert_eq!(reply.status, 409, "{}", reply.text());
    assert!(
        reply
            .text()
            .contains("cannot be played again: this arena run has ended"),
        "{}",
        reply.text()
    );
    // Confirming does not get past it either.
    let reply = server
        .post(
            &format!("/matches/{}/rejudge", fixture.done),
            &[ADMIN],
            "confirm=yes",
        )
        .await;
    assert_eq!(reply.status, 409, "{}", reply.text());
    // Nothing was lost: the result and its replay are still there.
    let matches = fixture
        .coordinator
        .store()
        .matches(&fixture.tournament)
        .await
        .unwrap();
    let info = matches.iter().find(|m| m.match_id == fixture.done).unwrap();
    assert!(
        matches!(
            info.state,
            arena_coordinator::store::MatchState::Done { .. }
        ),
        "{:?}",
        info.state
    );
    server
        .get(&format!("/matches/{}/frames.json", fixture.done))
        .await
        .expect(200);
}

#[tokio::test]
async fn logging_in_sets_a_strict_http_only_cookie() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let form = server.get("/login").await.expect(200);
    assert!(form.contains("<form method=\"post\" action=\"/login\""));
    // A body that is no form at all is a 400 page, not a crash.
    let garbled = server
        .send(
            "POST",
            "/login",
            &[("content-type", "text/plain")],
            b"x".to_vec(),
        )
        .await;
    assert_eq!(garbled.status, 400);
    assert!(garbled.text().contains("<h1>400"));
    let refused = server.post("/login", &[], "token=wrong").await;
    assert_eq!(refused.status, 401);
    assert!(refused.header("set-cookie").is_empty());
    let reply = server
        .post("/login", &[], &format!("token={ADMIN_TOKEN}"))
        .await;
    assert_eq!(reply.status, 303);
    let cookie = reply.header("set-cookie").to_owned();
    assert!(
        cookie.starts_with(&format!("arena_token={ADMIN_TOKEN};")),
        "{cookie}"
    );
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    let pair = cookie.split(';').next().unwrap();
    let page = server
        .get_with(
            &format!("/tournaments/{}", fixture.tournament),
            &[("cookie", pair)],
        )
        .await
        .expect(200);
    assert!(page.contains("Cancel tournament"));
    assert!(page.contains("Log out"));
    let out = server.post("/logout", &[("cookie", pair)], "").await;
    assert_eq!(out.status, 303);
    assert!(out.header("set-cookie").contains("Max-Age=0"));
    // A login form posted from another site is refused.
    server
        .post(
            "/login",
            &[("origin", "https://elsewhere.example")],
            &format!("token={ADMIN_TOKEN}"),
        )
        .await
        .expect(403);
}

#[tokio::test]
async fn live_updates_send_a_snapshot_and_then_each_change() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let running = fixture.running.lease.match_id.clone();
    let response = server
        .open(
            "GET",
            &format!("/tournaments/{}/events", fixture.tournament),
            // Browsers accept gzip; an event stream must still come unbuffered.
            &[("accept-encoding", "gzip")],
            Vec::new(),
        )
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    assert!(response.headers().get("content-encoding").is_none());
    let mut events = EventReader::new(response);
    let first = events.next_snapshot(Duration::from_secs(10)).await;
    let fields = snapshot_fields(&first, "match", &running).expect("the running match");
    assert_eq!(fields["state"], "running");
    assert_eq!(fields["worker"], WORKER);
    assert!(snapshot_fields(&first, "entrant", "alice").is_some());
    assert!(snapshot_fields(&first, "tournament", &fixture.tournament).is_some());

    let mut list = EventReader::new(server.open("GET", "/events", &[], Vec::new()).await);
    let list_first = list.next_snapshot(Duration::from_secs(10)).await;
    let summary = snapshot_fields(&list_first, "tournament", &fixture.tournament).unwrap();
    assert!(summary["matches"].as_str().unwrap().starts_with("1/"));

    // A turn reached is a change of its own.
    fixture
        .coordinator
        .record_progress(WORKER, [(running.clone(), 12)]);
    events
        .snapshot_until(Duration::from_secs(10), |snapshot| {
            snapshot_fields(snapshot, "match", &running).is_some_and(|f| f["turn"] == "turn 12")
        })
        .await;

    report(&fixture.coordinator, &fixture.running).await;
    // A poll may straddle the report and see half of it; snapshots keep
    // coming while anything differs, so the finished state arrives.
    let fields = events
        .snapshot_until(Duration::from_secs(10), |snapshot| {
            snapshot_fields(snapshot, "match", &running).is_some_and(|f| f["state"] == "done")
        })
        .await;
    let fields = snapshot_fields(&fields, "match", &running).unwrap();
    assert!(
        fields["result"]
            .as_str()
            .unwrap()
            .contains("turn cap · 150 turns")
    );
    let list_changed = list
        .snapshot_until(Duration::from_secs(10), |snapshot| {
            snapshot_fields(snapshot, "tournament", &fixture.tournament)
                .is_some_and(|f| f["matches"].as_str().unwrap_or("").starts_with("2/"))
        })
        .await;
    assert!(snapshot_fields(&list_changed, "tournament", &fixture.tournament).is_some());

    // Open streams do not hold up a shutdown.
    server.shutdown().await.expect("serve ends cleanly");
}

#[tokio::test]
async fn entrants_see_their_own_seat_logs_only() {
    let fixture = Fixture::new().await;
    let server = fixture.serve().await;
    let pairing = fixture.done_pairing().await;
    let token = support::entrant_token(&fixture, &pairing.seats[0]).await;
    let bearer = format!("Bearer {token}");
    let headers = [("authorization", bearer.as_str())];
    let own = server
        .get_with(&format!("/matches/{}/logs/0", fixture.done), &headers)
        .await;
    assert_eq!(own.status, 200, "{}", own.text());
    assert_eq!(own.text(), support::seat_log_text(0, &pairing.seats[0]));
    server
        .get_with(&format!("/matches/{}/logs/1", fixture.done), &headers)
        .await
        .expect(403);
    let page = server
        .get_with(&format!("/matches/{}", fixture.done), &headers)
        .await
        .expect(200);
    assert!(page.contains("data-log-seat=\"0\""));
    assert!(!page.contains("data-log-seat=\"1\""));
    // The same token through the login form and its cookie.
    let login = server.post("/login", &[], &format!("token={token}")).await;
    assert_eq!(login.status, 303);
    let cookie = login
        .header("set-cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let with_cookie = [("cookie", cookie.as_str())];
    server
        .get_with(&format!("/matches/{}/logs/0", fixture.done), &with_cookie)
        .await
        .expect(200);
    server
        .get_with(&format!("/matches/{}/logs/2", fixture.done), &with_cookie)
        .await
        .expect(403);
    // Nothing else extra: no organiser buttons, no organiser actions.
    assert!(!page.contains("Rejudge"));
    server
        .post(&format!("/matches/{}/rejudge", fixture.done), &headers, "")
        .await
        .expect(403);
}

#[tokio::test]
async fn live_streams_are_capped_per_client_and_in_all() {
    let fixture = Fixture::new().await;
    // Two streams per client, three in all; every client here is 127.0.0.1.
    let options = arena_web::WebOptions {
        max_streams: 3,
        max_streams_per_client: 2,
        ..arena_web::WebOptions::default()
    };
    let server =
        support::Server::start_with(std::sync::Arc::clone(&fixture.coordinator), options).await;
    let path = format!("/tournaments/{}/events", fixture.tournament);
    let mut open = Vec::new();
    for _ in 0..2 {
        let response = server.open("GET", &path, &[], Vec::new()).await;
        assert_eq!(response.status(), 200);
        // Reading the first snapshot proves the stream is live.
        let mut events = EventReader::new(response);
        events.next_snapshot(Duration::from_secs(10)).await;
        open.push(events);
    }
    let refused = server.open("GET", "/events", &[], Vec::new()).await;
    assert_eq!(refused.status(), 429);
    let body = String::from_utf8(
        http_body_util::BodyExt::collect(refused.into_body())
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    assert!(body.contains("from your address"), "{body}");
    // Pages that are not streams are never refused.
    server.get(&path.replace("/events", "")).await.expect(200);
    // A closed stream gives its place back.
    drop(open.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let response = server.open("GET", "/events", &[], Vec::new()).await;
        if response.status() == 200 {
            open.push(EventReader::new(response));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the place never came back"
        );
        tokio::task::yield_now().await;
    }
    server.shutdown().await.expect("serve ends cleanly");

    // The cap in all holds whoever asks.
    let options = arena_web::WebOptions {
        max_streams: 2,
        max_streams_per_client: 10,
        ..arena_web::WebOptions::default()
    };
    let server =
        support::Server::start_with(std::sync::Arc::clone(&fixture.coordinator), options).await;
    let a = server.open("GET", "/events", &[], Vec::new()).await;
    let b = server.open("GET", &path, &[], Vec::new()).await;
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    let refused = server.open("GET", "/events", &[], Vec::new()).await;
    assert_eq!(refused.status(), 429);
    drop((a, b));
    server.shutdown().await.expect("serve ends cleanly");
}
