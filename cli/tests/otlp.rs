//! `arena run` exports its spans over OTLP/gRPC when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set: a tiny tournament against an
//! in-process OTLP trace receiver, checking that the lease → match (fetch,
//! build_and_play (build, play), report) → report chain arrives with its
//! attributes.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use tokio::sync::mpsc;

use support::{Reaped, arena};

/// One span as the receiver got it.
#[derive(Clone, Debug)]
struct Span {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    attributes: BTreeMap<String, String>,
}

impl Span {
    fn attr(&self, key: &str) -> &str {
        self.attributes
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("span {} has no attribute {key:?}: {self:?}", self.name))
    }
}

/// An OTLP trace receiver that forwards every span it gets to a channel.
struct Receiver {
    spans: mpsc::UnboundedSender<Span>,
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        for resource_spans in request.into_inner().resource_spans {
            let resource = resource_spans
                .resource
                .map(|r| attributes(&r.attributes))
                .unwrap_or_default();
            let service = resource.get("service.name").cloned().unwrap_or_default();
            for scope_spans in resource_spans.scope_spans {
                for span in scope_spans.spans {
                    let _ = self.spans.send(Span {
                        service: service.clone(),
                        name: span.name,
                        trace_id: hex(&span.trace_id),
                        span_id: hex(&span.span_id),
                        parent_span_id: hex(&span.parent_span_id),
                        attributes: attributes(&span.attributes),
                    });
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, String> {
    list.iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map(text).unwrap_or_default(),
            )
        })
        .collect()
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Starts the receiver on an ephemeral loopback port.
async fn receiver() -> (std::net::SocketAddr, mpsc::UnboundedReceiver<Span>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (spans, received) = mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Receiver { spans }))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    (address, received)
}

/// Two copies of the random test bot, made distinct submissions by a
/// `name.txt` of their own, and a one-cycle round robin between them.
fn tournament(dir: &Path, games_per_pairing: u32) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bots/test/random");
    let mut text = format!(
        "name = \"OTLP cup\"\n\
         game = \"generals\"\n\
         seed = 5\n\
         \n\
         [format]\n\
         kind = \"round_robin\"\n\
         cycles = 1\n\
         games_per_pairing = {games_per_pairing}\n\
         \n\
         [limits]\n\
         move_ms = 5000\n\
         first_move_ms = 10000\n\
         fault_limit = 50\n"
    );
    for name in ["random-a", "random-b"] {
        let bot = dir.join(name);
        std::fs::create_dir_all(&bot).unwrap();
        for file in ["bot.py", "run.sh"] {
            std::fs::copy(source.join(file), bot.join(file)).unwrap();
        }
        std::fs::set_permissions(bot.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::write(bot.join("name.txt"), format!("{name}\n")).unwrap();
        text.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            bot.display()
        ));
    }
    let path = dir.join("tournament.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Spans received so far, keyed by name.
#[derive(Default)]
struct Seen(Vec<Span>);

impl Seen {
    fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Span> + 'a {
        self.0.iter().filter(move |s| s.name == name)
    }

    fn children<'a>(&'a self, parent: &'a Span, name: &'a str) -> Vec<&'a Span> {
        self.named(name)
            .filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id)
            .collect()
    }

    /// Whether every span the test checks has arrived for `matches` matches.
    fn complete(&self, matches: usize) -> bool {
        let count = |name| self.named(name).count();
        count("match") >= matches
            && count("fetch") >= 2 * matches
            && count("build") >= 2 * matches
            && count("play") >= matches
            && count("build_and_play") >= matches
            // Worker and coordinator each report every match.
            && count("report") >= 2 * matches
            && self
                .named("lease")
                .filter(|s| s.attributes.get("match_id").is_some_and(|m| !m.is_empty()))
                .count()
                >= matches
            && count("advance") >= 1
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arena_run_exports_lease_match_and_report_spans_over_otlp() {
    const GAMES_PER_PAIRING: u32 = 2;
    let matches = GAMES_PER_PAIRING as usize;
    let (address, mut received) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), GAMES_PER_PAIRING);

    let mut command = arena();
    command
        .arg("run")
        .arg(&file)
        .args(["--json", "--no-sandbox", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{address}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("RUST_LOG");
    let run = tokio::task::spawn_blocking(move || command.output());
    let output = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("`arena run` finished within 3 minutes")
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "arena run failed: {stderr}");
    assert!(
        !stderr.contains("OpenTelemetry") && !stderr.contains("flushing trace spans"),
        "{stderr}"
    );

    // The run shut its exporter down (flushing) before exiting, so the spans
    // are here or on their way; wait for them with a deadline.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Seen::default();
    while !seen.complete(matches) {
        match tokio::time::timeout_at(deadline, received.recv()).await {
            Ok(Some(span)) => seen.0.push(span),
            Ok(None) => unreachable!("the receiver keeps its sender"),
            Err(_) => {
                let names: Vec<_> = seen.0.iter().map(|s| &s.name).collect();
                panic!("spans missing after 30 s; got {names:?}\nstderr: {stderr}");
            }
        }
    }

    for span in &seen.0 {
        assert_eq!(span.service, "arena", "{span:?}");
    }

    // The worker: one `match` per match, the rest of its work inside it.
    let match_spans: Vec<&Span> = seen.named("match").collect();
    let match_ids: BTreeSet<&str> = match_spans.iter().map(|s| s.attr("match_id")).collect();
    assert_eq!(match_ids.len(), matches, "{match_spans:?}");
    let tournament = match_spans[0].attr("tournament").to_owned();
    assert!(tournament.starts_with("t-"), "{tournament}");
    for span in &match_spans {
        assert!(span.attr("match_id").starts_with(&format!("{tournament}:")));
        assert_eq!(span.attr("tournament"), tournament);
        assert_eq!(span.attr("attempt"), "1");
        assert!(!span.attr("lease_id").is_empty());
        assert_eq!(span.attr("worker"), "local-0");
        assert!(span.parent_span_id.is_empty(), "a match is a trace's root");

        let fetches = seen.children(span, "fetch");
        assert_eq!(fetches.len(), 2, "one fetch per seat: {fetches:?}");
        for fetch in &fetches {
            assert!(!fetch.attr("submission").is_empty());
            fetch.attr("cached");
        }

        let played = seen.children(span, "build_and_play");
        assert_eq!(played.len(), 1, "{played:?}");
        let played = played[0];
        assert!(played.attr("turns").parse::<u32>().unwrap() > 0);
        assert_eq!(seen.children(played, "build").len(), 2);
        let games = seen.children(played, "play");
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].attr("turns"), played.attr("turns"));

        let reports = seen.children(span, "report");
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].attr("match_id"), span.attr("match_id"));
        assert_eq!(reports[0].attr("outcome"), "accepted");
    }

    // The coordinator: a lease and an accepted report per match.
    let leased: BTreeSet<&str> = seen
        .named("lease")
        .filter_map(|s| s.attributes.get("match_id").map(String::as_str))
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(leased, match_ids);
    for lease in seen
        .named("lease")
        .filter(|s| s.attributes.get("match_id").is_some_and(|m| !m.is_empty()))
    {
        assert_eq!(lease.attr("worker"), "local-0");
        assert_eq!(lease.attr("attempt"), "1");
    }
    let coordinator_reports: Vec<&Span> = seen
        .named("report")
        .filter(|s| s.attr("code.module.name").starts_with("arena_coordinator"))
        .collect();
    let reported: BTreeSet<&str> = coordinator_reports
        .iter()
        .map(|s| s.attr("match_id"))
        .collect();
    assert_eq!(reported, match_ids);
    for report in &coordinator_reports {
        assert_eq!(report.attr("outcome"), "accepted");
    }
    let advance = seen.named("advance").next().unwrap();
    assert_eq!(advance.attr("tournament"), tournament);
}

/// Asks a child to stop as a service manager would (SIGTERM) and returns
/// its exit status, waited for on a blocking thread.
async fn terminate(mut child: Reaped) -> std::process::ExitStatus {
    let pid = child.0.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM {pid}");
    let wait = tokio::task::spawn_blocking(move || {
        let status = child.0.wait();
        (status, child)
    });
    let (status, _child) = tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .expect("stopped within a minute of SIGTERM")
        .unwrap();
    status.unwrap()
}

/// `arena coordinator` and `arena worker` export under their own service names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_and_worker_export_under_their_service_names() {
    let (address, mut received) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let file = tournament(dir.path(), 1);
    let otel = |command: &mut std::process::Command| {
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{address}"))
            // Export every 100 ms instead of every 5 s, so the test need not
            // stop the processes to see their spans.
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
            .env_remove("OTEL_SERVICE_NAME")
            .env_remove("OTEL_SDK_DISABLED")
            .env_remove("RUST_LOG");
    };
    let mut command = arena();
    command
        .args(["coordinator", "--listen", "127.0.0.1:0"])
        .args(["--worker-token", "w-token", "--admin-token", "a-token"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    otel(&mut command);
    let mut coordinator = Reaped(command.spawn().unwrap());
    let stdout = coordinator.0.stdout.take().unwrap();
    let listening = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stdout).lines();
        loop {
            let line = lines
                .next()
                .expect("the coordinator says where it listens")?;
            if let Some(address) = line.strip_prefix("listening on ") {
                // Keep reading in the background so the pipe never fills.
                std::thread::spawn(move || lines.for_each(drop));
                return Ok::<_, std::io::Error>(address.to_owned());
            }
        }
    });
    let listening = tokio::time::timeout(Duration::from_secs(30), listening)
        .await
        .expect("the coordinator listens within 30 s")
        .unwrap()
        .unwrap();
    let url = format!("http://{listening}");

    let mut command = arena();
    command
        .args(["worker", "--coordinator", &url, "--token", "w-token"])
        .args(["--id", "otlp-worker", "--no-sandbox", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--submissions-dir")
        .arg(dir.path().join("submissions"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    otel(&mut command);
    let worker = Reaped(command.spawn().unwrap());

    let mut command = arena();
    command
        .args([
            "tournament",
            "--coordinator",
            &url,
            "--token",
            "a-token",
            "create",
        ])
        .arg(&file)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let created = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let tournament = String::from_utf8(created.stdout).unwrap().trim().to_owned();

    // One match: wait for the coordinator's accepted report and the
    // worker's whole match.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mut seen = Seen::default();
    let done = |seen: &Seen| {
        let from = |service: &'static str, name: &'static str| {
            seen.named(name)
                .filter(move |s| s.service == service)
                .count()
        };
        from("arena-worker", "match") >= 1
            && from("arena-worker", "report") >= 1
            && from("arena-coordinator", "report") >= 1
            && seen
                .named("lease")
                .any(|s| s.attributes.contains_key("match_id"))
    };
    while !done(&seen) {
        match tokio::time::timeout_at(deadline, received.recv()).await {
            Ok(Some(span)) => seen.0.push(span),
            Ok(None) => unreachable!("the receiver keeps its sender"),
            Err(_) => panic!(
                "spans missing after 120 s; got {:?}",
                seen.0
                    .iter()
                    .map(|s| (&s.service, &s.name))
                    .collect::<Vec<_>>()
            ),
        }
    }

    let match_span = seen.named("match").next().unwrap();
    assert_eq!(match_span.service, "arena-worker");
    assert_eq!(match_span.attr("worker"), "otlp-worker");
    assert_eq!(match_span.attr("tournament"), tournament);
    let match_id = match_span.attr("match_id");
    let lease = seen
        .named("lease")
        .find(|s| s.attributes.contains_key("match_id"))
        .unwrap();
    assert_eq!(lease.service, "arena-coordinator");
    assert_eq!(lease.attr("match_id"), match_id);
    assert_eq!(lease.attr("worker"), "otlp-worker");
    let report = seen
        .named("report")
        .find(|s| s.service == "arena-coordinator")
        .unwrap();
    assert_eq!(report.attr("match_id"), match_id);
    assert_eq!(report.attr("outcome"), "accepted");
    for span in &seen.0 {
        let from_coordinator = span
            .attr("code.module.name")
            .starts_with("arena_coordinator");
        assert_eq!(
            span.service,
            if from_coordinator {
                "arena-coordinator"
            } else {
                "arena-worker"
            },
            "{span:?}"
        );
    }

    // Both stop cleanly on SIGTERM, flushing their exporters on the way out.
    assert!(terminate(worker).await.success());
    assert!(terminate(coordinator).await.success());
}
