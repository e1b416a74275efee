//! `arena play` and the runtime environment: the reference starters' run
//! script (`exec python -u main.py`) runs on a host that has only
//! `python3`, and a program a bot's run.sh starts that the environment
//! lacks is named before the match. Real sandboxed matches.

use std::path::{Path, PathBuf};
use std::process::Command;

fn arena() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arena"))
}

/// The Python starter, its run.sh saying `python` as the reference one does.
fn python_bot(dir: &Path) -> PathBuf {
    let bot = dir.join("plain-python");
    std::fs::create_dir(&bot).unwrap();
    let starter = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/starter-python/bot.py");
    std::fs::copy(starter, bot.join("main.py")).unwrap();
    std::fs::write(bot.join("run.sh"), "#!/bin/sh\nexec python -u main.py\n").unwrap();
    bot
}

#[test]
fn a_bot_whose_run_sh_says_python_plays_in_the_default_environment() {
    let dir = tempfile::tempdir().unwrap();
    let bot = python_bot(dir.path());
    let random = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/random");
    let out = arena()
        .arg("play")
        .arg(&bot)
        .arg(&random)
        .args([
            "--seed",
            "4",
            "--json",
            "--cgroup-parent",
            "arena-cli-env-python",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seat = &result["players"][0];
    assert_eq!(
        seat["forfeit"],
        serde_json::Value::Null,
        "{result}\n{stderr}"
    );
    assert!(seat["moves"].as_u64().unwrap() > 0, "{result}");
    assert!(!stderr.contains("lacks"), "{stderr}");
}

#[test]
fn a_program_the_environment_lacks_is_named_before_the_match() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("needs-tool");
    std::fs::create_dir(&bot).unwrap();
    std::fs::write(
        bot.join("run.sh"),
        "#!/bin/sh\nset -e\nexec arena-no-such-interpreter main.x\n",
    )
    .unwrap();
    let random = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/random");
    for sandbox in [
        &["--cgroup-parent", "arena-cli-env-missing"][..],
        &["--no-sandbox"][..],
    ] {
        let out = arena()
            .arg("play")
            .arg(&bot)
            .arg(&random)
            .args(["--seed", "4", "--json"])
            .args(sandbox)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warning = stderr
            .lines()
            .find(|l| l.contains("arena-no-such-interpreter"))
            .unwrap_or_else(|| panic!("{sandbox:?}: not named: {stderr}"));
        assert!(
            warning.contains("seat 0") && warning.contains("lacks"),
            "{warning}"
        );
        assert!(!stderr.contains("`set`"), "a builtin was named: {stderr}");
        // Said before the match, which the bot then forfeits.
        assert!(out.status.success(), "{stderr}");
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["players"][0]["forfeit"], "exit", "{result}");
    }
}
