//! Checking a submitted module and compiling it once.
//!
//! A module is checked when its submission is built, offline: it must be a
//! valid module this engine compiles, a WASI command (`_start` and a
//! `memory` export) that imports nothing but WASI functions, and its
//! declared memory and tables must fit the host's limits. A module that
//! fails is the submission's fault (`build_failed`, with the reason).
//!
//! Compiling untrusted input takes unbounded memory and time (a module of a
//! million small functions takes gigabytes), so the worker never compiles
//! in its own process: [`serve`] is `arena wasm-compile`, run confined as
//! the seat itself is, and its output is only ever loaded by the wasm host
//! in that same confinement (loading compiled code is as trusted as running
//! it, and the host runs nothing a process bot could not).
//!
//! The compiled code goes into the [`ModuleCache`] under the module's
//! SHA-256 and the engine's [`fingerprint`](crate::fingerprint): compiled
//! once per module, wasmtime version and configuration.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::{Engine, ExternType, Module, ValType};

use crate::config::{HostLimits, fingerprint};
use crate::wasi;

/// The largest module accepted, in bytes.
pub const MAX_MODULE_BYTES: usize = 64 << 20;
/// The WebAssembly page size.
const PAGE: u64 = 64 * 1024;
/// `arena wasm-compile`'s exit status when the module cannot be a bot (the
/// reason is on its stderr).
pub const REFUSED_EXIT: u8 = 3;

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The module cannot be a bot: the participant's to fix.
    #[error("{0}")]
    Refused(String),
    /// The cache could not be written or read: the host's problem.
    #[error("{what} {path}")]
    Cache {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The module's SHA-256, in hex: its name in the cache.
pub fn module_hash(wasm: &[u8]) -> String {
    Sha256::digest(wasm)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Refuses a module over [`MAX_MODULE_BYTES`] before anything reads it.
pub fn check_size(wasm: &[u8]) -> Result<(), CompileError> {
    if wasm.len() > MAX_MODULE_BYTES {
        return Err(CompileError::Refused(format!(
            "bot.wasm is {} bytes; the most accepted is {MAX_MODULE_BYTES}",
            wasm.len()
        )));
    }
    Ok(())
}

/// Compiles `wasm` and checks it can run as a bot under `limits`.
pub fn check(engine: &Engine, wasm: &[u8], limits: &HostLimits) -> Result<Module, CompileError> {
    check_size(wasm)?;
    let module = Module::new(engine, wasm)
        .map_err(|e| CompileError::Refused(format!("bot.wasm is not a usable module: {e:#}")))?;
    check_imports(&module)?;
    check_exports(&module)?;
    check_declared_sizes(&module, limits)?;
    Ok(module)
}

/// Checks `wasm` as [`check`] does and returns its compiled form.
pub fn compile(engine: &Engine, wasm: &[u8], limits: &HostLimits) -> Result<Vec<u8>, CompileError> {
    let module = check(engine, wasm, limits)?;
    module
        .serialize()
        .map_err(|e| CompileError::Refused(format!("bot.wasm compiled but cannot be saved: {e:#}")))
}

/// What [`serve`] ended with.
#[derive(Debug)]
pub enum Served {
    /// The compiled module was written.
    Compiled,
    /// The module cannot be a bot; the reason was written to the log.
    Refused,
}

/// `arena wasm-compile`: reads a module from `input` (to its end), writes
/// its compiled form to `output`, or the reason it is refused to `log`.
pub fn serve(
    engine: &Engine,
    limits: &HostLimits,
    input: &mut impl Read,
    output: &mut impl Write,
    log: &mut impl Write,
) -> std::io::Result<Served> {
    let mut wasm = Vec::new();
    input
        .take(MAX_MODULE_BYTES as u64 + 1)
        .read_to_end(&mut wasm)?;
    match compile(engine, &wasm, limits) {
        Ok(compiled) => {
            output.write_all(&compiled)?;
            output.flush()?;
            Ok(Served::Compiled)
        }
        Err(e) => {
            writeln!(log, "{e}")?;
            Ok(Served::Refused)
        }
    }
}

fn check_imports(module: &Module) -> Result<(), CompileError> {
    for import in module.imports() {
        let what = format!("{}::{}", import.module(), import.name());
        if import.module() != wasi::MODULE {
            return Err(CompileError::Refused(format!(
                "bot.wasm imports {what}; only {} functions are provided",
                wasi::MODULE
            )));
        }
        let ExternType::Func(ty) = import.ty() else {
            return Err(CompileError::Refused(format!(
                "bot.wasm imports {what} as something other than a function"
            )));
        };
        let known = wasi::signature(import.name());
        let matches = match known {
            Some((params, results)) => {
                ty.params().map(|p| kind(&p)).eq(params.iter().copied())
                    && ty.results().map(|r| kind(&r)).eq(results.iter().copied())
            }
            // Functions the host does not implement answer ENOSYS, which
            // needs the usual WASI shape: an errno result.
            None => ty.results().map(|r| kind(&r)).eq([wasi::Kind::I32]),
        };
        if !matches {
            return Err(CompileError::Refused(format!(
                "bot.wasm imports {what} with a signature WASI does not have"
            )));
        }
    }
    Ok(())
}

fn kind(ty: &ValType) -> wasi::Kind {
    match ty {
        ValType::I32 => wasi::Kind::I32,
        ValType::I64 => wasi::Kind::I64,
        _ => wasi::Kind::Other,
    }
}

fn check_exports(module: &Module) -> Result<(), CompileError> {
    match module.get_export("_start") {
        Some(ExternType::Func(ty)) if ty.params().len() == 0 && ty.results().len() == 0 => {}
        _ => {
            return Err(CompileError::Refused(
                "bot.wasm has no `_start` function: build it as a WASI command (a `main`)"
                    .to_owned(),
            ));
        }
    }
    match module.get_export("memory") {
        Some(ExternType::Memory(_)) => Ok(()),
        _ => Err(CompileError::Refused(
            "bot.wasm exports no `memory`".to_owned(),
        )),
    }
}

/// A module whose initial memory or tables already exceed the limits can
/// never start; say so at build time rather than as a trap in every match.
fn check_declared_sizes(module: &Module, limits: &HostLimits) -> Result<(), CompileError> {
    let mut memory = 0u64;
    let mut elements = 0u64;
    for export in module.exports() {
        match export.ty() {
            ExternType::Memory(ty) => {
                if ty.is_64() || ty.is_shared() {
                    return Err(CompileError::Refused(
                        "bot.wasm uses a 64-bit or shared memory, which the host does not run"
                            .to_owned(),
                    ));
                }
                memory = memory.saturating_add(ty.minimum().saturating_mul(PAGE));
            }
            ExternType::Table(ty) => elements = elements.saturating_add(ty.minimum()),
            _ => {}
        }
    }
    if memory > limits.memory_bytes as u64 {
        return Err(CompileError::Refused(format!(
            "bot.wasm starts with {memory} bytes of memory; the limit is {}",
            limits.memory_bytes
        )));
    }
    if elements > limits.table_elements as u64 {
        return Err(CompileError::Refused(format!(
            "bot.wasm starts with {elements} table elements; the limit is {}",
            limits.table_elements
        )));
    }
    Ok(())
}

/// Compiled modules on disk, one file per (module, engine fingerprint).
pub struct ModuleCache {
    dir: PathBuf,
    engine: Engine,
    fingerprint: String,
}

impl ModuleCache {
    /// A cache in `dir` (made when first written) for `engine`.
    pub fn new(dir: impl Into<PathBuf>, engine: Engine) -> Self {
        let fingerprint = fingerprint(&engine);
        Self {
            dir: dir.into(),
            engine,
            fingerprint,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Where the compiled form of the module with this hash lives.
    pub fn artifact_path(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("{hash}-{}.cwasm", self.fingerprint))
    }

    /// The compiled module with this hash, when the cache has it.
    pub fn find(&self, hash: &str) -> Option<PathBuf> {
        let path = self.artifact_path(hash);
        path.is_file().then_some(path)
    }

    /// Stores `compiled` as the compiled form of the module with this hash;
    /// returns its path. A reader never sees half of it.
    pub fn store(&self, hash: &str, compiled: &[u8]) -> Result<PathBuf, CompileError> {
        let path = self.artifact_path(hash);
        write_atomically(&self.dir, &path, compiled)?;
        Ok(path)
    }

    /// Reads a compiled module this cache wrote. Fails on a path outside
    /// the cache, so nothing else is ever taken for compiled code.
    pub fn read_artifact(&self, path: &Path) -> Result<Vec<u8>, CompileError> {
        let inside = path.parent() == Some(self.dir.as_path())
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&format!("-{}.cwasm", self.fingerprint)));
        if !inside {
            return Err(CompileError::Cache {
                what: "refusing to load compiled code from outside the cache:",
                path: path.to_owned(),
                source: std::io::Error::other("not a cache entry"),
            });
        }
        fs::read(path).map_err(|source| CompileError::Cache {
            what: "reading",
            path: path.to_owned(),
            source,
        })
    }
}

/// Writes `bytes` to `path` by way of a temporary file in `dir`, so a
/// reader never sees half an artifact.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    let error = |what, source| CompileError::Cache {
        what,
        path: path.to_owned(),
        source,
    };
    fs::create_dir_all(dir).map_err(|e| error("creating the directory of", e))?;
    let mut file = tempfile_in(dir).map_err(|e| error("creating a temporary file for", e))?;
    file.1
        .write_all(bytes)
        .and_then(|()| file.1.sync_all())
        .map_err(|e| error("writing", e))?;
    fs::rename(&file.0, path).map_err(|e| {
        let _ = fs::remove_file(&file.0);
        error("moving into place", e)
    })
}

/// A new file in `dir` with a name no other writer uses.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        ".tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let file = fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((path, file))
}
