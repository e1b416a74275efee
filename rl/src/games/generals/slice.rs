//! A slice of generals environments and its episode loop: each
//! environment's board, record, built-in players and memories, stepped
//! and restarted in place.

use std::ops::Range;
use std::sync::Arc;

use arena_engine::generals::Action;
use arena_engine::generals::observe::View;
use arena_engine::generals::observe::compact::Observer;
use arena_engine::generals::observe::memory::Memory;
use arena_engine::generals::random::random_legal_action;
use arena_engine::generals::scripted::{Scripted, ScriptedRules};
use arena_engine::generals_classic;
use arena_engine::rng::SplitMix64;

use super::MAX_SEATS;
use super::board::Board;
use super::columns::Columns;
use super::episode::{Episode, Recorded};
use super::family::Config;
use crate::buffers::Buffers;
use crate::games::{Builtin, stream_seed};
use crate::slice::{Query, Slice};
use crate::vec_env::{Actions, EnvError};

/// One environment.
pub(super) struct Env {
    pub(super) board: Board,
    /// The episode so far (its turns only when recording).
    pub(super) episode: Episode,
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
    pub(super) fresh: bool,
    /// What the last observation was written from, so the next one only
    /// rewrites rows whose inputs changed.
    pub(super) observer: Observer,
    /// The built-in player of each seat the caller does not play. Inline,
    /// not on the heap: a step reads it for every seat, and one more
    /// pointer to chase per board is a cache miss per board.
    bots: [Option<Bot>; MAX_SEATS],
    /// What each seat remembers of this episode (kept when asked for).
    pub(super) memories: Vec<Memory>,
}

impl Env {
    /// Starts loading what stepping this environment reads first, while
    /// the one before it steps.
    fn prefetch(&self) {
        self.observer.prefetch();
        self.board.prefetch();
    }
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

pub(super) struct GeneralsSlice {
    config: Arc<Config>,
    first: usize,
    envs: Vec<Env>,
    columns: Columns,
    /// Reused for each step's actions.
    actions: Vec<Option<Action>>,
}

impl GeneralsSlice {
    pub(super) fn new(
        config: Arc<Config>,
        range: Range<usize>,
        buffers: &Buffers,
    ) -> GeneralsSlice {
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
                    bots: std::array::from_fn(|seat| {
                        config.builtin.get(seat).copied().flatten().map(Bot::new)
                    }),
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

/// What every environment of a slice shares while it steps.
pub(super) struct Ctx<'a> {
    pub(super) config: &'a Config,
    pub(super) columns: Columns,
}

impl Ctx<'_> {
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
        for i in 0..self.envs.len() {
            // What the next environment's step reads first, loading while
            // this one steps.
            if let Some(next) = self.envs.get(i + 1) {
                next.prefetch();
            }
            ctx.step(
                self.first + i,
                &mut self.envs[i],
                &mut self.actions,
                actions,
            )?;
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
