//! The Redis Sentinel option: `deploy/k8s/sentinel` (an overlay on the base)
//! renders, and its pieces name each other consistently; the compose
//! override `deploy/compose/sentinel.yaml` points the coordinator at
//! sentinels it defines; both start every Redis node with the same script,
//! which the shell accepts.

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::process::output;
use crate::tools::{deploy, kustomize, read};
use crate::yaml::{Doc, docs, unquote};

/// The value of environment variable `name` in a rendered workload.
fn env(doc: &Doc, name: &str) -> String {
    let lines: Vec<&str> = doc.text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .find(|pair| pair[0] == format!("- name: {name}"))
        .and_then(|pair| pair[1].strip_prefix("value: "))
        .map(unquote)
        .unwrap_or_else(|| panic!("no env {name} with a value in\n{}", doc.text))
}

fn find<'a>(all: &'a [Doc], kind: &str, name: &str) -> &'a Doc {
    all.iter()
        .find(|d| d.kind() == kind && d.name() == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in the rendered overlay"))
}

/// `(hosts, master)` of a `redis+sentinel://h1:p1,h2:p2/master` URL.
fn sentinel_url(url: &str) -> (Vec<String>, String) {
    let rest = url
        .strip_prefix("redis+sentinel://")
        .unwrap_or_else(|| panic!("{url:?} is not a redis+sentinel:// URL"));
    let (hosts, master) = rest.split_once('/').expect("a master name");
    (
        hosts.split(',').map(str::to_owned).collect(),
        master.trim_end_matches('/').to_owned(),
    )
}

#[test]
fn k8s_sentinel_overlay_renders_and_fits_together() {
    let all = docs(&kustomize("k8s/sentinel"));
    let redis = find(&all, "StatefulSet", "arena-redis");
    let sentinels = find(&all, "StatefulSet", "arena-sentinel");
    let coordinator = find(&all, "Deployment", "arena-coordinator");
    assert_eq!(redis.values("replicas"), ["2"], "a primary and a replica");
    assert_eq!(
        sentinels.values("replicas"),
        ["3"],
        "a majority survives one loss"
    );
    for service in ["arena-redis", "arena-sentinel"] {
        let doc = find(&all, "Service", service);
        assert_eq!(doc.values("clusterIP"), ["None"], "{service} is headless");
        assert_eq!(
            doc.values("publishNotReadyAddresses"),
            ["true"],
            "{service}: pods find each other before they are ready"
        );
    }
    assert!(
        find(&all, "Service", "arena-sentinel")
            .named_ports("port")
            .contains(&("sentinel".to_owned(), "26379".to_owned()))
    );
    assert!(
        sentinels
            .named_ports("containerPort")
            .contains(&("sentinel".to_owned(), "26379".to_owned()))
    );

    // The coordinator asks exactly the sentinel pods, by their stable names,
    // for the master they monitor.
    let (hosts, master) = sentinel_url(&env(coordinator, "ARENA_REDIS_URL"));
    let expected: Vec<String> = (0..3)
        .map(|i| format!("arena-sentinel-{i}.arena-sentinel:26379"))
        .collect();
    assert_eq!(hosts, expected);
    for node in [redis, sentinels] {
        assert_eq!(env(node, "MASTER"), master, "{}", node.name());
        assert_eq!(env(node, "INITIAL"), "arena-redis-0.arena-redis");
        let listed: Vec<String> = env(node, "SENTINELS")
            .split(' ')
            .map(|h| format!("{h}:26379"))
            .collect();
        assert_eq!(listed, expected, "{}", node.name());
        assert_eq!(env(node, "QUORUM"), "2");
    }

    // Both workloads mount the generated script, under its hashed name.
    let config_maps: BTreeSet<String> = all
        .iter()
        .filter(|d| d.kind() == "ConfigMap")
        .map(Doc::name)
        .collect();
    for node in [redis, sentinels] {
        let used: Vec<String> = node
            .text
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix("name: arena-redis-node"))
            .map(|suffix| format!("arena-redis-node{suffix}"))
            .collect();
        assert!(!used.is_empty(), "{} mounts no start script", node.name());
        for name in used {
            assert!(config_maps.contains(&name), "{name} not in {config_maps:?}");
        }
        assert!(
            node.text.contains("/arena/redis-node.sh"),
            "{}",
            node.name()
        );
    }
    // The base's single-server URL is gone.
    assert!(!coordinator.text.contains("redis://arena-redis"));
}

#[test]
fn compose_sentinel_override_points_at_its_sentinels() {
    let text = read(&deploy("compose/sentinel.yaml"));
    let url = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("ARENA_REDIS_URL: "))
        .map(unquote)
        .next()
        .expect("the override sets ARENA_REDIS_URL");
    let (hosts, master) = sentinel_url(&url);
    assert_eq!(master, "arena");
    let services: BTreeSet<String> = text
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.trim().split_once(':').map(|(name, _)| name.to_owned()))
        .collect();
    for host in &hosts {
        let (name, port) = host.split_once(':').expect("host:port");
        assert_eq!(port, "26379", "{host}");
        assert!(
            services.contains(name),
            "{name} is not a service of {services:?}"
        );
    }
    assert_eq!(hosts.len(), 3);
    assert!(text.contains(&format!("MASTER: {master}")));
    for service in ["redis", "redis-replica"] {
        assert!(services.contains(service), "{services:?}");
    }
    assert!(text.contains("../k8s/sentinel/redis-node.sh:/arena/redis-node.sh:ro"));
}

#[test]
fn both_topologies_start_nodes_with_one_script() {
    // The compose override mounts the overlay's script (asserted above):
    // one file, so the two topologies cannot drift apart.
    let script = deploy("k8s/sentinel/redis-node.sh");
    assert!(script.is_file(), "{} is missing", script.display());
    assert!(!deploy("compose/sentinel/redis-node.sh").exists());
    let mut check = Command::new("sh");
    check.arg("-n").arg(&script);
    output(check);
}
