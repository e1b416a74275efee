//! generals-ffa turn rules on hand-made positions, with moves fed straight
//! into the resolution (no captain): capture, rotation, clamping, discards,
//! growth, memory, the guard, determinism and the serialised form.

use arena_engine::Game;
use arena_engine::generals_ffa::{
    Board, CellKind, EventKind, GeneralsFfa, Move, Params, rules::reason,
};
use arena_engine::rng::SplitMix64;

const W: usize = 16;

fn at(row: usize, col: usize) -> usize {
    row * W + col
}

/// The four crowns one in from each corner (a symmetric blank board).
fn crowns() -> [usize; 4] {
    [at(1, 1), at(1, 14), at(8, 14), at(8, 1)]
}

fn blank() -> Board {
    Board::blank(&Params::STANDARD, crowns())
}

fn own(board: &mut Board, cell: usize, seat: u8, army: u32) {
    board.owner[cell] = Some(seat);
    board.army[cell] = army;
}

fn game(board: Board) -> GeneralsFfa {
    GeneralsFfa::new(board, Params::STANDARD).expect("valid board")
}

fn mv(from: usize, to: usize, amount: u32) -> Option<Move> {
    Some(Move { from, to, amount })
}

fn invalid(game: &GeneralsFfa, seat: usize) -> u64 {
    game.seat(seat).map_or(0, |s| s.invalid_moves)
}

#[test]
fn crown_capture_halves_land_and_converts_the_crown() {
    let mut board = blank();
    own(&mut board, at(1, 13), 0, 10);
    own(&mut board, at(2, 14), 1, 7);
    own(&mut board, at(3, 14), 1, 1);
    let mut g = game(board);
    // Seat 0 resolves first on turn 0; seat 1's move then comes from a dead seat.
    let outcome = g.step_moves([
        mv(at(1, 13), at(1, 14), 10),
        mv(at(2, 14), at(2, 13), 3),
        None,
        None,
    ]);
    assert!(outcome.is_none());
    let crown = at(1, 14);
    assert_eq!(g.kind(crown), Some(CellKind::City));
    assert_eq!(g.owner(crown), Some(0));
    // 9 sent (clamped from 10) beat 1: 8 survive, +1 city growth.
    assert_eq!(g.army(crown), 9);
    assert_eq!(g.army(at(1, 13)), 1);
    assert_eq!((g.owner(at(2, 14)), g.army(at(2, 14))), (Some(0), 3));
    assert_eq!((g.owner(at(3, 14)), g.army(at(3, 14))), (Some(0), 0));
    let victim = g.seat(1).unwrap();
    assert!(!victim.alive);
    assert_eq!(victim.death_turn, Some(1));
    assert_eq!(
        invalid(&g, 1),
        1,
        "a dead seat's move is discarded and counted"
    );
    assert_eq!(g.totals(1), (0, 0, 0));
    let events: Vec<_> = g
        .events()
        .iter()
        .map(|e| (e.turn, e.kind, e.seat, e.other))
        .collect();
    assert_eq!(
        events,
        vec![
            (1, EventKind::GeneralCaptured, 0, 1),
            (1, EventKind::Eliminated, 1, 0)
        ]
    );
    assert_eq!(g.invariant_violation(), None);
    assert!(!g.is_due(1));
}

#[test]
fn failed_attack_leaves_the_difference_to_the_garrison() {
    let mut board = blank();
    own(&mut board, at(1, 13), 0, 5);
    board.army[at(1, 14)] = 4;
    let mut g = game(board);
    g.step_moves([mv(at(1, 13), at(1, 14), 4), None, None, None]);
    // 4 against 4: the crown keeps 0, then grows to 1, still seat 1's.
    assert_eq!((g.owner(at(1, 14)), g.army(at(1, 14))), (Some(1), 1));
    assert_eq!(g.kind(at(1, 14)), Some(CellKind::Crown));
    assert!(g.seat(1).unwrap().alive);
}

#[test]
fn last_crown_standing_ends_the_game() {
    let mut board = blank();
    own(&mut board, at(1, 13), 0, 10);
    own(&mut board, at(7, 14), 0, 10);
    own(&mut board, at(8, 2), 0, 10);
    let mut g = game(board);
    let outcome = g
        .step_moves([mv(at(1, 13), at(1, 14), 9), None, None, None])
        .or_else(|| g.step_moves([mv(at(7, 14), at(8, 14), 9), None, None, None]))
        .or_else(|| g.step_moves([mv(at(8, 2), at(8, 1), 9), None, None, None]))
        .expect("three captures end the game");
    assert_eq!(outcome.reason, reason::LAST_CROWN_STANDING);
    // Seat 0 alive; then seat 3 (died last, turn 3), seat 2 (turn 2), seat 1 (turn 1).
    assert_eq!(outcome.ranks, vec![0, 3, 2, 1]);
    assert!((outcome.scores.iter().sum::<f64>() - 2.0).abs() < 1e-9);
    assert_eq!(g.turn(), 3);
    // A finished game does not step.
    let hashes = g.hashes().len();
    g.step_moves([None; 4]);
    assert_eq!(g.hashes().len(), hashes);
}

/// Seats 0 and 1 both throw 9 at a neutral 5: the first to resolve takes it
/// with 4, the second retakes it with 5. The winner is the later mover.
#[test]
fn priority_rotates_with_the_turn() {
    let (a, x, b) = (at(4, 6), at(4, 7), at(4, 8));
    for turn in 0..8u32 {
        let mut board = blank();
        own(&mut board, a, 0, 10);
        own(&mut board, b, 1, 10);
        board.army[x] = 5;
        let mut g = game(board);
        for _ in 0..turn {
            g.step_moves([None; 4]);
        }
        g.step_moves([mv(a, x, 9), mv(b, x, 9), None, None]);
        // order[k] = (turn + k) mod 4: seat 0 comes before seat 1 unless turn mod 4 == 1.
        let later = if turn % 4 == 1 { 0 } else { 1 };
        assert_eq!(g.owner(x), Some(later), "turn {turn}");
        assert_eq!(g.army(x), 5, "turn {turn}");
    }
}

#[test]
fn amounts_are_clamped_and_own_tiles_add() {
    let (a, b, c) = (at(4, 4), at(4, 5), at(4, 6));
    let mut board = blank();
    own(&mut board, a, 0, 10);
    own(&mut board, b, 0, 2);
    board.army[c] = 3;
    let mut g = game(board);
    // 0 is raised to 1.
    g.step_moves([mv(a, b, 0), None, None, None]);
    assert_eq!((g.army(a), g.army(b)), (9, 3));
    // 1000 is cut to army - 1.
    g.step_moves([mv(a, b, 1000), None, None, None]);
    assert_eq!((g.army(a), g.army(b)), (1, 11));
    // 10 of 11 onto a neutral 3: taken with 7.
    g.step_moves([mv(b, c, 10), None, None, None]);
    assert_eq!((g.owner(c), g.army(c), g.army(b)), (Some(0), 7, 1));
    assert_eq!(invalid(&g, 0), 0);
}

#[test]
fn discarded_moves_are_counted() {
    let mut board = blank();
    own(&mut board, at(4, 4), 0, 10);
    own(&mut board, at(4, 5), 0, 1);
    own(&mut board, at(1, 15), 0, 10);
    for cell in [at(3, 4), at(3, 11), at(6, 4), at(6, 11)] {
        board.kind[cell] = CellKind::Mountain;
    }
    let mut g = game(board);
    let cases = [
        mv(at(4, 6), at(4, 7), 1),   // source not owned
        mv(at(4, 5), at(4, 6), 1),   // source holds fewer than 2
        mv(at(4, 4), 10_000, 1),     // target off the board
        mv(usize::MAX, at(4, 4), 1), // source off the board
        mv(at(4, 4), at(5, 5), 1),   // diagonal
        mv(at(4, 4), at(4, 6), 1),   // two cells away
        mv(at(1, 15), at(2, 0), 1),  // next index, but wrapped to another row
        mv(at(4, 4), at(3, 4), 1),   // mountain
        mv(at(4, 4), at(4, 4), 1),   // onto itself
    ];
    for (n, case) in cases.into_iter().enumerate() {
        g.step_moves([case, None, None, None]);
        assert_eq!(invalid(&g, 0), n as u64 + 1, "case {n}: {case:?}");
    }
    assert_eq!(g.army(at(4, 4)), 10, "no discarded move touched the army");
    assert_eq!(g.seat_stats(0), vec![("invalid_moves", cases.len() as u64)]);
    assert_eq!(g.invariant_violation(), None);
}

#[test]
fn growth_per_turn_and_every_25_turns() {
    let mut board = blank();
    let city = at(4, 4);
    board.kind[city] = CellKind::City;
    own(&mut board, city, 0, 40);
    own(&mut board, at(4, 5), 0, 3);
    let neutral_city = at(4, 11);
    board.kind[neutral_city] = CellKind::City;
    board.army[neutral_city] = 40;
    let mut g = game(board);
    for _ in 0..24 {
        g.step_moves([None; 4]);
    }
    assert_eq!(g.army(city), 64);
    assert_eq!(g.army(crowns()[0]), 25);
    assert_eq!(g.army(at(4, 5)), 3);
    assert_eq!(g.army(neutral_city), 40, "neutral cities do not grow");
    g.step_moves([None; 4]);
    // Turn 25: +1 everywhere owned, on top of the structures' +1.
    assert_eq!(g.army(city), 66);
    assert_eq!(g.army(crowns()[0]), 27);
    assert_eq!(g.army(at(4, 5)), 4);
    assert_eq!(g.army(neutral_city), 40);
}

#[test]
fn memory_keeps_kind_owner_and_turn_but_not_army() {
    let mut board = blank();
    own(&mut board, at(1, 4), 0, 1);
    own(&mut board, at(1, 5), 1, 5);
    let mut g = game(board);
    let view = g.view(0);
    let seen = view.cells[at(1, 5)];
    assert!(seen.visible);
    assert_eq!(
        (seen.owner, seen.army, seen.seen),
        (Some(1), Some(5), Some(0))
    );
    // Seat 1 takes (1, 4): seat 0 loses sight of both cells.
    g.step_moves([None, mv(at(1, 5), at(1, 4), 4), None, None]);
    let view = g.view(0);
    assert_eq!(view.turn, 1);
    let lost = view.cells[at(1, 4)];
    assert!(!lost.visible);
    assert_eq!(lost.kind, Some(CellKind::Plain));
    assert_eq!((lost.owner, lost.army, lost.seen), (Some(0), None, Some(0)));
    let far = view.cells[at(1, 5)];
    assert_eq!(
        (far.owner, far.army, far.seen, far.visible),
        (Some(1), None, Some(0), false)
    );
    let near = view.cells[at(1, 2)];
    assert_eq!(
        (near.army, near.seen, near.visible),
        (Some(0), Some(1), true)
    );
    let never = view.cells[at(9, 8)];
    assert_eq!(
        (never.kind, never.owner, never.army, never.seen),
        (None, None, None, None)
    );
    // Seat 1 sees what it just took.
    let taken = g.view(1).cells[at(1, 4)];
    assert_eq!(
        (taken.owner, taken.army, taken.visible),
        (Some(1), Some(3), true)
    );
    assert_eq!(g.view(0).crown, crowns()[0]);
}

/// Random moves (mostly legal, some not) for every seat from a seeded generator.
fn random_moves(g: &GeneralsFfa, rng: &mut SplitMix64) -> [Option<Move>; 4] {
    let cells = g.width() * g.height();
    std::array::from_fn(|seat| {
        let owned: Vec<usize> = (0..cells).filter(|&c| g.owner(c) == Some(seat)).collect();
        if owned.is_empty() {
            return None;
        }
        let from = owned[rng.below(owned.len() as u64) as usize];
        let to = match rng.below(5) {
            0 => from.wrapping_sub(W),
            1 => from.wrapping_sub(1),
            2 => from + 1,
            3 => from + W,
            _ => rng.below(cells as u64 + 3) as usize,
        };
        Some(Move {
            from,
            to,
            amount: rng.below(60) as u32,
        })
    })
}

fn random_game(seed: u64) -> GeneralsFfa {
    let mut g = GeneralsFfa::from_seed(seed, Params::STANDARD).unwrap();
    let mut rng = SplitMix64::new(seed ^ 0x5eed);
    while g.outcome().is_none() {
        let moves = random_moves(&g, &mut rng);
        g.step_moves(moves);
        assert_eq!(
            g.invariant_violation(),
            None,
            "seed {seed} turn {}",
            g.turn()
        );
    }
    g
}

#[test]
fn random_play_keeps_the_invariants_and_is_deterministic() {
    for seed in 0..20 {
        let a = random_game(seed);
        let b = random_game(seed);
        assert_eq!(a.hashes(), b.hashes());
        assert_eq!(a, b);
        assert_eq!(a.hashes().len(), 240);
        let outcome = a.outcome().unwrap();
        assert!((outcome.scores.iter().sum::<f64>() - 2.0).abs() < 1e-9);
    }
    assert_ne!(random_game(1).hashes(), random_game(2).hashes());
}

#[test]
fn serialised_state_round_trips_and_steps_the_same() {
    let mut g = GeneralsFfa::from_seed(9, Params::STANDARD).unwrap();
    let mut rng = SplitMix64::new(3);
    for _ in 0..30 {
        let moves = random_moves(&g, &mut rng);
        g.step_moves(moves);
    }
    let json = serde_json::to_vec(&g).unwrap();
    let mut back: GeneralsFfa = serde_json::from_slice(&json).unwrap();
    assert_eq!(back, g);
    for _ in 0..30 {
        let moves = random_moves(&g, &mut rng);
        g.step_moves(moves);
        back.step_moves(moves);
    }
    assert_eq!(back.hashes(), g.hashes());
}

#[test]
fn forged_states_are_refused_or_caught_by_the_guard() {
    let g = GeneralsFfa::from_seed(4, Params::STANDARD).unwrap();
    let value = serde_json::to_value(&g).unwrap();
    let cells = g.width() * g.height();
    let mountain = (0..cells)
        .find(|&c| g.kind(c) == Some(CellKind::Mountain))
        .unwrap();
    let forge = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = value.clone();
        edit(&mut v);
        serde_json::from_value::<GeneralsFfa>(v)
    };

    // Structural damage is refused on the way in.
    assert!(
        forge(&|v| {
            v["army"].as_array_mut().unwrap().pop();
        })
        .is_err()
    );
    assert!(forge(&|v| v["owner"][0] = 9.into()).is_err());
    assert!(forge(&|v| v["seats"][2]["crown"] = 100_000.into()).is_err());
    assert!(
        forge(&|v| v["turn"] = 5.into()).is_err(),
        "hash log shorter than the turn"
    );
    assert!(forge(&|v| v["params"]["width"] = 15.into()).is_err());

    // Rule-level damage loads, and the guard names it.
    let armed = forge(&|v| v["army"][mountain] = 5.into()).unwrap();
    let found = armed.invariant_violation().expect("mountain with an army");
    assert!(found.contains("mountain"), "{found}");
    let dead_owner = forge(&|v| {
        v["seats"][3]["alive"] = false.into();
        v["seats"][3]["death_turn"] = 0.into();
    })
    .unwrap();
    assert!(dead_owner.invariant_violation().is_some());
    let asymmetric = forge(&|v| v["kind"][mountain] = "plain".into()).unwrap();
    assert!(
        asymmetric
            .invariant_violation()
            .unwrap()
            .contains("symmetry")
    );
    let second_crown = forge(&|v| v["kind"][80] = "crown".into()).unwrap();
    assert!(second_crown.invariant_violation().is_some());

    // The guard also fires during a step on such a state.
    let mut stepped = armed;
    stepped.step_moves([None; 4]);
    assert!(stepped.invariant_violation().is_some());
    assert_eq!(g.invariant_violation(), None);
}
