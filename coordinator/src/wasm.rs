//! Which submissions are WebAssembly bots, read off their archives, so that
//! matches with a WebAssembly seat go only to workers that run the
//! tournament's wasm runtime. The coordinator never runs wasm itself: it
//! depends on no wasm engine, and a runtime is only ever a string (the
//! fingerprint `arena_wasm::fingerprint` makes, such as
//! `wasmtime-48.0.8-1a2b3c4d5e6f7a8b`) compared for equality.
//!
//! # The rule
//!
//! In a game whose limits carry fuel (a game that runs WebAssembly seats),
//! a submission is a WebAssembly bot when its archive's root holds
//!
//! - a regular file `bot.wasm` (shipped; a worker then plays the module,
//!   whatever else the directory holds), or
//! - a regular file `build.sh` and no `run.sh` at all (its build may only
//!   make a `bot.wasm`: a worker would refuse a built tree with neither).
//!
//! That is the worker's own reading (`arena_worker::launcher`'s
//! `has_wasm_module` and `entry_may_be_built`), taken before the build, so
//! a `build.sh`-only bot counts as WebAssembly before anyone built it. In a
//! game without fuel no submission is a WebAssembly bot (a `bot.wasm` there
//! is a process bot's own file).

use crate::archive_root::root_entries;

/// A WebAssembly bot's module.
pub const WASM_MODULE: &str = "bot.wasm";
const BUILD_SCRIPT: &str = "build.sh";
const RUN_SCRIPT: &str = "run.sh";

/// Whether the submission archive (a tar, as `arena_worker::submission::pack`
/// writes) is a WebAssembly bot by the rule in the [module docs](self). An
/// archive that does not parse is not one (the worker refuses it anyway,
/// as the submission's fault).
pub fn is_wasm_archive(archive: &[u8]) -> bool {
    let Some(entries) = root_entries(archive) else {
        return false;
    };
    let mut module = false;
    let mut build = false;
    let mut run = false;
    for entry in entries {
        match entry.name.as_str() {
            WASM_MODULE => module |= entry.regular,
            BUILD_SCRIPT => build |= entry.regular,
            // Any entry named run.sh, usable or not, makes it a process bot.
            RUN_SCRIPT => run = true,
            _ => {}
        }
    }
    module || (build && !run)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::archive_root::test_archive as archive;

    #[test]
    fn a_shipped_module_or_a_build_without_run_sh_is_webassembly() {
        use tar::EntryType::{Directory, Regular, Symlink};
        let yes = [
            archive(&[("bot.wasm", Regular)]),
            archive(&[("./bot.wasm", Regular)]),
            archive(&[("bot.wasm", Regular), ("run.sh", Regular)]),
            archive(&[("bot.c", Regular), ("build.sh", Regular)]),
        ];
        for a in &yes {
            assert!(is_wasm_archive(a));
        }
        let no = [
            archive(&[("run.sh", Regular)]),
            archive(&[("build.sh", Regular), ("run.sh", Regular)]),
            // A broken run.sh is still a process bot's (a refused one).
            archive(&[("build.sh", Regular), ("run.sh", Symlink)]),
            archive(&[("bot.wasm", Symlink), ("run.sh", Regular)]),
            archive(&[("bot.wasm", Directory)]),
            archive(&[
                ("sub", Directory),
                ("sub/bot.wasm", Regular),
                ("run.sh", Regular),
            ]),
            archive(&[("sub/build.sh", Regular)]),
            Vec::new(),
            vec![7u8; 1024],
        ];
        for a in &no {
            assert!(!is_wasm_archive(a));
        }
    }
}
