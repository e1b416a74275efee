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

/// The first link to a match on a page.
fn first_match_link(page: &str) -> String {
    page.split("href=\"")
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.starts_with("/matches/"))
        .unwrap_or_else(|| panic!("no link to a match: {page}"))
        .to_owned()
}

/// The token at the end of the stderr line starting with `prefix`.
fn token_after(run: &Proc, prefix: &str) -> String {
    let line = run.wait_for_stderr(prefix, Duration::from_secs(30), |l| l.starts_with(prefix));
    line.rsplit(' ').next().unwrap_or_default().to_owned()
}

/// An `arena run --web` of a tournament file, unsandboxed, once its pages
/// are up.
struct Served {
    run: Proc,
    /// The pages' `HOST:PORT`.
    address: String,
    /// `/tournaments/ID`.
    tournament_path: String,
    /// The organiser's token, as the run printed it.
    organiser: String,
}

/// Writes `tournament` (the file's text) as `cup.toml` in `dir`, beside
/// its bots, and runs it.
fn serve(dir: &Path, tournament: &str) -> Served {
    let file = dir.join("cup.toml");
    std::fs::write(&file, tournament).expect("the tournament file");
    let mut command = arena();
    command
        .arg("run")
        .arg(&file)
        .args(["--web", "127.0.0.1:0", "--no-sandbox"])
        .env("XDG_CACHE_HOME", dir.join("cache"));
    let run = Proc::spawn("arena run --web", command);
    let line = run.wait_for_stdout("the pages' address", Duration::from_secs(60), |l| {
        l.starts_with("web pages on http://")
    });
    let url = line.trim_start_matches("web pages on http://").trim();
    let (address, tournament_path) = url.split_once('/').expect("an address and a path");
    let organiser = token_after(&run, "arena run: organiser token");
    Served {
        address: address.to_owned(),
        tournament_path: format!("/{tournament_path}"),
        organiser,
        run,
    }
}

#[test]
fn arena_run_web_serves_the_tournament_and_each_token_its_own_logs() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-run-web-")
        .tempdir()
        .expect("temp dir");
    talking_starter(dir.path(), "alpha");
    talking_starter(dir.path(), "beta");
    let Served {
        mut run,
        address,
        tournament_path,
        organiser,
    } = serve(
        dir.path(),
        "name = \"Web cup\"\ngame = \"generals\"\nseed = 11\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 2\n\
         [[bots]]\nname = \"alpha\"\npath = \"alpha\"\n\
         [[bots]]\nname = \"beta\"\npath = \"beta\"\n",
    );
    let address = address.as_str();
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
    let match_path = first_match_link(&page);

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

/// A bot that passes every turn after `delay_s`: its matches run for as
/// long as its opponent takes to win, a tenth of a second a turn.
fn slow_passer(root: &Path, name: &str, delay_s: f64) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("bot dir");
    std::fs::write(
        dir.join("bot.py"),
        format!(
            "import sys, time\n\
             h = int(sys.stdin.readline().split()[1])\n\
             while sys.stdin.readline():\n\
             \x20   for _ in range(3 * h):\n\
             \x20       sys.stdin.readline()\n\
             \x20   time.sleep({delay_s})\n\
             \x20   print('1 0 0 0 0', flush=True)\n"
        ),
    )
    .expect("bot.py");
    std::fs::write(dir.join("run.sh"), "#!/bin/sh\nexec python3 -u bot.py\n").expect("run.sh");
}

/// The data of the first `event` in the server-sent events of `path`, read
/// as the organiser over HTTP/1.0 (so the body is not chunked); `None` if
/// the stream ends first.
fn first_event(address: &str, path: &str, token: &str, event: &str) -> Option<serde_json::Value> {
    let mut stream = TcpStream::connect(address).expect("connecting to the pages");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a read timeout");
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .expect("sending the request");
    let wanted = format!("event: {event}\ndata: ");
    let mut text = String::new();
    let mut buffer = [0u8; 64 * 1024];
    loop {
        if let Some(start) = text.find(&wanted) {
            let rest = &text[start + wanted.len()..];
            if let Some(end) = rest.find("\n\n") {
                return Some(serde_json::from_str(&rest[..end]).expect("the event's data is JSON"));
            }
        }
        let read = stream.read(&mut buffer).expect("reading the stream");
        if read == 0 {
            return None;
        }
        text.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
}

#[test]
fn arena_run_web_shows_the_organiser_a_running_match_as_its_worker_plays_it() {
    let dir = tempfile::Builder::new()
        .prefix("arena-e2e-run-live-")
        .tempdir()
        .expect("temp dir");
    talking_starter(dir.path(), "alpha");
    slow_passer(dir.path(), "snail", 0.1);
    let Served {
        mut run,
        address,
        tournament_path,
        organiser,
    } = serve(
        dir.path(),
        "name = \"Live cup\"\ngame = \"generals\"\nseed = 5\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\
         [limits]\nmove_ms = 2000\n\
         [[bots]]\nname = \"alpha\"\npath = \"alpha\"\n\
         [[bots]]\nname = \"snail\"\npath = \"snail\"\n",
    );
    let address = address.as_str();
    let (status, page) = get(address, &tournament_path, None);
    assert_eq!(status, 200);
    let match_path = first_match_link(&page);

    // The worker's board reaches the organiser's stream while the match
    // runs: the engine's live view, at the turn it says.
    let data = first_event(address, &format!("{match_path}/live"), &organiser, "board")
        .expect("a board before the match ends");
    let board = &data["board"];
    assert_eq!(board["game"], "generals", "{data}");
    assert!(data["turn"].as_u64() >= Some(1), "{data}");
    assert_eq!(board["turn"], data["turn"], "{data}");
    assert!(board["state"].is_object(), "{data}");
    // The organiser's match page has the viewer in live mode.
    let (_, live_page) = get(address, &match_path, Some(&organiser));
    assert!(
        live_page.contains("data-live=\"true\"") || live_page.contains("data-frames="),
        "{live_page}"
    );

    run.signal(libc::SIGINT);
    run.wait_exit(Duration::from_secs(60))
        .expect("the run stops at Ctrl-C");
}
