//! The `generals/1` adapters read from the frames exactly what the
//! training environment writes from the state; the memory remembers what
//! a naive reading of every earlier view says; the head picks the best
//! legal entry.

use super::actions::ActionSpace;
use super::adapters::{CLASSIC, COMPETITION, choose};
use super::compact::Observe;
use super::memory::{MAX_HISTORY, MEMORY_CHANNELS, Memory};
use super::testing::Views;
use super::{View, reference_channels, tile, write_reference};
use crate::Game;
use crate::generals::random::random_legal_action;
use crate::generals::scripted::{Scripted, ScriptedRules};
use crate::generals::{Action, Direction, Generals, Params, action};
use crate::generals_classic::{self, GeneralsClassic, GeneralsClassicMulti, Mode};
use crate::registry::model::{AdapterError, BoardArgs, InputArgs, ModelInterface};
use crate::rng::SplitMix64;

fn square(side: usize) -> BoardArgs {
    BoardArgs {
        rows: Some(side),
        cols: Some(side),
    }
}

fn history_args(turns: i64) -> InputArgs {
    let mut args = InputArgs::default();
    args.params.insert("turns".to_owned(), turns);
    args
}

fn as_f32<T: Copy + Into<f64>>(values: &[T]) -> Vec<f32> {
    values.iter().map(|&v| v.into() as f32).collect()
}

/// What a naive reading of every view so far says of one seat's memory.
#[derive(Default)]
struct Naive {
    last_seen: Vec<i64>,
    tile: Vec<u8>,
    owner: Vec<u8>,
    army: Vec<i32>,
    general: Vec<bool>,
    history: Vec<[i64; 2]>,
}

impl Naive {
    fn update(&mut self, view: &View<'_>) {
        let n = view.side * view.side;
        if self.last_seen.is_empty() {
            *self = Naive {
                last_seen: vec![-1; n],
                tile: vec![0; n],
                owner: vec![0; n],
                army: vec![0; n],
                general: vec![false; n],
                history: Vec::new(),
            };
        }
        for cell in 0..n {
            let t = view.tile[cell];
            if (1..=4).contains(&t) {
                self.last_seen[cell] = view.turn();
                self.tile[cell] = t;
                self.owner[cell] = view.owner[cell];
                self.army[cell] = view.army[cell];
                let enemy = match view.layout {
                    super::HeaderLayout::Duel => view.owner[cell] == 2,
                    super::HeaderLayout::Seats => view.owner[cell] >= 3,
                };
                self.general[cell] |= t == tile::GENERAL && enemy;
            }
        }
        let o = view.opponents();
        self.history.push([o.land, o.army]);
    }

    fn planes(&self) -> Vec<f32> {
        let mut out: Vec<f32> = self
            .last_seen
            .iter()
            .map(|&t| if t >= 0 { 1.0 } else { 0.0 })
            .collect();
        out.extend(self.last_seen.iter().map(|&t| t as f32));
        out.extend(as_f32(&self.tile));
        out.extend(as_f32(&self.owner));
        out.extend(self.army.iter().map(|&a| a as f32));
        out.extend(self.general.iter().map(|&g| if g { 1.0 } else { 0.0 }));
        out
    }

    fn history(&self, turns: usize) -> Vec<f32> {
        let mut out = vec![0.0; 2 * turns];
        for (back, pair) in self.history.iter().rev().take(turns).enumerate() {
            let row = turns - 1 - back;
            out[2 * row] = pair[0] as f32;
            out[2 * row + 1] = pair[1] as f32;
        }
        out
    }
}

/// Plays `game` with random legal moves; every turn, each seat's reader
/// (fed the handshake and frames, as the model host is) must give the
/// tensors the state-written view gives, and the memory a naive reading.
fn check_game<G: Game + Observe>(
    interface: &'static ModelInterface,
    mut game: G,
    side: usize,
    mut act: impl FnMut(&G, usize) -> Option<G::Action>,
) -> bool {
    let seats = game.seat_count();
    let mut readers: Vec<_> = (0..seats)
        .map(|_| (interface.reader)(square(side)))
        .collect();
    let mut memories: Vec<Memory> = (0..seats).map(|_| Memory::new()).collect();
    let mut naive: Vec<Naive> = (0..seats).map(|_| Naive::default()).collect();
    let mut turns = 0;
    loop {
        let views = Views::of(&game, side);
        for seat in 0..seats {
            let mut message = Vec::new();
            if turns == 0 {
                game.write_handshake(seat, &mut message);
            }
            game.write_frame(seat, &mut message);
            let read = readers[seat].read(&message).unwrap();
            let view = views.view(&game, seat);
            memories[seat].update(&view).unwrap();
            naive[seat].update(&view);
            let at = |what: &str| format!("turn {} seat {seat} {what}", game.turn());
            assert_eq!(read.head_rows(), side * side);

            let compact = read.input("compact", &InputArgs::default()).unwrap();
            assert_eq!(compact.shape, [1, 3, side, side]);
            let mut want = as_f32(view.tile);
            want.extend(as_f32(view.owner));
            want.extend(view.army.iter().map(|&a| a as f32));
            assert!(compact.data == want, "{}", at("compact"));

            let name = match view.layout {
                super::HeaderLayout::Duel => "reference",
                super::HeaderLayout::Seats => "reference_seats",
            };
            let reference = read.input(name, &InputArgs::default()).unwrap();
            let mut want = vec![0.0; reference_channels(view.layout).len() * side * side];
            write_reference(&view, &mut want).unwrap();
            assert!(reference.data == want, "{}", at("reference"));

            let memory = read.input("memory", &InputArgs::default()).unwrap();
            assert_eq!(memory.shape, [1, MEMORY_CHANNELS.len(), side, side]);
            let mut want = vec![0.0; MEMORY_CHANNELS.len() * side * side];
            memories[seat].write_planes(side, &mut want).unwrap();
            assert!(memory.data == want, "{}", at("memory from the state"));
            assert!(
                memory.data == naive[seat].planes(),
                "{}",
                at("naive memory")
            );

            for t in [1, 7, MAX_HISTORY] {
                let history = read.input("history", &history_args(t as i64)).unwrap();
                assert_eq!(history.shape, [1, t, 2]);
                assert_eq!(history.data, naive[seat].history(t), "{}", at("history"));
            }

            let totals = read.input("totals", &InputArgs::default()).unwrap();
            let (m, a, o) = (view.mine(), view.allied(), view.opponents());
            let want = [view.turn(), m.land, m.army, a.land, a.army, o.land, o.army];
            assert_eq!(totals.data, want.map(|v| v as f32), "{}", at("totals"));
        }
        turns += 1;
        if game.outcome().is_some() || turns >= 400 {
            break;
        }
        let actions: Vec<_> = (0..seats).map(|s| act(&game, s)).collect();
        game.step(&actions);
    }
    // Whether the memory held anything the fog hid at the end: a cell
    // seen before the last turn.
    let now = naive.iter().flat_map(|n| n.last_seen.iter()).max().copied();
    naive
        .iter()
        .any(|n| n.last_seen.iter().any(|&t| t >= 0 && Some(t) < now))
}

#[test]
fn the_adapters_read_from_frames_what_the_state_writes() {
    let mut remembered = Vec::new();
    // The scripted players fight, so cells change hands and fall into fog.
    let mut bots = [Scripted::new(31), Scripted::new(32)];
    remembered.push(check_game(
        &COMPETITION,
        Generals::from_seed(31, Params::default()),
        21,
        |g, s| {
            let views = Views::of(g, 21);
            Some(bots[s].choose(&views.view(g, s), &ScriptedRules::COMPETITION))
        },
    ));
    let mut rng = SplitMix64::new(32);
    remembered.push(check_game(
        &CLASSIC,
        GeneralsClassic::from_seed(32, generals_classic::Params::default()).unwrap(),
        23,
        |g, s| Some(random_legal_action(g, s, &mut rng)),
    ));
    for (seed, seats, mode) in [(33, 4, Mode::Teams), (34, 3, Mode::Ffa)] {
        let options = generals_classic::mapgen::MapOptions {
            players: seats,
            ..Default::default()
        };
        let map = generals_classic::mapgen::generate(seed, &options);
        let game = GeneralsClassicMulti::from_map(map, mode, 300).unwrap();
        let mut rng = SplitMix64::new(seed);
        remembered.push(check_game(&CLASSIC, game, 24, |g, s| {
            Some(generals_classic::random_legal_action(g, s, &mut rng))
        }));
    }
    // The memory was tested on something the fog hid.
    assert!(remembered.contains(&true), "{remembered:?}");
}

#[test]
fn a_reference_layout_of_the_other_mode_is_refused() {
    let game = Generals::from_seed(3, Params::default());
    let mut reader = (COMPETITION.reader)(square(21));
    let mut message = Vec::new();
    game.write_handshake(0, &mut message);
    game.write_frame(0, &mut message);
    let view = reader.read(&message).unwrap();
    let err = view
        .input("reference_seats", &InputArgs::default())
        .unwrap_err();
    assert!(
        err.to_string().contains("2v2 and free-for-all only"),
        "{err}"
    );
    assert!(matches!(
        view.input("fog", &InputArgs::default()),
        Err(AdapterError::UnknownAdapter(_))
    ));
}

#[test]
fn boards_that_do_not_fit_the_graph_are_refused() {
    let game = Generals::from_seed(4, Params::default());
    let (h, w) = game.board_size();
    let mut message = Vec::new();
    game.write_handshake(0, &mut message);
    game.write_frame(0, &mut message);
    for (args, says) in [
        (square(h.min(w) - 1), "larger than the graph's"),
        (
            BoardArgs {
                rows: Some(21),
                cols: Some(22),
            },
            "padded to a square",
        ),
    ] {
        let mut reader = (COMPETITION.reader)(args);
        let err = reader.read(&message).err().unwrap();
        assert!(matches!(err, AdapterError::Board(_)), "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
    // Symbolic board dims: the game's largest side.
    let mut reader = (COMPETITION.reader)(BoardArgs::default());
    assert_eq!(reader.read(&message).unwrap().board(), (21, 21));
    // A first message without its handshake is not a frame.
    let mut frame = Vec::new();
    game.write_frame(0, &mut frame);
    assert!((COMPETITION.reader)(square(21)).read(&frame).is_err());
    assert!((COMPETITION.reader)(square(21)).read(b"garbage").is_err());
}

#[test]
fn the_head_plays_its_best_legal_entry() {
    let mut game = Generals::from_seed(5, Params::default());
    for _ in 0..6 {
        game.step_pair([Action::PASS, Action::PASS]);
    }
    let side = 21;
    let views = Views::of(&game, side);
    let view = views.view(&game, 0);
    let space = ActionSpace { side, builds: true };
    let general = (0..side * side)
        .find(|&c| view.tile[c] == tile::GENERAL && view.owner[c] == 1)
        .unwrap();
    let (row, col) = (general / side, general % side);
    let per = space.per_cell();
    let mut scores = vec![0.0f32; space.len()];

    // All equal: the lowest index, a pass.
    let c = choose(&view, &space, &scores).unwrap();
    assert_eq!(
        (c.index, c.action, c.best_was_illegal),
        (0, Action::PASS, false)
    );

    // The best entry moves from a cell the seat does not own: illegal, so
    // the best legal one plays (here every legal entry ties at 0: a pass).
    let foreign = (0..side * side).find(|&c| view.owner[c] != 1).unwrap();
    scores[foreign * per + 1] = 9.0;
    let c = choose(&view, &space, &scores).unwrap();
    assert_eq!((c.action, c.best_was_illegal), (Action::PASS, true));

    // A legal move out of the general beats it once it scores highest of
    // the legal entries; two equal legal moves go to the lower index.
    let open = |dir: usize| {
        let (dr, dc) = Direction::ALL[dir].delta();
        let (r, c) = (row as i64 + dr, col as i64 + dc);
        (0..side as i64).contains(&r)
            && (0..side as i64).contains(&c)
            && !matches!(
                view.tile[r as usize * side + c as usize],
                tile::MOUNTAIN | tile::FOG_STRUCTURE
            )
    };
    let dirs: Vec<usize> = (0..4).filter(|&d| open(d)).collect();
    assert!(dirs.len() >= 2, "the general is boxed in");
    for &d in &dirs {
        scores[general * per + 1 + 2 * d + 1] = 5.0;
    }
    let c = choose(&view, &space, &scores).unwrap();
    let first = dirs[0];
    assert_eq!(c.index, general * per + 2 + 2 * first);
    assert_eq!(
        c.action,
        Action::movement(row as i64, col as i64, Direction::ALL[first], true)
    );
    assert!(c.best_was_illegal);

    // Through the reader, the reply line is that action's five fields.
    let mut reader = (COMPETITION.reader)(square(side));
    let mut message = Vec::new();
    game.write_handshake(0, &mut message);
    game.write_frame(0, &mut message);
    let read = reader.read(&message).unwrap();
    let line = read.reply(&scores).unwrap();
    assert_eq!(action::parse(&line).unwrap(), c.action);
    assert!(matches!(
        read.reply(&scores[1..]),
        Err(AdapterError::HeadSize { .. })
    ));
}
