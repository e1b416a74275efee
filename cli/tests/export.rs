//! `arena export` on the state a real `arena run` left: a tiny classic
//! generals round robin of the repository's test bots (three entrants,
//! one with a comma and quotes in its name, 40 turns a match), played
//! unsandboxed into a state directory, or into a Redis of the test's own.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{Reaped, arena};

/// The entrant whose name needs quoting in CSV.
const QUOTED_NAME: &str = "Rand, \"A\"";
const ENTRANTS: usize = 3;

fn bot(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bots")
        .join(path)
}

/// Writes the tournament file (and two distinct copies of the random bot:
/// one submission may enter only once) into `dir`.
fn tournament(dir: &Path, name: &str) -> PathBuf {
    let mut text = format!(
        "name = \"{name}\"\ngame = \"generals-classic\"\nseed = 3\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
         [rules]\nmax_turns = 40\n\n\
         [limits]\nmove_ms = 5000\nfirst_move_ms = 10000\nfault_limit = 50\n"
    );
    let source = bot("test/random");
    for (copy, entrant) in [("rand-a", QUOTED_NAME), ("rand-b", "rand-b")] {
        let path = dir.join(copy);
        std::fs::create_dir_all(&path).unwrap();
        for file in ["bot.py", "run.sh"] {
            std::fs::copy(source.join(file), path.join(file)).unwrap();
        }
        std::fs::set_permissions(path.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::write(path.join("name.txt"), format!("{copy}\n")).unwrap();
        text.push_str(&format!(
            "\n[[bots]]\nname = {}\npath = \"{}\"\n",
            toml_string(entrant),
            path.display()
        ));
    }
    text.push_str(&format!(
        "\n[[bots]]\nname = \"garbage\"\npath = \"{}\"\n",
        bot("test/garbage").display()
    ));
    let file = dir.join("cup.toml");
    std::fs::write(&file, text).unwrap();
    file
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A played tournament: its scratch directory, state directory and what
/// `arena run --json` printed.
struct Played {
    dir: tempfile::TempDir,
    state: PathBuf,
    standings: String,
}

/// Plays the tournament named `name` into `<tmp>/state`.
fn play(name: &str) -> Played {
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), name);
    let state = dir.path().join("state");
    let out = arena()
        .arg("run")
        .arg(&file)
        .arg("--state")
        .arg(&state)
        .args(["--no-sandbox", "--json", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "arena run: {out:?}");
    Played {
        dir,
        state,
        standings: String::from_utf8(out.stdout).unwrap(),
    }
}

fn export(args: &[&str]) -> Output {
    arena().arg("export").args(args).output().unwrap()
}

fn export_state(state: &Path, args: &[&str]) -> Output {
    arena()
        .arg("export")
        .arg("--state")
        .arg(state)
        .args(args)
        .output()
        .unwrap()
}

fn stdout_of(out: Output) -> String {
    assert!(out.status.success(), "arena export: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Parses RFC 4180 CSV (CRLF records, quoted fields with doubled quotes).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "a bare CR in {text:?}");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => {
                assert!(c != '\n' && c != '"', "unquoted {c:?} in {text:?}");
                field.push(c);
            }
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "the CSV does not end with CRLF: {text:?}"
    );
    records
}

#[test]
fn standings_export_as_the_run_printed_them_and_as_csv() {
    let played = play("Export cup");

    // JSON: exactly what `arena run --json` printed, the tournament found
    // without --tournament (the state holds only this one).
    let json = stdout_of(export_state(&played.state, &["--format", "json"]));
    assert_eq!(json, played.standings);
    let as_default = stdout_of(export_state(&played.state, &[]));
    assert_eq!(as_default, played.standings);

    // CSV: a header and one row per entrant, the awkward name intact.
    let csv = stdout_of(export_state(&played.state, &["--format", "csv"]));
    let records = parse_csv(&csv);
    assert_eq!(records.len(), 1 + ENTRANTS, "{csv}");
    let header = &records[0];
    for column in [
        "rank", "entrant", "name", "points", "wins", "draws", "losses",
    ] {
        assert!(
            header.iter().any(|h| h == column),
            "no {column}: {header:?}"
        );
    }
    let name = header.iter().position(|h| h == "name").unwrap();
    let mut names: Vec<&str> = records[1..].iter().map(|r| r[name].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, [QUOTED_NAME, "garbage", "rand-b"]);
    for record in &records {
        assert_eq!(record.len(), header.len(), "{record:?}");
    }

    // --output writes the same to a file.
    let file = played.dir.path().join("standings.csv");
    let out = arena()
        .arg("export")
        .arg("--state")
        .arg(&played.state)
        .args(["--format", "csv", "--output"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), csv);
}

#[test]
fn results_export_every_seat_of_every_match() {
    let played = play("Results cup");
    let json = stdout_of(export_state(
        &played.state,
        &["--what", "results", "--format", "json"],
    ));
    let matches: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    // A round robin of three: each pair meets once.
    assert_eq!(matches.len(), ENTRANTS * (ENTRANTS - 1) / 2, "{json}");
    let seats: usize = matches
        .iter()
        .map(|m| m["seats"].as_array().unwrap().len())
        .sum();
    for m in &matches {
        assert!(m["round"].is_u64(), "{m}");
        assert!(m["match_id"].is_string(), "{m}");
    }

    let csv = stdout_of(export_state(
        &played.state,
        &["--what", "results", "--format", "csv"],
    ));
    let records = parse_csv(&csv);
    let header = &records[0];
    for column in [
        "match_id", "round", "seat", "entrant", "name", "rank", "score", "forfeit", "reason",
        "turns",
    ] {
        assert!(
            header.iter().any(|h| h == column),
            "no {column}: {header:?}"
        );
    }
    let rows = &records[1..];
    assert_eq!(rows.len(), seats, "{csv}");
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (match_id, seat, entrant, name, turns) = (
        column("match_id"),
        column("seat"),
        column("entrant"),
        column("name"),
        column("turns"),
    );
    // Row by row, the JSON's seats in order, named from the tournament.
    let expected: Vec<(String, String, String)> = matches
        .iter()
        .flat_map(|m| {
            m["seats"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        m["match_id"].as_str().unwrap().to_owned(),
                        i.to_string(),
                        s["entrant"].as_str().unwrap().to_owned(),
                    )
                })
        })
        .collect();
    let got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r[match_id].clone(), r[seat].clone(), r[entrant].clone()))
        .collect();
    assert_eq!(got, expected);
    assert!(rows.iter().any(|r| r[name] == QUOTED_NAME), "{csv}");
    assert!(rows.iter().all(|r| r.len() == header.len()), "{csv}");
    assert!(rows.iter().all(|r| r[turns] == "40"), "{csv}");
}

#[test]
fn a_state_directory_in_use_is_read_as_last_committed() {
    let played = play("Busy cup");
    // The store held open, as a run going on holds it.
    let held = arena_coordinator::store::Store::open_dir(&played.state).unwrap();
    let out = export_state(&played.state, &[]);
    drop(held);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), played.standings);
}

#[test]
fn a_missing_state_or_tournament_is_a_clear_error() {
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("no-state-here");
    let out = export_state(&missing, &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no state directory") && said.contains("no-state-here"),
        "{said}"
    );
    assert!(out.stdout.is_empty());

    // Neither or both sources: a usage error.
    assert_eq!(export(&[]).status.code(), Some(2));
    let both = arena()
        .arg("export")
        .arg("--state")
        .arg(&missing)
        .args(["--redis", "redis://127.0.0.1:1/"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{both:?}");

    let played = play("Lookup cup");
    let out = export_state(&played.state, &["--tournament", "t-nonesuch"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no tournament t-nonesuch") && said.contains("(Lookup cup)"),
        "{said}"
    );
    assert!(out.stdout.is_empty());

    // A second tournament in the same state: --tournament is needed, and
    // the error lists both, by id and name.
    let second = played.dir.path().join("second");
    std::fs::create_dir(&second).unwrap();
    let file = tournament(&second, "Second cup");
    let run = arena()
        .arg("run")
        .arg(&file)
        .arg("--state")
        .arg(&played.state)
        .args(["--no-sandbox", "--json", "--cache-dir"])
        .arg(played.dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let out = export_state(&played.state, &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("2 tournaments")
            && said.contains("--tournament")
            && said.contains("(Lookup cup)")
            && said.contains("(Second cup)"),
        "{said}"
    );
    let id = said
        .lines()
        .find(|l| l.contains("(Second cup)"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    let json = stdout_of(export_state(&played.state, &["--tournament", &id]));
    assert_eq!(json, String::from_utf8(run.stdout).unwrap());
}

/// A `redis-server` on a free loopback port, persistence off, killed on drop.
struct Redis {
    _process: Reaped,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    fn start() -> Redis {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Reaped(
            Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                .args(["--save", "", "--appendonly", "no", "--dir"])
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server is installed"),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let pong = TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut s| {
                let mut reply = [0u8; 7];
                s.write_all(b"PING\r\n").is_ok()
                    && s.read_exact(&mut reply).is_ok()
                    && &reply == b"+PONG\r\n"
            });
            if pong {
                break;
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        Redis {
            _process: process,
            port,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

#[test]
fn standings_and_results_export_from_redis() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), "Redis cup");
    let run = arena()
        .arg("run")
        .arg(&file)
        .args(["--redis", &redis.url(), "--no-sandbox", "--json"])
        .arg("--blobs")
        .arg(dir.path().join("blobs"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(run.status.success(), "arena run: {run:?}");
    let json = stdout_of(export(&["--redis", &redis.url()]));
    assert_eq!(json, String::from_utf8(run.stdout).unwrap());
    let csv = stdout_of(export(&[
        "--redis",
        &redis.url(),
        "--what",
        "results",
        "--format",
        "csv",
    ]));
    // Three matches of two seats, and the header.
    assert_eq!(parse_csv(&csv).len(), 1 + 3 * 2, "{csv}");
}
