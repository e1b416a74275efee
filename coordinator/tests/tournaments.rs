//! Tournament files resolved through the game registry, and tournament ids.
//! `generals-ffa` is used by its registry entry only (4 seats, baselines).

use std::collections::BTreeMap;

use arena_coordinator::domain::Format;
use arena_coordinator::service::{Coordinator, CoordinatorConfig, NewTournament, tournament_id};
use arena_coordinator::store::{LiveBoard, Store};
use arena_coordinator::tournament_file::TournamentFile;
use arena_engine::registry::{self, RuleValue, Rules};

fn file(head: &str, bots: usize) -> String {
    let mut text = format!(
        "name = \"Cup\"\nseed = 7\n{head}\n\
         [format]\nkind = \"swiss\"\nrounds = 3\n"
    );
    for i in 0..bots {
        text.push_str(&format!(
            "\n[[bots]]\nname = \"b{i}\"\npath = \"bots/b{i}\"\n"
        ));
    }
    text
}

/// The error with its whole chain, as the CLI prints it.
fn shown(text: &str) -> String {
    let err = TournamentFile::parse(text).expect_err(text);
    let mut shown = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        shown.push_str(": ");
        shown.push_str(&s.to_string());
        source = s.source();
    }
    shown
}

#[test]
fn defaults_come_from_the_game() {
    let default = TournamentFile::parse(&file("", 2)).unwrap();
    let entry = registry::find(registry::DEFAULT_GAME).unwrap();
    assert_eq!(default.game, entry.name);
    assert_eq!(default.seats, entry.seats[0]);
    assert_eq!(default.limits, entry.limits);

    let ffa = TournamentFile::parse(&file("game = \"generals-ffa\"", 5)).unwrap();
    let entry = registry::find("generals-ffa").unwrap();
    assert_eq!(ffa.seats, 4);
    assert_eq!(ffa.limits, entry.limits);
    assert_eq!(ffa.rules, entry.rules(&Rules::default()).unwrap());
}

#[test]
fn generals_ffa_takes_four_seats_and_fewer_bots() {
    let four = TournamentFile::parse(&file("game = \"generals-ffa\"\nseats = 4", 6)).unwrap();
    assert_eq!(four.seats, 4);
    // Baselines fill what the bots leave empty.
    let two = TournamentFile::parse(&file("game = \"generals-ffa\"\nseats = 4", 2)).unwrap();
    assert_eq!(two.bots.len(), 2);
}

#[test]
fn limits_override_only_what_they_name() {
    let text = file("[limits]\nmove_ms = 20\nreply_cap = 100", 2);
    let parsed = TournamentFile::parse(&text).unwrap();
    let entry = registry::find("generals").unwrap();
    assert_eq!(parsed.limits.move_ms, 20);
    assert_eq!(parsed.limits.reply_cap, 100);
    assert_eq!(parsed.limits.first_move_ms, entry.limits.first_move_ms);
    assert_eq!(parsed.limits.fault_limit, entry.limits.fault_limit);
}

#[test]
fn errors_name_the_key_or_the_game() {
    for (text, needle) in [
        (
            file("[rules]\nblitz = true", 2),
            "rules.blitz: no such option",
        ),
        (
            file("[rules]\nblitz = [1]", 2),
            "rules.blitz: expected true, false, an integer or a word, got [1]",
        ),
        (file("[limits]\ncolour = 1", 2), "unknown field `colour`"),
        // A key the [format] table does not have (here one that belongs at
        // the top) is an error, not silently dropped.
        (
            file("", 2).replace("rounds = 3", "rounds = 3\nenvironment = \"nix-x\""),
            "unknown field `environment`",
        ),
        (
            file("[limits]\nmove_ms = 0", 2),
            "limits.move_ms must be at least 1",
        ),
        (file("[limits]\nfault_limit = -1", 2), "fault_limit"),
        // The same rule as `arena play --fault-limit` and a lease: at least 1.
        (
            file("[limits]\nfault_limit = 0", 2),
            "limits.fault_limit must be at least 1",
        ),
        (
            file("game = \"chess\"", 2),
            "unknown game \"chess\" (registered: generals, ",
        ),
        (
            file("game = \"generals-ffa\"\nseats = 4\n[rules]\nblitz = 3", 4),
            "rules.blitz: expected true or false, got 3",
        ),
        (
            file(
                "game = \"generals-ffa\"\nseats = 4\n[rules]\ngrowth_period = 0",
                4,
            ),
            "rules.growth_period: 0 is outside 1..=",
        ),
        (
            file("game = \"generals-ffa\"\nseats = 4\n[rules]\nspeed = 2", 4),
            "rules.speed: no such option (options: blitz, ",
        ),
        (file("seats = 4", 4), "generals is played by 2 seats, not 4"),
        (
            file("game = \"generals-ffa\"\nseats = 2", 4),
            "generals-ffa is played by 4 seats, not 2",
        ),
        (
            file("", 2).replace("name = \"b1\"", "name = \" \""),
            "has an empty name",
        ),
        (
            file("", 2).replace("name = \"b1\"", "name = \"baseline:sprawl\""),
            "mean baseline seats",
        ),
        (
            file("", 2).replace("rounds = 3", "rounds = 1001"),
            "at most 1000 rounds",
        ),
        // generals has no baselines: every seat needs a bot.
        (file("", 1), "1 bots cannot fill 2 seats"),
        (
            file("game = \"generals-ffa\"\nbots = []", 0),
            "at least one bot",
        ),
    ] {
        let shown = shown(&text);
        assert!(shown.contains(needle), "{needle:?} not in {shown:?}");
    }
}

/// One edit of a tournament, for the id test.
type Change = dyn Fn(&mut NewTournament);

fn new_tournament() -> NewTournament {
    let entry = registry::find("generals").unwrap();
    NewTournament {
        name: "Cup".into(),
        game: "generals".into(),
        seats: 2,
        base_seed: 7,
        format: Format::Swiss { rounds: 3 },
        rules: Rules::default(),
        limits: entry.limits,
        entrants: vec![("a".into(), "1".repeat(64)), ("b".into(), "2".repeat(64))],
        environment: None,
        teams: None,
        wasm_runtime: None,
        model_runtime: None,
        live_board: LiveBoard::default(),
    }
}

#[test]
fn the_id_hashes_every_defining_field() {
    let base = new_tournament();
    let id = tournament_id(&base);
    assert_eq!(tournament_id(&base.clone()), id, "deterministic");
    let rule = |value| Rules(BTreeMap::from([("blitz".to_owned(), value)]));
    let variants: Vec<(&str, Box<Change>)> = vec![
        ("name", Box::new(|t| t.name.push('!'))),
        ("game", Box::new(|t| t.game = "generals-ffa".into())),
        ("seats", Box::new(|t| t.seats = 4)),
        ("seed", Box::new(|t| t.base_seed += 1)),
        (
            "format",
            Box::new(|t| t.format = Format::Swiss { rounds: 4 }),
        ),
        (
            "a rule",
            Box::new(move |t| t.rules = rule(RuleValue::Bool(true))),
        ),
        ("move_ms", Box::new(|t| t.limits.move_ms += 1)),
        ("first_move_ms", Box::new(|t| t.limits.first_move_ms += 1)),
        ("fault_limit", Box::new(|t| t.limits.fault_limit += 1)),
        ("reply_cap", Box::new(|t| t.limits.reply_cap += 1)),
        (
            "environment",
            Box::new(|t| t.environment = Some("env".into())),
        ),
        (
            "the wasm runtime",
            Box::new(|t| t.wasm_runtime = Some("wasmtime-1-ab".into())),
        ),
        (
            "the model runtime",
            Box::new(|t| t.model_runtime = Some("tract-onnx-0.23.9".into())),
        ),
        (
            "both runtimes",
            Box::new(|t| {
                t.wasm_runtime = Some("wasmtime-1-ab".into());
                t.model_runtime = Some("tract-onnx-0.23.9".into());
            }),
        ),
        (
            "a model runtime spelled as the wasm one",
            Box::new(|t| t.model_runtime = Some("wasmtime-1-ab".into())),
        ),
        (
            "an entrant's name",
            Box::new(|t| t.entrants[0].0 = "c".into()),
        ),
        (
            "an entrant's hash",
            Box::new(|t| t.entrants[1].1 = "3".repeat(64)),
        ),
        ("the entrants' order", Box::new(|t| t.entrants.reverse())),
        (
            "a team layout",
            Box::new(|t| t.teams = Some(vec![0, 1, 0, 1])),
        ),
    ];
    let mut seen = vec![id];
    for (what, change) in variants {
        let mut changed = new_tournament();
        change(&mut changed);
        let other = tournament_id(&changed);
        assert!(!seen.contains(&other), "changing {what} kept an id");
        seen.push(other);
    }
    // Two rule values differ too.
    let mut on = new_tournament();
    on.rules = rule(RuleValue::Bool(true));
    let mut off = new_tournament();
    off.rules = rule(RuleValue::Bool(false));
    assert_ne!(tournament_id(&on), tournament_id(&off));
}

#[tokio::test]
async fn creation_resolves_and_checks_against_the_game() {
    let coordinator = Coordinator::new(Store::memory(), CoordinatorConfig::default());
    let mut new = new_tournament();
    for (name, hash) in &mut new.entrants {
        let archive = name.clone().into_bytes();
        *hash = arena_coordinator::submission_id(&archive);
        coordinator
            .store()
            .put_submission(hash, archive)
            .await
            .unwrap();
    }
    let id = coordinator.create_tournament(new.clone()).await.unwrap();
    // The same tournament again is the same one.
    assert_eq!(
        coordinator.create_tournament(new.clone()).await.unwrap(),
        id
    );
    let spec = coordinator.store().tournament(&id).await.unwrap().unwrap();
    assert_eq!(spec.limits, new.limits);
    // Once cancelled, the same definition is refused rather than "found".
    coordinator.cancel(&id).await.unwrap();
    let err = coordinator
        .create_tournament(new.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("was cancelled"), "{err}");
    let mut renamed = new.clone();
    renamed.name.push_str(" (again)");
    assert_ne!(coordinator.create_tournament(renamed).await.unwrap(), id);
    assert_eq!(spec.rules, Rules::default());

    let mut seats = new.clone();
    seats.seats = 4;
    let err = coordinator.create_tournament(seats).await.unwrap_err();
    assert!(format!("{err:?}").contains("Seats"), "{err:?}");
    let mut rules = new.clone();
    rules.rules = Rules(BTreeMap::from([(
        "blitz".to_owned(),
        RuleValue::Bool(true),
    )]));
    let err = coordinator.create_tournament(rules).await.unwrap_err();
    assert!(format!("{err:?}").contains("blitz"), "{err:?}");
    let mut limits = new.clone();
    limits.limits.move_ms = 0;
    let err = coordinator.create_tournament(limits).await.unwrap_err();
    assert!(format!("{err:?}").contains("move_ms"), "{err:?}");
}

/// The shipped example files load, name bots that exist, and resolve to
/// their game's registered seats.
#[test]
fn the_example_tournament_files_load() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let file = TournamentFile::load(&path).unwrap_or_else(|e| panic!("{path:?}: {e:#?}"));
        let entry = registry::find(&file.game).unwrap();
        assert!(entry.seats.contains(&file.seats), "{path:?}");
        // A bot directory: a program (run.sh), a WebAssembly module
        // (bot.wasm), a build.sh that makes the module, or a model graph
        // (model.onnx, with its bot.toml).
        for bot in &file.bots {
            assert!(
                ["run.sh", "bot.wasm", "build.sh", "model.onnx"]
                    .iter()
                    .any(|f| bot.path.join(f).is_file()),
                "{path:?}: {bot:?}"
            );
        }
        seen += 1;
    }
    assert!(seen >= 2, "examples/ holds the tournament files");
}

#[test]
fn a_file_written_out_parses_to_itself_fuel_and_runtimes_included() {
    let text = file(
        "game = \"grid-royale\"\nseats = 2\nwasm_runtime = \"wasmtime-1-ab\"\n\
         model_runtime = \"tract-onnx-0.23.9\"\n\
         [limits]\nfuel_per_turn = 1234\nwall_ms = 77\n",
        2,
    );
    let parsed = TournamentFile::parse(&text).unwrap();
    let fuel = parsed.limits.fuel.expect("grid royale has fuel");
    assert_eq!((fuel.per_turn, fuel.wall_ms), (1234, 77));
    assert_eq!(parsed.wasm_runtime.as_deref(), Some("wasmtime-1-ab"));
    assert_eq!(parsed.model_runtime.as_deref(), Some("tract-onnx-0.23.9"));
    let written = parsed.to_toml().unwrap();
    assert!(
        written.contains("model_runtime = \"tract-onnx-0.23.9\""),
        "{written}"
    );
    assert_eq!(
        TournamentFile::parse(&written).unwrap(),
        parsed,
        "{written}"
    );

    let generals = TournamentFile::parse(&file("", 2)).unwrap();
    let written = generals.to_toml().unwrap();
    assert!(!written.contains("fuel"), "{written}");
    assert!(!written.contains("runtime"), "{written}");
    assert_eq!(TournamentFile::parse(&written).unwrap(), generals);
    // An empty runtime names none.
    let empty = TournamentFile::parse(&file("model_runtime = \"\"", 2)).unwrap();
    assert_eq!(empty.model_runtime, None);
}
