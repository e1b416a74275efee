//! Which submissions are model-graph bots, read off their archives, so that
//! matches with a model-graph seat go only to workers that run the
//! tournament's model runtime. The coordinator never evaluates a model
//! itself: it depends on no model crate, and a runtime is only ever a
//! string (such as `tract-onnx-0.23.9`) compared for equality.
//!
//! # The rule
//!
//! In a game whose limits carry model limits (a game that runs model-graph
//! seats), a submission is a model-graph bot when its archive's root holds
//! a regular file `model.onnx` and a regular file `bot.toml` (its manifest),
//! whatever else the directory holds (typically no `run.sh`). Anything
//! deeper in the tree, a symlink or a directory of either name does not
//! count. In a game without model limits no submission is a model-graph bot
//! (a `model.onnx` there is a process bot's own file).

use crate::archive_root::root_entries;

/// A model-graph bot's graph.
pub const MODEL_GRAPH: &str = "model.onnx";
/// A model-graph bot's manifest.
pub const MODEL_MANIFEST: &str = "bot.toml";

/// Whether the submission archive (a tar, as `arena_worker::submission::pack`
/// writes) is a model-graph bot by the rule in the [module docs](self). An
/// archive that does not parse is not one (the worker refuses it anyway,
/// as the submission's fault).
pub fn is_model_archive(archive: &[u8]) -> bool {
    let Some(entries) = root_entries(archive) else {
        return false;
    };
    let regular = |name: &str| entries.iter().any(|e| e.regular && e.name == name);
    regular(MODEL_GRAPH) && regular(MODEL_MANIFEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::archive_root::test_archive as archive;

    #[test]
    fn a_graph_with_its_manifest_at_the_root_is_a_model_bot() {
        use tar::EntryType::{Directory, Regular, Symlink};
        let yes = [
            archive(&[("model.onnx", Regular), ("bot.toml", Regular)]),
            archive(&[("./bot.toml", Regular), ("./model.onnx", Regular)]),
            archive(&[
                ("model.onnx", Regular),
                ("bot.toml", Regular),
                ("run.sh", Regular),
                ("notes", Directory),
                ("notes/train.py", Regular),
            ]),
        ];
        for a in &yes {
            assert!(is_model_archive(a));
        }
        let no = [
            archive(&[("model.onnx", Regular)]),
            archive(&[("bot.toml", Regular)]),
            archive(&[("run.sh", Regular), ("bot.toml", Regular)]),
            archive(&[("model.onnx", Symlink), ("bot.toml", Regular)]),
            archive(&[("model.onnx", Regular), ("bot.toml", Symlink)]),
            archive(&[("model.onnx", Directory), ("bot.toml", Regular)]),
            archive(&[
                ("sub", Directory),
                ("sub/model.onnx", Regular),
                ("bot.toml", Regular),
            ]),
            archive(&[("bot.wasm", Regular), ("bot.toml", Regular)]),
            Vec::new(),
            vec![7u8; 1024],
        ];
        for a in &no {
            assert!(!is_model_archive(a));
        }
    }
}
