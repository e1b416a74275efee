//! Sandboxed builds on a bounded disk, and submissions that cannot be bots:
//! an artifact over its cap (written by build.sh, or a sparse file counted
//! at its length) is `build_failed` with the reason; sparse files are
//! copied sparse; the cache evicts its least recently used builds past its
//! cap; a tree without a usable run.sh is the submission's failure, not the
//! host's. Real builds in the real sandbox.

mod support;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use support::own_parent;

use arena_engine::Session;
use arena_engine::generals::{Generals, Params};
use arena_sandbox::cpus::CoreAllocator;
use arena_sandbox::{Limits, RuntimeEnv, Sandbox, SandboxConfig};
use arena_worker::launcher::Launcher;
use arena_worker::{BotSpec, Forfeit, ProcessLauncher, RunnerConfig, SandboxLauncher, play_match};

/// Removes the test's own cgroup parent when the test is over, and checks
/// that nothing was left in it (see [`support::remove_parent`]).
struct Tidy<'a>(&'a SandboxLauncher);

impl Drop for Tidy<'_> {
    fn drop(&mut self) {
        support::remove_parent(self.0);
    }
}

fn launcher(cache: &Path) -> SandboxLauncher {
    let config = SandboxConfig {
        limits: Limits {
            memory_bytes: 256 << 20,
            ..Limits::default()
        },
        env: RuntimeEnv::host_default(),
        cgroup_parent: own_parent("arena-worker-build-test"),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::new(config).expect("the sandbox needs root and cgroups");
    let cores = CoreAllocator::new(&CoreAllocator::available().unwrap(), 2).unwrap();
    SandboxLauncher::new(sandbox, cores, cache.to_owned())
}

/// A bot of `files` (name, content) in a new temporary directory.
fn bot_of(files: &[(&str, &str)]) -> (tempfile::TempDir, BotSpec) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let bot = BotSpec::from_dir(dir.path());
    (dir, bot)
}

/// Cache entries (not scratch directories) under `cache`.
fn entries(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Everything under `cache`, scratch directories included.
fn everything(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

const MIB: u64 = 1 << 20;

#[test]
fn a_build_writing_past_the_output_cap_is_killed_build_failed_and_not_kept() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path()).with_build_output_cap(64 * MIB);
    let _tidy = Tidy(&launcher);
    // 40 files of 16 MiB: 640 MiB if nothing stopped it.
    let (_dir, greedy) = bot_of(&[
        ("run.sh", "exec cat\n"),
        (
            "build.sh",
            "i=0; while [ $i -lt 40 ]; do head -c 16777216 /dev/zero > out$i || exit 1; \
             echo wrote $i; i=$((i+1)); done\n",
        ),
    ]);
    let report = launcher.build(&greedy, Duration::from_secs(120)).unwrap();
    assert!(!report.succeeded);
    let failure = report.failure.unwrap_or_default();
    assert!(failure.contains("cap of 67108864 bytes"), "{failure}");
    let log = String::from_utf8_lossy(&report.log);
    assert!(
        !log.contains("wrote 39"),
        "the build was not stopped while it wrote: {log}"
    );
    // Nothing of it is kept: neither an entry nor its scratch copy.
    assert!(
        everything(cache.path()).is_empty(),
        "{:?}",
        everything(cache.path())
    );
}

#[test]
fn a_sparse_submission_counts_at_its_length_and_is_copied_with_its_holes() {
    let cache = tempfile::tempdir().unwrap();
    let (dir, sparse) = bot_of(&[("run.sh", "exec cat\n")]);
    let file = std::fs::File::create(dir.path().join("holes")).unwrap();
    file.set_len(64 * MIB).unwrap();
    drop(file);

    // Over the cap by apparent size, though it occupies no disk at all.
    let small = launcher(cache.path()).with_build_output_cap(32 * MIB);
    let _tidy = Tidy(&small);
    let refused = small.build(&sparse, Duration::from_secs(60)).unwrap();
    assert!(!refused.succeeded);
    let failure = refused.failure.unwrap_or_default();
    assert!(failure.contains("apparent size"), "{failure}");
    assert!(everything(cache.path()).is_empty());
    drop(_tidy);

    // Under the cap it is built, and its copy in the cache stays sparse.
    let roomy = launcher(cache.path());
    let _tidy = Tidy(&roomy);
    let built = roomy.build(&sparse, Duration::from_secs(60)).unwrap();
    assert!(built.succeeded, "{:?}", built.failure);
    let copy = std::fs::metadata(built.artifact.unwrap().join("holes")).unwrap();
    assert_eq!(copy.len(), 64 * MIB);
    assert!(
        copy.blocks() * 512 < MIB,
        "the copy allocates {} bytes",
        copy.blocks() * 512
    );
}

#[test]
fn the_cache_evicts_its_least_recently_used_builds_past_its_cap() {
    let cache = tempfile::tempdir().unwrap();
    // Room for two builds of 2 MiB, not three.
    let launcher = launcher(cache.path()).with_cache_cap(5 * MIB);
    let _tidy = Tidy(&launcher);
    let build = "head -c 2097152 /dev/zero > blob\n";
    let (_a, a) = bot_of(&[("run.sh", "exec cat\n"), ("build.sh", build), ("id", "a")]);
    let (_b, b) = bot_of(&[("run.sh", "exec cat\n"), ("build.sh", build), ("id", "b")]);
    let (_c, c) = bot_of(&[("run.sh", "exec cat\n"), ("build.sh", build), ("id", "c")]);
    let limit = Duration::from_secs(60);
    let key = |bot: &BotSpec| {
        let report = launcher.build(bot, limit).unwrap();
        assert!(report.succeeded, "{:?}", report.failure);
        let artifact = report.artifact.unwrap();
        artifact
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let key_a = key(&a);
    let key_b = key(&b);
    // A is used again (from the cache), so B is now the least recently used.
    let again = launcher.build(&a, limit).unwrap();
    assert!(again.cached);
    let key_c = key(&c);
    let mut expected = vec![key_a, key_c];
    expected.sort();
    assert_eq!(
        entries(cache.path()),
        expected,
        "B ({key_b}) should be gone"
    );
}

#[test]
fn a_tree_that_cannot_be_a_bot_is_a_failed_build_not_a_host_error() {
    let cache = tempfile::tempdir().unwrap();
    let launcher = launcher(cache.path());
    let _tidy = Tidy(&launcher);
    let limit = Duration::from_secs(60);

    let (_none, no_run) = bot_of(&[("main.py", "print(1)\n")]);
    let (linked_dir, linked) = bot_of(&[("real.sh", "exec cat\n")]);
    std::os::unix::fs::symlink("real.sh", linked_dir.path().join("run.sh")).unwrap();
    let (_gone, removes) = bot_of(&[("run.sh", "exec cat\n"), ("build.sh", "rm run.sh\n")]);
    // A path longer than the filesystem takes once it is copied into the cache.
    let (deep_dir, deep) = bot_of(&[("run.sh", "exec cat\n")]);
    let segment = "d".repeat(250);
    let mut path = deep_dir.path().to_owned();
    while path.as_os_str().len() < 3800 {
        path.push(&segment);
        std::fs::create_dir(&path).unwrap();
    }
    for (bot, needle) in [
        (&no_run, "has no run.sh"),
        (&linked, "symbolic link"),
        (&removes, "after build.sh"),
        (&deep, "File name too long"),
    ] {
        for launcher in [&launcher as &dyn Launcher, &ProcessLauncher::default()] {
            // The plain launcher builds in place: the deep tree is fine there.
            if needle == "File name too long"
                && launcher.build(bot, limit).is_ok_and(|r| r.succeeded)
            {
                continue;
            }
            let report = launcher
                .build(bot, limit)
                .unwrap_or_else(|e| panic!("{needle}: a host error: {e:#?}"));
            assert!(!report.succeeded, "{needle}");
            let failure = report.failure.unwrap_or_default();
            assert!(failure.contains(needle), "{needle}: {failure}");
        }
    }

    // In a match it is that seat's build_failed.
    let random =
        BotSpec::from_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/random"));
    let out = play_match(
        Session::boxed(Generals::from_seed(3, Params::default())),
        3,
        &[random.into(), no_run.into()],
        &launcher,
        &RunnerConfig::default(),
    )
    .unwrap();
    assert_eq!(out.report.players[1].forfeit, Some(Forfeit::BuildFailed));
    assert_eq!(out.report.players[0].forfeit, None);
    assert_eq!(out.report.winner, Some(0));
}
