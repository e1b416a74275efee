//! The committed model directories through the check and the evaluator.

use std::path::PathBuf;
use std::time::Duration;

use arena_engine::ants::adapters::INTERFACE;
use arena_engine::registry::ModelLimits;

use crate::policy::read_head;
use crate::{Policy, Refusal, Strike, check};

const LIMITS: ModelLimits = ModelLimits {
    max_bytes: 64 << 20,
    max_macs: 10_000_000_000,
};

fn bot(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bots")
        .join(path)
}

/// A 12x16 board: three ants of mine, food, an enemy group, water.
fn frame() -> Vec<u8> {
    let mut map = [b'.'; 12 * 16];
    for c in 0..16 {
        map[11 * 16 + c] = b'?';
    }
    map[3 * 16 + 5] = b'%';
    let rows: Vec<String> = map
        .chunks(16)
        .map(|r| format!("\"{}\"", String::from_utf8_lossy(r)))
        .collect();
    format!(
        concat!(
            r#"{{"turn":5,"max_turns":500,"you":0,"players":2,"rows":12,"cols":16,"#,
            r#""attack_radius2":5,"gather_radius2":1,"view_radius2":77,"map":[{}],"#,
            r#""ants":[[2,2,0],[2,9,0],[7,4,0],[8,12,1],[9,12,1]],"#,
            r#""mine":[[2,2],[2,9],[7,4]],"food":[[2,5],[6,4]],"#,
            r#""hills":[[1,1,0],[10,14,1]],"hive":0,"scores":[1,1]}}"#,
            "\n"
        ),
        rows.join(",")
    )
    .into_bytes()
}

fn orders(reply: &[u8]) -> String {
    let text = std::str::from_utf8(reply).unwrap();
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    value["orders"].as_str().unwrap().to_owned()
}

fn refusal(path: &str, limits: &ModelLimits) -> String {
    check(&bot(path), &INTERFACE, limits)
        .map(|r| format!("passed: {r:?}"))
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn the_shipped_models_pass_the_check() {
    for path in [
        "ants-models/starter",
        "ants-models/stay",
        "ants-models/random",
    ] {
        let report = check(&bot(path), &INTERFACE, &LIMITS).unwrap();
        assert_eq!(report.head.shape, ["N", "5"], "{path}");
        assert_eq!(report.inputs[0].adapter, "local_window");
        assert_eq!(report.inputs[0].shape[0], "N");
        assert!(
            report.macs > 0 || path.ends_with("stay"),
            "{path}: {report:?}"
        );
    }
    let starter = check(&bot("ants-models/starter"), &INTERFACE, &LIMITS).unwrap();
    // 200 ants: 10 outputs over 8 channels of a 17x17 window, and the
    // danger weighting's 5 products.
    assert_eq!(starter.macs, 200 * (10 * 8 * 17 * 17 + 5));
    assert_eq!(starter.inputs[0].shape, ["N", "8", "17", "17"]);
}

#[test]
fn every_malformed_model_is_refused_with_its_reason() {
    let wrong = refusal("test/ants-models/wrong-head", &LIMITS);
    assert!(
        wrong.contains("the head \"scores\" has shape [N, 4]"),
        "{wrong}"
    );
    let op = refusal("test/ants-models/unsupported-op", &LIMITS);
    assert!(op.contains("unsupported operator Det"), "{op}");
    let small = ModelLimits {
        max_bytes: 1000,
        ..LIMITS
    };
    let large = refusal("ants-models/starter", &small);
    assert!(large.contains("more than the limit of 1000"), "{large}");
    let cheap = ModelLimits {
        max_macs: 1_000_000,
        ..LIMITS
    };
    let slow = refusal("test/ants-models/too-slow", &cheap);
    assert!(
        slow.contains("estimated cost 2148541224 multiply-accumulates"),
        "{slow}"
    );
    let missing = refusal("test/no-such-model", &LIMITS);
    assert!(missing.contains("cannot read"), "{missing}");
}

#[test]
fn the_starter_stay_and_random_models_answer_every_ant() {
    let frame = frame();
    let mut stay = Policy::load(&bot("ants-models/stay"), &INTERFACE, &LIMITS).unwrap();
    assert_eq!(orders(&stay.evaluate(&frame).unwrap()), "---");
    for path in ["ants-models/starter", "ants-models/random"] {
        let mut policy = Policy::load(&bot(path), &INTERFACE, &LIMITS).unwrap();
        let answer = policy.answer(&frame, Duration::from_secs(60)).unwrap();
        let got = orders(&answer.reply);
        assert_eq!(got.len(), 3, "{path}: {got}");
        assert!(got.bytes().all(|b| b"NESW-".contains(&b)), "{path}: {got}");
        // The same frame gives the same orders.
        assert_eq!(policy.evaluate(&frame).unwrap(), answer.reply);
    }
}

#[test]
fn the_starter_walks_to_food_and_keeps_off_water() {
    let mut policy = Policy::load(&bot("ants-models/starter"), &INTERFACE, &LIMITS).unwrap();
    let got = orders(&policy.evaluate(&frame()).unwrap());
    // Ant 0 at (2,2): food three squares east. Ant 2 at (7,4): food just
    // north, already in reach, so it holds.
    assert_eq!(&got[0..1], "E", "{got}");
    assert_eq!(&got[2..3], "-", "{got}");
}

#[test]
fn a_colony_without_ants_is_answered_without_evaluating() {
    let mut policy = Policy::load(&bot("test/ants-models/nan"), &INTERFACE, &LIMITS).unwrap();
    let frame = br#"{"rows":2,"cols":2,"map":["..",".."],"ants":[],"mine":[]}"#;
    assert_eq!(policy.evaluate(frame).unwrap(), br#"{"orders":""}"#);
}

#[test]
fn a_nan_head_is_a_strike() {
    let mut policy = Policy::load(&bot("test/ants-models/nan"), &INTERFACE, &LIMITS).unwrap();
    let strike = policy.evaluate(&frame()).unwrap_err();
    assert!(
        matches!(strike, Strike::NotFinite { row: 0, .. }),
        "{strike}"
    );
    assert_eq!(strike.kind(), "not_finite");
}

#[test]
fn a_bad_frame_is_an_adapter_strike() {
    let mut policy = Policy::load(&bot("ants-models/stay"), &INTERFACE, &LIMITS).unwrap();
    let strike = policy.evaluate(b"{\"rows\":1}\n").unwrap_err();
    assert_eq!(strike.kind(), "adapter", "{strike}");
}

#[test]
fn a_head_of_the_wrong_shape_at_run_time_is_a_strike() {
    use tract_onnx::prelude::Tensor;
    let three_rows = Tensor::from_shape(&[3, 5], &[0.0f32; 15]).unwrap();
    assert!(read_head(&three_rows, 3, 5).is_ok());
    let strike = read_head(&three_rows, 2, 5).unwrap_err();
    assert_eq!(
        strike,
        Strike::HeadShape {
            got: vec![3, 5],
            rows: 2,
            width: 5
        }
    );
    let ints = Tensor::from_shape(&[2, 5], &[0i64; 10]).unwrap();
    assert_eq!(read_head(&ints, 2, 5).unwrap_err().kind(), "head_shape");
}

#[test]
fn a_slow_model_is_late() {
    let mut policy = Policy::load(&bot("test/ants-models/too-slow"), &INTERFACE, &LIMITS).unwrap();
    let strike = policy
        .answer(&frame(), Duration::from_millis(1))
        .unwrap_err();
    assert!(
        matches!(strike, Strike::Late { deadline_ms: 1, .. }),
        "{strike}"
    );
}

#[test]
fn the_huge_allocation_passes_the_check() {
    // It is only caught at evaluation, by the sandbox's memory cap (the
    // end-to-end tests evaluate it there, never here).
    let report = check(&bot("test/ants-models/huge-alloc"), &INTERFACE, &LIMITS).unwrap();
    assert_eq!(report.macs, 200 * 5 * 8);
}

#[test]
fn refusals_name_the_input_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        bot("ants-models/starter/model.onnx"),
        dir.path().join("model.onnx"),
    )
    .unwrap();
    let write = |toml: &str| std::fs::write(dir.path().join("bot.toml"), toml).unwrap();
    let run = || match check(dir.path(), &INTERFACE, &LIMITS) {
        Ok(r) => format!("passed {r:?}"),
        Err(e) => e.to_string(),
    };
    write("adapters = \"ants/1\"\n[inputs.board]\nadapter = \"whole_map\"\n");
    assert!(
        run().contains("\"board\", which is not a graph input"),
        "{}",
        run()
    );
    write("adapters = \"ants/1\"\n[inputs.window]\nadapter = \"local_window\"\nradius = 3\n");
    assert!(
        run().contains("dim 2 is 17, which needs radius = 8, but bot.toml says 3"),
        "{}",
        run()
    );
    write("adapters = \"ants/1\"\n[inputs.window]\nadapter = \"whole_map\"\n");
    assert!(run().contains("has shape [1, 5]"), "{}", run());
    write(
        "adapters = \"ants/1\"\n[inputs.window]\nadapter = \"local_window\"\n[head]\noutput = \"x\"\n",
    );
    assert!(
        run().contains("the head \"x\" is not an output"),
        "{}",
        run()
    );
    write("adapters = \"ants/1\"\n[inputs.window]\nadapter = \"local_window\"\n");
    assert!(run().starts_with("passed"), "{}", run());
    std::fs::write(dir.path().join("model.onnx"), b"not a graph").unwrap();
    assert!(run().contains("model.onnx cannot be loaded"), "{}", run());
    assert!(matches!(
        check(dir.path(), &INTERFACE, &LIMITS),
        Err(Refusal::Load(_))
    ));
}

#[test]
fn the_host_answers_every_turn_in_order() {
    use crate::wire::{HostMessage, TurnRequest, write_turn};
    let mut input = Vec::new();
    for (deadline_ms, frame) in [
        (60_000, frame()),
        (60_000, b"garbage\n".to_vec()),
        (60_000, frame()),
    ] {
        write_turn(&TurnRequest { deadline_ms, frame }, &mut input);
    }
    let mut output = Vec::new();
    let mut log = Vec::new();
    crate::host::serve(
        &bot("ants-models/stay"),
        &INTERFACE,
        &LIMITS,
        &mut std::io::Cursor::new(input),
        &mut output,
        &mut log,
    )
    .unwrap();
    let lines: Vec<HostMessage> = output
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| HostMessage::parse(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(matches!(&lines[0], HostMessage::Ok { reply, .. } if reply == br#"{"orders":"---"}"#));
    assert!(matches!(&lines[1], HostMessage::Strike { kind, .. } if kind == "adapter"));
    assert!(matches!(&lines[2], HostMessage::Ok { .. }));
    let log = String::from_utf8_lossy(&log);
    assert!(log.contains("[arena: model ready: {"), "{log}");
    assert!(log.contains("[arena: strike: adapter:"), "{log}");
}

/// This thread's CPU time so far (`/proc/thread-self/schedstat`, in ns):
/// what a computation on this thread costs, which a busy machine does not
/// lengthen as it lengthens the wall-clock time.
fn thread_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("/proc/thread-self/schedstat");
    let ns = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unreadable schedstat {stat:?}"));
    Duration::from_nanos(ns)
}

/// A graph slower than the deadline is struck at the deadline, and the
/// turns after it, arriving while that evaluation still runs, wait for it
/// only within their own deadlines.
///
/// Checked against the work rather than against a second clock reading: a
/// host that made a turn wait for the evaluation before it could not answer
/// `TURNS` turns in less than `TURNS - 1` evaluations, and an evaluation
/// takes at least its CPU time, measured on this thread's own CPU clock
/// (the lowest of two), which no load on the machine shortens. The host
/// answers each turn in about its 1 ms deadline; it must answer them all in
/// less than half that bound (some 30 ms a turn on average for this graph,
/// about 3 s in all), so a loaded machine would have to stall it for
/// seconds to fail the test.
#[test]
fn the_host_keeps_the_deadline_of_a_slow_graph() {
    use crate::wire::{HostMessage, TurnRequest, write_turn};
    use std::io::BufRead;
    const TURNS: usize = 101;
    let mut input = Vec::new();
    for _ in 0..TURNS {
        let turn = TurnRequest {
            deadline_ms: 1,
            frame: frame(),
        };
        write_turn(&turn, &mut input);
    }
    // The host writes into a pipe read here, so each answer's arrival is
    // timed (the first one comes after the model is loaded).
    let (reader, mut writer) = std::io::pipe().unwrap();
    let host = std::thread::spawn(move || {
        crate::host::serve(
            &bot("test/ants-models/too-slow"),
            &INTERFACE,
            &LIMITS,
            &mut std::io::Cursor::new(input),
            &mut writer,
            &mut Vec::new(),
        )
    });
    let mut lines = Vec::new();
    let mut arrivals = Vec::new();
    for line in std::io::BufReader::new(reader).lines() {
        arrivals.push(std::time::Instant::now());
        lines.push(HostMessage::parse(line.unwrap().as_bytes()).unwrap());
    }
    host.join().unwrap().unwrap();
    assert_eq!(lines.len(), TURNS, "{lines:?}");
    for line in &lines {
        assert!(
            matches!(line, HostMessage::Strike { kind, .. } if kind == "late"),
            "{lines:?}"
        );
    }
    let mut policy =
        crate::Policy::load(&bot("test/ants-models/too-slow"), &INTERFACE, &LIMITS).unwrap();
    let one_evaluation = (0..2)
        .map(|_| {
            let start = thread_cpu_time();
            policy.evaluate(&frame()).expect("the slow graph evaluates");
            thread_cpu_time() - start
        })
        .min()
        .expect("two evaluations");
    let waiting_bound = one_evaluation * (TURNS as u32 - 1);
    let answering = arrivals[TURNS - 1] - arrivals[0];
    eprintln!("{TURNS} answers in {answering:?}; one evaluation takes {one_evaluation:?} of CPU");
    assert!(
        answering < waiting_bound / 2,
        "{answering:?} for {} answers after the first, which waiting for the evaluations \
         would take at least {waiting_bound:?} ({one_evaluation:?} of CPU each)",
        TURNS - 1
    );
}

#[test]
fn the_host_refuses_a_malformed_model_and_stops() {
    use crate::wire::HostMessage;
    let mut output = Vec::new();
    crate::host::serve(
        &bot("test/ants-models/unsupported-op"),
        &INTERFACE,
        &LIMITS,
        &mut std::io::Cursor::new(b"turn 10 2\n{}".to_vec()),
        &mut output,
        &mut Vec::new(),
    )
    .unwrap();
    let line = &output[..output.len() - 1];
    assert!(
        matches!(HostMessage::parse(line), Some(HostMessage::Refused(r)) if r.contains("unsupported operator Det")),
        "{}",
        String::from_utf8_lossy(&output)
    );
}
