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

use std::path::{Component, Path};

/// A WebAssembly bot's module.
pub const WASM_MODULE: &str = "bot.wasm";
const BUILD_SCRIPT: &str = "build.sh";
const RUN_SCRIPT: &str = "run.sh";

/// Whether the submission archive (a tar, as `arena_worker::submission::pack`
/// writes) is a WebAssembly bot by the rule in the [module docs](self). An
/// archive that does not parse is not one (the worker refuses it anyway,
/// as the submission's fault).
pub fn is_wasm_archive(archive: &[u8]) -> bool {
    let mut module = false;
    let mut build = false;
    let mut run = false;
    let mut reader = tar::Archive::new(archive);
    let Ok(entries) = reader.entries() else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        let Ok(path) = entry.path() else {
            return false;
        };
        let Some(name) = root_name(&path) else {
            continue;
        };
        let regular = entry.header().entry_type() == tar::EntryType::Regular;
        match name {
            WASM_MODULE => module |= regular,
            BUILD_SCRIPT => build |= regular,
            // Any entry named run.sh, usable or not, makes it a process bot.
            RUN_SCRIPT => run = true,
            _ => {}
        }
    }
    module || (build && !run)
}

/// The name of an entry at the archive's root (`bot.wasm`, `./bot.wasm`);
/// `None` for anything deeper. Shared with [`crate::model_graph`].
pub(crate) fn root_name(path: &Path) -> Option<&str> {
    let mut names = path.components().filter(|c| *c != Component::CurDir);
    match (names.next(), names.next()) {
        (Some(Component::Normal(name)), None) => name.to_str(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar of `(path, kind)`, every file empty.
    fn archive(entries: &[(&str, tar::EntryType)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, kind) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(0);
            header.set_mode(0o755);
            if *kind == tar::EntryType::Symlink {
                builder.append_link(&mut header, path, "elsewhere").unwrap();
            } else {
                builder
                    .append_data(&mut header, path, std::io::empty())
                    .unwrap();
            }
        }
        builder.into_inner().unwrap()
    }

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
