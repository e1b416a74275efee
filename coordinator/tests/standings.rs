//! Standings: hand-computed tables, tie-breaks, ratings and exports.

use std::collections::BTreeMap;

use arena_coordinator::domain::{EntrantId, MatchRecord, SeatResult, baseline_id};
use arena_coordinator::standings::{StandingRow, Standings, StandingsError, compute};
use arena_engine::{Forfeit, placement_points};
use proptest::prelude::*;

fn entrants(ids: &[&str]) -> Vec<(EntrantId, String)> {
    ids.iter()
        .map(|id| (id.to_string(), format!("Bot {id}")))
        .collect()
}

fn seat(entrant: &str, rank: u32) -> SeatResult {
    SeatResult {
        entrant: entrant.to_owned(),
        rank,
        ..SeatResult::default()
    }
}

/// A match from `(entrant, rank)` pairs in seat order.
fn game(id: &str, round: u32, seats: &[(&str, u32)]) -> MatchRecord {
    MatchRecord {
        match_id: id.to_owned(),
        round,
        seats: seats.iter().map(|(e, r)| seat(e, *r)).collect(),
        reason: "general_captured".to_owned(),
        turns: 100,
        worker: String::new(),
    }
}

fn win(id: &str, round: u32, winner: &str, loser: &str) -> MatchRecord {
    game(id, round, &[(winner, 0), (loser, 1)])
}

fn draw(id: &str, round: u32, a: &str, b: &str) -> MatchRecord {
    game(id, round, &[(a, 0), (b, 0)])
}

fn row<'a>(standings: &'a Standings, entrant: &str) -> &'a StandingRow {
    standings
        .row(entrant)
        .unwrap_or_else(|| panic!("no row for {entrant}"))
}

fn order(standings: &Standings) -> Vec<(&str, u32)> {
    standings
        .rows
        .iter()
        .map(|r| (r.entrant.as_str(), r.rank))
        .collect()
}

fn assert_close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "expected {expected}, got {actual}"
    );
}

/// A 4-player round robin: A-B 1-0, C-D ½-½, A-C ½-½, B-D 1-0, A-D 1-0, C-B 1-0.
fn round_robin() -> Vec<MatchRecord> {
    vec![
        win("m1", 0, "a", "b"),
        draw("m2", 0, "c", "d"),
        draw("m3", 1, "a", "c"),
        win("m4", 1, "b", "d"),
        win("m5", 2, "a", "d"),
        win("m6", 2, "c", "b"),
    ]
}

#[test]
fn round_robin_points_buchholz_and_sb_by_hand() {
    let s = compute(&entrants(&["a", "b", "c", "d"]), &round_robin(), &[]).expect("valid");
    // Points: a 1+½+1, b 0+1+0, c ½+½+1, d ½+0+0.
    // Buchholz: everyone met everyone, so it is the sum of the other three.
    // SB: a beat b (1) and d (½), drew c (2 × ½); b beat d (½);
    //     c drew d (½ × ½) and a (2½ × ½), beat b (1); d drew c (2 × ½).
    let expected = [
        ("a", 1, 2.5, 3.5, 2.5, (2, 1, 0)),
        ("c", 2, 2.0, 4.0, 2.5, (1, 2, 0)),
        ("b", 3, 1.0, 5.0, 0.5, (1, 0, 2)),
        ("d", 4, 0.5, 5.5, 1.0, (0, 1, 2)),
    ];
    assert_eq!(s.rows.len(), 4);
    for (row, (id, rank, points, buchholz, sb, (w, d, l))) in s.rows.iter().zip(expected) {
        assert_eq!(row.entrant, id);
        assert_eq!(row.name, format!("Bot {id}"));
        assert_eq!(row.rank, rank, "{id}");
        assert_eq!(row.points, points, "{id} points");
        assert_eq!(row.buchholz, buchholz, "{id} buchholz");
        assert_eq!(row.sonneborn_berger, sb, "{id} sb");
        assert_eq!((row.wins, row.draws, row.losses), (w, d, l), "{id} w/d/l");
        assert_eq!(row.games, 3);
        assert_eq!(row.byes, 0);
    }
}

#[test]
fn draws_split_the_point_and_symmetric_draws_share_a_rank() {
    let s = compute(&entrants(&["x", "y"]), &[draw("m", 0, "y", "x")], &[]).expect("valid");
    for id in ["x", "y"] {
        let r = row(&s, id);
        assert_eq!((r.points, r.buchholz, r.sonneborn_berger), (0.5, 0.5, 0.25));
        assert_eq!((r.wins, r.draws, r.losses), (0, 1, 0));
        // An expected result between equals leaves μ where it was.
        assert_close(r.rating_mu, 25.0);
        assert!(r.rating_sigma < 25.0 / 3.0);
    }
    assert_eq!(order(&s), [("x", 1), ("y", 1)]);
}

#[test]
fn byes_score_a_point_but_no_tie_break() {
    let matches = [win("m1", 0, "a", "b"), win("m2", 1, "c", "a")];
    let byes = [(0, "c".to_owned()), (1, "b".to_owned())];
    let s = compute(&entrants(&["a", "b", "c"]), &matches, &byes).expect("valid");
    // a: 1 (beat b); b: 1 (bye); c: 1 (bye) + 1 (beat a).
    // Buchholz a = b + c = 3, b = a = 1, c = a = 1. SB a = b = 1, b = 0, c = a = 1.
    assert_eq!(order(&s), [("c", 1), ("a", 2), ("b", 3)]);
    let (a, b, c) = (row(&s, "a"), row(&s, "b"), row(&s, "c"));
    assert_eq!((a.points, a.buchholz, a.sonneborn_berger), (1.0, 3.0, 1.0));
    assert_eq!((b.points, b.buchholz, b.sonneborn_berger), (1.0, 1.0, 0.0));
    assert_eq!((c.points, c.buchholz, c.sonneborn_berger), (2.0, 1.0, 1.0));
    assert_eq!((a.byes, b.byes, c.byes), (0, 1, 1));
    assert_eq!((b.games, b.wins, b.losses), (1, 0, 1));
    // A bye does not move the rating: b only lost.
    assert!(b.rating_mu < 25.0);
}

#[test]
fn four_seat_games_with_ties() {
    let matches = [
        game("g1", 0, &[("p", 0), ("q", 1), ("r", 1), ("s", 3)]),
        // Dense ranks read the same as competition ranks.
        game("g2", 1, &[("p", 2), ("q", 0), ("r", 1), ("s", 1)]),
    ];
    let s = compute(&entrants(&["p", "q", "r", "s"]), &matches, &[]).expect("valid");
    // Places are worth 1, ⅔, ⅓, 0; a tie over places 1-2 is worth ½ each.
    // Totals: p 1 + 0, q ½ + 1, r ½ + ½, s 0 + ½.
    // Buchholz: twice the other three's totals.
    // SB, pairwise: g1 p ahead of q, r, s: 1.5 + 1 + .5; q ties r (½ × 1), ahead s (.5);
    //   r ties q (½ × 1.5), ahead s (.5). g2 q ahead of all: 1 + 1 + .5;
    //   r ahead p (1), ties s (½ × .5); s ahead p (1), ties r (½ × 1).
    let expected = [
        ("q", 1, 1.5, 5.0, 3.5, (1, 0, 1)),
        ("p", 2, 1.0, 6.0, 3.0, (1, 0, 1)),
        ("r", 3, 1.0, 6.0, 2.5, (0, 0, 2)),
        ("s", 4, 0.5, 7.0, 1.5, (0, 0, 2)),
    ];
    for (row, (id, rank, points, buchholz, sb, (w, d, l))) in s.rows.iter().zip(expected) {
        assert_eq!(row.entrant, id);
        assert_eq!(row.rank, rank, "{id}");
        assert_eq!(row.points, points, "{id} points");
        assert_eq!(row.buchholz, buchholz, "{id} buchholz");
        assert_eq!(row.sonneborn_berger, sb, "{id} sb");
        assert_eq!((row.wins, row.draws, row.losses), (w, d, l), "{id} w/d/l");
    }
}

/// A match as a worker reports it: ranks, and the game's points for them.
fn reported(id: &str, round: u32, seats: &[(&str, u32)]) -> MatchRecord {
    let mut record = game(id, round, seats);
    let ranks: Vec<u32> = seats.iter().map(|s| s.1).collect();
    for (seat, points) in record.seats.iter_mut().zip(placement_points(&ranks)) {
        seat.score = points;
        if let Some(name) = arena_coordinator::domain::baseline_name(&seat.entrant) {
            seat.baseline = Some(name.to_owned());
        }
    }
    record
}

#[test]
fn a_four_seat_tie_for_first_row_by_row() {
    let matches = [reported("g1", 0, &[("p", 0), ("q", 0), ("r", 2), ("s", 3)])];
    let s = compute(&entrants(&["p", "q", "r", "s"]), &matches, &[]).expect("valid");
    // Places 0 and 1 shared: (3 - 0.5) / 3 = 5/6 each; then 1/3 and 0.
    // Buchholz: the other three's totals. SB: co-player's total times
    // 1 ahead, ½ tied: p gets ½ · 5/6 (q) + 1/3 (r) + 0 (s) = 3/4.
    let expected = [
        ("p", 1, 5.0 / 6.0, 7.0 / 6.0, 0.75, (0, 1, 0)),
        ("q", 1, 5.0 / 6.0, 7.0 / 6.0, 0.75, (0, 1, 0)),
        ("r", 3, 1.0 / 3.0, 5.0 / 3.0, 0.0, (0, 0, 1)),
        ("s", 4, 0.0, 2.0, 0.0, (0, 0, 1)),
    ];
    assert_eq!(s.rows.len(), expected.len());
    for (row, (id, rank, points, buchholz, sb, (w, d, l))) in s.rows.iter().zip(expected) {
        assert_eq!(row.entrant, id);
        assert_eq!(row.rank, rank, "{id}");
        assert_close(row.points, points);
        assert_close(row.buchholz, buchholz);
        assert_close(row.sonneborn_berger, sb);
        assert_eq!((row.wins, row.draws, row.losses), (w, d, l), "{id} w/d/l");
        assert_eq!(row.games, 1, "{id}");
    }
    // The points are the game's own, as reported.
    for seat in &matches[0].seats {
        assert_close(row(&s, &seat.entrant).points, seat.score);
    }
    // Tied seats share an outcome; the order below is strict.
    let mu = |id| row(&s, id).rating_mu;
    assert_eq!(mu("p"), mu("q"));
    assert!(mu("q") > mu("r") && mu("r") > mu("s"), "{s:?}");
    assert!(row(&s, "p").rating_conservative > row(&s, "r").rating_conservative);
}

#[test]
fn baseline_seats_are_no_row_and_score_for_no_one() {
    let sprawl = baseline_id("sprawl");
    let matches = [
        // a first, b third, behind a baseline: a 1, b 1/3; the baseline's
        // 2/3 and 0 go to nobody.
        reported("g1", 0, &[("a", 0), (&sprawl, 1), ("b", 2), (&sprawl, 3)]),
        // A baseline wins; a and b share second: (3 - 1.5) / 3 = ½ each.
        reported("g2", 1, &[(&sprawl, 0), ("b", 1), ("a", 1), (&sprawl, 3)]),
    ];
    let s = compute(&entrants(&["a", "b", "c"]), &matches, &[]).expect("valid");
    let ids: Vec<&str> = s.rows.iter().map(|r| r.entrant.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"], "no baseline row");
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_close(total, 1.0 + 1.0 / 3.0 + 0.5 + 0.5);
    let (a, b, c) = (row(&s, "a"), row(&s, "b"), row(&s, "c"));
    assert_close(a.points, 1.5);
    assert_close(b.points, 1.0 / 3.0 + 0.5);
    assert_eq!(c.points, 0.0);
    // Only entrants are co-players: each game adds the other entrant once.
    assert_close(a.buchholz, 2.0 * b.points);
    assert_close(b.buchholz, 2.0 * a.points);
    // SB: a ahead of b in g1 (1 × b), tied in g2 (½ × b).
    assert_close(a.sonneborn_berger, 1.5 * b.points);
    assert_close(b.sonneborn_berger, 0.5 * a.points);
    // Second behind a baseline is no win: wins count first places.
    assert_eq!((a.wins, a.draws, a.losses), (1, 0, 1));
    assert_eq!((b.wins, b.draws, b.losses), (0, 0, 2));
    assert_eq!(a.games, 2);
    // Rated as a ranking of a and b alone: a beat b, then they tied.
    assert!(a.rating_mu > b.rating_mu);
    assert_eq!(c.rating_sigma, 25.0 / 3.0);
}

#[test]
fn a_lone_entrant_among_baselines_scores_but_is_not_rated() {
    let crown = baseline_id("crown");
    let matches = [reported(
        "g1",
        0,
        &[(&crown, 0), ("a", 1), (&crown, 2), (&crown, 3)],
    )];
    let s = compute(&entrants(&["a"]), &matches, &[]).expect("valid");
    assert_eq!(s.rows.len(), 1);
    assert_close(s.rows[0].points, 2.0 / 3.0);
    assert_eq!(s.rows[0].buchholz, 0.0);
    assert_eq!(s.rows[0].rating_sigma, 25.0 / 3.0, "no rating update");
}

#[test]
fn shared_first_place_counts_as_a_draw_and_thirds_add_up() {
    let matches = [
        game("g1", 0, &[("p", 0), ("q", 0), ("r", 2), ("s", 3)]),
        game("g2", 0, &[("t", 0), ("u", 1), ("v", 1)]),
    ];
    let s = compute(
        &entrants(&["p", "q", "r", "s", "t", "u", "v"]),
        &matches,
        &[],
    )
    .expect("valid");
    for (id, points) in [
        ("p", 5.0 / 6.0),
        ("q", 5.0 / 6.0),
        ("r", 1.0 / 3.0),
        ("s", 0.0),
        ("t", 1.0),
        ("u", 0.25),
        ("v", 0.25),
    ] {
        assert_close(row(&s, id).points, points);
    }
    let p = row(&s, "p");
    assert_eq!((p.wins, p.draws, p.losses), (0, 1, 0));
    // p and q are equal in every respect and share a rank behind t.
    assert_eq!(&order(&s)[..3], [("t", 1), ("p", 2), ("q", 2)]);
}

#[test]
fn forfeits_and_faults_add_up() {
    let mut m1 = win("m1", 0, "a", "b");
    m1.seats[0].timeouts = 2;
    m1.seats[0].malformed = 1;
    m1.seats[1].forfeit = Some(Forfeit::Crash);
    m1.seats[1].timeouts = 5;
    let mut m2 = win("m2", 1, "a", "b");
    m2.seats[1].forfeit = Some(Forfeit::Crash);
    m2.seats[1].malformed = 3;
    let mut m3 = draw("m3", 2, "a", "b");
    m3.reason = "forfeit".to_owned();
    m3.seats[0].forfeit = Some(Forfeit::BuildFailed);
    m3.seats[1].forfeit = Some(Forfeit::Memory);
    let s = compute(&entrants(&["a", "b"]), &[m1, m2, m3], &[]).expect("valid");

    let (a, b) = (row(&s, "a"), row(&s, "b"));
    assert_eq!((a.timeouts, a.malformed), (2, 1));
    assert_eq!((b.timeouts, b.malformed), (5, 3));
    assert_eq!(a.forfeits, BTreeMap::from([(Forfeit::BuildFailed, 1)]));
    assert_eq!(
        b.forfeits,
        BTreeMap::from([(Forfeit::Crash, 2), (Forfeit::Memory, 1)])
    );
    assert_eq!((a.wins, a.draws, a.losses), (2, 1, 0));
}

#[test]
fn ordering_falls_through_the_tie_breaks_and_shares_ranks() {
    // a beats b; c, d and e never play. b leads the zero-point group on
    // Buchholz; c, d, e are equal in everything and share rank 3, by id.
    let s = compute(
        &entrants(&["e", "d", "c", "b", "a"]),
        &[win("m", 0, "a", "b")],
        &[],
    )
    .expect("valid");
    assert_eq!(
        order(&s),
        [("a", 1), ("b", 2), ("c", 3), ("d", 3), ("e", 3)]
    );

    // Equal points, Buchholz and SB: the rating decides. x beat y, y beat x,
    // so both have 1 point, Buchholz 2 and SB 1, but the later win counts
    // more in a sequential rating, and it was y's.
    let s = compute(
        &entrants(&["x", "y"]),
        &[win("m1", 0, "x", "y"), win("m2", 1, "y", "x")],
        &[],
    )
    .expect("valid");
    let (x, y) = (row(&s, "x"), row(&s, "y"));
    assert_eq!((x.points, x.buchholz, x.sonneborn_berger), (1.0, 2.0, 1.0));
    assert_eq!((y.points, y.buchholz, y.sonneborn_berger), (1.0, 2.0, 1.0));
    assert!(y.rating_conservative > x.rating_conservative);
    assert_eq!(order(&s), [("y", 1), ("x", 2)]);
}

#[test]
fn sb_breaks_a_buchholz_tie() {
    // In the four-seat example p and r tie on points and Buchholz; p beat
    // stronger co-players, so SB puts p ahead.
    let matches = [
        game("g1", 0, &[("p", 0), ("q", 1), ("r", 1), ("s", 3)]),
        game("g2", 1, &[("p", 3), ("q", 0), ("r", 1), ("s", 1)]),
    ];
    let s = compute(&entrants(&["r", "p", "s", "q"]), &matches, &[]).expect("valid");
    let (p, r) = (row(&s, "p"), row(&s, "r"));
    assert_eq!((p.points, p.buchholz), (r.points, r.buchholz));
    assert!(p.sonneborn_berger > r.sonneborn_berger);
    assert!(p.rank < r.rank);
}

#[test]
fn input_order_does_not_matter() {
    let ids = ["a", "b", "c", "d"];
    let matches = round_robin();
    let byes = [(3, "a".to_owned()), (3, "d".to_owned())];
    let reference = compute(&entrants(&ids), &matches, &byes).expect("valid");

    let mut shuffled = matches.clone();
    shuffled.reverse();
    shuffled.rotate_left(2);
    let mut people = entrants(&ids);
    people.reverse();
    let mut byes_reversed = byes.to_vec();
    byes_reversed.reverse();
    let again = compute(&people, &shuffled, &byes_reversed).expect("valid");
    // Everything, ratings included: matches are replayed by (round, match_id).
    assert_eq!(reference, again);
    assert_eq!(reference.to_json(), again.to_json());
}

#[test]
fn rating_replays_matches_by_round_then_match_id() {
    use skillratings::MultiTeamOutcome;
    use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

    // Passed in scrambled; "m10" sorts before "m9" as text, round first.
    let matches = [
        win("m9", 1, "b", "a"),
        win("m10", 1, "a", "b"),
        draw("m2", 0, "a", "b"),
    ];
    let s = compute(&entrants(&["a", "b"]), &matches, &[]).expect("valid");

    let config = WengLinConfig::new();
    let mut a = WengLinRating::new();
    let mut b = WengLinRating::new();
    for (rank_a, rank_b) in [(1, 1), (1, 2), (2, 1)] {
        let teams = [
            (std::slice::from_ref(&a), MultiTeamOutcome::new(rank_a)),
            (std::slice::from_ref(&b), MultiTeamOutcome::new(rank_b)),
        ];
        let new = weng_lin_multi_team(&teams, &config);
        (a, b) = (new[0][0], new[1][0]);
    }
    let (ra, rb) = (row(&s, "a"), row(&s, "b"));
    assert_eq!((ra.rating_mu, ra.rating_sigma), (a.rating, a.uncertainty));
    assert_eq!((rb.rating_mu, rb.rating_sigma), (b.rating, b.uncertainty));
    assert_eq!(ra.rating_conservative, a.rating - 3.0 * a.uncertainty);
}

#[test]
fn a_perfect_score_has_the_highest_mu() {
    let ids = ["a", "b", "c", "d", "e"];
    let mut matches = Vec::new();
    let mut n = 0;
    for (i, x) in ids.iter().enumerate() {
        for y in &ids[i + 1..] {
            n += 1;
            // Earlier ids beat later ones: a wins everything.
            matches.push(win(&format!("m{n:02}"), n, x, y));
        }
    }
    let s = compute(&entrants(&ids), &matches, &[]).expect("valid");
    let a = row(&s, "a");
    assert_eq!((a.rank, a.wins, a.points), (1, 4, 4.0));
    for other in &s.rows[1..] {
        assert!(a.rating_mu > other.rating_mu, "{}", other.entrant);
        assert!(a.rating_conservative > other.rating_conservative);
    }
    // The full ordering follows the results, and so does μ.
    let mus: Vec<f64> = s.rows.iter().map(|r| r.rating_mu).collect();
    assert!(mus.windows(2).all(|w| w[0] > w[1]), "{mus:?}");
}

#[test]
fn sigma_shrinks_with_every_game() {
    let matches: Vec<MatchRecord> = (0..8)
        .map(|i| {
            if i % 3 == 0 {
                draw(&format!("m{i}"), i, "a", "b")
            } else {
                win(&format!("m{i}"), i, "b", "a")
            }
        })
        .collect();
    let people = entrants(&["a", "b", "idle"]);
    let mut last = f64::INFINITY;
    for played in 0..=matches.len() {
        let s = compute(&people, &matches[..played], &[]).expect("valid");
        let a = row(&s, "a");
        assert_eq!(a.games as usize, played);
        assert!(a.rating_sigma < last, "after {played} games");
        last = a.rating_sigma;
        // Someone who never plays keeps the prior.
        let idle = row(&s, "idle");
        assert_eq!((idle.rating_mu, idle.rating_sigma), (25.0, 25.0 / 3.0));
    }
}

#[test]
fn invalid_input_is_an_error() {
    let people = entrants(&["a", "b", "c"]);
    let err = |matches: &[MatchRecord], byes: &[(u32, EntrantId)]| {
        compute(&people, matches, byes).expect_err("must be rejected")
    };
    assert_eq!(
        err(&[win("m", 0, "a", "zed")], &[]),
        StandingsError::UnknownEntrant {
            match_id: "m".into(),
            entrant: "zed".into()
        }
    );
    assert_eq!(
        err(&[game("m", 0, &[("a", 0)])], &[]),
        StandingsError::TooFewSeats {
            match_id: "m".into(),
            seats: 1
        }
    );
    assert_eq!(
        err(&[game("m", 0, &[])], &[]),
        StandingsError::TooFewSeats {
            match_id: "m".into(),
            seats: 0
        }
    );
    assert_eq!(
        err(&[game("m", 0, &[("a", 0), ("b", 2)])], &[]),
        StandingsError::InconsistentRanks {
            match_id: "m".into(),
            rank: 2,
            seats: 2
        }
    );
    assert_eq!(
        err(&[game("m", 0, &[("a", 0), ("a", 1)])], &[]),
        StandingsError::DuplicateSeat {
            match_id: "m".into(),
            entrant: "a".into()
        }
    );
    assert_eq!(
        err(&[win("m", 0, "a", "b"), win("m", 1, "b", "c")], &[]),
        StandingsError::DuplicateMatch {
            match_id: "m".into()
        }
    );
    assert_eq!(
        err(&[], &[(0, "zed".into())]),
        StandingsError::UnknownByeEntrant {
            round: 0,
            entrant: "zed".into()
        }
    );
    assert_eq!(
        err(&[], &[(0, "a".into()), (0, "a".into())]),
        StandingsError::DuplicateBye {
            round: 0,
            entrant: "a".into()
        }
    );
    assert_eq!(
        compute(&entrants(&["a", "a"]), &[], &[]),
        Err(StandingsError::DuplicateEntrant {
            entrant: "a".into()
        })
    );
    // Errors read as sentences.
    let message = err(&[win("m7", 0, "a", "zed")], &[]).to_string();
    assert_eq!(message, "match m7 names unknown entrant zed");
}

#[test]
fn nothing_played_is_an_empty_but_valid_table() {
    assert_eq!(compute(&[], &[], &[]), Ok(Standings::default()));
    let s = compute(&entrants(&["b", "a"]), &[], &[]).expect("valid");
    assert_eq!(order(&s), [("a", 1), ("b", 1)]);
    assert!(s.to_csv().lines().count() == 3);
}

/// A small RFC 4180 reader, for checking what `to_csv` wrote.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => assert_eq!(chars.next(), Some('\n'), "CR without LF"),
            (false, '\n') => panic!("bare LF outside quotes"),
            (false, '\u{0}'..) => field.push(c),
        }
        if !quoted && c == '\r' {
            record.push(std::mem::take(&mut field));
            records.push(std::mem::take(&mut record));
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "trailing data"
    );
    records
}

#[test]
fn csv_has_a_header_forfeit_columns_and_escaped_names() {
    let people = vec![
        ("a".to_owned(), "Smith, John".to_owned()),
        ("b".to_owned(), "The \"Best\" Bot".to_owned()),
        ("c".to_owned(), "two\nlines\r\nhere".to_owned()),
        ("d".to_owned(), "plain".to_owned()),
    ];
    let mut m = win("m1", 0, "a", "b");
    m.seats[1].forfeit = Some(Forfeit::BuildFailed);
    m.seats[1].timeouts = 4;
    // The runner's counts without a field of their own ride in the stats.
    m.seats[1].stats.insert("illegal_replies".into(), 2);
    m.seats[1].stats.insert("fuel_exhausted".into(), 3);
    m.seats[1].stats.insert("fuel_p50".into(), 700);
    m.seats[1].stats.insert("strike".into(), 5);
    let s = compute(&people, &[m, draw("m2", 0, "c", "d")], &[]).expect("valid");
    let b = s.rows.iter().find(|r| r.entrant == "b").expect("b");
    assert_eq!((b.illegal, b.fuel_exhausted, b.strikes), (2, 3, 5));
    let csv = s.to_csv();
    assert!(csv.contains("\"Smith, John\""));
    assert!(csv.contains("\"The \"\"Best\"\" Bot\""));
    assert!(csv.contains("\"two\nlines\r\nhere\""));
    assert!(csv.contains(",plain,"));

    let records = parse_csv(&csv);
    assert_eq!(
        records[0],
        [
            "rank",
            "entrant",
            "name",
            "points",
            "buchholz",
            "sonneborn_berger",
            "rating_mu",
            "rating_sigma",
            "rating_conservative",
            "games",
            "wins",
            "draws",
            "losses",
            "byes",
            "timeouts",
            "malformed",
            "illegal",
            "fuel_exhausted",
            "strikes",
            "forfeit_crash",
            "forfeit_exit",
            "forfeit_memory",
            "forfeit_faults",
            "forfeit_build_failed",
            "forfeit_trap",
            "forfeit_wall_backstop",
        ]
    );
    assert_eq!(records.len(), 5);
    for (record, row) in records[1..].iter().zip(&s.rows) {
        assert_eq!(record.len(), records[0].len());
        assert_eq!(record[0], row.rank.to_string());
        assert_eq!(record[1], row.entrant);
        assert_eq!(record[2], row.name);
        assert_eq!(record[3].parse::<f64>().ok(), Some(row.points));
        assert_eq!(record[6].parse::<f64>().ok(), Some(row.rating_mu));
    }
    let b = records.iter().find(|r| r[1] == "b").expect("row for b");
    assert_eq!(b[14], "4");
    assert_eq!(&b[16..19], ["2", "3", "5"]);
    assert_eq!(&b[19..], ["0", "0", "0", "0", "1", "0", "0"]);
}

#[test]
fn json_round_trips_with_stable_field_names() {
    let mut matches = round_robin();
    matches[0].seats[1].forfeit = Some(Forfeit::BuildFailed);
    matches[0].seats[1].malformed = 2;
    matches[0].seats[1].stats.insert("strike".into(), 6);
    let s = compute(
        &entrants(&["a", "b", "c", "d"]),
        &matches,
        &[(3, "b".to_owned())],
    )
    .expect("valid");
    let json = s.to_json();
    for field in [
        "\"rows\"",
        "\"rank\"",
        "\"entrant\"",
        "\"name\"",
        "\"points\"",
        "\"buchholz\"",
        "\"sonneborn_berger\"",
        "\"rating_mu\"",
        "\"rating_sigma\"",
        "\"rating_conservative\"",
        "\"games\"",
        "\"wins\"",
        "\"draws\"",
        "\"losses\"",
        "\"byes\"",
        "\"timeouts\"",
        "\"malformed\"",
        "\"illegal\"",
        "\"fuel_exhausted\"",
        "\"strikes\": 6",
        "\"forfeits\"",
        "\"build_failed\": 1",
    ] {
        assert!(json.contains(field), "missing {field} in {json}");
    }
    assert!(json.contains('\n'), "pretty-printed");
    let back = Standings::from_json(&json).expect("parses");
    assert_eq!(back.rows.len(), s.rows.len());
    for (a, b) in back.rows.iter().zip(&s.rows) {
        assert_eq!(
            (
                a.rank, &a.entrant, &a.name, a.games, a.wins, a.draws, a.losses
            ),
            (
                b.rank, &b.entrant, &b.name, b.games, b.wins, b.draws, b.losses
            )
        );
        assert_eq!(
            (a.byes, a.timeouts, a.malformed, &a.forfeits),
            (b.byes, b.timeouts, b.malformed, &b.forfeits)
        );
        assert_eq!(
            (a.illegal, a.fuel_exhausted, a.strikes),
            (b.illegal, b.fuel_exhausted, b.strikes)
        );
        for (x, y) in [
            (a.points, b.points),
            (a.buchholz, b.buchholz),
            (a.sonneborn_berger, b.sonneborn_berger),
            (a.rating_mu, b.rating_mu),
            (a.rating_sigma, b.rating_sigma),
            (a.rating_conservative, b.rating_conservative),
        ] {
            assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} vs {y}");
        }
    }
    // Writing it again gives the same text.
    assert_eq!(back.to_json(), json);
}

#[test]
fn table_aligns_columns_and_keeps_rows_on_one_line() {
    let people = vec![
        ("a".to_owned(), "Alice".to_owned()),
        ("b".to_owned(), "Bob\nthe second".to_owned()),
        ("c".to_owned(), "Ĉarlotte, the long-named".to_owned()),
    ];
    let mut m = win("m1", 0, "a", "b");
    m.seats[1].timeouts = 3;
    m.seats[1].forfeit = Some(Forfeit::Faults);
    m.seats[1].stats.insert("strike".into(), 2);
    let s = compute(&people, &[m, draw("m2", 1, "c", "a")], &[]).expect("valid");
    let table = s.to_table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    for heading in [
        "#",
        "Name",
        "Points",
        "Buchholz",
        "SB",
        "Rating",
        "W/D/L",
        "Faults T/M/I/D/S/F",
    ] {
        assert!(lines[0].contains(heading), "{heading}");
    }
    // The last column is right-aligned, so every line is equally wide, and
    // each column starts where its heading does.
    let width = lines[0].chars().count();
    assert!(lines.iter().all(|l| l.chars().count() == width), "{table}");
    let column = |line: &str, needle: &str| {
        let byte = line.find(needle).expect("present");
        line[..byte].chars().count()
    };
    assert!(
        lines.iter().any(|l| l.contains("Bob the second")),
        "{table}"
    );
    // Names are left-aligned under their heading; numbers end under theirs.
    let name_at = column(lines[0], "Name");
    for name in ["Alice", "Bob", "Ĉarlotte"] {
        let line = lines.iter().find(|l| l.contains(name)).expect("row");
        assert_eq!(column(line, name), name_at, "{table}");
    }
    for heading in ["Points", "Rating", "W/D/L"] {
        let end = column(lines[0], heading) + heading.chars().count();
        for line in &lines[1..] {
            let chars: Vec<char> = line.chars().collect();
            assert!(chars[end - 1].is_ascii_digit(), "{heading}: {line}");
            assert_eq!(chars[end], ' ', "{heading}: {line}");
        }
    }
    let bob = lines.iter().find(|l| l.contains("Bob")).expect("bob");
    assert!(bob.contains("0/0/1"), "{bob}");
    assert!(bob.trim_end().ends_with("3/0/0/0/2/1"), "{bob}");
    assert!(lines[1].starts_with("1  "), "{table}");
}

fn arb_matches() -> impl Strategy<Value = (usize, Vec<MatchRecord>, Vec<(u32, EntrantId)>)> {
    (3usize..7).prop_flat_map(|entrants| {
        let seat_ranks = (2usize..=entrants).prop_flat_map(move |n| {
            (
                Just(n),
                proptest::sample::subsequence((0..entrants).collect::<Vec<_>>(), n).prop_shuffle(),
                proptest::collection::vec(0..n as u32, n),
            )
        });
        (
            Just(entrants),
            proptest::collection::vec((0u32..4, seat_ranks), 0..12),
            proptest::collection::vec((0u32..4, 0..entrants), 0..4),
        )
            .prop_map(|(entrants, games, byes)| {
                let matches = games
                    .into_iter()
                    .enumerate()
                    .map(|(i, (round, (_, seats, ranks)))| MatchRecord {
                        match_id: format!("g{i}"),
                        round,
                        seats: seats
                            .into_iter()
                            .zip(ranks)
                            .map(|(e, r)| seat(&format!("e{e}"), r))
                            .collect(),
                        reason: "x".into(),
                        turns: 1,
                        worker: String::new(),
                    })
                    .collect();
                let mut byes: Vec<(u32, EntrantId)> = byes
                    .into_iter()
                    .map(|(r, e)| (r, format!("e{e}")))
                    .collect();
                byes.sort();
                byes.dedup();
                (entrants, matches, byes)
            })
    })
}

proptest! {
    #[test]
    fn invariants_hold_for_any_tournament((n, matches, byes) in arb_matches()) {
        let ids: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
        let people: Vec<(EntrantId, String)> = ids.iter().map(|i| (i.clone(), i.clone())).collect();
        let s = compute(&people, &matches, &byes).expect("valid");
        // Every match hands out N / 2 points, every bye one.
        let handed: f64 = matches.iter().map(|m| m.seats.len() as f64 / 2.0).sum::<f64>()
            + byes.len() as f64;
        let total: f64 = s.rows.iter().map(|r| r.points).sum();
        prop_assert!((total - handed).abs() < 1e-9);
        for r in &s.rows {
            prop_assert!(r.sonneborn_berger <= r.buchholz + 1e-9);
            prop_assert_eq!(r.games, r.wins + r.draws + r.losses);
            prop_assert!(r.rating_sigma <= 25.0 / 3.0);
        }
        // Ranks start at 1, never decrease, and skip after a shared rank.
        for (i, r) in s.rows.iter().enumerate() {
            prop_assert!(r.rank as usize <= i + 1);
            if i == 0 { prop_assert_eq!(r.rank, 1); }
            else {
                let prev = s.rows[i - 1].rank;
                prop_assert!(r.rank == prev || r.rank as usize == i + 1);
            }
        }
        // Input order does not matter.
        let mut reversed = matches.clone();
        reversed.reverse();
        let mut people_rev = people.clone();
        people_rev.reverse();
        prop_assert_eq!(compute(&people_rev, &reversed, &byes).expect("valid"), s);
    }
}
