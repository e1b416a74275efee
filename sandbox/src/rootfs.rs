//! The fresh root a confined process runs in, as a list of steps computed in
//! the parent and carried out by the child inside its own mount namespace.
//!
//! The root is a small tmpfs holding: the runtime environment's paths bound
//! read-only at their host locations, a mount point for the program's
//! directory (bound by the child itself, read-only or writable for builds,
//! once it knows the command: see [`crate::child`]), a private size-capped `/tmp`, a
//! minimal read-only `/dev` with a private `/dev/shm`, and a `/proc` of the
//! process's own pid namespace. There is
//! no `/sys`. Nothing is mounted in the host's namespace, so nothing can leak.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Device nodes bound from the host into the minimal `/dev`.
pub const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// One thing the child does to build its root.
#[derive(Debug)]
pub enum Step {
    /// `mkdir`, tolerating an existing directory.
    Mkdir {
        path: CString,
        mode: libc::mode_t,
    },
    /// Creates an empty file to bind a file onto.
    Touch {
        path: CString,
    },
    Symlink {
        target: CString,
        path: CString,
    },
    /// Makes a mount and every mount below it read-only and nosuid.
    ReadOnlyTree {
        target: CString,
    },
    Mount {
        source: Option<CString>,
        target: CString,
        fstype: Option<CString>,
        flags: libc::c_ulong,
        data: Option<CString>,
    },
}

/// What the root holds.
#[derive(Clone, Debug)]
pub struct RootSpec {
    /// Host paths bound read-only at the same path.
    pub env_paths: Vec<PathBuf>,
    /// Where the program's directory appears inside (e.g. `/bot`).
    pub app_mount: PathBuf,
    /// Size of the private `/tmp` (and of `/dev/shm`), in bytes.
    pub tmp_bytes: u64,
    /// Symlinks to make inside, as (link, target).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Host files bound read-only inside, as (host path, path inside).
    pub files: Vec<(PathBuf, PathBuf)>,
}

#[derive(Debug, thiserror::Error)]
pub enum RootfsError {
    #[error("path {0} contains a NUL byte")]
    Nul(PathBuf),
    #[error("path {0} must be absolute")]
    Relative(PathBuf),
    #[error("cannot inspect {path}")]
    Inspect {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Builds the steps that assemble the whole root at `root` (a host
/// directory that the child mounts a tmpfs on): [`plan_template`]'s part
/// and [`plan_spawn`]'s, for a child that builds its root alone.
pub fn plan(root: &Path, spec: &RootSpec) -> Result<Vec<Step>, RootfsError> {
    let mut steps = plan_template(root, spec)?;
    steps.extend(plan_spawn(root, spec)?);
    Ok(steps)
}

/// The part of the root every spawn shares (the tmpfs root, the runtime
/// environment's paths, the symlinks, a read-only `/dev` with its device
/// nodes, and the directories the spawns mount on), ending with `/dev` and
/// the root made read-only. The sandbox builds it once, in a mount
/// namespace of its own, and every child starts from a copy of it; see
/// [`plan_spawn`] for what each child adds.
pub fn plan_template(root: &Path, spec: &RootSpec) -> Result<Vec<Step>, RootfsError> {
    let mut planner = Planner::template(root, spec)?;
    let dev = planner.inside(Path::new("/dev"))?;
    planner.mount(
        None,
        &dev,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
        None,
    )?;
    planner.mount(
        None,
        root,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )?;
    Ok(planner.steps)
}

/// What each spawn mounts on the template's directories before it knows
/// its command: a private `/tmp` and `/dev/shm`, and a `/proc` of its own
/// pid namespace. Makes no directory, so it works on the read-only template.
pub fn plan_spawn(root: &Path, spec: &RootSpec) -> Result<Vec<Step>, RootfsError> {
    let mut planner = Planner::empty(root);
    planner.spawn_part(spec)?;
    Ok(planner.steps)
}

impl Planner {
    fn empty(root: &Path) -> Planner {
        Planner {
            root: root.to_owned(),
            steps: Vec::new(),
            made: BTreeSet::new(),
        }
    }

    /// The shared part, writable still (see [`plan_template`]).
    fn template(root: &Path, spec: &RootSpec) -> Result<Planner, RootfsError> {
        let mut planner = Planner::empty(root);
        planner.tmpfs(root, libc::MS_NOSUID | libc::MS_NODEV, "size=16m,mode=0755")?;

        for path in &spec.env_paths {
            planner.bind_host_path(path)?;
        }

        for (link, target) in &spec.links {
            if let Some(parent) = link.parent() {
                planner.mkdir_inside(parent)?;
            }
            let at = planner.inside(link)?;
            planner.symlink(target, &at)?;
        }

        for (host, at) in &spec.files {
            if let Some(parent) = at.parent() {
                planner.mkdir_inside(parent)?;
            }
            let target = planner.inside(at)?;
            planner.touch(&target)?;
            planner.bind(host, &target, true)?;
        }

        planner.mkdir_inside(&spec.app_mount)?;
        planner.mkdir_inside(Path::new("/tmp"))?;

        let dev = planner.dir_inside(Path::new("/dev"))?;
        planner.tmpfs(
            &dev,
            libc::MS_NOSUID | libc::MS_NOEXEC,
            "size=64k,mode=0755",
        )?;
        for device in DEVICES {
            let target = dev.join(device);
            planner.touch(&target)?;
            planner.bind(&Path::new("/dev").join(device), &target, false)?;
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            planner.symlink(Path::new(target), &dev.join(name))?;
        }
        planner.mkdir(&dev.join("shm"), 0o1777)?;
        planner.mkdir_inside(Path::new("/proc"))?;
        Ok(planner)
    }

    /// The per-spawn part, on directories the template made.
    fn spawn_part(&mut self, spec: &RootSpec) -> Result<(), RootfsError> {
        let tmp_options = format!("size={},mode=1777", spec.tmp_bytes.max(4096));
        let tmp = self.inside(Path::new("/tmp"))?;
        self.tmpfs(&tmp, libc::MS_NOSUID | libc::MS_NODEV, &tmp_options)?;
        let shm = self.inside(Path::new("/dev/shm"))?;
        self.tmpfs(&shm, libc::MS_NOSUID | libc::MS_NODEV, &tmp_options)?;

        let proc_dir = self.inside(Path::new("/proc"))?;
        self.mount(
            Some("proc"),
            &proc_dir,
            Some("proc"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )
    }
}

/// The host path of `path` (absolute) inside the new root at `root`.
pub fn inside(root: &Path, path: &Path) -> Result<PathBuf, RootfsError> {
    Planner::empty(root).inside(path)
}

struct Planner {
    root: PathBuf,
    steps: Vec<Step>,
    /// Directories already planned, so each is made once.
    made: BTreeSet<PathBuf>,
}

impl Planner {
    /// The host path of `path` inside the new root.
    fn inside(&self, path: &Path) -> Result<PathBuf, RootfsError> {
        let relative = path
            .strip_prefix("/")
            .map_err(|_| RootfsError::Relative(path.to_owned()))?;
        Ok(self.root.join(relative))
    }

    /// Mirrors one host path: a symlink is recreated, a directory or file is
    /// bound read-only, a missing path is skipped.
    fn bind_host_path(&mut self, path: &Path) -> Result<(), RootfsError> {
        if !path.is_absolute() {
            return Err(RootfsError::Relative(path.to_owned()));
        }
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(RootfsError::Inspect {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let target = self.inside(path)?;
        if let Some(parent) = path.parent() {
            self.mkdir_inside(parent)?;
        }
        if meta.file_type().is_symlink() {
            let link = std::fs::read_link(path).map_err(|source| RootfsError::Inspect {
                path: path.to_owned(),
                source,
            })?;
            self.symlink(&link, &target)
        } else if meta.is_dir() {
            self.mkdir(&target, 0o755)?;
            self.bind(path, &target, true)
        } else {
            self.touch(&target)?;
            self.bind(path, &target, true)
        }
    }

    /// Makes `path` (inside the new root) and its parents.
    fn mkdir_inside(&mut self, path: &Path) -> Result<(), RootfsError> {
        let mut current = PathBuf::from("/");
        for component in path.components().skip(1) {
            current.push(component);
            let host = self.inside(&current)?;
            self.mkdir(&host, 0o755)?;
        }
        Ok(())
    }

    /// [`Self::mkdir_inside`], then the directory's host path.
    fn dir_inside(&mut self, path: &Path) -> Result<PathBuf, RootfsError> {
        self.mkdir_inside(path)?;
        self.inside(path)
    }

    fn mkdir(&mut self, host: &Path, mode: libc::mode_t) -> Result<(), RootfsError> {
        if self.made.insert(host.to_owned()) {
            self.steps.push(Step::Mkdir {
                path: cstring(host)?,
                mode,
            });
        }
        Ok(())
    }

    fn touch(&mut self, host: &Path) -> Result<(), RootfsError> {
        self.steps.push(Step::Touch {
            path: cstring(host)?,
        });
        Ok(())
    }

    fn symlink(&mut self, target: &Path, host: &Path) -> Result<(), RootfsError> {
        self.steps.push(Step::Symlink {
            target: cstring(target)?,
            path: cstring(host)?,
        });
        Ok(())
    }

    /// A recursive bind mount, then (when read-only) the step that makes it
    /// and every mount below it so: a bind ignores MS_RDONLY on its first
    /// call, and a remount would only reach the top mount.
    fn bind(&mut self, source: &Path, target: &Path, read_only: bool) -> Result<(), RootfsError> {
        let target = cstring(target)?;
        self.steps.push(Step::Mount {
            source: Some(cstring(source)?),
            target: target.clone(),
            fstype: None,
            flags: libc::MS_BIND | libc::MS_REC,
            data: None,
        });
        if read_only {
            self.steps.push(Step::ReadOnlyTree { target });
        }
        Ok(())
    }

    fn tmpfs(
        &mut self,
        target: &Path,
        flags: libc::c_ulong,
        options: &str,
    ) -> Result<(), RootfsError> {
        self.mount(Some("tmpfs"), target, Some("tmpfs"), flags, Some(options))
    }

    fn mount(
        &mut self,
        source: Option<&str>,
        target: &Path,
        fstype: Option<&str>,
        flags: libc::c_ulong,
        data: Option<&str>,
    ) -> Result<(), RootfsError> {
        let text = |s: &str| CString::new(s).map_err(|_| RootfsError::Nul(PathBuf::from(s)));
        self.steps.push(Step::Mount {
            source: source.map(text).transpose()?,
            target: cstring(target)?,
            fstype: fstype.map(text).transpose()?,
            flags,
            data: data.map(text).transpose()?,
        });
        Ok(())
    }
}

pub(crate) fn cstring(path: &Path) -> Result<CString, RootfsError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| RootfsError::Nul(path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Mkdir { path, .. } => format!("mkdir {}", path.to_string_lossy()),
                Step::Touch { path } => format!("touch {}", path.to_string_lossy()),
                Step::ReadOnlyTree { target } => {
                    format!("mount  on {} ro", target.to_string_lossy())
                }
                Step::Symlink { target, path } => format!(
                    "symlink {} -> {}",
                    path.to_string_lossy(),
                    target.to_string_lossy()
                ),
                Step::Mount {
                    source,
                    target,
                    flags,
                    ..
                } => format!(
                    "mount {} on {}{}",
                    source
                        .as_ref()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    target.to_string_lossy(),
                    if flags & libc::MS_RDONLY != 0 {
                        " ro"
                    } else {
                        ""
                    }
                ),
            })
            .collect()
    }

    #[test]
    fn the_plan_binds_read_only_and_never_mounts_sys() {
        let host = tempfile::tempdir().unwrap();
        let env_dir = host.path().join("env");
        std::fs::create_dir(&env_dir).unwrap();
        let env_file = host.path().join("file");
        std::fs::write(&env_file, "x").unwrap();
        let link = host.path().join("link");
        std::os::unix::fs::symlink("env", &link).unwrap();
        let spec = RootSpec {
            env_paths: vec![
                env_dir.clone(),
                env_file.clone(),
                link.clone(),
                host.path().join("missing"),
            ],
            app_mount: PathBuf::from("/bot"),
            tmp_bytes: 1 << 20,
            links: vec![(
                PathBuf::from("/bin/sh"),
                PathBuf::from("/nix/store/x-sh/bin/sh"),
            )],
            files: vec![(
                PathBuf::from("/bin/true"),
                PathBuf::from("/.arena/platform/true"),
            )],
        };
        let root = Path::new("/run/root");
        let steps = describe(&plan(root, &spec).unwrap());
        let text = steps.join("\n");
        let inside = |p: &Path| format!("/run/root{}", p.display());
        assert!(steps[0].starts_with("mount tmpfs on /run/root"), "{text}");
        assert!(text.contains(&format!("mount {} on {} ro", "", inside(&env_dir))));
        assert!(text.contains(&format!("touch {}", inside(&env_file))));
        assert!(text.contains(&format!("symlink {} -> env", inside(&link))));
        assert!(!text.contains("missing"));
        // The program's directory only gets its mount point: the child binds it.
        assert!(text.contains("mkdir /run/root/bot"), "{text}");
        assert!(!text.contains("on /run/root/bot"), "{text}");
        assert!(text.contains("mount /dev/null on /run/root/dev/null"));
        assert!(text.contains("mount proc on /run/root/proc"));
        assert!(
            text.contains("symlink /run/root/bin/sh -> /nix/store/x-sh/bin/sh"),
            "{text}"
        );
        // A platform program, at its own place inside.
        assert!(
            text.contains("touch /run/root/.arena/platform/true"),
            "{text}"
        );
        assert!(
            text.contains("mount /bin/true on /run/root/.arena/platform/true\n"),
            "{text}"
        );
        assert!(
            text.contains("mount  on /run/root/.arena/platform/true ro"),
            "{text}"
        );
        assert!(!text.contains("/sys"));
        // Every directory is made once, and before anything is put in it.
        let mkdirs: Vec<&String> = steps.iter().filter(|s| s.starts_with("mkdir")).collect();
        let unique: BTreeSet<&&String> = mkdirs.iter().collect();
        assert_eq!(mkdirs.len(), unique.len());
    }
}
