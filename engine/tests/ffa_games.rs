//! generals-ffa through the `Game` trait and a `Session`: registry entry,
//! handshake and frames, baselines, plan installs, forfeits, scoring from
//! the final state, and replays.

use arena_engine::generals_ffa::{
    self, Board, CellKind, GeneralsFfa, Params, View, plan, rules::reason,
};
use arena_engine::replay;
use arena_engine::{FaultKind, Forfeit, Game, Match, Rules, Session};

/// The five criteria (plus forfeits first) recomputed from the public state,
/// independently of the engine's own ranking code.
fn criteria(g: &GeneralsFfa, seat: usize) -> (bool, u32, bool, u32, u64, u64, u64) {
    let s = g.seat(seat).unwrap();
    let cells = g.width() * g.height();
    let mine: Vec<usize> = (0..cells).filter(|&c| g.owner(c) == Some(seat)).collect();
    let army = mine.iter().map(|&c| u64::from(g.army(c))).sum();
    let cities = mine
        .iter()
        .filter(|&&c| matches!(g.kind(c), Some(CellKind::City | CellKind::Crown)))
        .count() as u64;
    (
        !s.forfeited,
        // Among forfeited seats the later forfeit ranks higher.
        s.forfeit_turn.unwrap_or(u32::MAX),
        s.alive,
        s.death_turn.unwrap_or(u32::MAX),
        mine.len() as u64,
        army,
        cities,
    )
}

/// Ranks and scores agree with the criteria, pair by pair.
fn check_outcome(g: &GeneralsFfa) {
    let outcome = g.outcome().expect("finished");
    assert_eq!(outcome.ranks.len(), 4);
    let sum: f64 = outcome.scores.iter().sum();
    assert!((sum - 2.0).abs() < 1e-9, "{outcome:?}");
    assert!(outcome.scores.iter().all(|&s| (0.0..=1.0).contains(&s)));
    for a in 0..4 {
        for b in 0..4 {
            let (ka, kb) = (criteria(g, a), criteria(g, b));
            let (ra, rb) = (outcome.ranks[a], outcome.ranks[b]);
            assert_eq!(ka > kb, ra < rb, "seats {a} {b}: {ka:?} {kb:?} {outcome:?}");
            assert_eq!(
                ka == kb,
                ra == rb,
                "seats {a} {b}: {ka:?} {kb:?} {outcome:?}"
            );
        }
    }
    assert!(
        [
            reason::LAST_CROWN_STANDING,
            reason::TURN_LIMIT,
            reason::ALL_FORFEITED
        ]
        .contains(&outcome.reason.as_str())
    );
}

/// A session where every seat is played by an in-engine baseline, through
/// the same parse as a bot's reply.
fn play_session(seed: u64, names: [&str; 4], rules: &Rules) -> Session<GeneralsFfa> {
    let params = generals_ffa::params_of(&generals_ffa::ENTRY.rules(rules).unwrap());
    let mut session = Session::new(GeneralsFfa::from_seed(seed, params).unwrap());
    let mut line = Vec::new();
    while session.outcome().is_none() {
        for (seat, name) in names.iter().enumerate() {
            if session.is_due(seat) {
                line.clear();
                assert!(session.game().write_baseline_reply(name, seat, &mut line));
                assert_eq!(line.last(), Some(&b'\n'));
                let reply = &line[..line.len() - 1];
                if session.offer(seat, reply).is_err() {
                    session.offer_fallback(seat, Some(FaultKind::Malformed));
                }
            }
        }
        session.step();
        assert_eq!(session.invariant_violation(), None);
    }
    session
}

#[test]
fn entry_creates_matches_for_each_ruleset() {
    let entry = arena_engine::registry::find("generals-ffa").unwrap();
    let standard = entry.create(1, 4, &Rules::default()).unwrap();
    assert_eq!(
        (standard.name(), standard.seats(), standard.turn()),
        ("generals-ffa", 4, 0)
    );
    let mut out = Vec::new();
    standard.write_handshake(2, &mut out);
    let hello: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out.last(), Some(&b'\n'));
    assert_eq!(
        hello,
        serde_json::json!({"game": "generals-ffa", "seat": 2, "width": 16, "height": 10,
            "max_turns": 240, "plan_every": 8})
    );
    let blitz = Rules::parse_pairs("blitz=true").unwrap();
    let params = generals_ffa::params_of(&entry.rules(&blitz).unwrap());
    assert_eq!(params, Params::BLITZ);
    let short = Rules::parse_pairs("blitz=true,max_turns=20,growth_period=5").unwrap();
    let params = generals_ffa::params_of(&entry.rules(&short).unwrap());
    assert_eq!(
        (params.width, params.max_turns, params.growth_period),
        (12, 20, 5)
    );
    assert!(
        entry
            .create(1, 4, &Rules::parse_pairs("growth_period=0").unwrap())
            .is_err()
    );
    assert!(entry.create(1, 3, &Rules::default()).is_err());
}

#[test]
fn frames_are_the_seat_view_as_one_json_line() {
    let g = GeneralsFfa::from_seed(5, Params::STANDARD).unwrap();
    for seat in 0..4 {
        let mut out = Vec::new();
        g.write_frame(seat, &mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        let view: View = serde_json::from_slice(&out).unwrap();
        assert_eq!(view, g.view(seat));
        assert_eq!((view.seat, view.turn, view.max_turns), (seat, 0, 240));
        assert_eq!(view.cells.len(), 160);
        assert_eq!(view.crown, g.seat(seat).unwrap().crown);
        // At the start a seat sees exactly its crown's ring.
        let visible = view.cells.iter().filter(|c| c.visible).count();
        assert!((4..=9).contains(&visible), "{visible}");
        assert!(view.cells[view.crown].visible);
        assert_eq!(view.cells[view.crown].army, Some(1));
    }
}

#[test]
fn baselines_reply_with_a_plan_line_that_parses() {
    let g = GeneralsFfa::from_seed(5, Params::STANDARD).unwrap();
    for (name, expected) in [("sprawl", plan::sprawl()), ("crown", plan::crown())] {
        let mut out = Vec::new();
        assert!(g.write_baseline_reply(name, 1, &mut out));
        assert_eq!(out.last(), Some(&b'\n'));
        let parsed = g.parse_action(1, &out[..out.len() - 1]);
        assert_eq!(
            parsed,
            Ok(expected),
            "{name}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    let mut out = Vec::new();
    assert!(!g.write_baseline_reply("random", 1, &mut out));
    assert!(out.is_empty());
    assert_eq!(g.fallback_action(0), plan::sprawl());
    assert!(g.parse_action(0, b"not json").is_err());
}

#[test]
fn plans_are_due_every_eight_turns_for_living_seats() {
    let mut g = GeneralsFfa::from_seed(2, Params::STANDARD).unwrap();
    let sprawl = Some(plan::sprawl());
    for turn in 0..20u32 {
        assert_eq!(g.turn(), turn);
        for seat in 0..4 {
            assert_eq!(g.is_due(seat), turn % 8 == 0, "turn {turn}");
        }
        let actions: Vec<_> = (0..4)
            .map(|s| if g.is_due(s) { sprawl.clone() } else { None })
            .collect();
        g.step(&actions);
    }
    // A crown plan installed at turn 24 stays until the next install.
    while !g.turn().is_multiple_of(8) {
        g.step(&[None, None, None, None]);
    }
    g.step(&[
        Some(plan::crown()),
        sprawl.clone(),
        sprawl.clone(),
        sprawl.clone(),
    ]);
    assert_eq!(g.seat(0).unwrap().plan, plan::crown());
    g.step(&[None, None, None, None]);
    assert_eq!(g.seat(0).unwrap().plan, plan::crown());
    assert_eq!(g.invariant_violation(), None);
}

#[test]
fn forfeits_rank_last_and_all_forfeited_ends_the_game() {
    let mut g = GeneralsFfa::from_seed(3, Params::STANDARD).unwrap();
    g.step(&[Some(plan::crown()), None, None, None]);
    assert_eq!(g.forfeit(&[0]), None);
    assert!(g.seat(0).unwrap().forfeited);
    assert_eq!(
        g.seat(0).unwrap().plan,
        plan::sprawl(),
        "forfeited seats play sprawl"
    );
    assert!(
        g.seat(0).unwrap().alive,
        "a forfeited seat stays on the board"
    );
    while !g.turn().is_multiple_of(8) {
        g.step(&[None, None, None, None]);
    }
    assert!(!g.is_due(0));
    assert!(g.is_due(1));
    assert_eq!(g.forfeit(&[0, 2]), None);
    let outcome = g.forfeit(&[0, 1, 2, 3]).expect("nobody is left");
    assert_eq!(outcome.reason, reason::ALL_FORFEITED);
    check_outcome(&g);
    // Later calls report the same outcome and change nothing.
    assert_eq!(g.forfeit(&[0, 1, 2, 3]), Some(outcome.clone()));
    assert_eq!(g.step(&[None, None, None, None]), Some(outcome));
}

#[test]
fn one_forfeit_ranks_below_an_identical_position() {
    // A symmetric blank board: equal on every criterion but the forfeit.
    let params = Params {
        max_turns: 3,
        ..Params::STANDARD
    };
    let crowns = [17, 30, 142, 129];
    let mut g = GeneralsFfa::new(Board::blank(&params, crowns), params).unwrap();
    g.forfeit(&[2]);
    // No moves: the captains would break the tie through the move order.
    while g.outcome().is_none() {
        g.step_moves([None; 4]);
    }
    let outcome = g.outcome().unwrap();
    assert_eq!(outcome.reason, reason::TURN_LIMIT);
    assert_eq!(outcome.ranks, vec![0, 0, 3, 0]);
    check_outcome(&g);
    let mut tied = GeneralsFfa::new(Board::blank(&params, crowns), params).unwrap();
    while tied.outcome().is_none() {
        tied.step_moves([None; 4]);
    }
    assert_eq!(tied.outcome().unwrap().ranks, vec![0; 4]);
    assert_eq!(tied.outcome().unwrap().scores, vec![0.5; 4]);
}

#[test]
fn land_then_army_then_cities_break_ties() {
    let params = Params {
        max_turns: 1,
        ..Params::STANDARD
    };
    let crowns = [17, 30, 142, 129];
    let mut board = Board::blank(&params, crowns);
    // Seat 0: two extra cells (most land); seat 1: one extra cell with a big
    // army; seats 2 and 3: one extra cell each and equal armies after growth
    // (2 + 3 on a plain; 2 + 2 + 1 on a city), so seat 3's city decides.
    for (cell, seat, army) in [(18, 0, 1), (19, 0, 1), (31, 1, 9), (141, 2, 3), (128, 3, 2)] {
        board.owner[cell] = Some(seat);
        board.army[cell] = army;
    }
    board.kind[128] = CellKind::City;
    let mut g = GeneralsFfa::new(board, params).unwrap();
    let outcome = g.step_moves([None; 4]).unwrap();
    check_outcome(&g);
    assert_eq!(outcome.ranks, vec![0, 1, 3, 2]);
    assert_eq!(criteria(&g, 2), (true, u32::MAX, true, u32::MAX, 2, 5, 1));
    assert_eq!(criteria(&g, 3), (true, u32::MAX, true, u32::MAX, 2, 5, 2));
}

#[test]
fn baseline_sessions_finish_with_valid_replays() {
    for seed in 0..6 {
        let names = if seed % 2 == 0 {
            ["sprawl", "crown", "sprawl", "crown"]
        } else {
            ["crown", "crown", "sprawl", "sprawl"]
        };
        let rules = if seed < 3 {
            Rules::default()
        } else {
            Rules::parse_pairs("blitz=true").unwrap()
        };
        let session = play_session(seed, names, &rules);
        check_outcome(session.game());
        assert_eq!(session.game().hashes().len() as u32, session.game().turn());
        let json = session.replay_json(seed).expect("the replay serialises");
        let replay = replay::open_any(&json).unwrap();
        assert_eq!(replay.game(), "generals-ffa");
        replay.verify().unwrap();
    }
}

#[test]
fn a_forfeit_mid_session_replays() {
    let mut session = Session::new(GeneralsFfa::from_seed(8, Params::BLITZ).unwrap());
    while session.outcome().is_none() {
        if session.turn() == 20 {
            session.forfeit(1, Forfeit::Exit);
        }
        for seat in 0..4 {
            if session.is_due(seat) {
                session.offer_fallback(seat, Some(FaultKind::Timeout));
            }
        }
        session.step();
    }
    let g = session.game();
    assert!(g.seat(1).unwrap().forfeited);
    check_outcome(g);
    assert_eq!(g.outcome().unwrap().ranks[1], 3);
    replay::open_any(&session.replay_json(8).expect("the replay serialises"))
        .unwrap()
        .verify()
        .unwrap();
}

/// A symmetric blank board of ten turns: equal on every criterion but
/// what the test does to it.
fn blank_ten_turns() -> GeneralsFfa {
    let params = Params {
        max_turns: 10,
        ..Params::STANDARD
    };
    GeneralsFfa::new(Board::blank(&params, [17, 30, 142, 129]), params).unwrap()
}

/// Seat 0 forfeits at once, seat 2 four turns later; no moves to the end.
fn forfeit_seat_0_then_2(g: &mut GeneralsFfa) {
    g.forfeit(&[0]);
    for _ in 0..4 {
        g.step_moves([None; 4]);
    }
    g.forfeit(&[2]);
    while g.outcome().is_none() {
        g.step_moves([None; 4]);
    }
}

#[test]
fn a_later_forfeit_ranks_above_an_earlier_one() {
    let mut g = blank_ten_turns();
    forfeit_seat_0_then_2(&mut g);
    let outcome = g.outcome().unwrap();
    // Seat 2 played four turns longer than seat 0: it ranks above it.
    assert_eq!(outcome.ranks, vec![3, 0, 2, 0]);
    assert_eq!(g.seat(2).unwrap().forfeit_turn, Some(4));
    check_outcome(&g);
    // The turn of a forfeit travels with the state.
    let json = serde_json::to_value(&g).unwrap();
    assert_eq!(json["seats"][0]["forfeit_turn"], 0);
    assert_eq!(json["ranking_version"], 2);
}

#[test]
fn states_from_before_the_forfeit_order_keep_their_ranking() {
    let fresh = blank_ten_turns();
    // A state as written before the field existed.
    let mut json = serde_json::to_value(&fresh).unwrap();
    json.as_object_mut().unwrap().remove("ranking_version");
    let mut g: GeneralsFfa = serde_json::from_value(json).unwrap();
    forfeit_seat_0_then_2(&mut g);
    // Both forfeited seats tie, as they did then, and the state is written
    // exactly as then (so its replays' final digests still match).
    assert_eq!(g.outcome().unwrap().ranks, vec![2, 0, 2, 0]);
    let written = serde_json::to_value(&g).unwrap();
    assert!(written.get("ranking_version").is_none(), "{written}");
    assert!(written["seats"][0].get("forfeit_turn").is_none());

    // A forged forfeit turn is refused when read.
    let mut forged = serde_json::to_value(&fresh).unwrap();
    forged["seats"][1]["forfeit_turn"] = 3.into();
    let err = serde_json::from_value::<GeneralsFfa>(forged).unwrap_err();
    assert!(err.to_string().contains("forfeit"), "{err}");
}
