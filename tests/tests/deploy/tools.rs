//! The external tools, found on PATH (or named by an environment variable);
//! a missing one is a failure with the package to install, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::arena::workspace;

fn find(program: &str, override_var: &str, package: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(override_var) {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{program}` is not installed (not on PATH, and {override_var} is unset): \
                 these tests need it; install it with `apt-get install -y {package}`"
            )
        })
}

pub fn kubectl() -> PathBuf {
    find("kubectl", "ARENA_KUBECTL", "kubernetes-client")
}

pub fn promtool() -> PathBuf {
    find("promtool", "ARENA_PROMTOOL", "prometheus")
}

pub fn prometheus() -> PathBuf {
    find("prometheus", "ARENA_PROMETHEUS", "prometheus")
}

/// `deploy/<relative>` in the workspace.
pub fn deploy(relative: &str) -> PathBuf {
    workspace().join("deploy").join(relative)
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Runs `command` and returns its stdout; panics with its stderr on failure.
pub fn output(mut command: Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `kubectl kustomize deploy/<relative>`.
pub fn kustomize(relative: &str) -> String {
    let mut command = Command::new(kubectl());
    command.arg("kustomize").arg(deploy(relative));
    output(command)
}
