//! The generals games: the Generals Competition ruleset (1v1, castle
//! builds) and classic generals.io (1v1, 2v2, free-for-all of 2–8 seats).
//!
//! Every observation goes through the engine's shared encoder
//! (`arena_engine::generals::observe`): the compact planes are the frame the
//! referee sends each seat, the reference tensor and the masks are
//! functions of them. The built-in opponent reads the same planes.

use std::ops::Range;
use std::sync::Arc;

use arena_engine::generals::observe::actions::ActionSpace;
use arena_engine::generals::observe::adapters::{TOTALS_FIELDS, totals};
use arena_engine::generals::observe::compact::{Compact, CompactMut, Observe, Observer};
use arena_engine::generals::observe::memory::{MAX_HISTORY, MEMORY_CHANNELS, Memory};
use arena_engine::generals::observe::{
    HeaderLayout, ObserveError, View, legal_mask, reference_channels, write_reference_rows,
};
use arena_engine::generals::random::random_legal_action;
use arena_engine::generals::scripted::{Scripted, ScriptedRules};
use arena_engine::generals::{self, Action, Generals};
use arena_engine::generals_classic::{
    self, Format, GeneralsClassic, GeneralsClassicMulti, Mode, mapgen,
};
use arena_engine::registry::GameEntry;
use arena_engine::replay::{Replay, ReplayTurn};
use arena_engine::rng::SplitMix64;
use arena_engine::{Game, Outcome};

use super::{Builtin, Family, Request, final_reward, stream_seed};
use crate::buffers::{Buffers, Column};
use crate::slice::{Query, Slice};
use crate::spec::{ArraySpec, Dtype, EnvSpec, Group};
use crate::vec_env::{Actions, EnvError};

/// Fields of a five-integer action: `[pass, row, col, dir, split]`.
pub const ACTION_FIELDS: usize = 5;

/// Numbers in a seat's totals line.
const TOTALS: usize = TOTALS_FIELDS.len();

/// The most seats any generals format has.
const MAX_SEATS: usize = generals_classic::multi::MAX_SEATS;

/// Whether this module plays the registry entry.
pub fn plays(entry: &GameEntry) -> bool {
    entry.name == generals::ENTRY.name || entry.name == generals_classic::ENTRY.name
}

/// Which engine plays a board, with its parameters.
#[derive(Clone, Debug)]
enum BoardFormat {
    Competition(generals::Params),
    ClassicDuel(generals_classic::Params),
    Multi { mode: Mode, max_turns: u32 },
}

/// The largest board side each generator draws: the side views are padded
/// to by default.
fn largest_side(format: &BoardFormat) -> usize {
    match format {
        BoardFormat::Competition(_) => generals::mapgen::MAX_SIDE,
        BoardFormat::ClassicDuel(_) | BoardFormat::Multi { .. } => {
            mapgen::MapOptions::default().max_side
        }
    }
}

/// One environment's game.
#[derive(Clone, Debug)]
enum Board {
    Competition(Generals),
    Classic(GeneralsClassic),
    Multi(GeneralsClassicMulti),
}

/// Runs `$body` with `$g` bound to the board's game, whatever its type.
macro_rules! with_game {
    ($board:expr, $g:ident => $body:expr) => {
        match $board {
            Board::Competition($g) => $body,
            Board::Classic($g) => $body,
            Board::Multi($g) => $body,
        }
    };
}

impl Board {
    fn new(format: &BoardFormat, seats: usize, seed: u64) -> Result<Board, String> {
        match format {
            BoardFormat::Competition(params) => Generals::try_from_seed(seed, params.clone())
                .map(Board::Competition)
                .map_err(|e| e.to_string()),
            BoardFormat::ClassicDuel(params) => GeneralsClassic::from_seed(seed, params.clone())
                .map(Board::Classic)
                .map_err(|e| e.to_string()),
            BoardFormat::Multi { mode, max_turns } => {
                let options = mapgen::MapOptions {
                    players: seats,
                    ..mapgen::MapOptions::default()
                };
                let map = mapgen::generate(seed, &options);
                GeneralsClassicMulti::from_map(map, *mode, *max_turns)
                    .map(Board::Multi)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// A board read from the engine's JSON, of the same type as `like`.
    fn parse(like: &Board, json: &[u8]) -> Result<Board, String> {
        let text = |e: serde_json::Error| e.to_string();
        Ok(match like {
            Board::Competition(_) => {
                Board::Competition(serde_json::from_slice(json).map_err(text)?)
            }
            Board::Classic(_) => Board::Classic(serde_json::from_slice(json).map_err(text)?),
            Board::Multi(_) => Board::Multi(serde_json::from_slice(json).map_err(text)?),
        })
    }

    /// Writes every seat's view, rewriting only what changed: the duel
    /// engines report their changed rows, the multi-player one is compared
    /// against the observer's copy.
    fn observe(
        &mut self,
        observer: &mut Observer,
        side: usize,
        out: CompactMut<'_>,
    ) -> Result<(), String> {
        match self {
            Board::Competition(g) => {
                let rows = g.take_changed_rows();
                observer.observe_changed(g, side, out, rows)
            }
            Board::Classic(g) => {
                let rows = g.take_changed_rows();
                observer.observe_changed(g, side, out, rows)
            }
            Board::Multi(g) => observer.observe(g, side, out),
        }
        .map_err(|e| e.to_string())
    }

    fn game_name(&self) -> &'static str {
        with_game!(self, g => g.name())
    }

    fn seat_count(&self) -> usize {
        with_game!(self, g => Game::seats(g))
    }

    fn turn(&self) -> u32 {
        with_game!(self, g => g.turn())
    }

    fn is_due(&self, seat: usize) -> bool {
        with_game!(self, g => g.is_due(seat))
    }

    fn outcome(&self) -> Option<&Outcome> {
        with_game!(self, g => g.outcome())
    }

    fn board_size(&self) -> (usize, usize) {
        with_game!(self, g => g.board_size())
    }

    fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        match self {
            // The duel engines' own entry point: no outcome clone per step.
            Board::Competition(g) => {
                let pair = [
                    actions[0].unwrap_or(Action::PASS),
                    actions[1].unwrap_or(Action::PASS),
                ];
                g.step_pair(pair).cloned()
            }
            Board::Classic(g) => {
                let pair = [
                    actions[0].unwrap_or(Action::PASS),
                    actions[1].unwrap_or(Action::PASS),
                ];
                g.step_pair(pair).cloned()
            }
            Board::Multi(g) => g.step(actions),
        }
    }

    fn write_frame(&self, seat: usize, out: &mut Vec<u8>) {
        with_game!(self, g => g.write_frame(seat, out));
    }

    fn write_handshake(&self, seat: usize, out: &mut Vec<u8>) {
        with_game!(self, g => g.write_handshake(seat, out));
    }

    fn to_json(&self) -> Result<Vec<u8>, String> {
        with_game!(self, g => serde_json::to_vec(g)).map_err(|e| e.to_string())
    }

    /// The episode from `initial` to `self` as an Arena replay.
    fn replay(
        &self,
        initial: &Board,
        seed: u64,
        turns: Vec<ReplayTurn<Action>>,
    ) -> Result<Vec<u8>, String> {
        let seats = self.seat_count();
        let json = match (initial, self) {
            (Board::Competition(i), Board::Competition(f)) => {
                serde_json::to_vec(&Replay::new(i.clone(), seed, turns, vec![None; seats], f))
            }
            (Board::Classic(i), Board::Classic(f)) => {
                serde_json::to_vec(&Replay::new(i.clone(), seed, turns, vec![None; seats], f))
            }
            (Board::Multi(i), Board::Multi(f)) => {
                serde_json::to_vec(&Replay::new(i.clone(), seed, turns, vec![None; seats], f))
            }
            _ => return Err("the episode's boards are of different games".to_owned()),
        };
        json.map_err(|e| e.to_string())
    }
}

/// One seat's applied action, stored compactly: an episode of 1,200 turns
/// keeps 12 bytes per seat per turn. Row and column are clamped into `i32`
/// and direction and split into `i8`; the engine reads every value those
/// clamps change as off the board, no direction or "not half" alike, so the
/// stored action plays exactly as the submitted one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Recorded {
    row: i32,
    col: i32,
    dir: i8,
    split: i8,
    /// The pass field, or `NOT_DUE` for a seat that was not asked.
    kind: u8,
}

const NOT_DUE: u8 = u8::MAX;

impl Recorded {
    fn of(action: Option<&Action>) -> Recorded {
        let clamp32 = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        let clamp8 = |v: i64| v.clamp(i64::from(i8::MIN), i64::from(i8::MAX)) as i8;
        match action {
            Some(a) => Recorded {
                row: clamp32(a.row),
                col: clamp32(a.col),
                dir: clamp8(a.dir),
                split: clamp8(a.split),
                kind: a.kind as u8,
            },
            None => Recorded {
                row: 0,
                col: 0,
                dir: 0,
                split: 0,
                kind: NOT_DUE,
            },
        }
    }

    fn action(&self) -> Option<Action> {
        if self.kind == NOT_DUE {
            return None;
        }
        let fields = [
            i64::from(self.kind),
            i64::from(self.row),
            i64::from(self.col),
            i64::from(self.dir),
            i64::from(self.split),
        ];
        Action::try_from(fields).ok()
    }
}

/// A finished (or running) episode's record.
#[derive(Clone, Debug)]
struct Episode {
    initial: Board,
    seed: u64,
    /// `seats` entries per turn.
    turns: Vec<Recorded>,
}

impl Episode {
    fn replay(&self, last: &Board, seats: usize) -> Result<Vec<u8>, String> {
        let turns = self
            .turns
            .chunks_exact(seats)
            .map(|turn| ReplayTurn {
                actions: turn.iter().map(Recorded::action).collect(),
                faults: vec![None; seats],
            })
            .collect();
        last.replay(&self.initial, self.seed, turns)
    }
}

/// Everything fixed for a configured environment.
#[derive(Debug)]
struct Config {
    format: BoardFormat,
    game: &'static str,
    seats: usize,
    side: usize,
    space: ActionSpace,
    channels: usize,
    reference: bool,
    masks: bool,
    memory: bool,
    /// The built-in player of each seat the caller does not play.
    builtin: Vec<Option<Builtin>>,
    record: bool,
    rules: ScriptedRules,
    build_base_cost: u32,
    spec: EnvSpec,
}

/// The configured generals environment.
pub struct GeneralsFamily {
    config: Arc<Config>,
}

impl GeneralsFamily {
    pub fn new(
        entry: &'static GameEntry,
        request: &Request<'_>,
    ) -> Result<GeneralsFamily, EnvError> {
        let config = |e: &dyn std::fmt::Display| EnvError::Config(e.to_string());
        entry.check_seats(request.seats).map_err(|e| config(&e))?;
        let rules = entry.rules(request.rules).map_err(|e| config(&e))?;
        let seats = request.seats;
        let format = if entry.name == generals::ENTRY.name {
            BoardFormat::Competition(generals::Params::default())
        } else {
            let params = generals_classic::params_of(&rules);
            match generals_classic::format_of(&rules, seats).map_err(|e| config(&e))? {
                Format::Duel => BoardFormat::ClassicDuel(params),
                Format::Multi(mode) => BoardFormat::Multi {
                    mode,
                    max_turns: params.max_turns,
                },
            }
        };
        let largest = largest_side(&format);
        let side = request.side.unwrap_or(largest);
        if side < largest || side > arena_engine::generals::observe::MAX_SIDE {
            return Err(EnvError::Config(format!(
                "side {side} must be {largest}..={} for {} (its largest board is {largest})",
                arena_engine::generals::observe::MAX_SIDE,
                entry.name
            )));
        }
        if let Some(&(seat, _)) = request.builtin.iter().find(|(s, _)| *s >= seats) {
            return Err(EnvError::Config(format!(
                "seat {seat} does not exist: the game has {seats} seats"
            )));
        }
        let (builds, deathtouch_turn, build_base_cost) = match &format {
            BoardFormat::Competition(p) => (true, Some(p.deathtouch_turn), p.build_base_cost),
            _ => (false, None, 0),
        };
        let layout = match format {
            BoardFormat::Multi { .. } => HeaderLayout::Seats,
            _ => HeaderLayout::Duel,
        };
        let space = ActionSpace { side, builds };
        let channels = reference_channels(layout).len();
        let spec = spec(entry.name, request, seats, side, &space, layout);
        Ok(GeneralsFamily {
            config: Arc::new(Config {
                format,
                game: entry.name,
                seats,
                side,
                space,
                channels,
                reference: request.layout.reference,
                masks: request.layout.masks,
                memory: request.layout.memory,
                builtin: (0..seats)
                    .map(|s| {
                        request
                            .builtin
                            .iter()
                            .find(|(b, _)| *b == s)
                            .map(|&(_, kind)| kind)
                    })
                    .collect(),
                record: request.record,
                rules: ScriptedRules {
                    builds,
                    deathtouch_turn,
                    build_base_cost,
                },
                build_base_cost,
                spec,
            }),
        })
    }
}

fn spec(
    game: &'static str,
    request: &Request<'_>,
    seats: usize,
    side: usize,
    space: &ActionSpace,
    layout: HeaderLayout,
) -> EnvSpec {
    let n = request.envs;
    let array = |name, dtype, shape: &[usize], group| ArraySpec {
        name,
        dtype,
        shape: shape.to_vec(),
        group,
    };
    let channels = reference_channels(layout);
    let mut arrays = vec![
        array("tile", Dtype::U8, &[n, seats, side, side], Group::Obs),
        array("owner", Dtype::U8, &[n, seats, side, side], Group::Obs),
        array("army", Dtype::I32, &[n, seats, side, side], Group::Obs),
        array("header", Dtype::I64, &[n, seats, 1 + 2 * seats], Group::Obs),
    ];
    if request.layout.reference {
        arrays.push(array(
            "reference",
            Dtype::F32,
            &[n, seats, channels.len(), side, side],
            Group::Obs,
        ));
    }
    if request.layout.masks {
        arrays.push(array(
            "mask",
            Dtype::Bool,
            &[n, seats, side, side, space.per_cell()],
            Group::Obs,
        ));
    }
    if request.layout.memory {
        arrays.extend([
            array(
                "memory",
                Dtype::F32,
                &[n, seats, MEMORY_CHANNELS.len(), side, side],
                Group::Obs,
            ),
            array(
                "history",
                Dtype::F32,
                &[n, seats, MAX_HISTORY, 2],
                Group::Obs,
            ),
            array("totals", Dtype::F32, &[n, seats, TOTALS], Group::Obs),
        ]);
    }
    arrays.extend([
        array("reward", Dtype::F32, &[n, seats], Group::Step),
        array("terminated", Dtype::Bool, &[n], Group::Step),
        array("truncated", Dtype::Bool, &[n], Group::Step),
        array("winner", Dtype::I32, &[n], Group::Info),
        array("ranks", Dtype::I32, &[n, seats], Group::Info),
        array("turn", Dtype::I32, &[n], Group::Info),
        array("board_seed", Dtype::U64, &[n], Group::Info),
        array("board_size", Dtype::I32, &[n, 2], Group::Info),
    ]);
    EnvSpec {
        game,
        envs: n,
        seats,
        side,
        actions_per_cell: space.per_cell(),
        action_fields: ACTION_FIELDS,
        reference_channels: channels.to_vec(),
        builtin: request.builtin.iter().map(|&(seat, _)| seat).collect(),
        arrays,
    }
}

impl Family for GeneralsFamily {
    fn spec(&self) -> &EnvSpec {
        &self.config.spec
    }

    fn slice(&self, range: Range<usize>, buffers: Buffers) -> Box<dyn Slice> {
        Box::new(GeneralsSlice::new(self.config.clone(), range, &buffers))
    }

    fn check_action(&self, actions: &Actions<'_>, env: usize, seat: usize) -> Result<(), String> {
        check_action(actions, env, seat, self.config.space.len())
    }
}

/// The arrays, resolved once.
#[derive(Clone, Copy)]
struct Columns {
    tile: Column<u8>,
    owner: Column<u8>,
    army: Column<i32>,
    header: Column<i64>,
    reference: Option<Column<f32>>,
    mask: Option<Column<u8>>,
    memory: Option<Column<f32>>,
    history: Option<Column<f32>>,
    totals: Option<Column<f32>>,
    reward: Column<f32>,
    terminated: Column<u8>,
    truncated: Column<u8>,
    winner: Column<i32>,
    ranks: Column<i32>,
    turn: Column<i32>,
    board_seed: Column<u64>,
    board_size: Column<i32>,
}

impl Columns {
    /// # Panics
    ///
    /// Never for buffers made from this family's spec (every array is there
    /// with its type); a mismatch is a bug in this crate.
    fn of(buffers: &Buffers) -> Columns {
        fn get<T: crate::buffers::Element>(b: &Buffers, name: &str) -> Column<T> {
            b.column(name)
                .unwrap_or_else(|| panic!("buffers lack {name:?} although the spec has it"))
        }
        Columns {
            tile: get(buffers, "tile"),
            owner: get(buffers, "owner"),
            army: get(buffers, "army"),
            header: get(buffers, "header"),
            reference: buffers.column("reference"),
            mask: buffers.column("mask"),
            memory: buffers.column("memory"),
            history: buffers.column("history"),
            totals: buffers.column("totals"),
            reward: get(buffers, "reward"),
            terminated: get(buffers, "terminated"),
            truncated: get(buffers, "truncated"),
            winner: get(buffers, "winner"),
            ranks: get(buffers, "ranks"),
            turn: get(buffers, "turn"),
            board_seed: get(buffers, "board_seed"),
            board_size: get(buffers, "board_size"),
        }
    }
}

/// One environment.
struct Env {
    board: Board,
    /// The episode so far (its turns only when recording).
    episode: Episode,
    /// The last episode that finished.
    finished: Option<(Episode, Board)>,
    /// Why the last finished episode ended.
    reason: String,
    /// This environment's stream of board seeds.
    stream: SplitMix64,
    /// The episode is over: the next step starts a new one.
    over: bool,
    /// The derived arrays must be written whole on the next publish (a new
    /// board); otherwise only the rows whose compact planes changed.
    fresh: bool,
    /// What the last observation was written from, so the next one only
    /// rewrites rows whose inputs changed.
    observer: Observer,
    /// The built-in player of each seat the caller does not play.
    bots: Vec<Option<Bot>>,
    /// What each seat remembers of this episode (kept when asked for).
    memories: Vec<Memory>,
}

/// A built-in player with its memory.
enum Bot {
    Scripted(Box<Scripted>),
    Random(SplitMix64),
}

impl Bot {
    fn new(kind: Builtin) -> Bot {
        match kind {
            Builtin::Scripted => Bot::Scripted(Box::new(Scripted::new(0))),
            Builtin::Random => Bot::Random(SplitMix64::new(0)),
        }
    }

    /// A new game on a board drawn from `seed`; each seat's bot gets its
    /// own stream.
    fn reset(&mut self, seed: u64, seat: usize) {
        let seed = stream_seed(seed, seat);
        match self {
            Bot::Scripted(bot) => bot.reset(seed),
            Bot::Random(rng) => *rng = SplitMix64::new(seed),
        }
    }

    fn choose(&mut self, board: &Board, view: &View<'_>, rules: &ScriptedRules) -> Action {
        match (self, board) {
            (Bot::Scripted(bot), _) => bot.choose(view, rules),
            (Bot::Random(rng), Board::Competition(g)) => random_legal_action(g, view.seat, rng),
            (Bot::Random(rng), Board::Classic(g)) => random_legal_action(g, view.seat, rng),
            (Bot::Random(rng), Board::Multi(g)) => {
                generals_classic::random_legal_action(g, view.seat, rng)
            }
        }
    }
}

struct GeneralsSlice {
    config: Arc<Config>,
    first: usize,
    envs: Vec<Env>,
    columns: Columns,
    /// Reused for each step's actions.
    actions: Vec<Option<Action>>,
}

impl GeneralsSlice {
    fn new(config: Arc<Config>, range: Range<usize>, buffers: &Buffers) -> GeneralsSlice {
        let columns = Columns::of(buffers);
        let envs = range
            .clone()
            .map(|env| {
                let placeholder = Board::new(&config.format, config.seats, 0)
                    .unwrap_or_else(|e| panic!("the default board of a checked config: {e}"));
                Env {
                    episode: Episode {
                        initial: placeholder.clone(),
                        seed: 0,
                        turns: Vec::new(),
                    },
                    board: placeholder,
                    finished: None,
                    reason: String::new(),
                    stream: SplitMix64::new(stream_seed(0, env)),
                    over: true,
                    fresh: true,
                    observer: Observer::new(),
                    bots: config.builtin.iter().map(|b| b.map(Bot::new)).collect(),
                    memories: vec![Memory::new(); config.seats],
                }
            })
            .collect();
        GeneralsSlice {
            actions: vec![None; config.seats],
            config,
            first: range.start,
            envs,
            columns,
        }
    }

    fn local(&self, env: usize) -> Result<usize, EnvError> {
        env.checked_sub(self.first)
            .filter(|&i| i < self.envs.len())
            .ok_or(EnvError::Env(env))
    }
}

/// The rows of one environment, borrowed for one step.
struct Rows<'a> {
    tile: &'a mut [u8],
    owner: &'a mut [u8],
    army: &'a mut [i32],
    header: &'a mut [i64],
}

impl Rows<'_> {
    fn view(&self, config: &Config, seat: usize, board: &Board) -> View<'_> {
        let views = Compact {
            tile: self.tile,
            owner: self.owner,
            army: self.army,
            header: self.header,
        };
        with_game!(board, g => views.view(g, config.side, seat))
    }
}

/// Starts a new episode on a board: the record, the bots, the flags.
fn begin(env: &mut Env, board: Board, seed: u64) {
    env.episode.initial = board.clone();
    env.episode.seed = seed;
    env.episode.turns.clear();
    env.board = board;
    env.over = false;
    env.fresh = true;
    env.observer.forget();
    for memory in &mut env.memories {
        memory.forget();
    }
    for (seat, bot) in env.bots.iter_mut().enumerate() {
        if let Some(bot) = bot {
            bot.reset(seed, seat);
        }
    }
}

impl Columns {
    /// Environment `env`'s compact rows.
    ///
    /// # Safety
    ///
    /// `env` must belong to the calling slice, and at most one `Rows` per
    /// environment may be live.
    unsafe fn rows(&self, env: usize) -> Rows<'_> {
        // SAFETY: by the caller's contract.
        unsafe {
            Rows {
                tile: self.tile.row(env),
                owner: self.owner.row(env),
                army: self.army.row(env),
                header: self.header.row(env),
            }
        }
    }
}

/// What every environment of a slice shares while it steps.
struct Ctx<'a> {
    config: &'a Config,
    columns: Columns,
}

impl Ctx<'_> {
    /// Writes environment `env_index`'s observations and info after its
    /// board changed, and its step results (`outcome` ends the episode).
    fn publish(
        &self,
        env_index: usize,
        env: &mut Env,
        outcome: Option<&Outcome>,
    ) -> Result<(), EnvError> {
        let config = self.config;
        let columns = self.columns;
        // SAFETY: one of this slice's environments; the only live reference
        // to its rows.
        let rows = unsafe { columns.rows(env_index) };
        let mut changed = [u64::MAX; MAX_SEATS];
        env.board
            .observe(
                &mut env.observer,
                config.side,
                CompactMut {
                    tile: rows.tile,
                    owner: rows.owner,
                    army: rows.army,
                    header: rows.header,
                    changed_rows: Some(&mut changed[..config.seats]),
                },
            )
            .map_err(EnvError::Engine)?;
        if std::mem::take(&mut env.fresh) {
            changed = [u64::MAX; MAX_SEATS];
        }
        let n = config.side * config.side;
        if let Some(column) = config.reference.then_some(self.columns.reference).flatten() {
            // SAFETY: one row of this slice's environment, not otherwise borrowed.
            let out = unsafe { column.row(env_index) };
            let per_seat = config.channels * n;
            for seat in 0..config.seats {
                let view = rows.view(config, seat, &env.board);
                let out = &mut out[seat * per_seat..(seat + 1) * per_seat];
                write_reference_rows(&view, changed[seat], out)
                    .map_err(|e| EnvError::Engine(e.to_string()))?;
            }
        }
        if let Some(column) = config.masks.then_some(self.columns.mask).flatten() {
            // SAFETY: as above.
            let out = unsafe { column.row(env_index) };
            let per_seat = config.space.len();
            for seat in 0..config.seats {
                let view = rows.view(config, seat, &env.board);
                legal_mask(
                    &view,
                    &config.space,
                    config.build_base_cost,
                    &mut out[seat * per_seat..(seat + 1) * per_seat],
                )
                .map_err(|e| EnvError::Engine(e.to_string()))?;
            }
        }
        if config.memory {
            self.remember(env_index, env, &rows)?;
        }
        let c = &self.columns;
        // SAFETY: one row each of this slice's environment.
        unsafe {
            let reward = c.reward.row(env_index);
            let ranks = c.ranks.row(env_index);
            match outcome {
                Some(o) => {
                    for seat in 0..config.seats {
                        reward[seat] = final_reward(o, seat);
                        ranks[seat] = o.ranks.get(seat).map_or(-1, |&r| r as i32);
                    }
                    c.winner.row(env_index)[0] = o.winner().map_or(-1, |w| w as i32);
                }
                None => {
                    reward.fill(0.0);
                    ranks.fill(-1);
                    c.winner.row(env_index)[0] = -1;
                }
            }
            c.terminated.row(env_index)[0] = u8::from(outcome.is_some());
            // The turn cap is one of the game's rules (a draw the referee
            // declares, visible in the observation's turn), so every end is a
            // termination; nothing here truncates.
            c.truncated.row(env_index)[0] = 0;
            c.turn.row(env_index)[0] = env.board.turn() as i32;
            c.board_seed.row(env_index)[0] = env.episode.seed;
            let (h, w) = env.board.board_size();
            c.board_size
                .row(env_index)
                .copy_from_slice(&[h as i32, w as i32]);
        }
        Ok(())
    }

    /// Updates every seat's memory with its new view and writes the
    /// memory, history and totals arrays, as the model adapters give them.
    fn remember(&self, env_index: usize, env: &mut Env, rows: &Rows<'_>) -> Result<(), EnvError> {
        let config = self.config;
        let (Some(memory), Some(history), Some(totals_column)) = (
            self.columns.memory,
            self.columns.history,
            self.columns.totals,
        ) else {
            return Ok(());
        };
        // SAFETY: one row each of this slice's environment, not otherwise
        // borrowed.
        let (memory, history, totals_out) = unsafe {
            (
                memory.row(env_index),
                history.row(env_index),
                totals_column.row(env_index),
            )
        };
        let planes = MEMORY_CHANNELS.len() * config.side * config.side;
        let engine = |e: ObserveError| EnvError::Engine(e.to_string());
        for seat in 0..config.seats {
            let view = rows.view(config, seat, &env.board);
            let kept = &mut env.memories[seat];
            kept.update(&view).map_err(engine)?;
            kept.write_planes(config.side, &mut memory[seat * planes..(seat + 1) * planes])
                .map_err(engine)?;
            let window = 2 * MAX_HISTORY;
            kept.write_history(
                MAX_HISTORY,
                &mut history[seat * window..(seat + 1) * window],
            )
            .map_err(engine)?;
            totals_out[seat * TOTALS..(seat + 1) * TOTALS].copy_from_slice(&totals(&view));
        }
        Ok(())
    }

    /// A new episode in environment `env_index` on a fresh board from its
    /// stream.
    fn restart(&self, env_index: usize, env: &mut Env) -> Result<(), EnvError> {
        let config = self.config;
        let seed = env.stream.next_u64();
        let board = Board::new(&config.format, config.seats, seed).map_err(EnvError::Engine)?;
        begin(env, board, seed);
        self.publish(env_index, env, None)
    }

    /// One step of environment `env_index`; `actions` is scratch space.
    fn step(
        &self,
        env_index: usize,
        env: &mut Env,
        actions: &mut [Option<Action>],
        input: &Actions<'_>,
    ) -> Result<(), EnvError> {
        if env.over {
            return self.restart(env_index, env);
        }
        let config = self.config;
        {
            let columns = self.columns;
            // SAFETY: one of this slice's environments; the only live
            // reference to its rows, dropped before `publish` takes them.
            let rows = unsafe { columns.rows(env_index) };
            for (seat, action) in actions.iter_mut().enumerate().take(config.seats) {
                *action = if !env.board.is_due(seat) {
                    None
                } else if let Some(bot) = env.bots[seat].as_mut() {
                    let view = rows.view(config, seat, &env.board);
                    Some(bot.choose(&env.board, &view, &config.rules))
                } else {
                    Some(input.get(env_index, seat, &config.space))
                };
                if config.record {
                    env.episode.turns.push(Recorded::of(action.as_ref()));
                }
            }
        }
        let outcome = env.board.step(actions);
        if let Some(o) = &outcome {
            env.over = true;
            env.reason.clone_from(&o.reason);
            let episode = env.episode.clone();
            env.finished = Some((episode, env.board.clone()));
        }
        self.publish(env_index, env, outcome.as_ref())
    }
}

impl Slice for GeneralsSlice {
    fn reset(&mut self, seed: Option<u64>) -> Result<(), EnvError> {
        let ctx = Ctx {
            config: &self.config,
            columns: self.columns,
        };
        for (i, env) in self.envs.iter_mut().enumerate() {
            if let Some(seed) = seed {
                env.stream = SplitMix64::new(stream_seed(seed, self.first + i));
            }
            ctx.restart(self.first + i, env)?;
        }
        Ok(())
    }

    fn step(&mut self, actions: &Actions<'_>) -> Result<(), EnvError> {
        let ctx = Ctx {
            config: &self.config,
            columns: self.columns,
        };
        for (i, env) in self.envs.iter_mut().enumerate() {
            ctx.step(self.first + i, env, &mut self.actions, actions)?;
        }
        Ok(())
    }

    fn query(&self, env: usize, query: &Query) -> Result<Vec<u8>, EnvError> {
        let e = &self.envs[self.local(env)?];
        let seats = self.config.seats;
        match query {
            Query::Replay { finished: true } => match &e.finished {
                Some((episode, last)) => episode.replay(last, seats).map_err(EnvError::Engine),
                None => Err(EnvError::NoEpisode(env)),
            },
            Query::Replay { finished: false } => {
                e.episode.replay(&e.board, seats).map_err(EnvError::Engine)
            }
            Query::State => e.board.to_json().map_err(EnvError::Engine),
            Query::Frame { seat } | Query::Handshake { seat } if *seat >= seats => {
                Err(EnvError::Seat { seat: *seat, seats })
            }
            Query::Frame { seat } => {
                let mut out = Vec::new();
                e.board.write_frame(*seat, &mut out);
                Ok(out)
            }
            Query::Handshake { seat } => {
                let mut out = Vec::new();
                e.board.write_handshake(*seat, &mut out);
                Ok(out)
            }
            Query::Reason => Ok(e.reason.clone().into_bytes()),
        }
    }

    fn load(&mut self, env: usize, state: &[u8]) -> Result<(), EnvError> {
        let i = self.local(env)?;
        let config = self.config.clone();
        let board = Board::parse(&self.envs[i].board, state).map_err(EnvError::State)?;
        if board.game_name() != config.game {
            return Err(EnvError::State(format!(
                "the state is a {} game, the environment plays {}",
                board.game_name(),
                config.game
            )));
        }
        if board.seat_count() != config.seats {
            return Err(EnvError::State(format!(
                "the state has {} seats, the environment {}",
                board.seat_count(),
                config.seats
            )));
        }
        let (h, w) = board.board_size();
        if h > config.side || w > config.side {
            return Err(EnvError::State(format!(
                "the board is {h}x{w}, larger than the environment's side {}",
                config.side
            )));
        }
        if board.outcome().is_some() {
            return Err(EnvError::State(
                "the state is of a finished game".to_owned(),
            ));
        }
        begin(&mut self.envs[i], board, 0);
        Ctx {
            config: &self.config,
            columns: self.columns,
        }
        .publish(env, &mut self.envs[i], None)
    }
}

impl Actions<'_> {
    /// Seat `seat`'s action in environment `env`, already checked by
    /// [`crate::VecEnv::step`]; anything unreadable passes.
    fn get(&self, env: usize, seat: usize, space: &ActionSpace) -> Action {
        match *self {
            Actions::Fields { values, seats } => {
                let at = (env * seats + seat) * ACTION_FIELDS;
                values
                    .get(at..at + ACTION_FIELDS)
                    .and_then(|f| <[i64; 5]>::try_from(f).ok())
                    .and_then(|f| Action::try_from(f).ok())
                    .unwrap_or(Action::PASS)
            }
            Actions::Flat { values, seats } => values
                .get(env * seats + seat)
                .and_then(|&v| usize::try_from(v).ok())
                .and_then(|v| space.decode(v))
                .unwrap_or(Action::PASS),
        }
    }
}

/// Checks one seat's action in the form the caller sent; `Err` names what
/// is wrong.
fn check_action(
    actions: &Actions<'_>,
    env: usize,
    seat: usize,
    head_len: usize,
) -> Result<(), String> {
    match *actions {
        Actions::Fields { values, seats } => {
            let at = (env * seats + seat) * ACTION_FIELDS;
            let fields = values
                .get(at..at + ACTION_FIELDS)
                .and_then(|f| <[i64; 5]>::try_from(f).ok())
                .ok_or("missing")?;
            Action::try_from(fields).map(|_| ()).map_err(|e| e.reason)
        }
        Actions::Flat { values, seats } => {
            let v = *values.get(env * seats + seat).ok_or("missing")?;
            if (0..head_len as i64).contains(&v) {
                Ok(())
            } else {
                Err(format!("flat index {v} is outside 0..{head_len}"))
            }
        }
    }
}
