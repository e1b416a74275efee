//! The classic-only rules, each on a small hand-made board: `pass == 2`
//! moves and counts in the move order, a double capture wins for the second
//! mover, neutral castles are ground down, zeroed and taken but never grow,
//! no deathtouch, the cap; and the JSON form of a classic state.

use super::mapgen::ClassicMap;
use super::{GeneralsClassic, Params};
use crate::game::Game;
use crate::generals::{Action, Direction, Generals, Kind, Ruleset, Setup};

/// `A`/`B` the generals of player 0/1, `C` a castle of `garrison`, `#` a
/// mountain, `.` a plain.
fn board(rows: &[&str], garrison: u32) -> ClassicMap {
    let (height, width) = (rows.len(), rows[0].len());
    let mut map = ClassicMap {
        height,
        width,
        kind: Vec::new(),
        army: Vec::new(),
        generals: vec![[0, 0]; 2],
    };
    for (r, row) in rows.iter().enumerate() {
        for (c, ch) in row.chars().enumerate() {
            let (kind, army) = match ch {
                'A' | 'B' => {
                    map.generals[usize::from(ch == 'B')] = [r, c];
                    (Kind::General, 1)
                }
                'C' => (Kind::Castle, garrison),
                '#' => (Kind::Mountain, 0),
                _ => (Kind::Plain, 0),
            };
            map.kind.push(kind);
            map.army.push(army);
        }
    }
    map
}

fn classic(rows: &[&str], garrison: u32) -> GeneralsClassic {
    GeneralsClassic::from_map(board(rows, garrison), Params::default()).unwrap()
}

/// Gives `(row, col)` to `player` (`None`: neutral) with `army`.
fn put(game: &mut GeneralsClassic, row: usize, col: usize, player: Option<usize>, army: u32) {
    let cell = row * game.width() + col;
    let owner = player.map_or(0, |p| p as u8 + 1);
    game.0.set_cell(cell, owner, army);
}

fn cell(game: &GeneralsClassic, row: usize, col: usize) -> (u8, u32) {
    (game.owner_at(row, col), game.army_at(row, col))
}

/// A `pass == 2` action: a move in classic.
fn pass2(row: i64, col: i64, dir: Direction, half: bool) -> Action {
    Action {
        kind: crate::generals::ActionKind::Build,
        ..Action::movement(row, col, dir, half)
    }
}

const PLAIN: &[&str] = &["A.C..", ".#...", "....B"];

#[test]
fn pass_two_moves_like_pass_zero() {
    let mut game = classic(PLAIN, 40);
    put(&mut game, 0, 0, Some(0), 9);
    put(&mut game, 2, 4, Some(1), 9);
    game.step_pair([
        pass2(0, 0, Direction::Right, false),
        pass2(2, 4, Direction::Up, true),
    ]);
    assert_eq!(cell(&game, 0, 0), (1, 1));
    assert_eq!(cell(&game, 0, 1), (1, 8));
    assert_eq!(cell(&game, 2, 4), (2, 5));
    assert_eq!(cell(&game, 1, 4), (2, 4));
    // Into a mountain it is invalid, like any move: nothing happens.
    let before = game.clone();
    game.step_pair([pass2(0, 1, Direction::Down, false), Action::PASS]);
    assert_eq!(cell(&game, 0, 1), cell(&before, 0, 1));
    assert_eq!(game.kind_at(0, 1), Kind::Plain);
    // The parser reads it as the competition's build, and the step moves it.
    let parsed = game.parse_action(0, b"2 0 1 3 0").unwrap();
    assert_eq!(parsed, pass2(0, 1, Direction::Right, false));
}

#[test]
fn the_same_reply_builds_in_the_competition() {
    let mut kind = vec![Kind::Plain; 15];
    kind[6] = Kind::Mountain;
    let mut game = Generals::new(Setup {
        height: 3,
        width: 5,
        kind,
        generals: [[0, 0], [2, 4]],
        params: Default::default(),
    })
    .unwrap();
    // 35 plus 12 for the builder's general one step away.
    game.set_cell(1, 1, 60);
    game.step_pair([pass2(0, 1, Direction::Right, false), Action::PASS]);
    assert_eq!(game.kind_at(0, 1), Kind::Castle);
    assert_eq!(game.army_at(0, 1), 13);
    assert_eq!(game.owner_at(0, 2), 0);
}

/// Player 0 chases player 1's stack, which moves away: the chaser goes
/// first and catches it whole, unless the pass fields are (2, 0), whose
/// bitwise term sends player 1 first whatever the comparisons say.
#[test]
fn pass_two_against_pass_zero_sends_player_one_first() {
    let chase = |p0_pass2: bool, p1_pass2: bool| {
        let mut game = classic(PLAIN, 40);
        put(&mut game, 2, 2, Some(0), 10);
        put(&mut game, 2, 3, Some(1), 5);
        let as_sent = |pass2_sent: bool, row, col, dir| {
            if pass2_sent {
                pass2(row, col, dir, false)
            } else {
                Action::movement(row, col, dir, false)
            }
        };
        game.step_pair([
            as_sent(p0_pass2, 2, 2, Direction::Right),
            as_sent(p1_pass2, 2, 3, Direction::Up),
        ]);
        [cell(&game, 2, 2), cell(&game, 2, 3), cell(&game, 1, 3)]
    };
    // The chaser first: 9 beat the 5 before they leave.
    let chaser_first = [(1, 1), (1, 4), (0, 0)];
    assert_eq!(chase(false, false), chaser_first);
    assert_eq!(chase(false, true), chaser_first);
    assert_eq!(chase(true, true), chaser_first);
    // (2, 0): 4 get away first, and the 9 take the 1 left behind.
    assert_eq!(chase(true, false), [(1, 1), (1, 8), (2, 4)]);
}

/// Both generals fall in one step: the second mover (by the move order)
/// wins and holds every owned cell; nothing grows that step. The
/// competition calls the same step a draw.
#[test]
fn a_double_capture_is_won_by_the_second_mover() {
    for (p1_army, second) in [(10, 1), (9, 0)] {
        let mut game = classic(&["A.B", "..."], 40);
        game.step_pair([Action::PASS, Action::PASS]);
        put(&mut game, 0, 1, Some(0), 10);
        put(&mut game, 1, 0, Some(1), p1_army);
        let actions = [
            Action::movement(0, 1, Direction::Right, false),
            Action::movement(1, 0, Direction::Up, false),
        ];
        let mut competition = game.clone().into_inner();
        competition.ruleset = Ruleset::Competition;

        let outcome = game.step_pair(actions).cloned().unwrap();
        assert_eq!(outcome.reason, "double_capture");
        assert_eq!(outcome.winner(), Some(second));
        assert_eq!(game.totals(1 - second), (0, 0));
        assert_eq!(game.time(), 2);
        // Each general holds what its taker brought, minus the 1 it had: no growth.
        assert_eq!(cell(&game, 0, 2), (second as u8 + 1, 8));
        assert_eq!(cell(&game, 0, 0), (second as u8 + 1, p1_army - 2));

        let draw = competition.step_pair(actions).cloned().unwrap();
        assert_eq!(
            (draw.reason.as_str(), draw.winner()),
            ("double_capture_draw", None)
        );
    }
}

/// A failed attack lowers the garrison for good; an equal one leaves the
/// castle neutral at 0, which still does not grow; then any move takes it,
/// and from then on it grows like a general.
#[test]
fn a_neutral_castle_is_ground_down_zeroed_and_then_taken() {
    let mut game = classic(PLAIN, 10);
    let attack = Action::movement(0, 1, Direction::Right, false);
    put(&mut game, 0, 1, Some(0), 5);
    game.step_pair([attack, Action::PASS]); // t 0 → 1
    assert_eq!(cell(&game, 0, 2), (0, 6));
    assert_eq!(game.kind_at(0, 2), Kind::Castle);
    put(&mut game, 0, 1, Some(0), 7);
    game.step_pair([attack, Action::PASS]); // t 1 → 2, even: only owned cells grow
    assert_eq!(cell(&game, 0, 2), (0, 0));
    assert_eq!(game.army_at(0, 0), 2);
    for _ in 0..50 {
        game.step_pair([Action::PASS, Action::PASS]); // through time 50
    }
    assert_eq!(cell(&game, 0, 2), (0, 0));
    put(&mut game, 0, 1, Some(0), 2);
    game.step_pair([attack, Action::PASS]); // t 52 → 53, odd
    assert_eq!(cell(&game, 0, 2), (1, 1));
    game.step_pair([Action::PASS, Action::PASS]); // time 54: +1
    assert_eq!(cell(&game, 0, 2), (1, 2));
    assert_eq!(game.totals(0), (3, 2 + 1 + u64::from(game.army_at(0, 0))));
}

/// A castle taken in a step that ends on an even time grows in that step.
#[test]
fn a_castle_taken_on_an_even_step_grows_at_once() {
    let mut game = classic(PLAIN, 10);
    game.step_pair([Action::PASS, Action::PASS]); // time 1
    put(&mut game, 0, 1, Some(0), 15);
    game.step_pair([
        Action::movement(0, 1, Direction::Right, false),
        Action::PASS,
    ]);
    assert_eq!(cell(&game, 0, 2), (1, 14 - 10 + 1));
}

#[test]
fn neutral_castles_never_grow() {
    let mut game = classic(PLAIN, 45);
    for _ in 0..100 {
        game.step_pair([Action::PASS, Action::PASS]);
    }
    assert_eq!(cell(&game, 0, 2), (0, 45));
    // Generals: +1 at each even time, +1 more at 50 and 100.
    assert_eq!(game.army_at(0, 0), 1 + 50 + 2);
    assert_eq!(game.totals(1), (1, 53));
}

/// A move onto the enemy general that does not beat it wins nothing, at
/// any time.
#[test]
fn there_is_no_deathtouch() {
    let params = Params { max_turns: 1000 };
    let mut game = GeneralsClassic::from_map(board(PLAIN, 40), params).unwrap();
    game.0.time = 900;
    put(&mut game, 2, 3, Some(0), 2);
    let touch = Action::movement(2, 3, Direction::Right, false);
    assert_eq!(game.step_pair([touch, Action::PASS]), None);
    assert_eq!(cell(&game, 2, 4), (2, 0));
    assert_eq!(game.outcome(), None);
}

#[test]
fn the_cap_is_a_draw_after_its_growth_and_a_capture_on_it_a_win() {
    let mut game = classic(PLAIN, 40);
    assert_eq!(game.params().max_turns, 500);
    game.0.time = 499;
    let mut capture = game.clone();
    let outcome = game
        .step_pair([Action::PASS, Action::PASS])
        .cloned()
        .unwrap();
    assert_eq!(
        (outcome.reason.as_str(), outcome.winner()),
        ("turn_cap_draw", None)
    );
    assert_eq!(game.army_at(0, 0), 3);

    put(&mut capture, 2, 3, Some(0), 3);
    let take = Action::movement(2, 3, Direction::Right, false);
    let outcome = capture.step_pair([take, Action::PASS]).cloned().unwrap();
    assert_eq!(
        (outcome.reason.as_str(), outcome.winner()),
        ("general_captured", Some(0))
    );
}

#[test]
fn a_classic_state_round_trips_through_json() {
    let mut game = GeneralsClassic::from_seed(12, Params::default()).unwrap();
    let mut rng = crate::rng::SplitMix64::new(12);
    for _ in 0..200 {
        let actions =
            [0, 1].map(|p| crate::generals::random::random_legal_action(&game, p, &mut rng));
        game.step_pair(actions);
    }
    let json = serde_json::to_string(&game).unwrap();
    assert!(json.contains(r#""ruleset":"classic""#), "{json}");
    let back: GeneralsClassic = serde_json::from_str(&json).unwrap();
    assert_eq!(back, game);
    assert_eq!(back.totals(0), game.totals(0));
    // Read as the shared engine's type it is still a classic game.
    let shared: Generals = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (shared.ruleset(), shared.name()),
        (Ruleset::Classic, "generals-classic")
    );
    // A competition state is not a classic game.
    let competition = serde_json::to_string(&Generals::from_seed(3, Default::default())).unwrap();
    let err = serde_json::from_str::<GeneralsClassic>(&competition).unwrap_err();
    assert!(err.to_string().contains("not classic"), "{err}");
}

/// Random play on generated boards: every game ends (by capture or at the
/// cap) and its totals stay those of its planes.
#[test]
fn random_games_on_generated_boards_end_consistently() {
    for seed in 0..20 {
        let mut game = GeneralsClassic::from_seed(seed, Params::default()).unwrap();
        assert_eq!(game.name(), "generals-classic");
        let mut rng = crate::rng::SplitMix64::new(seed);
        while !game.is_over() {
            let actions =
                [0, 1].map(|p| crate::generals::random::random_legal_action(&game, p, &mut rng));
            game.step_pair(actions);
        }
        let reason = game.outcome().unwrap().reason.clone();
        assert!(
            ["general_captured", "double_capture", "turn_cap_draw"].contains(&reason.as_str()),
            "{reason}"
        );
        assert!(game.time() <= 500);
        let rebuilt: Generals =
            serde_json::from_value(serde_json::to_value(&game).unwrap()).unwrap();
        for p in 0..2 {
            assert_eq!(rebuilt.totals(p), game.totals(p), "seed {seed}");
        }
    }
}

/// A match made through the registry records a replay that reads back as a
/// classic game and re-simulates to the same result; the same file filed
/// under the competition's name is refused.
#[test]
fn a_registry_match_replays_as_classic() {
    let entry = crate::registry::find("generals-classic").unwrap();
    let mut session = entry.create(7, 2, &crate::Rules::default()).unwrap();
    let lines: [&[u8]; 2] = [b"2 0 0 1 0", b"0 0 0 3 1"];
    loop {
        for (seat, line) in lines.iter().enumerate() {
            if session.offer(seat, line).is_err() {
                session.offer_fallback(seat, None);
            }
        }
        if session.step().is_some() {
            break;
        }
    }
    assert_eq!(session.outcome().unwrap().reason, "turn_cap_draw");
    assert_eq!(session.turn(), 500);
    let json = session.replay_json(7).unwrap();
    let replay = crate::replay::open_any(&json).unwrap();
    assert_eq!(replay.game(), "generals-classic");
    replay.verify().unwrap();

    let text = String::from_utf8(json).unwrap();
    let misfiled = text.replacen(r#""game":"generals-classic""#, r#""game":"generals""#, 1);
    assert_ne!(misfiled, text);
    // Read as the competition's, its state names itself generals-classic.
    let refused = match crate::replay::open_any(misfiled.as_bytes()) {
        Ok(replay) => replay.verify().is_err(),
        Err(_) => true,
    };
    assert!(refused, "a classic replay verified as the competition");
}
