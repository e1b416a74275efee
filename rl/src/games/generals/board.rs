//! One environment's game, whichever engine plays it: the competition
//! engine, the classic 1v1 engine or the classic multi-player one.

use arena_engine::generals::observe::compact::{CompactMut, Observe, Observer};
use arena_engine::generals::{self, Action, Generals};
use arena_engine::generals_classic::{self, GeneralsClassic, GeneralsClassicMulti, Mode, mapgen};
use arena_engine::replay::{Replay, ReplayTurn};
use arena_engine::{Game, Outcome};

/// Which engine plays a board, with its parameters.
#[derive(Clone, Debug)]
pub(super) enum BoardFormat {
    Competition(generals::Params),
    ClassicDuel(generals_classic::Params),
    Multi { mode: Mode, max_turns: u32 },
}

/// The largest board side each generator draws: the side views are padded
/// to by default.
pub(super) fn largest_side(format: &BoardFormat) -> usize {
    match format {
        BoardFormat::Competition(_) => generals::mapgen::MAX_SIDE,
        BoardFormat::ClassicDuel(_) | BoardFormat::Multi { .. } => {
            mapgen::MapOptions::default().max_side
        }
    }
}

/// One environment's game.
#[derive(Clone, Debug)]
pub(super) enum Board {
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
pub(super) use with_game;

impl Board {
    pub(super) fn new(format: &BoardFormat, seats: usize, seed: u64) -> Result<Board, String> {
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
    pub(super) fn parse(like: &Board, json: &[u8]) -> Result<Board, String> {
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
    pub(super) fn observe(
        &mut self,
        observer: &mut Observer,
        side: usize,
        out: CompactMut<'_>,
    ) -> Result<(), String> {
        match self {
            Board::Competition(g) => {
                let seen = observer.observe_changes(g, side, out, g.changes());
                g.clear_changes();
                seen
            }
            Board::Classic(g) => {
                let seen = observer.observe_changes(g, side, out, g.changes());
                g.clear_changes();
                seen
            }
            Board::Multi(g) => observer.observe(g, side, out),
        }
        .map_err(|e| e.to_string())
    }

    /// Starts loading what stepping and observing the board read first
    /// (the duels keep it scattered over a few allocations).
    pub(super) fn prefetch(&self) {
        match self {
            Board::Competition(g) => g.prefetch(),
            Board::Classic(g) => g.prefetch(),
            Board::Multi(_) => {}
        }
    }

    pub(super) fn game_name(&self) -> &'static str {
        with_game!(self, g => g.name())
    }

    pub(super) fn seat_count(&self) -> usize {
        with_game!(self, g => Game::seats(g))
    }

    pub(super) fn turn(&self) -> u32 {
        with_game!(self, g => g.turn())
    }

    pub(super) fn is_due(&self, seat: usize) -> bool {
        with_game!(self, g => g.is_due(seat))
    }

    pub(super) fn outcome(&self) -> Option<&Outcome> {
        with_game!(self, g => g.outcome())
    }

    pub(super) fn board_size(&self) -> (usize, usize) {
        with_game!(self, g => g.board_size())
    }

    pub(super) fn step(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
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

    pub(super) fn write_frame(&self, seat: usize, out: &mut Vec<u8>) {
        with_game!(self, g => g.write_frame(seat, out));
    }

    pub(super) fn write_handshake(&self, seat: usize, out: &mut Vec<u8>) {
        with_game!(self, g => g.write_handshake(seat, out));
    }

    pub(super) fn to_json(&self) -> Result<Vec<u8>, String> {
        with_game!(self, g => serde_json::to_vec(g)).map_err(|e| e.to_string())
    }

    /// The episode from `initial` to `self` as an Arena replay.
    pub(super) fn replay(
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
