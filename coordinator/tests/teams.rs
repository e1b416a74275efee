//! Team games (2v2): schedules pair sides and seat them, standings read one
//! seat per side, reports must rank teammates alike, and the team layout is
//! part of a tournament's identity. The layout is passed in (`teams =
//! [0, 1, 0, 1]`, as generals-classic's 2v2 mode reports it), so these tests
//! do not depend on a game reporting it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use arena_coordinator::domain::{EntrantId, Format, MatchRecord, Pairing, Round, SeatResult};
use arena_coordinator::report::{self, ResultError};
use arena_coordinator::schedule::{
    ScheduleError, round_robin, round_robin_by_side, round_robin_round_count_by_side,
    swiss_round_by_side,
};
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament, tournament_id};
use arena_coordinator::standings::{self, Standings, StandingsError};
use arena_coordinator::store::{LiveBoard, Store, TournamentSpec, WorkerInfo};
use arena_coordinator::teams::{Sides, TeamError};
use arena_coordinator::tournament_file::TournamentFile;
use arena_engine::registry::{self, RuleValue, Rules};
use arena_engine::{Forfeit, placement_points};

const TWO_V_TWO: [u32; 4] = [0, 1, 0, 1];

fn two_v_two() -> Sides {
    Sides::new(4, &TWO_V_TWO).unwrap()
}

fn ids(n: usize) -> Vec<EntrantId> {
    (0..n).map(|i| format!("team-{i}")).collect()
}

/// A seated 2v2 match's two sides, checked for shape: seats 0 and 2 hold one
/// entrant, seats 1 and 3 another.
fn sides_of(pairing: &Pairing) -> (EntrantId, EntrantId) {
    let s = &pairing.seats;
    assert_eq!(s.len(), 4, "{s:?}");
    assert_eq!(s[0], s[2], "{s:?}");
    assert_eq!(s[1], s[3], "{s:?}");
    assert_ne!(s[0], s[1], "an entrant on both sides: {s:?}");
    (s[0].clone(), s[1].clone())
}

fn round_robin_2v2(n: usize, games: u32) -> Vec<Round> {
    round_robin_by_side(&ids(n), &two_v_two(), 1, games, 42, None).unwrap()
}

#[test]
fn round_robin_meets_every_pair_of_sides_with_sides_rotated() {
    for n in [4, 5] {
        let rounds = round_robin_2v2(n, 2);
        assert_eq!(
            round_robin_round_count_by_side(&ids(n), &two_v_two(), 1, 2, None).unwrap(),
            rounds.len()
        );
        // The circle method over sides: n - 1 rounds for 4, n for 5.
        assert_eq!(rounds.len(), n + n % 2 - 1);
        let mut met: BTreeMap<(EntrantId, EntrantId), Vec<(EntrantId, EntrantId)>> =
            BTreeMap::new();
        for round in &rounds {
            // Each entrant meets one opponent a round (in both its games).
            let mut opponent: BTreeMap<EntrantId, EntrantId> = BTreeMap::new();
            for pairing in &round.pairings {
                let (a, b) = sides_of(pairing);
                for (x, y) in [(&a, &b), (&b, &a)] {
                    let seen = opponent.entry(x.clone()).or_insert_with(|| y.clone());
                    assert_eq!(seen, y, "{x} plays twice in a round");
                }
                let key = (a.clone().min(b.clone()), a.clone().max(b.clone()));
                met.entry(key).or_default().push((a, b));
            }
            // An odd field: whoever does not play has the bye.
            assert_eq!(round.byes.len(), n % 2, "{round:?}");
            for bye in &round.byes {
                assert!(!opponent.contains_key(bye));
            }
            assert_eq!(opponent.len() + round.byes.len(), n);
        }
        assert_eq!(met.len(), n * (n - 1) / 2, "every pair of sides meets");
        for ((x, y), games) in &met {
            // Twice each, once on either side.
            assert_eq!(games.len(), 2, "{x} v {y}");
            assert_eq!(games[0].0, games[1].1, "{x} v {y}: sides not swapped");
            assert_eq!(games[0].1, games[1].0);
        }
    }
}

#[test]
fn one_pairing_is_seated_abab_then_baba_on_one_map() {
    let rounds = round_robin_2v2(4, 2);
    // The plain two-seat schedule of the same field, pairing for pairing.
    let plain = round_robin(&ids(4), 2, 1, 2, 42).unwrap();
    for (teams, plain) in rounds.iter().zip(&plain) {
        assert_eq!(teams.pairings.len(), plain.pairings.len());
        for pair in teams.pairings.chunks(2).zip(plain.pairings.chunks(2)) {
            let ([first, second], [p0, p1]) = pair else {
                panic!("two games per pairing");
            };
            let (a, b) = (p0.seats[0].clone(), p0.seats[1].clone());
            assert_eq!(first.seats, [a.clone(), b.clone(), a.clone(), b.clone()]);
            assert_eq!(second.seats, [b.clone(), a.clone(), b.clone(), a.clone()]);
            assert_eq!(p1.seats, [b, a]);
            assert_eq!(first.seed, second.seed);
            assert_eq!(first.seed, p0.seed);
        }
    }
}

#[test]
fn sides_need_entrants_not_seats() {
    // Two teams fill a four-seat 2v2 match.
    let rounds = round_robin_2v2(2, 2);
    assert_eq!(rounds.len(), 1);
    let games = &rounds[0].pairings;
    assert_eq!(games.len(), 2);
    let (a, b) = sides_of(&games[0]);
    assert_eq!(sides_of(&games[1]), (b, a));
    // One does not.
    assert_eq!(
        round_robin_by_side(&ids(1), &two_v_two(), 1, 2, 42, None),
        Err(ScheduleError::TooFewEntrants {
            entrants: 1,
            seats: 2
        })
    );
}

/// The result of a seated 2v2 match: `winner` wins, or a draw when `None`.
fn result(match_id: &str, round: u32, pairing: &Pairing, winner: Option<&str>) -> MatchRecord {
    let ranks: Vec<u32> = pairing
        .seats
        .iter()
        .map(|e| match winner {
            Some(w) if w != e => 1,
            _ => 0,
        })
        .collect();
    let points = placement_points(&ranks);
    MatchRecord {
        match_id: match_id.to_owned(),
        round,
        seats: pairing
            .seats
            .iter()
            .zip(ranks.iter().zip(points))
            .zip(TWO_V_TWO)
            .map(|((entrant, (&rank, score)), team)| SeatResult {
                entrant: entrant.clone(),
                rank,
                score,
                team,
                moves: 10,
                ..SeatResult::default()
            })
            .collect(),
        reason: "general_captured".to_owned(),
        turns: 100,
        worker: String::new(),
    }
}

#[test]
fn swiss_pairs_whole_sides_and_gives_byes_to_an_odd_field() {
    let field = ids(5);
    let mut history = Vec::new();
    let mut met = BTreeSet::new();
    let mut byes = BTreeSet::new();
    for round in 0..5 {
        let paired = swiss_round_by_side(round, &field, &history, &two_v_two(), 7, None).unwrap();
        assert_eq!(paired.byes.len(), 1, "round {round}: {paired:?}");
        assert!(byes.insert(paired.byes[0].clone()), "a second bye");
        let mut seen: BTreeSet<&str> = paired.byes.iter().map(String::as_str).collect();
        for (i, pairing) in paired.pairings.iter().enumerate() {
            let (a, b) = sides_of(pairing);
            assert!(seen.insert(&pairing.seats[0]) && seen.insert(&pairing.seats[1]));
            // Ten pairs, two games a round: five rematch-free rounds exist,
            // and teammates on two seats never count as a meeting.
            assert!(
                met.insert((a.clone().min(b.clone()), a.clone().max(b.clone()))),
                "round {round}: rematch {a} v {b}"
            );
            let winner = if a < b { a } else { b };
            history.push(result(
                &format!("t:{round}:{i}"),
                round,
                pairing,
                Some(&winner),
            ));
        }
        assert_eq!(seen.len(), 5, "every entrant once");
    }
}

#[test]
fn swiss_refuses_a_history_that_splits_a_team() {
    let pairing = Pairing {
        seats: vec![
            "team-0".into(),
            "team-1".into(),
            "team-0".into(),
            "team-1".into(),
        ],
        seed: 1,
    };
    let mut split = result("t:0:0", 0, &pairing, Some("team-0"));
    split.seats[2].rank = 1;
    let err = swiss_round_by_side(1, &ids(2), &[split], &two_v_two(), 7, None).unwrap_err();
    assert!(matches!(
        err,
        ScheduleError::Teams(TeamError::SplitRank {
            seat: 0,
            teammate: 2,
            ..
        })
    ));
}

fn seated(a: &str, b: &str) -> Pairing {
    Pairing {
        seats: vec![a.into(), b.into(), a.into(), b.into()],
        seed: 1,
    }
}

fn entrants(ids: &[&str]) -> Vec<(EntrantId, String)> {
    ids.iter()
        .map(|i| (i.to_string(), i.to_uppercase()))
        .collect()
}

/// Four 2v2 matches over teams a, b, c, d:
/// round 0: a beats b, c draws d; round 1: c beats a (a's seat 2 crashes),
/// b beats d (b's seats time out 2 and 3 times).
fn four_team_matches() -> Vec<MatchRecord> {
    let mut crash = result("t:1:0", 1, &seated("a", "c"), Some("c"));
    crash.seats[2].forfeit = Some(Forfeit::Crash);
    crash.seats[2].timeouts = 1;
    let mut slow = result("t:1:1", 1, &seated("b", "d"), Some("b"));
    slow.seats[0].timeouts = 2;
    slow.seats[2].timeouts = 3;
    slow.seats[3].malformed = 4;
    vec![
        result("t:0:0", 0, &seated("a", "b"), Some("a")),
        result("t:0:1", 0, &seated("c", "d"), None),
        crash,
        slow,
    ]
}

fn assert_close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "{actual} is not {expected}"
    );
}

#[test]
fn standings_score_one_seat_per_side_row_by_row() {
    let table = standings::compute_by_side(
        &entrants(&["a", "b", "c", "d"]),
        &four_team_matches(),
        &[],
        &two_v_two(),
    )
    .unwrap();
    // Points 1 / ½ / 0 a match; Buchholz and SB over the other side only.
    // (entrant, rank, points, buchholz, SB, wins, draws, losses)
    let expected = [
        ("c", 1, 1.5, 1.5, 1.25, 1, 1, 0),
        ("a", 2, 1.0, 2.5, 1.0, 1, 0, 1),
        ("b", 3, 1.0, 1.5, 0.5, 1, 0, 1),
        ("d", 4, 0.5, 2.5, 0.75, 0, 1, 1),
    ];
    assert_eq!(table.rows.len(), expected.len());
    for (row, (entrant, rank, points, buchholz, sb, wins, draws, losses)) in
        table.rows.iter().zip(expected)
    {
        assert_eq!(row.entrant, entrant);
        assert_eq!(row.rank, rank, "{entrant}");
        assert_close(row.points, points);
        assert_close(row.buchholz, buchholz);
        assert_close(row.sonneborn_berger, sb);
        assert_eq!((row.wins, row.draws, row.losses), (wins, draws, losses));
        assert_eq!(row.games, 2, "{entrant}: games count matches, not seats");
        assert_eq!(row.byes, 0);
    }
    let row = |e: &str| table.row(e).unwrap();
    // A forfeit on one seat is one forfeit of its side; faults add up.
    assert_eq!(row("a").forfeits, BTreeMap::from([(Forfeit::Crash, 1)]));
    assert_eq!(row("a").timeouts, 1);
    assert_eq!(row("b").timeouts, 5);
    assert!(row("b").forfeits.is_empty());
    assert_eq!(row("d").malformed, 4);
}

/// The same matches as two-seat records: what a 2v2 must score like.
fn as_duels(matches: &[MatchRecord]) -> Vec<MatchRecord> {
    matches
        .iter()
        .map(|m| MatchRecord {
            seats: m.seats[..2].to_vec(),
            worker: String::new(),
            ..m.clone()
        })
        .collect()
}

#[test]
fn a_team_table_is_the_duel_table_of_its_sides() {
    let field = entrants(&["a", "b", "c", "d"]);
    let matches = four_team_matches();
    let teams = standings::compute_by_side(&field, &matches, &[], &two_v_two()).unwrap();
    let duels = standings::compute(&field, &as_duels(&matches), &[]).unwrap();
    // Ratings included: the Weng–Lin update sees one player per side.
    for (t, d) in teams.rows.iter().zip(&duels.rows) {
        assert_eq!(
            (t.entrant.as_str(), t.rank, t.points, t.buchholz),
            (d.entrant.as_str(), d.rank, d.points, d.buchholz)
        );
        assert_eq!(t.sonneborn_berger, d.sonneborn_berger);
        assert_eq!(
            (t.rating_mu, t.rating_sigma),
            (d.rating_mu, d.rating_sigma),
            "{}",
            t.entrant
        );
    }
    // Without the layout, a team entrant on two seats is no valid record.
    assert!(matches!(
        standings::compute(&field, &matches, &[]),
        Err(StandingsError::DuplicateSeat { .. })
    ));
}

#[test]
fn standings_refuse_teammates_ranked_apart() {
    let mut matches = four_team_matches();
    matches[1].seats[3].rank = 1;
    let err = standings::compute_by_side(
        &entrants(&["a", "b", "c", "d"]),
        &matches,
        &[],
        &two_v_two(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        StandingsError::Team {
            match_id: "t:0:1".into(),
            source: TeamError::SplitRank {
                team: 1,
                seat: 1,
                teammate: 3,
                rank: 0,
                teammate_rank: 1
            }
        }
    );
}

#[test]
fn the_report_check_refuses_teammates_with_different_ranks() {
    let pairing = seated("a", "b");
    let good = result("t:0:0", 0, &pairing, Some("b"));
    assert_eq!(report::check(&good, &pairing, &two_v_two()), Ok(()));
    let mut split = good.clone();
    split.seats[2].rank = 0;
    split.seats[2].score = placement_points(&[1, 0, 0, 0])[2];
    split.seats[0].score = placement_points(&[1, 0, 0, 0])[0];
    for s in [1, 3] {
        split.seats[s].score = placement_points(&[1, 0, 0, 0])[s];
    }
    let err = report::check(&split, &pairing, &two_v_two()).unwrap_err();
    assert_eq!(
        err,
        ResultError::Team(TeamError::SplitRank {
            team: 0,
            seat: 0,
            teammate: 2,
            rank: 1,
            teammate_rank: 0
        })
    );
    let shown = std::error::Error::source(&err).unwrap().to_string();
    assert!(shown.contains("seats 0 and 2"), "{shown}");
}

fn new_2v2() -> NewTournament {
    let entry = registry::find("generals-classic").unwrap();
    NewTournament {
        name: "Pairs cup".into(),
        game: "generals-classic".into(),
        seats: 4,
        base_seed: 11,
        format: Format::RoundRobin {
            cycles: 1,
            games_per_pairing: 2,
        },
        rules: Rules(BTreeMap::from([(
            "mode".to_owned(),
            RuleValue::Word("2v2".into()),
        )])),
        limits: entry.limits,
        entrants: ["w", "x", "y", "z"]
            .iter()
            .map(|n| (n.to_string(), String::new()))
            .collect(),
        environment: None,
        teams: Some(TWO_V_TWO.to_vec()),
        wasm_runtime: None,
        model_runtime: None,
        live_board: LiveBoard::default(),
    }
}

#[test]
fn the_id_changes_with_the_team_vector() {
    let base = new_2v2();
    let mut none = base.clone();
    none.teams = None;
    let mut empty = base.clone();
    empty.teams = Some(Vec::new());
    let mut crossed = base.clone();
    crossed.teams = Some(vec![0, 1, 1, 0]);
    // No layout and an empty one are the same tournament (and the same id
    // as before team games existed).
    assert_eq!(tournament_id(&none), tournament_id(&empty));
    let all = [&none, &base, &crossed].map(tournament_id);
    assert_ne!(all[0], all[1]);
    assert_ne!(all[1], all[2]);
    assert_ne!(all[0], all[2]);
}

#[test]
fn a_spec_stored_before_teams_loads_without_them() {
    let mut spec = TournamentSpec {
        id: "t-1".into(),
        name: "Old".into(),
        game: "generals".into(),
        format: Format::Swiss { rounds: 3 },
        seats: 2,
        base_seed: 1,
        entrants: Vec::new(),
        cancelled: false,
        rules: Rules::default(),
        limits: registry::find("generals").unwrap().limits,
        environment: None,
        teams: Vec::new(),
        wasm_entrants: Vec::new(),
        model_entrants: Vec::new(),
        wasm_runtime: None,
        model_runtime: None,
        live_board: LiveBoard::default(),
    };
    let json = serde_json::to_string(&spec).unwrap();
    assert!(!json.contains("teams"), "no layout, no key: {json}");
    let old: TournamentSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(old, spec);
    spec.teams = TWO_V_TWO.to_vec();
    let json = serde_json::to_string(&spec).unwrap();
    assert!(json.contains(r#""teams":[0,1,0,1]"#), "{json}");
    assert_eq!(serde_json::from_str::<TournamentSpec>(&json).unwrap(), spec);
}

fn file(mode: &str, bots: usize) -> String {
    let mut text = format!(
        "name = \"Pairs\"\ngame = \"generals-classic\"\nseats = 4\n\
         [rules]\nmode = \"{mode}\"\n[format]\nkind = \"swiss\"\nrounds = 3\n"
    );
    for i in 0..bots {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"t{i}\"\npath = \"bots/t{i}\"\n"
        ));
    }
    text
}

#[test]
fn a_2v2_file_has_the_game_s_teams_and_needs_a_bot_per_side() {
    let entry = registry::find("generals-classic").unwrap();
    let rules = entry
        .rules(&Rules(BTreeMap::from([(
            "mode".to_owned(),
            RuleValue::Word("2v2".into()),
        )])))
        .unwrap();
    let game = arena_coordinator::teams::probe(entry, 4, &rules).unwrap();
    let two = TournamentFile::parse(&file("2v2", 2)).unwrap();
    assert_eq!(two.teams, game, "the file reads the game's layout");
    // Written out, the layout is not in the text, and it parses back.
    let text = two.to_toml().unwrap();
    assert!(!text.contains("teams"), "{text}");
    assert_eq!(TournamentFile::parse(&text).unwrap(), two);
    if game.is_empty() {
        // The game does not report its 2v2 teams yet: one bot per seat.
        assert!(TournamentFile::parse(&file("2v2", 3)).is_err());
    } else {
        assert_eq!(game, TWO_V_TWO);
        let err = TournamentFile::parse(&file("2v2", 1)).unwrap_err();
        assert!(
            err.to_string().contains("1 bots cannot fill 2 sides"),
            "{err}"
        );
    }
    // Free-for-all on four seats has no teams: four bots, one a seat.
    let ffa = TournamentFile::parse(&file("ffa", 4)).unwrap();
    assert!(ffa.teams.is_empty());
    assert!(TournamentFile::parse(&file("ffa", 3)).is_err());
}

async fn coordinator_with(new: &mut NewTournament) -> std::sync::Arc<Coordinator> {
    let coordinator = Coordinator::new(Store::memory(), CoordinatorConfig::default());
    for (name, hash) in &mut new.entrants {
        let archive = format!("bot {name}").into_bytes();
        *hash = arena_coordinator::submission_id(&archive);
        coordinator
            .store()
            .put_submission(hash, archive)
            .await
            .unwrap();
    }
    coordinator
        .register_worker(WorkerInfo {
            id: "w1".into(),
            cores: 4,
            memory_mb: 8192,
            environment_id: String::new(),
            cached: Vec::new(),
            wasm_runtime: String::new(),
            model_runtime: String::new(),
            slots: 0,
        })
        .await
        .unwrap();
    coordinator
}

#[tokio::test]
async fn a_2v2_round_robin_end_to_end() {
    let mut new = new_2v2();
    let coordinator = coordinator_with(&mut new).await;
    let order: HashMap<String, usize> = new
        .entrants
        .iter()
        .enumerate()
        .map(|(i, (_, hash))| (hash.clone(), i))
        .collect();
    let id = coordinator.create_tournament(new.clone()).await.unwrap();
    let spec = coordinator.store().tournament(&id).await.unwrap().unwrap();
    assert_eq!(spec.teams, TWO_V_TWO);
    // The stored layout is what the id was made from.
    let mut resolved = new.clone();
    resolved.rules = registry::find("generals-classic")
        .unwrap()
        .rules(&new.rules)
        .unwrap();
    assert_eq!(tournament_id(&resolved), id);
    assert_eq!(coordinator.status(&id).await.unwrap().1, 3);

    let mut played = 0;
    let mut refused_once = false;
    while let Some(leased) = coordinator.lease("w1").await.unwrap() {
        let pairing = leased.lease.pairing.clone();
        let (a, b) = sides_of(&pairing);
        // A team entrant is one submission on both seats of its side.
        assert_eq!(leased.seats[0], leased.seats[2]);
        assert_eq!(leased.seats[0].submission, a);
        // The entrant seeded higher wins.
        let winner = if order[&a] < order[&b] { &a } else { &b };
        let record = result(
            &leased.lease.match_id,
            leased.lease.round,
            &pairing,
            Some(winner),
        );
        if !refused_once {
            let mut split = record.clone();
            split.seats[3].rank = split.seats[1].rank ^ 1;
            let ranks: Vec<u32> = split.seats.iter().map(|s| s.rank).collect();
            for (seat, score) in split.seats.iter_mut().zip(placement_points(&ranks)) {
                seat.score = score;
            }
            let err = coordinator
                .report("w1", &leased.lease.lease_id, split, None, Vec::new(), 1.0)
                .await
                .unwrap_err();
            let shown = format!("{err:?}");
            assert!(shown.contains("SplitRank"), "{shown}");
            refused_once = true;
        }
        let outcome = coordinator
            .report("w1", &leased.lease.lease_id, record, None, Vec::new(), 1.0)
            .await
            .unwrap();
        assert_eq!(outcome, arena_coordinator::store::CompleteOutcome::Accepted);
        played += 1;
    }
    // Six pairings of sides, two games each.
    assert_eq!(played, 12);
    let table: Standings = coordinator.standings(&id).await.unwrap();
    let points: Vec<(String, f64, u32)> = table
        .rows
        .iter()
        .map(|r| (r.name.clone(), r.points, r.games))
        .collect();
    assert_eq!(
        points,
        [
            ("w".to_owned(), 6.0, 6),
            ("x".to_owned(), 4.0, 6),
            ("y".to_owned(), 2.0, 6),
            ("z".to_owned(), 0.0, 6)
        ]
    );
}

#[tokio::test]
async fn creation_checks_the_layout_and_counts_sides() {
    // A layout for the wrong number of seats.
    let mut short = new_2v2();
    short.teams = Some(vec![0, 1]);
    let coordinator = coordinator_with(&mut short).await;
    let err = coordinator.create_tournament(short).await.unwrap_err();
    assert!(format!("{err:?}").contains("LayoutLength"), "{err:?}");
    // Two teams are enough for four seats.
    let mut two = new_2v2();
    two.entrants.truncate(2);
    let coordinator = coordinator_with(&mut two).await;
    let id = coordinator.create_tournament(two).await.unwrap();
    assert_eq!(coordinator.status(&id).await.unwrap().0.total, 2);
    // One is not.
    let mut one = new_2v2();
    one.entrants.truncate(1);
    let coordinator = coordinator_with(&mut one).await;
    let err = coordinator.create_tournament(one).await.unwrap_err();
    assert!(err.to_string().contains("cannot fill 2 sides"), "{err}");
}
