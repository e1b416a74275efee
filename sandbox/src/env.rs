//! The runtime environment a confined process sees: a list of host paths
//! bound read-only at the same place in its fresh root.
//!
//! Either the host's own system directories (development, and hosts without
//! Nix), or exactly a Nix closure given as a store-paths file.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Host paths bound by default: the system's programs and libraries and the
/// few files under /etc that programs read at startup.
pub const HOST_DEFAULT_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/ssl",
    "/etc/ca-certificates",
];

/// Where the paths came from; part of the environment's identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvSource {
    Host,
    StorePaths,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeEnv {
    pub source: EnvSource,
    /// Absolute host paths, each bound read-only at the same path.
    pub paths: Vec<PathBuf>,
    /// Directories searched for programs, in order (the `PATH` inside).
    pub bin_dirs: Vec<PathBuf>,
    /// Symlinks made inside as (link, target): the conventional `/bin/sh`
    /// and `/usr/bin/env` that scripts name in their `#!` line, pointing into
    /// a store-paths environment (the host default has the real ones).
    pub links: Vec<(PathBuf, PathBuf)>,
}

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("cannot read store-paths file {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {entry:?} is not an absolute /nix/store path")]
    NotAStorePath {
        path: PathBuf,
        line: usize,
        entry: String,
    },
    #[error("store-paths file {0} lists no paths")]
    Empty(PathBuf),
    #[error("extra environment path {0} is not absolute")]
    Relative(PathBuf),
    #[error("extra environment path {0} does not exist")]
    Missing(PathBuf),
}

impl RuntimeEnv {
    /// The host's system directories.
    pub fn host_default() -> RuntimeEnv {
        RuntimeEnv {
            source: EnvSource::Host,
            paths: HOST_DEFAULT_PATHS.iter().map(PathBuf::from).collect(),
            bin_dirs: ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .map(PathBuf::from)
                .collect(),
            links: Vec::new(),
        }
    }

    /// Adds host paths (a toolchain prefix, say); their `bin` directories go
    /// first on the search path.
    pub fn with_extra_paths(mut self, extra: &[PathBuf]) -> Result<RuntimeEnv, EnvError> {
        let mut bins = Vec::new();
        for path in extra {
            if !path.is_absolute() {
                return Err(EnvError::Relative(path.clone()));
            }
            // Bound read-only into every sandbox: a typo would only fail
            // later, inside the first bot's confinement.
            if !path.exists() {
                return Err(EnvError::Missing(path.clone()));
            }
            if !self.paths.contains(path) {
                self.paths.push(path.clone());
            }
            let bin = path.join("bin");
            if bin.is_dir() {
                bins.push(bin);
            }
        }
        bins.append(&mut self.bin_dirs);
        self.bin_dirs = bins;
        Ok(self)
    }

    /// A Nix closure: one `/nix/store/...` path per line (blank lines and `#`
    /// comments ignored). Programs are found in each path's `bin`.
    pub fn from_store_paths_file(file: &Path) -> Result<RuntimeEnv, EnvError> {
        let text = std::fs::read_to_string(file).map_err(|source| EnvError::Read {
            path: file.to_owned(),
            source,
        })?;
        let mut paths = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let entry = line.trim();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let path = Path::new(entry);
            let valid = path.starts_with("/nix/store")
                && path.components().count() == 4
                && !entry.contains("/../");
            if !valid {
                return Err(EnvError::NotAStorePath {
                    path: file.to_owned(),
                    line: index + 1,
                    entry: entry.to_owned(),
                });
            }
            paths.push(path.to_owned());
        }
        if paths.is_empty() {
            return Err(EnvError::Empty(file.to_owned()));
        }
        paths.sort();
        paths.dedup();
        let bin_dirs = paths.iter().map(|p| p.join("bin")).collect();
        // The first path providing each program, in the file's sorted order.
        let provider = |program: &str| {
            paths
                .iter()
                .map(|p| p.join("bin").join(program))
                .find(|candidate| std::fs::symlink_metadata(candidate).is_ok())
        };
        let links = [("/bin/sh", "sh"), ("/usr/bin/env", "env")]
            .into_iter()
            .filter_map(|(link, program)| {
                provider(program).map(|target| (PathBuf::from(link), target))
            })
            .collect();
        Ok(RuntimeEnv {
            source: EnvSource::StorePaths,
            paths,
            bin_dirs,
            links,
        })
    }

    /// The value of `PATH` inside.
    pub fn search_path(&self) -> String {
        let dirs: Vec<String> = self
            .bin_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        dirs.join(":")
    }

    /// A stable identifier: the same list of paths gives the same id. For
    /// store paths that pins the content; for the host it names the layout,
    /// not the installed package versions.
    pub fn id(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(match self.source {
            EnvSource::Host => b"host\n".as_slice(),
            EnvSource::StorePaths => b"nix\n".as_slice(),
        });
        let mut paths: Vec<&PathBuf> = self.paths.iter().collect();
        paths.sort();
        for path in paths {
            hasher.update(path.as_os_str().as_encoded_bytes());
            hasher.update(b"\n");
        }
        let digest = hasher.finalize();
        let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        let kind = match self.source {
            EnvSource::Host => "host",
            EnvSource::StorePaths => "nix",
        };
        format!("{kind}-{hex}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_paths_file_is_parsed_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("paths");
        std::fs::write(
            &file,
            "# closure\n/nix/store/bbb-python3\n\n/nix/store/aaa-bash\n/nix/store/aaa-bash\n",
        )
        .unwrap();
        let env = RuntimeEnv::from_store_paths_file(&file).unwrap();
        assert_eq!(
            env.paths,
            vec![
                PathBuf::from("/nix/store/aaa-bash"),
                PathBuf::from("/nix/store/bbb-python3")
            ]
        );
        assert_eq!(
            env.search_path(),
            "/nix/store/aaa-bash/bin:/nix/store/bbb-python3/bin"
        );
        assert!(env.id().starts_with("nix-"));

        for bad in [
            "/usr/lib\n",
            "nix/store/x\n",
            "/nix/store/a/../../etc\n",
            "\n",
        ] {
            std::fs::write(&file, bad).unwrap();
            assert!(RuntimeEnv::from_store_paths_file(&file).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_id_depends_on_the_paths_only() {
        let a = RuntimeEnv::host_default();
        let b = RuntimeEnv::host_default();
        assert_eq!(a.id(), b.id());
        let toolchain = tempfile::tempdir().unwrap();
        let c = RuntimeEnv::host_default()
            .with_extra_paths(&[toolchain.path().to_owned()])
            .unwrap();
        assert_ne!(a.id(), c.id());
        assert!(matches!(
            RuntimeEnv::host_default().with_extra_paths(&[PathBuf::from("relative")]),
            Err(EnvError::Relative(_))
        ));
        let missing = toolchain.path().join("not-there");
        assert!(matches!(
            RuntimeEnv::host_default().with_extra_paths(std::slice::from_ref(&missing)),
            Err(EnvError::Missing(p)) if p == missing
        ));
    }
}
