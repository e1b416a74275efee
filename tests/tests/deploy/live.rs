//! A real Prometheus scrapes a coordinator and a worker through a short
//! tournament in which one entrant only ever sends garbage (faults).

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::consistency::{dashboard_exprs, metric_names, rule_exprs};
use crate::http::{encode, get};
use crate::support::arena::{self, ADMIN_TOKEN, STARTUP, WORKER_TOKEN, workspace};
use crate::support::process::Proc;
use crate::support::tournament::TOURNAMENT;
use crate::tools::{deploy, prometheus, read};

const SCRAPED: Duration = Duration::from_secs(60);

/// Polls `probe` until it returns `Some`; panics naming `what` at the deadline.
fn poll<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A port free right now (bound, then released): Prometheus wants an explicit one.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Copies `bots/test/<kind>` to `root/<name>` with a `name.txt` of its own,
/// so each entrant is a distinct submission.
fn entrant(root: &Path, kind: &str, name: &str) -> PathBuf {
    let source = workspace().join("bots/test").join(kind);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    std::fs::write(dir.join("name.txt"), format!("{name}\n")).unwrap();
    dir
}

/// The metric names in a Prometheus text exposition (samples and HELP/TYPE lines).
fn exported_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let line = line
                .strip_prefix("# HELP ")
                .or_else(|| line.strip_prefix("# TYPE "))
                .unwrap_or(line);
            if line.starts_with('#') {
                return None;
            }
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            Some(line[..end].to_owned()).filter(|n| !n.is_empty())
        })
        .collect()
}

/// A Prometheus instant query: the `data.result` array once the query
/// succeeds; panics on a query error.
fn query(prometheus: &str, promql: &str) -> Vec<serde_json::Value> {
    let path = format!("/api/v1/query?query={}", encode(promql));
    let (status, body) =
        get(prometheus, &path).unwrap_or_else(|| panic!("Prometheus at {prometheus} is gone"));
    let json: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{promql}: {e}: {body}"));
    assert!(
        status == 200 && json["status"] == "success",
        "query {promql:?} failed ({status}): {body}"
    );
    json["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

struct Prometheus {
    /// Killed on drop.
    _process: Proc,
    addr: String,
}

impl Prometheus {
    fn start(dir: &Path, coordinator_metrics: &str, worker_metrics: &str) -> Prometheus {
        let rules = deploy("prometheus/rules.yml");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 rule_files:\n  - {rules}\n\
                 scrape_configs:\n\
                 \x20 - job_name: arena-coordinator\n    static_configs:\n      - targets: [\"{coordinator_metrics}\"]\n\
                 \x20 - job_name: arena-worker\n    static_configs:\n      - targets: [\"{worker_metrics}\"]\n",
                rules = rules.display()
            ),
        )
        .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let mut command = Command::new(prometheus());
        command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn");
        let mut process = Proc::spawn("prometheus", command);
        let deadline = Instant::now() + STARTUP;
        loop {
            if get(&addr, "/-/ready").is_some_and(|(status, _)| status == 200) {
                break;
            }
            if let Some(status) = process.try_exit() {
                panic!(
                    "prometheus exited with {status}:\n{}",
                    process.stderr.text()
                );
            }
            assert!(
                Instant::now() < deadline,
                "prometheus not ready after {STARTUP:?}:\n{}",
                process.stderr.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Prometheus {
            _process: process,
            addr,
        }
    }
}

#[test]
fn prometheus_scrapes_a_live_tournament() {
    // Field order of the guards does not matter here: each Proc is killed on
    // drop, and the temp dir (declared first) is removed last.
    let dir = tempfile::Builder::new()
        .prefix("arena-deploy-")
        .tempdir()
        .unwrap();
    let prometheus_bin = prometheus(); // fail early if it is missing

    let mut command = arena::arena();
    command
        .args([
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ])
        .args(["--worker-token", WORKER_TOKEN, "--admin-token", ADMIN_TOKEN])
        .env_remove("ARENA_REDIS_URL");
    let coordinator = Proc::spawn("coordinator", command);
    let coordinator_metrics = coordinator.wait_for_stdout("its metrics line", STARTUP, |l| {
        l.starts_with("metrics on ")
    })["metrics on ".len()..]
        .trim()
        .to_owned();
    let listen = coordinator.wait_for_stdout("its listening line", STARTUP, |l| {
        l.starts_with("listening on ")
    })["listening on ".len()..]
        .trim()
        .to_owned();
    let url = format!("http://{listen}");

    let mut command = arena::arena();
    command
        .args([
            "worker",
            "--coordinator",
            &url,
            "--token",
            WORKER_TOKEN,
            "--id",
            "deploy-w",
        ])
        .args(["--metrics", "127.0.0.1:0", "--no-sandbox"])
        .arg("--cache-dir")
        .arg(dir.path().join("builds"))
        .arg("--submissions-dir")
        .arg(dir.path().join("submissions"));
    let worker = Proc::spawn("worker", command);
    let worker_metrics = worker
        .wait_for_stderr("its metrics line", STARTUP, |l| l.contains("metrics on "))
        .rsplit("metrics on ")
        .next()
        .unwrap()
        .trim()
        .to_owned();

    assert!(prometheus_bin.is_file());
    let prometheus = Prometheus::start(dir.path(), &coordinator_metrics, &worker_metrics);
    let prom = prometheus.addr.as_str();
    poll("Prometheus to scrape both targets", SCRAPED, || {
        let up = query(prom, "up == 1");
        (up.len() == 2).then_some(())
    });

    // Three entrants, one match per pairing: random against garbage twice,
    // garbage against garbage once. Garbage forfeits on its fault limit.
    let bots = dir.path().join("bots");
    let entrants = [
        ("random", "random-0"),
        ("garbage", "garbage-1"),
        ("garbage", "garbage-2"),
    ];
    let mut toml = String::from(
        "name = \"deploy e2e\"\ngame = \"generals\"\nseed = 5\n\n\
         [format]\nkind = \"round_robin\"\ncycles = 1\ngames_per_pairing = 1\n\n\
         [limits]\nmove_ms = 5000\nfirst_move_ms = 30000\nfault_limit = 20\n",
    );
    for (kind, name) in entrants {
        let path = entrant(&bots, kind, name);
        toml.push_str(&format!(
            "\n[[bots]]\nname = \"{name}\"\npath = \"{}\"\n",
            path.display()
        ));
    }
    let file = dir.path().join("tournament.toml");
    std::fs::write(&file, toml).unwrap();
    let id = arena::create_tournament(&url, file.to_str().unwrap());
    assert!(id.starts_with("t-"), "create printed {id:?}");
    let status = poll("the tournament to finish", TOURNAMENT, || {
        let line = arena::tournament(&url, &["status", &id]);
        line.contains(", finished").then_some(line)
    });
    assert!(status.contains("3/3 matches done"), "{status}");

    // The series arrived in Prometheus.
    poll("fault counts in Prometheus", SCRAPED, || {
        let faults = query(prom, "sum by (job) (arena_bot_faults_total) > 0");
        (faults.len() == 2).then_some(())
    });
    let malformed = query(
        prom,
        "arena_bot_faults_total{job=\"arena-coordinator\",kind=\"malformed\"}",
    );
    assert!(
        !malformed.is_empty(),
        "garbage replies count as malformed faults"
    );
    poll("move latency buckets in Prometheus", SCRAPED, || {
        let buckets = query(
            prom,
            "arena_move_latency_seconds_bucket{job=\"arena-worker\"}",
        );
        (buckets.len() > 1).then_some(())
    });
    let p99 = query(
        prom,
        "histogram_quantile(0.99, sum by (le) (arena_move_latency_seconds_bucket))",
    );
    assert_eq!(p99.len(), 1, "{p99:?}");

    // Every dashboard query is valid PromQL (Grafana's $__rate_interval
    // stood in for by a fixed window).
    for expr in dashboard_exprs() {
        query(prom, &expr.replace("$__rate_interval", "1m"));
    }
    // The alert rules loaded and evaluate without errors.
    let expected_rules = read(&deploy("prometheus/rules.yml"))
        .matches("- alert: ")
        .count();
    poll("every alert rule to have been evaluated", SCRAPED, || {
        let (_, body) = get(prom, "/api/v1/rules")?;
        let json: serde_json::Value = serde_json::from_str(&body).ok()?;
        let rules: Vec<&serde_json::Value> = json["data"]["groups"]
            .as_array()?
            .iter()
            .flat_map(|g| g["rules"].as_array().into_iter().flatten())
            .collect();
        assert_eq!(rules.len(), expected_rules, "{body}");
        for rule in &rules {
            assert_ne!(rule["health"], "err", "rule failed to evaluate: {rule}");
        }
        rules.iter().all(|r| r["health"] == "ok").then_some(())
    });

    // Every metric the rules and dashboard name is exported by the binaries
    // (histograms as _bucket/_sum/_count).
    let mut exported = BTreeSet::new();
    for addr in [&coordinator_metrics, &worker_metrics] {
        let (status, body) = get(addr, "/metrics").expect("a /metrics answer");
        assert_eq!(status, 200, "{body}");
        exported.extend(exported_names(&body));
    }
    let mut used = metric_names(&rule_exprs());
    used.extend(metric_names(&dashboard_exprs()));
    for name in &used {
        assert!(
            exported.contains(name),
            "{name} is used by an alert or the dashboard but no binary exports it; exported: {exported:?}"
        );
    }
    drop(prometheus);
    drop(worker);
    drop(coordinator);
}
