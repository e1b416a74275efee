//! The views against the frames the referee sends, the reference layout
//! against a direct reading of the state, and the legal mask against the
//! rules' own conditions.

use super::actions::{ActionSpace, BUILD};
use super::compact::{CompactMut, Observe, Observer};
use super::frame::{parse_frame, parse_handshake};
use super::reference::{reference_channels, write_reference, write_reference_rows};
use super::testing::Views;
use super::{HeaderLayout, ObserveError, View, legal_mask, tile};
use crate::generals::random::random_legal_action;
use crate::generals::{Action, Generals, Kind, Params};
use crate::generals_classic::{self, GeneralsClassic, GeneralsClassicMulti, Mode};
use crate::rng::SplitMix64;

/// The frame `seat` is sent, read back through the parser, equals the
/// view written from the state, cell for cell and number for number.
fn assert_matches_frames<G: crate::Game + Observe>(game: &G, side: usize) {
    let views = Views::of(game, side);
    let n = side * side;
    for seat in 0..game.seat_count() {
        let mut hs = Vec::new();
        game.write_handshake(seat, &mut hs);
        let shape = parse_handshake(&hs).unwrap();
        assert_eq!(shape.allies, game.allies_of(seat));
        let mut text = Vec::new();
        game.write_frame(seat, &mut text);
        let hl = 1 + 2 * shape.seats;
        let (mut t, mut o, mut a, mut h) = (vec![0; n], vec![0; n], vec![0; n], vec![0; hl]);
        parse_frame(&text, &shape, side, &mut t, &mut o, &mut a, &mut h).unwrap();
        let view = views.view(game, seat);
        assert_eq!(
            view.header,
            &h[..],
            "turn {} seat {seat} header",
            game.turn()
        );
        for cell in 0..n {
            assert_eq!(
                (view.tile[cell], view.owner[cell], view.army[cell]),
                (t[cell], o[cell], a[cell]),
                "turn {} seat {seat} cell {},{}",
                game.turn(),
                cell / side,
                cell % side
            );
        }
    }
}

#[test]
fn duel_views_equal_the_frames_every_turn() {
    for (seed, side) in [(1u64, 21usize), (2, 21), (3, 30), (4, 64)] {
        let mut game = Generals::from_seed(seed, Params::default());
        let mut rng = SplitMix64::new(seed);
        while !game.is_over() {
            assert_matches_frames(&game, side);
            let actions = [
                random_legal_action(&game, 0, &mut rng),
                random_legal_action(&game, 1, &mut rng),
            ];
            game.step_pair(actions);
        }
        assert_matches_frames(&game, side);
    }
}

#[test]
fn classic_duel_views_equal_the_frames() {
    let mut game = GeneralsClassic::from_seed(5, generals_classic::Params::default()).unwrap();
    let mut rng = SplitMix64::new(5);
    while !game.is_over() {
        assert_matches_frames(&game, 23);
        let actions = [
            random_legal_action(&game, 0, &mut rng),
            random_legal_action(&game, 1, &mut rng),
        ];
        game.step_pair(actions);
    }
}

fn multi(seed: u64, seats: usize, mode: Mode) -> GeneralsClassicMulti {
    let options = generals_classic::mapgen::MapOptions {
        players: seats,
        ..Default::default()
    };
    let map = generals_classic::mapgen::generate(seed, &options);
    GeneralsClassicMulti::from_map(map, mode, 300).unwrap()
}

#[test]
fn multi_views_equal_the_frames_every_turn() {
    use crate::Game;
    for (seed, seats, mode) in [
        (7u64, 4usize, Mode::Teams),
        (8, 3, Mode::Ffa),
        (9, 8, Mode::Ffa),
        (10, 2, Mode::Ffa),
    ] {
        let mut game = multi(seed, seats, mode);
        let mut rng = SplitMix64::new(seed);
        while game.outcome().is_none() {
            assert_matches_frames(&game, 23);
            let actions: Vec<Option<Action>> = (0..seats)
                .map(|s| Some(generals_classic::random_legal_action(&game, s, &mut rng)))
                .collect();
            game.step(&actions);
        }
        assert_matches_frames(&game, 23);
    }
}

#[test]
fn buffers_and_sides_are_checked() {
    let game = Generals::from_seed(1, Params::default());
    let (h, w) = game.board_size();
    let side = h.max(w) - 1;
    let cells = 2 * side * side;
    let (mut t, mut o, mut a, mut hd) =
        (vec![0; cells], vec![0; cells], vec![0; cells], vec![0; 10]);
    let out = CompactMut {
        tile: &mut t,
        owner: &mut o,
        army: &mut a,
        header: &mut hd,
        changed_rows: None,
    };
    assert!(matches!(
        game.observe(side, out),
        Err(ObserveError::BoardTooLarge { .. })
    ));
    let (mut t, mut o, mut a, mut hd) =
        (vec![0; 2 * 441], vec![0; 2 * 441], vec![0; 5], vec![0; 10]);
    let out = CompactMut {
        tile: &mut t,
        owner: &mut o,
        army: &mut a,
        header: &mut hd,
        changed_rows: None,
    };
    assert!(matches!(
        game.observe(21, out),
        Err(ObserveError::Buffer { what: "army", .. })
    ));
    let shape = parse_handshake(b"0 3 3\n").unwrap();
    let (mut t, mut o, mut a, mut hd) = (vec![0; 9], vec![0; 9], vec![0; 9], vec![0; 5]);
    for bad in [
        &b"0 1 1 1\n"[..],
        b"",
        b"0 1 1 1 1\n1 1 x\n",
        b"0 1 1 1 1\n1 1\n",
    ] {
        assert!(parse_frame(bad, &shape, 3, &mut t, &mut o, &mut a, &mut hd).is_err());
    }
    assert!(parse_handshake(b"0 3\n").is_err());
    assert!(parse_handshake(b"5 3 3 2 0 1\n").is_err());
}

/// The reference layout read directly off the state, the way the reference
/// environment computes it: sight, then each mask times sight.
fn reference_from_state(game: &Generals, seat: usize, side: usize) -> Vec<f32> {
    let (h, w) = (game.height(), game.width());
    let n = side * side;
    let me = seat as u8 + 1;
    let kind = |r: usize, c: usize| {
        if r < h && c < w {
            game.kind_at(r, c)
        } else {
            Kind::Mountain
        }
    };
    let owner = |r: usize, c: usize| {
        if r < h && c < w {
            game.owner_at(r, c)
        } else {
            0
        }
    };
    let seen = |r: usize, c: usize| {
        (r.saturating_sub(1)..=(r + 1).min(side - 1))
            .any(|rr| (c.saturating_sub(1)..=(c + 1).min(side - 1)).any(|cc| owner(rr, cc) == me))
    };
    let mut out = vec![0f32; 14 * n];
    let (my_land, my_army) = game.totals(seat);
    let (op_land, op_army) = game.totals(1 - seat);
    for r in 0..side {
        for c in 0..side {
            let i = r * side + c;
            let v = seen(r, c);
            let k = kind(r, c);
            let o = owner(r, c);
            let f = |b: bool| f32::from(u8::from(b));
            let army = if r < h && c < w {
                game.army_at(r, c)
            } else {
                0
            };
            let planes = [
                if v { army as f32 } else { 0.0 },
                f(v && k == Kind::General),
                f(v && k == Kind::Castle),
                f(v && k == Kind::Mountain),
                f(v && k != Kind::Mountain && o == 0),
                f(v && o == me),
                f(v && o != 0 && o != me),
                f(!v && matches!(k, Kind::Plain | Kind::General)),
                f(!v && matches!(k, Kind::Mountain | Kind::Castle)),
                my_land as f32,
                my_army as f32,
                op_land as f32,
                op_army as f32,
                game.time() as f32,
            ];
            for (ch, value) in planes.into_iter().enumerate() {
                out[ch * n + i] = value;
            }
        }
    }
    out
}

#[test]
fn reference_layout_equals_a_direct_reading_of_the_state() {
    let side = 21;
    let mut game = Generals::from_seed(11, Params::default());
    let mut rng = SplitMix64::new(11);
    let mut out = vec![0f32; 14 * side * side];
    assert_eq!(reference_channels(HeaderLayout::Duel).len(), 14);
    while !game.is_over() {
        let views = Views::of(&game, side);
        for seat in 0..2 {
            write_reference(&views.view(&game, seat), &mut out).unwrap();
            assert_eq!(
                out,
                reference_from_state(&game, seat, side),
                "turn {}",
                game.time()
            );
        }
        let actions = [
            random_legal_action(&game, 0, &mut rng),
            random_legal_action(&game, 1, &mut rng),
        ];
        game.step_pair(actions);
    }
}

#[test]
fn multi_reference_layout_splits_allies_from_opponents() {
    let side = 23;
    let game = multi(12, 4, Mode::Teams);
    let views = Views::of(&game, side);
    let n = side * side;
    let mut out = vec![0f32; 17 * n];
    for seat in 0..4 {
        let view = views.view(&game, seat);
        write_reference(&view, &mut out).unwrap();
        let ally = (seat + 2) % 4;
        let channel = |name: &str| {
            let ch = reference_channels(HeaderLayout::Seats)
                .iter()
                .position(|c| *c == name)
                .unwrap();
            &out[ch * n..(ch + 1) * n]
        };
        let (ally_land, ally_army) = game.totals(ally);
        assert!(
            channel("allied_land_count")
                .iter()
                .all(|&v| v == ally_land as f32)
        );
        assert!(
            channel("allied_army_count")
                .iter()
                .all(|&v| v == ally_army as f32)
        );
        let opponents: u32 = (0..4)
            .filter(|s| s % 2 != seat % 2)
            .map(|s| game.totals(s).0)
            .sum();
        assert!(
            channel("opponent_land_count")
                .iter()
                .all(|&v| v == opponents as f32)
        );
        // Owned, allied, opponent, neutral, fog and fogged structures split
        // the board: exactly one per cell.
        for cell in 0..n {
            let sum: f32 = [
                "owned_cells",
                "allied_cells",
                "opponent_cells",
                "neutral_cells",
                "mountains",
                "fog_cells",
                "structures_in_fog",
            ]
            .iter()
            .map(|name| channel(name)[cell])
            .sum();
            assert_eq!(sum, 1.0, "seat {seat} cell {cell}");
        }
    }
}

#[test]
fn legal_mask_follows_the_rules_from_the_state() {
    let side = 21;
    let mut game = Generals::from_seed(13, Params::default());
    let mut rng = SplitMix64::new(13);
    let space = ActionSpace { side, builds: true };
    let mut mask = vec![0u8; space.len()];
    let mut builds_seen = 0;
    while !game.is_over() && game.time() < 400 {
        let views = Views::of(&game, side);
        for seat in 0..2 {
            legal_mask(&views.view(&game, seat), &space, 35, &mut mask).unwrap();
            let (h, w) = (game.height(), game.width());
            for (index, &legal) in mask.iter().enumerate() {
                let action = space.decode(index).unwrap();
                let a = index % space.per_cell();
                let round_trip = if a == 0 { 0 } else { index };
                assert_eq!(space.encode(&action), Some(round_trip));
                let cell = index / space.per_cell();
                let (r, c) = (cell / side, cell % side);
                let owned = r < h && c < w && game.owner_at(r, c) == seat as u8 + 1;
                let expected = match a {
                    0 => true,
                    BUILD => {
                        owned
                            && game.kind_at(r, c) == Kind::Plain
                            && game.army_at(r, c) >= game.build_cost(seat, r * w + c)
                    }
                    _ => {
                        let (dr, dc) = action.direction().unwrap().delta();
                        let (nr, nc) = (r as i64 + dr, c as i64 + dc);
                        owned
                            && game.army_at(r, c) > 1
                            && nr >= 0
                            && nc >= 0
                            && (nr as usize) < h
                            && (nc as usize) < w
                            && game.kind_at(nr as usize, nc as usize) != Kind::Mountain
                    }
                };
                assert_eq!(
                    legal == 1,
                    expected,
                    "turn {} seat {seat} index {index}",
                    game.time()
                );
                builds_seen += usize::from(a == BUILD && expected);
            }
        }
        let actions = [
            random_legal_action(&game, 0, &mut rng),
            random_legal_action(&game, 1, &mut rng),
        ];
        game.step_pair(actions);
    }
    assert!(builds_seen > 0, "no affordable build was ever checked");
}

#[test]
fn padding_reads_as_mountains_in_and_out_of_sight() {
    let game = Generals::from_seed(3, Params::default());
    let side = 64;
    let views = Views::of(&game, side);
    let (h, w) = game.board_size();
    for seat in 0..2 {
        let view = views.view(&game, seat);
        for r in 0..side {
            for c in 0..side {
                if r < h && c < w {
                    continue;
                }
                let t = view.tile[r * side + c];
                assert!(t == tile::MOUNTAIN || t == tile::FOG_STRUCTURE);
                // At the start a seat owns only its general, far from row 64.
                if r > h || c > w {
                    assert_eq!(t, tile::FOG_STRUCTURE);
                }
            }
        }
    }
}

/// An [`Observer`] rewriting only the rows whose inputs changed keeps the
/// compact planes equal to a whole rewrite, and rewriting only the rows the
/// writer reports as changed (and the broadcast planes whose value changed)
/// keeps the reference tensor equal to a whole rewrite, turn after turn, in
/// every format.
#[test]
fn views_kept_current_equal_a_full_rewrite() {
    use crate::Game;
    fn check<G: Game<Action = Action> + Observe>(
        mut game: G,
        side: usize,
        mut act: impl FnMut(&G, usize) -> Action,
    ) {
        let seats = game.seat_count();
        let n = side * side;
        let channels = reference_channels(game.header_layout()).len();
        let (mut t, mut o, mut a) = (
            vec![0u8; seats * n],
            vec![0u8; seats * n],
            vec![0i32; seats * n],
        );
        let mut h = vec![0i64; seats * (1 + 2 * seats)];
        let mut kept = vec![0f32; seats * channels * n];
        let mut fresh = vec![0f32; channels * n];
        let mut changed = vec![0u64; seats];
        let mut first = true;
        let mut partial_steps = 0;
        let mut observer = Observer::new();
        loop {
            observer
                .observe(
                    &game,
                    side,
                    CompactMut {
                        tile: &mut t,
                        owner: &mut o,
                        army: &mut a,
                        header: &mut h,
                        changed_rows: Some(&mut changed),
                    },
                )
                .unwrap();
            let whole = Views::of(&game, side);
            assert!(
                t == whole.tile && o == whole.owner && a == whole.army,
                "turn {}",
                game.turn()
            );
            assert_eq!(h, whole.header);
            let hl = 1 + 2 * seats;
            let (height, width) = game.board_size();
            for seat in 0..seats {
                let view = View {
                    side,
                    height,
                    width,
                    tile: &t[seat * n..(seat + 1) * n],
                    owner: &o[seat * n..(seat + 1) * n],
                    army: &a[seat * n..(seat + 1) * n],
                    header: &h[seat * hl..(seat + 1) * hl],
                    layout: game.header_layout(),
                    seat,
                    allies: game.allies_of(seat),
                };
                let rows = if first { u64::MAX } else { changed[seat] };
                partial_steps += usize::from(rows.count_ones() < side as u32);
                let out = &mut kept[seat * channels * n..(seat + 1) * channels * n];
                write_reference_rows(&view, rows, out).unwrap();
                write_reference(&view, &mut fresh).unwrap();
                assert!(out == &fresh[..], "turn {} seat {seat}", game.turn());
            }
            first = false;
            if game.outcome().is_some() || game.turn() >= 300 {
                break;
            }
            let actions: Vec<Option<Action>> = (0..seats).map(|s| Some(act(&game, s))).collect();
            game.step(&actions);
        }
        assert!(partial_steps > 100, "the partial path was hardly taken");
    }
    let mut rng = SplitMix64::new(21);
    check(Generals::from_seed(21, Params::default()), 21, |g, s| {
        random_legal_action(g, s, &mut rng)
    });
    let mut rng = SplitMix64::new(22);
    check(multi(22, 4, Mode::Teams), 23, |g, s| {
        generals_classic::random_legal_action(g, s, &mut rng)
    });
    let mut rng = SplitMix64::new(23);
    check(multi(23, 3, Mode::Ffa), 23, |g, s| {
        generals_classic::random_legal_action(g, s, &mut rng)
    });
}

/// A duel that reports its changes keeps an observer's views equal to
/// whole rewrites without any comparison of boards, in both rulesets:
/// reported by row, or cell by cell (each seat's rows then rewritten only
/// where it sees a change). The cell-by-cell observer's report of changed
/// rows names exactly the rows whose values changed.
#[test]
fn duel_views_from_reported_changes_equal_a_full_rewrite() {
    let side = 23;
    let n = side * side;
    for classic in [true, false] {
        for seed in 30..36 {
            let mut by_rows = Observer::new();
            let mut by_cells = Observer::new();
            let mut rows_out = Buffers::new(side);
            let mut cells_out = Buffers::new(side);
            let mut rng = SplitMix64::new(seed);
            let mut competition = Generals::from_seed(seed, Params::default());
            let mut duel =
                GeneralsClassic::from_seed(seed, generals_classic::Params::default()).unwrap();
            let mut first = true;
            loop {
                let game: &Generals = if classic { &duel } else { &competition };
                let whole = Views::of(game, side);
                let before = cells_out.clone();
                let mut report = [0u64; 2];
                by_cells
                    .observe_changes(game, side, cells_out.out(Some(&mut report)), game.changes())
                    .unwrap();
                let rows = game.changed_rows;
                by_rows
                    .observe_changed(game, side, rows_out.out(None), rows)
                    .unwrap();
                for out in [&rows_out, &cells_out] {
                    assert!(out.equals(&whole), "seed {seed}, time {}", game.time());
                }
                if !first {
                    for (seat, &reported) in report.iter().enumerate() {
                        let differ = (0..side).fold(0u64, |bits, r| {
                            let span = seat * n + r * side..seat * n + (r + 1) * side;
                            let same = before.tile[span.clone()] == cells_out.tile[span.clone()]
                                && before.owner[span.clone()] == cells_out.owner[span.clone()]
                                && before.army[span.clone()] == cells_out.army[span];
                            bits | u64::from(!same) << r
                        });
                        assert_eq!(reported, differ, "seat {seat}, time {}", game.time());
                    }
                }
                first = false;
                if classic {
                    duel.clear_changes();
                } else {
                    competition.clear_changes();
                }
                if game_over(classic, &duel, &competition) {
                    break;
                }
                if classic {
                    let pair = [
                        random_legal_action(&duel, 0, &mut rng),
                        random_legal_action(&duel, 1, &mut rng),
                    ];
                    duel.step_pair(pair);
                } else {
                    let pair = [
                        random_legal_action(&competition, 0, &mut rng),
                        random_legal_action(&competition, 1, &mut rng),
                    ];
                    competition.step_pair(pair);
                }
            }
        }
    }
}

fn game_over(classic: bool, duel: &GeneralsClassic, competition: &Generals) -> bool {
    if classic {
        duel.is_over()
    } else {
        competition.is_over()
    }
}

/// Every seat's compact planes of a duel, owned.
#[derive(Clone)]
struct Buffers {
    tile: Vec<u8>,
    owner: Vec<u8>,
    army: Vec<i32>,
    header: Vec<i64>,
}

impl Buffers {
    fn new(side: usize) -> Buffers {
        Buffers {
            tile: vec![0; 2 * side * side],
            owner: vec![0; 2 * side * side],
            army: vec![0; 2 * side * side],
            header: vec![0; 10],
        }
    }

    fn out<'a>(&'a mut self, changed_rows: Option<&'a mut [u64]>) -> CompactMut<'a> {
        CompactMut {
            tile: &mut self.tile,
            owner: &mut self.owner,
            army: &mut self.army,
            header: &mut self.header,
            changed_rows,
        }
    }

    fn equals(&self, whole: &Views) -> bool {
        self.tile == whole.tile
            && self.owner == whole.owner
            && self.army == whole.army
            && self.header == whole.header
    }
}
