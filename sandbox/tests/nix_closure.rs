//! The Nix side of the sandbox, checked offline with Debian's `nix-bin`
//! (Nix 2.8) and `busybox-static`, and no nixpkgs:
//!
//! * every `.nix` file of the repository parses;
//! * what needs no flake input evaluates: the flake's description,
//!   `nix/lib.nix` (package lists, command lines), and the NixOS modules
//!   against a stub `lib` (`tests/nix/modules.nix`);
//! * end to end: Nix builds a small environment closure in its build sandbox
//!   with a static busybox as the only builder (`tests/nix/closure.nix`),
//!   writes its store-paths file the way `closureInfo` does, and the arena
//!   sandbox runs a bot and a build from exactly that closure.
//!
//! Needs root, cgroups, `nix-instantiate`/`nix-store` on PATH and
//! `/bin/busybox` (static). A missing tool is a failure, not a skip. Builds
//! use the real `/nix/store` (what production binds), unique store paths per
//! run, no GC roots, and delete what they built at the end.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arena_sandbox::{
    Limits, RuntimeEnv, Sandbox, SandboxCommand, SandboxConfig, SandboxedChild, Verdict,
};

const BUSYBOX: &str = "/bin/busybox";
const INSTALL_HINT: &str = "install Debian's nix-bin and busybox-static \
     (apt-get install -y nix-bin busybox-static)";
const MIB: u64 = 1 << 20;
/// The uid the confined programs run as (hostile.rs uses 62001 and up).
const UID: u32 = 62_101;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_owned()
}

/// A Nix program: present, or the test fails saying what to install.
fn nix_tool(name: &str) -> Command {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
        .unwrap_or(false);
    assert!(found, "`{name}` is not on PATH: {INSTALL_HINT}");
    let mut command = Command::new(name);
    // Root talks to the local store directly, never to a daemon.
    command.env("NIX_REMOTE", "local");
    command
}

/// Held while a command runs: the tests of this file run in parallel, and
/// two Nix programs opening a new local store at once fail with "SQLite
/// database ... is busy" (seen on a fresh machine's first run).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `command`; panics with its stderr unless it succeeds.
fn checked(command: &mut Command) -> Output {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout_text(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

/// `nix-instantiate --eval --strict --json -E expr`, run in the repository.
fn eval_json(expr: &str) -> String {
    let output = checked(
        nix_tool("nix-instantiate")
            .current_dir(repo())
            .args(["--eval", "--strict", "--json", "-E", expr]),
    );
    stdout_text(&output).trim().to_owned()
}

fn nix_files() -> Vec<PathBuf> {
    let mut files = vec![repo().join("flake.nix")];
    for dir in [repo().join("nix"), repo().join("sandbox/tests/nix")] {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "nix") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_nix_file_parses() {
    let files = nix_files();
    for expected in [
        "flake.nix",
        "nix/lib.nix",
        "nix/env.nix",
        "nix/arena.nix",
        "nix/worker-image.nix",
        "nix/module-coordinator.nix",
        "nix/module-worker.nix",
        "sandbox/tests/nix/closure.nix",
        "sandbox/tests/nix/modules.nix",
    ] {
        assert!(
            files.contains(&repo().join(expected)),
            "{expected} is missing"
        );
    }
    for file in files {
        checked(nix_tool("nix-instantiate").arg("--parse").arg(&file));
    }
}

#[test]
fn the_parts_without_inputs_evaluate() {
    assert_eq!(
        eval_json("(import ./flake.nix).description"),
        "\"Arena: a bot-tournament runner, and the sandbox environment its bots run in\""
    );
    assert_eq!(
        eval_json("builtins.typeOf (import ./flake.nix).outputs"),
        "\"lambda\""
    );
    for module in ["nix/module-worker.nix", "nix/module-coordinator.nix"] {
        assert_eq!(
            eval_json(&format!("builtins.typeOf (import ./{module})")),
            "\"lambda\"",
            "{module}"
        );
    }

    let python = eval_json("(import ./nix/lib.nix).pythonPackages");
    for package in [
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "torch",
        "jax",
        "numba",
        "networkx",
        "safetensors",
        "gymnasium",
    ] {
        assert!(
            python.contains(&format!("\"{package}\"")),
            "{package}: {python}"
        );
    }
    let tools = eval_json("(import ./nix/lib.nix).systemTools");
    for tool in [
        "gcc",
        "rustc",
        "cargo",
        "bash",
        "coreutils",
        "findutils",
        "gnugrep",
        "gnused",
        "gawk",
        "gnutar",
        "gzip",
        "which",
        "gnumake",
    ] {
        assert!(tools.contains(&format!("\"{tool}\"")), "{tool}: {tools}");
    }

    // systemd unquotes "..." with C escapes and wants % and $ doubled.
    assert_eq!(
        eval_json(r#"(import ./nix/lib.nix).systemdQuote "a b\"c%d$e\\""#),
        r#""\"a b\\\"c%%d$$e\\\\\"""#
    );

    // The NixOS modules, evaluated against a stub lib.
    let units = eval_json("import ./sandbox/tests/nix/modules.nix { repo = ./.; }");
    let worker_exec = concat!(
        r#"\"/nix/store/00000000000000000000000000000000-arena/bin/arena\" \"worker\""#,
        r#" \"--coordinator\" \"http://10.0.0.1:50051\""#,
        r#" \"--store-paths\" \"/nix/store/11111111111111111111111111111111-arena-sandbox-env-paths\""#,
        r#" \"--metrics\" \"127.0.0.1:9102\" \"--cores\" \"2-7\""#,
        r#" \"--cache-dir\" \"/var/cache/arena-worker/builds\" \"--cgroup-parent\" \"arena\""#,
    );
    let coordinator_exec = concat!(
        r#"\"/nix/store/00000000000000000000000000000000-arena/bin/arena\" \"coordinator\""#,
        r#" \"--listen\" \"0.0.0.0:50051\" \"--redis\" \"redis://127.0.0.1/\""#,
        r#" \"--metrics\" \"127.0.0.1:9101\" \"--lease-ttl\" \"30\""#,
    );
    for expected in [
        format!("\"ExecStart\":\"{worker_exec}\""),
        format!("\"ExecStart\":\"{coordinator_exec}\""),
        "\"Delegate\":true".to_owned(),
        "\"TimeoutStopSec\":\"30min\"".to_owned(),
        "\"KillSignal\":\"SIGTERM\"".to_owned(),
        "\"EnvironmentFile\":\"/run/secrets/worker.env\"".to_owned(),
        "\"EnvironmentFile\":\"/run/secrets/coordinator.env\"".to_owned(),
    ] {
        assert!(units.contains(&expected), "{expected} not in {units}");
    }
    assert!(
        !units.contains("token"),
        "tokens belong in the environment file: {units}"
    );
}

/// Store paths built by one test, deleted (with their derivations) on drop.
struct BuiltPaths(Vec<PathBuf>);

impl Drop for BuiltPaths {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let result = {
            let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
            nix_tool("nix-store").arg("--delete").args(&self.0).output()
        };
        match result {
            Ok(out) if out.status.success() => {}
            Ok(out) => eprintln!(
                "nix_closure: cannot delete {:?}: {}",
                self.0,
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => eprintln!("nix_closure: cannot run nix-store --delete: {e}"),
        }
    }
}

/// A cgroup parent of its own; removed when the test ends.
struct ParentGuard(Sandbox);

impl Drop for ParentGuard {
    fn drop(&mut self) {
        if let Err(e) = self.0.remove_parent_if_empty() {
            eprintln!("nix_closure: cannot remove the cgroup parent: {e}");
        }
    }
}

/// Builds `tests/nix/closure.nix` in Nix's build sandbox (as root, without
/// build users, so no `nixbld` group is needed) and returns the outputs of
/// `attrs`, in order, plus everything to delete afterwards.
fn build_closure(scratch: &Path, nonce: &str, attrs: &[&str]) -> (Vec<PathBuf>, BuiltPaths) {
    assert!(
        Path::new(BUSYBOX).is_file(),
        "{BUSYBOX} is missing: {INSTALL_HINT}"
    );
    let busybox_dir = scratch.join("busybox");
    fs::create_dir(&busybox_dir).unwrap();
    fs::copy(BUSYBOX, busybox_dir.join("busybox")).unwrap();
    fs::write(busybox_dir.join("nonce"), nonce).unwrap();

    // nix-instantiate without --add-root and nix-store --realise without
    // --add-root leave no GC roots (nix-build would, under gcroots/auto).
    let mut instantiate = nix_tool("nix-instantiate");
    instantiate
        .arg(repo().join("sandbox/tests/nix/closure.nix"))
        .arg("--arg")
        .arg("busyboxDir")
        .arg(&busybox_dir)
        .args(["--argstr", "nonce", nonce]);
    for attr in attrs {
        instantiate.args(["-A", attr]);
    }
    let drvs: Vec<PathBuf> = stdout_text(&checked(&mut instantiate))
        .lines()
        .map(PathBuf::from)
        .collect();
    assert_eq!(drvs.len(), attrs.len(), "{drvs:?}");
    // Everything that gets into the store is deleted at the end: the
    // derivations, their sources (the busybox copy) and the outputs.
    let mut built = BuiltPaths(Vec::new());
    for drv in &drvs {
        let closure = stdout_text(&checked(nix_tool("nix-store").arg("-qR").arg(drv)));
        built.0.extend(closure.lines().map(PathBuf::from));
    }
    let realise = checked(
        nix_tool("nix-store")
            .arg("--realise")
            .args(&drvs)
            .args(["--option", "sandbox", "true"])
            .args(["--option", "build-users-group", ""])
            .args(["--option", "substituters", ""]),
    );
    let outputs: Vec<PathBuf> = stdout_text(&realise).lines().map(PathBuf::from).collect();
    assert_eq!(outputs.len(), attrs.len(), "{outputs:?}");
    for output in &outputs {
        let closure = stdout_text(&checked(nix_tool("nix-store").arg("-qR").arg(output)));
        built.0.extend(closure.lines().map(PathBuf::from));
    }
    built.0.sort();
    built.0.dedup();
    (outputs, built)
}

fn nonce() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{nanos}", std::process::id())
}

fn read_all(fd: Option<std::os::fd::OwnedFd>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(fd) = fd {
            let _ = fs::File::from(fd).read_to_string(&mut text);
        }
        text
    })
}

/// Runs a confined child to its end (at most `timeout`): verdict, stdout, stderr.
fn run(
    sandbox: &Sandbox,
    command: &SandboxCommand,
    timeout: Duration,
) -> (Verdict, String, String) {
    let mut child: SandboxedChild = sandbox
        .spawn(command)
        .unwrap_or_else(|e| panic!("spawn {command:?}: {e:?}"));
    child.stdin = None;
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let deadline = Instant::now() + timeout;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let verdict = child.finish().unwrap();
    (verdict, stdout.join().unwrap(), stderr.join().unwrap())
}

#[test]
fn a_nix_built_closure_is_the_whole_sandbox_environment() {
    let started = Instant::now();
    let scratch = tempfile::tempdir().unwrap();
    let nonce = nonce();
    let (outputs, _built) = build_closure(scratch.path(), &nonce, &["env", "paths"]);
    let (env_out, paths_out) = (&outputs[0], &outputs[1]);

    // The store-paths file made in the build (as closureInfo does) is the
    // closure nix-store reports: env, greeting, busybox.
    let from_build = fs::read_to_string(paths_out).unwrap();
    let mut closure: Vec<String> =
        stdout_text(&checked(nix_tool("nix-store").arg("-qR").arg(env_out)))
            .lines()
            .map(str::to_owned)
            .collect();
    closure.sort();
    assert_eq!(from_build.lines().collect::<Vec<_>>(), closure);
    assert_eq!(closure.len(), 3, "{closure:?}");
    let store_paths = scratch.path().join("store-paths");
    fs::write(&store_paths, closure.join("\n") + "\n").unwrap();

    let env = RuntimeEnv::from_store_paths_file(&store_paths).unwrap();
    assert_eq!(
        env.paths,
        closure.iter().map(PathBuf::from).collect::<Vec<_>>()
    );
    let config = SandboxConfig {
        env,
        cgroup_parent: format!("arena-nix-test-{}", std::process::id()),
        limits: Limits {
            memory_bytes: 128 * MIB,
            pids: 64,
            tmp_bytes: 8 * MIB,
            open_files: 64,
            file_bytes: 4 * MIB,
        },
        root_dir: scratch.path().join("root"),
        platform_paths: Vec::new(),
        spare_leaf: false,
    };
    let search_path = config.env.search_path();
    let guard = ParentGuard(Sandbox::new(config).expect("Sandbox::new (needs root and cgroups)"));
    let sandbox = &guard.0;
    let cores = arena_sandbox::cpus::CoreAllocator::available().unwrap();
    let sh = env_out.join("bin/sh");

    // (i) A bot from the closure, in a read-only /bot.
    let bot_dir = tempfile::tempdir().unwrap();
    let script = "bot; echo store:; ls /nix/store; \
                  for p in /usr/lib /usr/share /lib /lib64 /etc/passwd /sbin /bin/ls; do \
                  if [ -e $p ]; then echo host: $p; fi; done; echo done";
    let command = SandboxCommand::new(&sh, bot_dir.path(), UID)
        .arg("-c")
        .arg(script)
        .env("PATH", &search_path)
        .cpus(cores.clone())
        .label("nix-bot");
    let (verdict, stdout, stderr) = run(sandbox, &command, Duration::from_secs(20));
    assert_eq!(verdict.code, Some(0), "{verdict:?}\n{stdout}\n{stderr}");
    let names: Vec<&str> = closure
        .iter()
        .map(|p| p.trim_start_matches("/nix/store/"))
        .collect();
    let mut expected = vec!["hello from nix", "store:"];
    let mut sorted_names = names.clone();
    sorted_names.sort();
    expected.extend(sorted_names);
    expected.push("done");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        expected,
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );

    // Scripts that name /bin/sh in their #! line find the closure's shell.
    let command = SandboxCommand::new("/bin/sh", bot_dir.path(), UID)
        .arg("-c")
        .arg("echo via /bin/sh")
        .env("PATH", &search_path)
        .cpus(cores.clone())
        .label("nix-bin-sh");
    let (verdict, stdout, stderr) = run(sandbox, &command, Duration::from_secs(20));
    assert_eq!(verdict.code, Some(0), "{verdict:?}\n{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "via /bin/sh");

    // (ii) A build: build.sh, not executable, run by the closure's sh in a
    // writable /bot; it writes an artifact that the host then sees.
    let app = tempfile::tempdir().unwrap();
    fs::write(
        app.path().join("build.sh"),
        "set -eu\nbot > artifact\necho built >> artifact\nls /bot\n",
    )
    .unwrap();
    fs::set_permissions(app.path(), fs::Permissions::from_mode(0o755)).unwrap();
    chown(app.path(), Some(UID), Some(UID)).unwrap();
    chown(app.path().join("build.sh"), Some(UID), Some(UID)).unwrap();
    let command = SandboxCommand::new(&sh, app.path(), UID)
        .arg("/bot/build.sh")
        .env("PATH", &search_path)
        .env("HOME", "/tmp")
        .writable(true)
        .cpus(cores)
        .label("nix-build");
    let (verdict, stdout, stderr) = run(sandbox, &command, Duration::from_secs(20));
    assert_eq!(verdict.code, Some(0), "{verdict:?}\n{stdout}\n{stderr}");
    assert_eq!(stdout.lines().collect::<Vec<_>>(), ["artifact", "build.sh"]);
    assert_eq!(
        fs::read_to_string(app.path().join("artifact")).unwrap(),
        "hello from nix\nbuilt\n"
    );
    eprintln!("nix_closure: built and ran in {:?}", started.elapsed());
}
