//! The caller's arrays as one environment sees them, and what a step
//! writes there: every seat's observation, then the step's results.

use arena_engine::Outcome;
use arena_engine::generals::observe::adapters::totals;
use arena_engine::generals::observe::compact::{Compact, CompactMut};
use arena_engine::generals::observe::memory::{MAX_HISTORY, MEMORY_CHANNELS};
use arena_engine::generals::observe::{ObserveError, View, legal_mask, write_reference_rows};

use super::board::{Board, with_game};
use super::family::Config;
use super::slice::{Ctx, Env};
use super::{MAX_SEATS, TOTALS};
use crate::buffers::{Buffers, Column};
use crate::games::final_reward;
use crate::vec_env::EnvError;

/// The arrays, resolved once.
#[derive(Clone, Copy)]
pub(super) struct Columns {
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
    pub(super) fn of(buffers: &Buffers) -> Columns {
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

    /// Environment `env`'s compact rows.
    ///
    /// # Safety
    ///
    /// `env` must belong to the calling slice, and at most one `Rows` per
    /// environment may be live.
    pub(super) unsafe fn rows(&self, env: usize) -> Rows<'_> {
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

/// The rows of one environment, borrowed for one step.
pub(super) struct Rows<'a> {
    tile: &'a mut [u8],
    owner: &'a mut [u8],
    army: &'a mut [i32],
    header: &'a mut [i64],
}

impl Rows<'_> {
    pub(super) fn view(&self, config: &Config, seat: usize, board: &Board) -> View<'_> {
        let views = Compact {
            tile: self.tile,
            owner: self.owner,
            army: self.army,
            header: self.header,
        };
        with_game!(board, g => views.view(g, config.side, seat))
    }
}

impl Ctx<'_> {
    /// Writes environment `env_index`'s observations and info after its
    /// board changed, and its step results (`outcome` ends the episode).
    pub(super) fn publish(
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
    pub(super) fn remember(
        &self,
        env_index: usize,
        env: &mut Env,
        rows: &Rows<'_>,
    ) -> Result<(), EnvError> {
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
}
