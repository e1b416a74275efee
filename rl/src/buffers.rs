//! The caller's arrays as raw parts.
//!
//! The binding allocates every array of an [`EnvSpec`] once (NumPy arrays,
//! or vectors in tests) and hands their addresses here; the environments
//! then write into them in place on every step. Each environment's row of
//! each array is written by the one thread that owns that environment, so
//! threads never share a byte.

use std::collections::BTreeMap;

use crate::spec::{Dtype, EnvSpec};

/// One array's address and size.
#[derive(Clone, Copy, Debug)]
struct RawArray {
    ptr: *mut u8,
    dtype: Dtype,
    /// Elements per environment.
    row: usize,
}

/// Every array of an environment, by name.
#[derive(Clone, Debug)]
pub struct Buffers {
    arrays: BTreeMap<&'static str, RawArray>,
}

// SAFETY: the pointers are only dereferenced through `row`, whose contract
// gives each environment's rows to one thread at a time.
unsafe impl Send for Buffers {}
unsafe impl Sync for Buffers {}

/// Why the given arrays do not fit the spec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    #[error("no array given for {0:?}")]
    Missing(&'static str),
    #[error("array {name:?} has {got} bytes, expected {expected}")]
    Size {
        name: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("array {name:?} is not aligned for {dtype}")]
    Alignment {
        name: &'static str,
        dtype: &'static str,
    },
}

/// An element type that may live in a buffer of a given [`Dtype`].
pub trait Element: Copy {
    const DTYPES: &'static [Dtype];
}

impl Element for u8 {
    const DTYPES: &'static [Dtype] = &[Dtype::U8, Dtype::Bool];
}
impl Element for i32 {
    const DTYPES: &'static [Dtype] = &[Dtype::I32];
}
impl Element for i64 {
    const DTYPES: &'static [Dtype] = &[Dtype::I64];
}
impl Element for u64 {
    const DTYPES: &'static [Dtype] = &[Dtype::U64];
}
impl Element for f32 {
    const DTYPES: &'static [Dtype] = &[Dtype::F32];
}

impl Buffers {
    /// The arrays `lookup` gives for every array of `spec`, checked for
    /// presence, size and alignment.
    ///
    /// # Safety
    ///
    /// Each pointer must address `len` writable bytes that stay valid, and
    /// that nothing else writes or reads while an environment step runs, for
    /// as long as the returned value or any [`crate::VecEnv`] built on it
    /// lives.
    pub unsafe fn from_raw(
        spec: &EnvSpec,
        mut lookup: impl FnMut(&str) -> Option<(*mut u8, usize)>,
    ) -> Result<Buffers, BufferError> {
        let mut arrays = BTreeMap::new();
        for array in &spec.arrays {
            let (ptr, len) = lookup(array.name).ok_or(BufferError::Missing(array.name))?;
            let expected = array.len() * array.dtype.size();
            if len != expected {
                return Err(BufferError::Size {
                    name: array.name,
                    got: len,
                    expected,
                });
            }
            if !(ptr as usize).is_multiple_of(array.dtype.size()) {
                return Err(BufferError::Alignment {
                    name: array.name,
                    dtype: array.dtype.name(),
                });
            }
            arrays.insert(
                array.name,
                RawArray {
                    ptr,
                    dtype: array.dtype,
                    row: array.row_len(),
                },
            );
        }
        Ok(Buffers { arrays })
    }

    /// Whether the spec has an array called `name`.
    pub fn has(&self, name: &str) -> bool {
        self.arrays.contains_key(name)
    }

    /// Array `name` as rows of `T`; `None` when there is no such array or
    /// it holds another type.
    pub(crate) fn column<T: Element>(&self, name: &str) -> Option<Column<T>> {
        let array = self.arrays.get(name)?;
        T::DTYPES.contains(&array.dtype).then_some(Column {
            ptr: array.ptr as *mut T,
            row: array.row,
        })
    }
}

/// One array of a [`Buffers`], resolved once so that a step reaches an
/// environment's row by pointer arithmetic alone.
#[derive(Debug)]
pub(crate) struct Column<T> {
    ptr: *mut T,
    /// Elements per environment.
    row: usize,
}

impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Column<T> {}

// SAFETY: as for `Buffers`: rows are handed out under `row`'s contract.
unsafe impl<T> Send for Column<T> {}

impl<T> Column<T> {
    /// Environment `env`'s row.
    ///
    /// # Safety
    ///
    /// `env` must be below the spec's environment count, and no other live
    /// reference may cover the same row: each environment belongs to one
    /// slice, and a slice holds at most one reference to each row at a time.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn row(&self, env: usize) -> &mut [T] {
        // SAFETY: inside the array (sizes checked at construction, env
        // in range), aligned (checked), exclusive by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(env * self.row), self.row) }
    }
}

/// Vectors that back every array of a spec, for tests and Rust callers.
pub struct OwnedArrays {
    storage: BTreeMap<&'static str, Vec<u64>>,
    sizes: BTreeMap<&'static str, usize>,
}

impl OwnedArrays {
    /// Zeroed storage for every array of `spec` (8-byte aligned).
    pub fn new(spec: &EnvSpec) -> OwnedArrays {
        let mut storage = BTreeMap::new();
        let mut sizes = BTreeMap::new();
        for array in &spec.arrays {
            let bytes = array.len() * array.dtype.size();
            storage.insert(array.name, vec![0u64; bytes.div_ceil(8)]);
            sizes.insert(array.name, bytes);
        }
        OwnedArrays { storage, sizes }
    }

    /// The buffers over this storage.
    ///
    /// # Safety
    ///
    /// `self` must outlive the buffers and every environment built on them,
    /// and must not be read while a step runs.
    pub unsafe fn buffers(&mut self, spec: &EnvSpec) -> Result<Buffers, BufferError> {
        let sizes = &self.sizes;
        let storage = &mut self.storage;
        // SAFETY: the storage holds exactly `sizes[name]` bytes per array and
        // lives as long as the caller promises.
        unsafe {
            Buffers::from_raw(spec, |name| {
                let bytes = *sizes.get(name)?;
                let vec = storage.get_mut(name)?;
                Some((vec.as_mut_ptr() as *mut u8, bytes))
            })
        }
    }

    /// Array `name` read as `T`s.
    pub fn get<T: Element>(&self, name: &str) -> &[T] {
        let bytes = self.sizes.get(name).copied().unwrap_or(0);
        match self.storage.get(name) {
            // SAFETY: 8-byte aligned storage of at least `bytes` bytes, read
            // as plain integers or floats (every bit pattern is valid).
            Some(vec) => unsafe {
                std::slice::from_raw_parts(vec.as_ptr() as *const T, bytes / size_of::<T>())
            },
            None => &[],
        }
    }
}
