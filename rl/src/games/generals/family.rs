//! A configured generals environment: the checked request, the spec of
//! its arrays, and the family the vector environment opens.

use std::ops::Range;
use std::sync::Arc;

use arena_engine::generals;
use arena_engine::generals::observe::actions::ActionSpace;
use arena_engine::generals::observe::memory::{MAX_HISTORY, MEMORY_CHANNELS};
use arena_engine::generals::observe::{HeaderLayout, reference_channels};
use arena_engine::generals::scripted::ScriptedRules;
use arena_engine::generals_classic::{self, Format};
use arena_engine::registry::GameEntry;

use super::action::check_action;
use super::board::{BoardFormat, largest_side};
use super::slice::GeneralsSlice;
use super::{ACTION_FIELDS, TOTALS};
use crate::buffers::Buffers;
use crate::games::{Builtin, Family, Request};
use crate::slice::Slice;
use crate::spec::{ArraySpec, Dtype, EnvSpec, Group};
use crate::vec_env::{Actions, EnvError};

/// Everything fixed for a configured environment.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) format: BoardFormat,
    pub(super) game: &'static str,
    pub(super) seats: usize,
    pub(super) side: usize,
    pub(super) space: ActionSpace,
    pub(super) channels: usize,
    pub(super) reference: bool,
    pub(super) masks: bool,
    pub(super) memory: bool,
    /// The built-in player of each seat the caller does not play.
    pub(super) builtin: Vec<Option<Builtin>>,
    pub(super) record: bool,
    pub(super) rules: ScriptedRules,
    pub(super) build_base_cost: u32,
    pub(super) spec: EnvSpec,
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

pub(super) fn spec(
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
