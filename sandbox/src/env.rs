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

/// Command names the environment documents, each with the program that
/// stands in for it when the environment has only that one: Debian and
/// Ubuntu ship `python3` without `python`, and the reference starters (and
/// many participants) write `exec python -u main.py`.
pub const COMMAND_ALIASES: &[(&str, &str)] = &[("python", "python3"), ("pip", "pip3")];

/// Where the stand-ins are linked inside the sandbox: a directory of the
/// sandbox's own root, outside every bound host path (a link cannot be made
/// inside a read-only bind), searched last so a real program always wins.
pub const ALIAS_DIR: &str = "/.arena/bin";

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
    /// a store-paths environment (the host default has the real ones), and
    /// the [`COMMAND_ALIASES`] the environment lacks, in [`ALIAS_DIR`].
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
    /// The host's system directories, with the documented command names
    /// the host lacks linked to their stand-ins (`python` to `python3`).
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
        .with_command_aliases()
    }

    /// Links each [`COMMAND_ALIASES`] name that no search directory holds
    /// to the program standing in for it, when one does, and puts
    /// [`ALIAS_DIR`] last on the search path. Idempotent.
    pub fn with_command_aliases(mut self) -> RuntimeEnv {
        let alias_dir = Path::new(ALIAS_DIR);
        for (alias, real) in COMMAND_ALIASES {
            if self.find_program(alias).is_some() {
                continue;
            }
            if let Some(target) = self.find_program(real) {
                self.links.push((alias_dir.join(alias), target));
            }
        }
        let linked = self
            .links
            .iter()
            .any(|(link, _)| link.starts_with(alias_dir));
        if linked && !self.bin_dirs.iter().any(|d| d == alias_dir) {
            self.bin_dirs.push(alias_dir.to_owned());
        }
        self
    }

    /// Where `program` is found on the search path inside, as the sandbox
    /// sees it: a regular executable file (links followed) in one of the
    /// bound search directories, or one of the links made inside. `None`
    /// when a process inside would get "not found".
    pub fn find_program(&self, program: &str) -> Option<PathBuf> {
        if program.is_empty() || program.contains('/') {
            return None;
        }
        self.bin_dirs.iter().find_map(|dir| {
            let candidate = dir.join(program);
            if let Some((_, target)) = self.links.iter().find(|(link, _)| *link == candidate) {
                return Some(target.clone());
            }
            // Bound paths appear inside at the same place, so the host's
            // view of a bound directory is the sandbox's.
            if !self.paths.iter().any(|p| candidate.starts_with(p)) {
                return None;
            }
            is_executable(&candidate).then_some(candidate)
        })
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
        Ok(self.with_command_aliases())
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
        }
        .with_command_aliases())
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

/// A regular file with an execute bit, following links (on the host).
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
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

    /// A fake environment: `bin` holds the named executables.
    fn env_with(programs: &[&str]) -> (tempfile::TempDir, RuntimeEnv) {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for program in programs {
            let path = bin.join(program);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let env = RuntimeEnv {
            source: EnvSource::Host,
            paths: vec![root.path().to_owned()],
            bin_dirs: vec![bin],
            links: Vec::new(),
        };
        (root, env)
    }

    #[test]
    fn python_is_linked_to_python3_only_where_it_is_missing() {
        let (root, env) = env_with(&["python3", "pip3"]);
        let env = env.with_command_aliases().with_command_aliases();
        let python3 = root.path().join("bin/python3");
        assert_eq!(env.find_program("python"), Some(python3.clone()));
        assert_eq!(env.find_program("python3"), Some(python3.clone()));
        assert_eq!(env.find_program("pip"), Some(root.path().join("bin/pip3")));
        assert!(
            env.links
                .contains(&(Path::new(ALIAS_DIR).join("python"), python3))
        );
        // Searched last, once.
        assert_eq!(
            env.bin_dirs.last().map(PathBuf::as_path),
            Some(Path::new(ALIAS_DIR))
        );
        assert_eq!(
            env.bin_dirs
                .iter()
                .filter(|d| d.as_path() == Path::new(ALIAS_DIR))
                .count(),
            1
        );

        // A real `python` is never shadowed; nothing stands in for nothing.
        let (root, env) = env_with(&["python", "python3"]);
        let env = env.with_command_aliases();
        assert!(env.links.is_empty(), "{:?}", env.links);
        assert_eq!(
            env.find_program("python"),
            Some(root.path().join("bin/python"))
        );
        let (_root, env) = env_with(&[]);
        let env = env.with_command_aliases();
        assert_eq!(env.find_program("python"), None);
        assert_eq!(env.find_program("./python"), None);
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
