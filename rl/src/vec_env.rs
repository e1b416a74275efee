//! The environment the binding exposes: many boards of one game, stepped
//! together, observations written in place.

use std::ops::Range;

use crate::buffers::{BufferError, Buffers};
use crate::games::{self, Family, Request};
use crate::pool::Runner;
use crate::slice::Query;
use crate::spec::EnvSpec;

/// One step's actions for every environment and seat, in either form.
#[derive(Clone, Copy, Debug)]
pub enum Actions<'a> {
    /// Five integers per seat, `[pass, row, col, dir, split]`, laid out
    /// `(envs, seats, 5)`.
    Fields { values: &'a [i64], seats: usize },
    /// One flat index into the seat's action head per seat, `(envs, seats)`.
    Flat { values: &'a [i64], seats: usize },
}

/// What went wrong, for the caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// The game, seats, options or layout asked for do not fit.
    #[error("{0}")]
    Config(String),
    #[error("actions: {0}")]
    Shape(String),
    #[error("environment {env}, seat {seat}: {reason}")]
    Action {
        env: usize,
        seat: usize,
        reason: String,
    },
    #[error("no environment {0}")]
    Env(usize),
    #[error("no seat {seat}: the game has {seats}")]
    Seat { seat: usize, seats: usize },
    #[error("environment {0} has not finished an episode yet")]
    NoEpisode(usize),
    #[error("the state cannot be loaded: {0}")]
    State(String),
    #[error(transparent)]
    Buffers(#[from] BufferError),
    /// The engine refused something it was handed (a bug, or a board that
    /// does not fit the view).
    #[error("engine: {0}")]
    Engine(String),
    #[error("{0}")]
    Worker(String),
}

/// A request plus how many threads should step it.
#[derive(Clone, Debug)]
pub struct Config<'a> {
    pub request: Request<'a>,
    pub threads: usize,
}

/// Many environments of one game.
pub struct VecEnv {
    family: Box<dyn Family>,
    spec: EnvSpec,
    runner: Runner,
    ready: bool,
}

/// Splits `envs` into `parts` contiguous runs as even as possible.
fn split(envs: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, envs.max(1));
    let (base, extra) = (envs / parts, envs % parts);
    let mut start = 0;
    (0..parts)
        .map(|p| {
            let len = base + usize::from(p < extra);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

impl VecEnv {
    /// The configured game, whose spec says which arrays to allocate.
    pub fn open(request: &Request<'_>) -> Result<Box<dyn Family>, EnvError> {
        if request.envs == 0 {
            return Err(EnvError::Config("num_envs must be at least 1".to_owned()));
        }
        games::open(request)
    }

    /// The environments of `family`, writing into `buffers`, stepped by
    /// `threads` threads (at most one per environment). Call
    /// [`VecEnv::reset`] before the first step.
    pub fn new(
        family: Box<dyn Family>,
        threads: usize,
        buffers: Buffers,
    ) -> Result<VecEnv, EnvError> {
        let spec = family.spec().clone();
        if threads == 0 {
            return Err(EnvError::Config(
                "num_threads must be at least 1".to_owned(),
            ));
        }
        let slices = split(spec.envs, threads)
            .into_iter()
            .map(|range| (range.clone(), family.slice(range, buffers.clone())))
            .collect();
        Ok(VecEnv {
            runner: Runner::new(slices)?,
            family,
            spec,
            ready: false,
        })
    }

    pub fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    pub fn threads(&self) -> usize {
        self.runner.threads()
    }

    /// A new episode in every environment; with `seed`, every environment's
    /// stream of boards restarts from it.
    pub fn reset(&mut self, seed: Option<u64>) -> Result<(), EnvError> {
        self.runner.reset(seed)?;
        self.ready = true;
        Ok(())
    }

    /// One step of every environment. Every action a seat sends is checked
    /// before any environment moves, so a bad action changes nothing.
    pub fn step(&mut self, actions: &Actions<'_>) -> Result<(), EnvError> {
        if !self.ready {
            return Err(EnvError::Config("call reset() before step()".to_owned()));
        }
        let (values, seats, per_seat) = match *actions {
            Actions::Fields { values, seats } => (values, seats, self.spec.action_fields),
            Actions::Flat { values, seats } => (values, seats, 1),
        };
        let expected = self.spec.envs * self.spec.seats * per_seat;
        if seats != self.spec.seats || values.len() != expected {
            return Err(EnvError::Shape(format!(
                "{} values for {} seats, expected {expected} ({} environments × {} seats × {per_seat})",
                values.len(),
                seats,
                self.spec.envs,
                self.spec.seats
            )));
        }
        // The built-in players' seats are never read, so never checked.
        for env in 0..self.spec.envs {
            for seat in (0..self.spec.seats).filter(|s| !self.spec.builtin.contains(s)) {
                self.family
                    .check_action(actions, env, seat)
                    .map_err(|reason| EnvError::Action { env, seat, reason })?;
            }
        }
        self.runner.step(actions)
    }

    /// Answers `query` about environment `env`.
    pub fn query(&mut self, env: usize, query: Query) -> Result<Vec<u8>, EnvError> {
        if env >= self.spec.envs {
            return Err(EnvError::Env(env));
        }
        self.runner.query(env, query)
    }

    /// Starts environment `env` over from a state (the engine's JSON).
    pub fn load(&mut self, env: usize, state: Vec<u8>) -> Result<(), EnvError> {
        if env >= self.spec.envs {
            return Err(EnvError::Env(env));
        }
        self.runner.load(env, state)?;
        self.ready = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_are_contiguous_and_even() {
        assert_eq!(split(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(split(2, 8), vec![0..1, 1..2]);
        assert_eq!(split(5, 1), vec![0..5]);
    }
}
