//! `arena run --web`: a whole local tournament with its pages served on
//! loopback. Two copies of the Python starter that say who they are on
//! stderr play one round; then the pages show their standings, the
//! organiser's token (printed by the run) shows both seats' logs, each
//! entrant's token only its own, a visitor with no token none, and Ctrl-C
//! ends the finished run with success. This is the whole log path: bot
//! stderr, the worker's report, the blob store, the page.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use crate::support::arena::{arena, workspace};
use crate::support::process::Proc;

/// Two debug-build matches, unsandboxed.
const TOURNAMENT: Duration = Duration::from_secs(300);

/// A copy of the Python starter whose run.sh first writes `hello from NAME`
/// to stderr.
fn talking_starter(root: &Path, name: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    let starter = workspace().join("bots/starter-python/bot.py");
    std::fs::copy(starter, dir.join("bot.py")).expect("copying the starter");
    std::fs::write(
        dir.join("run.sh"),
        format!("#!/bin/sh\necho 'hello from {name}' >&2\nexec python3 -u bot.py\n"),
    )
    .expect("run.sh");
}

/// One GET over HTTP/1.1 with an optional bearer token: the status and body.
fn get(address: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connecting to the pages");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("sending the request");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("reading the answer");
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The token at the end of the stderr line starting with `prefix`.
fn token_after(run: &Proc, prefix: &str) -> String {
    let line = run.wait_for_stderr(prefix, Duration::from_secs(30), |l| l.starts_with(prefix));
    line.rsplit(' ').next().unwrap_or_default().to_owned()
}

#[test]
fn arena_run_web_serves_the_tournament_and_each_token_its_own_logs() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-run-web-")
        .tempdir()
        .expect("temp dir");
    talking_starter(dir.path(), "alpha");
    talking_starter(dir.path(), "beta");
    let file = dir.path().join("cup.toml");
    std::fs::write(
        &file,
        "name = \"Web cup\"\ngame = \"generals\"\nseed = 11\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 2\n\
         [[bots]]\nname = \"alpha\"\npath = \"alpha\"\n\
         [[bots]]\nname = \"beta\"\npath = \"beta\"\n",
    )
    .expect("the tournament file");

    let mut command = arena();
    command
        .arg("run")
        .arg(&file)
        .args(["--web", "127.0.0.1:0", "--no-sandbox"])
        .env("XDG_CACHE_HOME", dir.path().join("cache"));
    let mut run = Proc::spawn("arena run --web", command);
    let line = run.wait_for_stdout("the pages' address", Duration::from_secs(60), |l| {
        l.starts_with("web pages on http://")
    });
    let url = line.trim_start_matches("web pages on http://").trim();
    let (address, tournament_path) = url.split_once('/').expect("an address and a path");
    let tournament_path = format!("/{tournament_path}");
    let organiser = token_after(&run, "arena run: organiser token");
    let alpha = token_after(&run, "arena run: entrant token for alpha:");
    let beta = token_after(&run, "arena run: entrant token for beta:");
    assert!(organiser.len() >= 32 && alpha.len() >= 32 && alpha != beta);

    // Served while it plays; the standings once it is over.
    let (status, _) = get(address, "/", None);
    assert_eq!(status, 200);
    run.wait_for_stderr("the end of the tournament", TOURNAMENT, |l| {
        l.contains("the pages stay up until Ctrl-C")
    });
    let (status, page) = get(address, &tournament_path, None);
    assert_eq!(status, 200);
    for name in ["alpha", "beta"] {
        assert!(page.contains(&format!("data-entrant=\"{name}\"")), "{page}");
    }
    let match_path = page
        .split("href=\"")
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.starts_with("/matches/"))
        .expect("a link to a match")
        .to_owned();

    let says = |body: &str, name: &str| body.contains(&format!("hello from {name}"));
    let (status, public) = get(address, &match_path, None);
    assert_eq!(status, 200);
    assert!(
        !says(&public, "alpha") && !says(&public, "beta"),
        "no logs in public"
    );
    let (_, all) = get(address, &match_path, Some(&organiser));
    assert!(
        says(&all, "alpha") && says(&all, "beta"),
        "the organiser sees both: {all}"
    );
    let (_, own) = get(address, &match_path, Some(&alpha));
    assert!(
        says(&own, "alpha") && !says(&own, "beta"),
        "alpha sees only its own"
    );
    let (_, own) = get(address, &match_path, Some(&beta));
    assert!(
        says(&own, "beta") && !says(&own, "alpha"),
        "beta sees only its own"
    );
    // The raw log endpoint follows the same rule.
    let seats = [0, 1].map(|seat| format!("{match_path}/logs/{seat}"));
    assert!(seats.iter().all(|s| get(address, s, None).0 == 403));
    let alpha_seat = seats
        .iter()
        .find(|s| get(address, s, Some(&alpha)).0 == 200)
        .expect("alpha's seat log");
    assert!(says(&get(address, alpha_seat, Some(&alpha)).1, "alpha"));
    assert_eq!(get(address, alpha_seat, Some(&beta)).0, 403);

    run.signal(libc::SIGINT);
    let status = run
        .wait_exit(Duration::from_secs(30))
        .expect("the run stops at Ctrl-C");
    assert!(status.success(), "a finished run ends well: {status:?}");
}
