//! `bots/ants-models/build.py` reproduces the committed model directories
//! byte for byte (it needs python3 with the `onnx` package: `pip install
//! onnx`; without it this test fails and says so).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bots() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bots")
}

/// Every file under `root/ants-models` and `root/test/ants-models`, by path
/// relative to `root` (the build script itself left out).
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    for top in ["ants-models", "test/ants-models"] {
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

#[test]
fn the_build_script_reproduces_the_committed_models() {
    let probe = Command::new("python3").args(["-c", "import onnx"]).output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 cannot import onnx (pip install onnx): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("python3 is needed to rebuild the Ants models: {e}"),
    }
    let out = tempfile::tempdir().unwrap();
    let status = Command::new("python3")
        .arg(bots().join("ants-models/build.py"))
        .arg("--bots")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success(), "build.py failed: {status}");
    let built = files(out.path());
    let committed = files(&bots());
    assert!(built.len() >= 16, "{:?}", built.keys().collect::<Vec<_>>());
    assert_eq!(
        built.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>(),
        "the committed directories and the script's differ"
    );
    for (path, bytes) in &built {
        assert!(
            committed[path] == *bytes,
            "{} differs from what build.py writes: run python3 bots/ants-models/build.py",
            path.display()
        );
        assert!(bytes.len() < 1 << 20, "{} is over 1 MB", path.display());
    }
}
