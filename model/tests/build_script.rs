//! `bots/ants-models/build.py` and `bots/generals-models/build.py`
//! reproduce the committed model directories byte for byte (they need
//! python3 with the `onnx` package: `pip install onnx`; without it these
//! tests fail and say so).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bots() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bots")
}

/// Every file under `root/<set>` and `root/test/<set>`, by path relative
/// to `root` (the build script itself left out).
fn files(root: &Path, set: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    for top in [set.to_owned(), format!("test/{set}")] {
        let Ok(dirs) = std::fs::read_dir(root.join(top)) else {
            continue;
        };
        for dir in dirs {
            let dir = dir.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&dir).unwrap() {
                let path = file.unwrap().path();
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                found.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    found
}

/// Runs `<set>/build.py` into a scratch directory and compares every file
/// it writes with the committed ones.
fn reproduces(set: &str, at_least: usize) {
    let probe = Command::new("python3").args(["-c", "import onnx"]).output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 cannot import onnx (pip install onnx): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("python3 is needed to rebuild the models: {e}"),
    }
    let out = tempfile::tempdir().unwrap();
    let script = bots().join(set).join("build.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg("--bots")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success(), "{} failed: {status}", script.display());
    let built = files(out.path(), set);
    let committed = files(&bots(), set);
    assert!(
        built.len() >= at_least,
        "{:?}",
        built.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        built.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>(),
        "the committed directories and the script's differ"
    );
    for (path, bytes) in &built {
        assert!(
            committed[path] == *bytes,
            "{} differs from what the script writes: run python3 {}",
            path.display(),
            script.display()
        );
        assert!(bytes.len() < 1 << 20, "{} is over 1 MB", path.display());
    }
}

#[test]
fn the_build_script_reproduces_the_committed_models() {
    reproduces("ants-models", 16);
}

#[test]
fn the_generals_build_script_reproduces_the_committed_models() {
    reproduces("generals-models", 6);
}
