//! Every `arena` flag and `ARENA_*` variable the deployment files use is one
//! the binary accepts, and the metric names the rules and the dashboard use
//! (checked against a live scrape in `live.rs`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::support::arena::arena;
use crate::support::process::output;
use crate::tools::{deploy, kustomize, read};
use crate::yaml::{docs, lists};

/// Variables the compose file interpolates itself (never passed to `arena`).
const COMPOSE_ONLY: &[&str] = &["ARENA_IMAGE"];

fn help(subcommand: &str) -> String {
    let mut command = arena();
    command.args([subcommand, "--help"]);
    output(command)
}

/// `--flags` of `arena <subcommand> --help`.
fn help_flags(help: &str) -> BTreeSet<String> {
    tokens(help, "--", |c| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
    })
}

/// `[env: NAME=]` of `arena <subcommand> --help`.
fn help_env(help: &str) -> BTreeSet<String> {
    help.split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split('=').next())
        .map(str::to_owned)
        .collect()
}

/// Words of `text` that start with `prefix` and continue with `allowed` characters.
pub fn tokens(text: &str, prefix: &str, allowed: impl Fn(char) -> bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at + prefix.len()..];
        let len = tail.find(|c: char| !allowed(c)).unwrap_or(tail.len());
        let boundary = before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        if boundary && len > 0 {
            out.insert(format!("{prefix}{}", &tail[..len]));
        }
        rest = &tail[len..];
    }
    out
}

/// One `arena <subcommand> --flags...` found in a deployment file.
#[derive(Debug)]
struct Invocation {
    file: String,
    subcommand: String,
    flags: Vec<String>,
}

fn from_lists(file: &str, text: &str, key: &str) -> Vec<Invocation> {
    lists(text, key)
        .into_iter()
        .filter(|l| matches!(l[0].as_str(), "coordinator" | "worker" | "tournament"))
        .map(|l| Invocation {
            file: file.to_owned(),
            subcommand: l[0].clone(),
            flags: l[1..]
                .iter()
                .filter(|a| a.starts_with("--"))
                .map(|a| a.split('=').next().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

fn from_unit(file: &str, text: &str) -> Vec<Invocation> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|l| l.strip_prefix("ExecStart="))
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words
                .iter()
                .position(|w| *w == "arena" || w.ends_with("/arena"))
                .unwrap_or_else(|| panic!("{file}: ExecStart runs no arena: {line}"));
            Invocation {
                file: file.to_owned(),
                subcommand: words[at + 1].to_owned(),
                flags: words[at + 2..]
                    .iter()
                    .filter(|w| w.starts_with("--"))
                    .map(|w| w.split('=').next().unwrap().to_owned())
                    .collect(),
            }
        })
        .collect()
}

/// Every file under deploy/.
fn deploy_files() -> Vec<PathBuf> {
    fn walk(dir: PathBuf, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(deploy(""), &mut out);
    out.sort();
    out
}

#[test]
fn arena_flags_and_variables_are_real() {
    let mut invocations = Vec::new();
    for (label, rendered) in [("k8s/base", kustomize("k8s/base"))] {
        for doc in docs(&rendered) {
            invocations.extend(from_lists(
                &format!("{label} {}", doc.name()),
                &doc.text,
                "args",
            ));
        }
    }
    let compose = read(&deploy("compose/compose.yaml"));
    invocations.extend(from_lists("compose/compose.yaml", &compose, "command"));
    for unit in [
        "systemd/arena-coordinator.service",
        "systemd/arena-worker.service",
    ] {
        invocations.extend(from_unit(unit, &read(&deploy(unit))));
    }
    // Each place runs both a coordinator and a worker: nothing was missed.
    for place in ["k8s/base", "compose/", "systemd/"] {
        for subcommand in ["coordinator", "worker"] {
            assert!(
                invocations
                    .iter()
                    .any(|i| i.file.starts_with(place) && i.subcommand == subcommand),
                "found no `arena {subcommand}` in {place}: {invocations:#?}"
            );
        }
    }

    let mut helps = std::collections::BTreeMap::new();
    for invocation in &invocations {
        let help = helps
            .entry(invocation.subcommand.clone())
            .or_insert_with(|| help(&invocation.subcommand));
        let known = help_flags(help);
        for flag in &invocation.flags {
            assert!(
                known.contains(flag),
                "{}: `arena {} {flag}` is not a flag of the binary (it knows {known:?})",
                invocation.file,
                invocation.subcommand
            );
        }
    }

    // Variables: the ones the binary reads, nothing else.
    let coordinator_env = help_env(&help("coordinator"));
    let worker_env = help_env(&help("worker"));
    for name in ["ARENA_WORKER_TOKEN", "ARENA_ADMIN_TOKEN", "ARENA_REDIS_URL"] {
        assert!(
            coordinator_env.contains(name),
            "the coordinator reads {name}: {coordinator_env:?}"
        );
    }
    assert!(worker_env.contains("ARENA_WORKER_TOKEN"), "{worker_env:?}");
    let known: BTreeSet<&String> = coordinator_env.iter().chain(&worker_env).collect();
    for file in deploy_files() {
        let text = read(&file);
        let used = tokens(&text, "ARENA_", |c| {
            c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
        });
        for name in used {
            if COMPOSE_ONLY.contains(&name.as_str()) {
                continue;
            }
            assert!(
                known.contains(&name),
                "{}: {name} is not a variable `arena` reads (it reads {known:?})",
                file.display()
            );
        }
    }
    // Per workload: a worker gets only what a worker reads.
    for doc in docs(&kustomize("k8s/base")) {
        let expected = match doc.name().as_str() {
            "arena-coordinator" if doc.kind() == "Deployment" => &coordinator_env,
            "arena-worker" if doc.kind() == "DaemonSet" => &worker_env,
            _ => continue,
        };
        for name in doc
            .values("name")
            .into_iter()
            .filter(|n| n.starts_with("ARENA_"))
        {
            assert!(
                expected.contains(&name),
                "{} {}: sets {name}, which it does not read",
                doc.kind(),
                doc.name()
            );
        }
    }
}

/// The `expr`s of the alert rules and of the dashboard's panels.
pub fn rule_exprs() -> Vec<String> {
    read(&deploy("prometheus/rules.yml"))
        .lines()
        .filter_map(|l| l.trim().strip_prefix("expr: "))
        .map(crate::yaml::unquote)
        .collect()
}

pub fn dashboard_exprs() -> Vec<String> {
    let text = read(&deploy("grafana/arena.json"));
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("arena.json is JSON");
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push(target["expr"].as_str().expect("a PromQL expr").to_owned());
        }
    }
    out
}

/// `arena_*` names in PromQL expressions.
pub fn metric_names(exprs: &[String]) -> BTreeSet<String> {
    exprs
        .iter()
        .flat_map(|e| {
            tokens(e, "arena_", |c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
            })
        })
        .collect()
}

#[test]
fn rules_and_dashboard_cover_what_operators_watch() {
    let rules = metric_names(&rule_exprs());
    for name in [
        "arena_bot_faults_total",
        "arena_leases_expired_total",
        "arena_queue_depth",
        "arena_matches_total",
        "arena_workers_connected",
    ] {
        assert!(rules.contains(name), "no alert uses {name}: {rules:?}");
    }
    let exprs = dashboard_exprs();
    let dashboard = metric_names(&exprs);
    for name in [
        "arena_bot_faults_total",
        "arena_move_latency_seconds_bucket",
        "arena_queue_depth",
        "arena_matches_total",
        "arena_workers_connected",
        "arena_builds_total",
    ] {
        assert!(
            dashboard.contains(name),
            "no panel shows {name}: {dashboard:?}"
        );
    }
    for q in ["0.5", "0.99"] {
        assert!(
            exprs
                .iter()
                .any(|e| e.contains(&format!("histogram_quantile({q}, "))
                    && e.contains("arena_move_latency_seconds_bucket")),
            "no p{q} move latency panel"
        );
    }
}
