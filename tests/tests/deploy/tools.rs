//! The external tools, found on PATH (or named by an environment variable);
//! a missing one is a failure with the package to install, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::arena::workspace;
use crate::support::process::output;

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

/// `kubectl kustomize deploy/<relative>`.
pub fn kustomize(relative: &str) -> String {
    let mut command = Command::new(kubectl());
    command.arg("kustomize").arg(deploy(relative));
    output(command)
}
