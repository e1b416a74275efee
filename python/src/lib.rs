//! The native module of `arena_rl`: a thin binding over the `arena-rl`
//! crate. It allocates the NumPy arrays an environment writes (once, for
//! the environment's life), turns Python arguments into the crate's types
//! and its errors into `ValueError`s, and releases the GIL while the
//! environments step. Every rule and every number is decided in Rust, in
//! `arena-rl` and the engine; the Python package around this module adds
//! the conventions of Gymnasium and PettingZoo.

use std::collections::BTreeMap;

use arena_engine::registry::{RuleValue, Rules};
use arena_rl::buffers::Buffers;
use arena_rl::games::{Builtin, Request};
use arena_rl::slice::Query;
use arena_rl::spec::{Dtype, Group};
use arena_rl::{Actions, EnvError, ObsLayout, VecEnv};
use numpy::{Element, IxDyn, PyArray, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

fn value_error(e: EnvError) -> PyErr {
    match e {
        EnvError::Worker(_) | EnvError::Engine(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// One allocated array: the NumPy object, its raw parts and its group.
struct Allocated {
    array: Py<PyAny>,
    ptr: *mut u8,
    bytes: usize,
    group: Group,
}

fn allocate<'py, T: Element>(
    py: Python<'py>,
    shape: &[usize],
) -> (Bound<'py, PyAny>, *mut u8, usize) {
    let array = PyArray::<T, IxDyn>::zeros(py, IxDyn(shape), false);
    let bytes = array.len() * size_of::<T>();
    let ptr = array.data() as *mut u8;
    (array.into_any(), ptr, bytes)
}

/// The environments, as the Python package drives them.
#[pyclass(module = "arena_rl._native")]
struct NativeEnv {
    env: VecEnv,
    arrays: BTreeMap<&'static str, Allocated>,
}

// SAFETY: the raw pointers address memory of NumPy arrays this object keeps
// alive (`Allocated::array`); they are only written by the environment's
// slices during a call that holds `&mut self`.
unsafe impl Send for NativeEnv {}
unsafe impl Sync for NativeEnv {}

fn rules_from(options: Option<&Bound<'_, PyDict>>) -> PyResult<Rules> {
    let mut rules = BTreeMap::new();
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let key: String = key.extract()?;
            // bool first: in Python a bool is also an int.
            let value = if let Ok(b) = value.extract::<bool>() {
                RuleValue::Bool(b)
            } else if let Ok(i) = value.extract::<i64>() {
                RuleValue::Int(i)
            } else if let Ok(w) = value.extract::<String>() {
                RuleValue::Word(w)
            } else {
                return Err(PyValueError::new_err(format!(
                    "rules.{key}: expected a bool, an int or a word"
                )));
            };
            rules.insert(key, value);
        }
    }
    Ok(Rules(rules))
}

#[pymethods]
impl NativeEnv {
    #[new]
    #[pyo3(signature = (game, seats, num_envs, num_threads, options=None, side=None, reference=false, masks=false, memory=false, builtin=Vec::new(), record=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        game: &str,
        seats: usize,
        num_envs: usize,
        num_threads: usize,
        options: Option<&Bound<'_, PyDict>>,
        side: Option<usize>,
        reference: bool,
        masks: bool,
        memory: bool,
        builtin: Vec<(usize, String)>,
        record: bool,
    ) -> PyResult<NativeEnv> {
        let rules = rules_from(options)?;
        let builtin = builtin
            .into_iter()
            .map(|(seat, name)| {
                Builtin::from_name(&name).map(|b| (seat, b)).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "unknown built-in player {name:?} (available: scripted, random)"
                    ))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let request = Request {
            game,
            seats,
            rules: &rules,
            envs: num_envs,
            side,
            layout: ObsLayout {
                reference,
                masks,
                memory,
            },
            builtin: &builtin,
            record,
        };
        let family = VecEnv::open(&request).map_err(value_error)?;
        let mut arrays = BTreeMap::new();
        for spec in &family.spec().arrays {
            let (array, ptr, bytes) = match spec.dtype {
                Dtype::Bool => allocate::<bool>(py, &spec.shape),
                Dtype::U8 => allocate::<u8>(py, &spec.shape),
                Dtype::I32 => allocate::<i32>(py, &spec.shape),
                Dtype::I64 => allocate::<i64>(py, &spec.shape),
                Dtype::U64 => allocate::<u64>(py, &spec.shape),
                Dtype::F32 => allocate::<f32>(py, &spec.shape),
            };
            arrays.insert(
                spec.name,
                Allocated {
                    array: array.unbind(),
                    ptr,
                    bytes,
                    group: spec.group,
                },
            );
        }
        // SAFETY: every pointer addresses a NumPy array of exactly `bytes`
        // bytes that `arrays` keeps alive as long as the environment, which
        // is stored beside it; NumPy never moves an array's data.
        let buffers = unsafe {
            Buffers::from_raw(family.spec(), |name| {
                arrays.get(name).map(|a| (a.ptr, a.bytes))
            })
        }
        .map_err(|e| value_error(e.into()))?;
        let env = VecEnv::new(family, num_threads, buffers).map_err(value_error)?;
        Ok(NativeEnv { env, arrays })
    }

    /// `{name: (array, group)}` for every array the environment writes;
    /// group is "obs", "step" or "info".
    fn arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, a) in &self.arrays {
            let group = match a.group {
                Group::Obs => "obs",
                Group::Step => "step",
                Group::Info => "info",
            };
            out.set_item(*name, (a.array.clone_ref(py), group))?;
        }
        Ok(out)
    }

    /// The environment's shape: game, seats, side, head entries per cell,
    /// reference channel names, scripted seats, thread count.
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let spec = self.env.spec();
        let out = PyDict::new(py);
        out.set_item("game", spec.game)?;
        out.set_item("num_envs", spec.envs)?;
        out.set_item("seats", spec.seats)?;
        out.set_item("side", spec.side)?;
        out.set_item("actions_per_cell", spec.actions_per_cell)?;
        out.set_item("action_fields", spec.action_fields)?;
        out.set_item("reference_channels", spec.reference_channels.clone())?;
        out.set_item("builtin", spec.builtin.clone())?;
        out.set_item("num_threads", self.env.threads())?;
        Ok(out)
    }

    #[pyo3(signature = (seed=None))]
    fn reset(&mut self, py: Python<'_>, seed: Option<u64>) -> PyResult<()> {
        let env = &mut self.env;
        py.detach(|| env.reset(seed)).map_err(value_error)
    }

    /// One step with five integers per seat, shape `(num_envs, seats, 5)`.
    fn step_fields(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArrayDyn<'_, i64>,
    ) -> PyResult<()> {
        let seats = self.env.spec().seats;
        let values = actions
            .as_slice()
            .map_err(|_| PyValueError::new_err("actions must be a C-contiguous int64 array"))?;
        let env = &mut self.env;
        py.detach(|| env.step(&Actions::Fields { values, seats }))
            .map_err(value_error)
    }

    /// One step with one flat head index per seat, shape `(num_envs, seats)`.
    fn step_flat(&mut self, py: Python<'_>, actions: PyReadonlyArrayDyn<'_, i64>) -> PyResult<()> {
        let seats = self.env.spec().seats;
        let values = actions
            .as_slice()
            .map_err(|_| PyValueError::new_err("actions must be a C-contiguous int64 array"))?;
        let env = &mut self.env;
        py.detach(|| env.step(&Actions::Flat { values, seats }))
            .map_err(value_error)
    }

    /// An episode of environment `env` as Arena replay JSON: the last one
    /// that finished, or (`finished=False`) the one in progress.
    #[pyo3(signature = (env, finished=true))]
    fn replay<'py>(
        &mut self,
        py: Python<'py>,
        env: usize,
        finished: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self
            .env
            .query(env, Query::Replay { finished })
            .map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The whole board of environment `env`, without fog, as the engine's JSON.
    fn state(&mut self, env: usize) -> PyResult<String> {
        self.text(env, Query::State)
    }

    /// The text frame the referee would send `seat` of environment `env` now.
    fn frame(&mut self, env: usize, seat: usize) -> PyResult<String> {
        self.text(env, Query::Frame { seat })
    }

    /// The handshake line `seat` of environment `env` is sent first.
    fn handshake(&mut self, env: usize, seat: usize) -> PyResult<String> {
        self.text(env, Query::Handshake { seat })
    }

    /// Why environment `env`'s last finished episode ended.
    fn reason(&mut self, env: usize) -> PyResult<String> {
        self.text(env, Query::Reason)
    }

    /// Starts environment `env` over from a state in the engine's JSON.
    fn load(&mut self, env: usize, state: &str) -> PyResult<()> {
        self.env
            .load(env, state.as_bytes().to_vec())
            .map_err(value_error)
    }
}

impl NativeEnv {
    fn text(&mut self, env: usize, query: Query) -> PyResult<String> {
        let bytes = self.env.query(env, query).map_err(value_error)?;
        String::from_utf8(bytes).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeEnv>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
