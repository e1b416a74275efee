//! `kubectl kustomize` renders both kustomizations, and the rendered objects
//! fit together: ports, names, selectors, the worker's node selection and
//! privileges, Redis persistence.

use crate::tools::kustomize;
use crate::yaml::{Doc, docs, flag, port_of};

fn find<'a>(all: &'a [Doc], kind: &str, name: &str) -> &'a Doc {
    all.iter()
        .find(|d| d.kind() == kind && d.name() == name)
        .unwrap_or_else(|| {
            let have: Vec<String> = all
                .iter()
                .map(|d| format!("{} {}", d.kind(), d.name()))
                .collect();
            panic!("no {kind} {name} in the rendered manifests; have {have:?}")
        })
}

/// The container args of a workload: the list whose first item is `subcommand`.
fn arena_args(doc: &Doc, subcommand: &str) -> Vec<String> {
    doc.lists("args")
        .into_iter()
        .find(|l| l.first().map(String::as_str) == Some(subcommand))
        .unwrap_or_else(|| panic!("no `args: [{subcommand}, ...]` in\n{}", doc.text))
}

fn container_port(doc: &Doc, name: &str) -> String {
    doc.named_ports("containerPort")
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no container port {name:?} in\n{}", doc.text))
}

/// The Service's `(name, port, targetPort)` triples.
fn service_ports(doc: &Doc) -> Vec<(String, String, String)> {
    let ports = doc.named_ports("port");
    let targets = doc.named_ports("targetPort");
    assert_eq!(
        ports.len(),
        targets.len(),
        "every Service port names its targetPort:\n{}",
        doc.text
    );
    ports
        .into_iter()
        .zip(targets)
        .map(|((name, port), (_, target))| (name, port, target))
        .collect()
}

/// The Service port `name` must lead to the container port the process
/// listens on: `targetPort` is that port's name or number.
fn assert_service_reaches(service: &Doc, port_name: &str, workload: &Doc, listening: &str) {
    let (_, _, target) = service_ports(service)
        .into_iter()
        .find(|(n, _, _)| n == port_name)
        .unwrap_or_else(|| panic!("Service {} has no port {port_name:?}", service.name()));
    let container = container_port(workload, port_name);
    assert_eq!(
        container,
        listening,
        "{} {}: container port {port_name} is {container} but the process listens on {listening}",
        workload.kind(),
        workload.name()
    );
    assert!(
        target == port_name || target == listening,
        "Service {} port {port_name} targets {target}, not {port_name} or {listening}",
        service.name()
    );
}

fn service_port(service: &Doc, name: &str) -> String {
    service_ports(service)
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, p, _)| p)
        .unwrap_or_else(|| panic!("Service {} has no port {name:?}", service.name()))
}

#[test]
fn base_renders_and_fits_together() {
    let all = docs(&kustomize("k8s/base"));
    for doc in &all {
        if doc.kind() != "Namespace" {
            assert_eq!(
                doc.values("namespace").first().map(String::as_str),
                Some("arena"),
                "{}",
                doc.text
            );
        }
    }

    // Coordinator: the Service reaches the gRPC and metrics ports it listens on.
    let coordinator = find(&all, "Deployment", "arena-coordinator");
    let coordinator_service = find(&all, "Service", "arena-coordinator");
    let args = arena_args(coordinator, "coordinator");
    let listen = port_of(&flag(&args, "--listen").expect("--listen"));
    let metrics = port_of(&flag(&args, "--metrics").expect("--metrics"));
    assert_service_reaches(coordinator_service, "grpc", coordinator, &listen);
    assert_service_reaches(coordinator_service, "metrics", coordinator, &metrics);
    let web = port_of(&flag(&args, "--http").expect("--http"));
    assert_service_reaches(coordinator_service, "web", coordinator, &web);
    let blobs = flag(&args, "--blobs").expect("--blobs");
    assert!(
        coordinator.values("mountPath").contains(&blobs),
        "the blob directory {blobs} is a mounted volume: {}",
        coordinator.text
    );
    assert_eq!(coordinator.values("replicas"), ["1"], "one coordinator");
    assert!(
        coordinator
            .values("image")
            .iter()
            .all(|i| !i.is_empty() && i != "arena"),
        "the image is set: {:?}",
        coordinator.values("image")
    );

    // Tokens and the Redis URL come from the environment, tokens from the Secret.
    let secrets = coordinator.values("name");
    assert!(
        secrets.iter().any(|n| n == "arena-tokens"),
        "the coordinator reads the arena-tokens Secret"
    );
    assert!(
        coordinator.text.contains("secretKeyRef"),
        "{}",
        coordinator.text
    );
    let redis_service = find(&all, "Service", "arena-redis");
    let redis_url = coordinator
        .values("value")
        .into_iter()
        .find(|v| v.starts_with("redis://"))
        .expect("ARENA_REDIS_URL");
    assert!(redis_url.starts_with("redis://arena-redis:"), "{redis_url}");
    assert_eq!(
        port_of(&redis_url),
        service_port(redis_service, "redis"),
        "{redis_url}"
    );

    // Workers: on labelled nodes, privileged, with the cgroup hierarchy,
    // time to drain, pointed at the coordinator Service.
    let worker = find(&all, "DaemonSet", "arena-worker");
    assert!(
        worker.text.contains("nodeSelector:\n") && worker.values("arena.dev/worker") == ["true"],
        "workers run on nodes labelled arena.dev/worker=true:\n{}",
        worker.text
    );
    assert_eq!(worker.values("privileged"), ["true"]);
    assert!(
        worker
            .values("mountPath")
            .iter()
            .any(|p| p == "/sys/fs/cgroup"),
        "{}",
        worker.text
    );
    assert!(
        worker.values("path").iter().any(|p| p == "/sys/fs/cgroup"),
        "{}",
        worker.text
    );
    let grace: u64 = worker.values("terminationGracePeriodSeconds")[0]
        .parse()
        .unwrap();
    assert!(
        grace >= 600,
        "a worker needs time to finish its matches when drained, has {grace}s"
    );
    let args = arena_args(worker, "worker");
    let coordinator_url = flag(&args, "--coordinator").expect("--coordinator");
    assert_eq!(
        coordinator_url,
        format!(
            "http://arena-coordinator:{}",
            service_port(coordinator_service, "grpc")
        ),
    );
    let worker_metrics = port_of(&flag(&args, "--metrics").expect("--metrics"));
    assert_service_reaches(
        find(&all, "Service", "arena-worker"),
        "metrics",
        worker,
        &worker_metrics,
    );
    assert!(worker.text.contains("key: worker-token"), "{}", worker.text);
    assert!(
        !worker.text.contains("admin-token"),
        "workers get no admin token"
    );

    // Redis: append-only file on a claimed volume.
    let redis = find(&all, "StatefulSet", "arena-redis");
    let redis_args = redis
        .lists("args")
        .into_iter()
        .find(|l| l.first().map(String::as_str) == Some("redis-server"))
        .expect("redis-server args");
    let appendonly = redis_args
        .iter()
        .position(|a| a == "--appendonly")
        .expect("--appendonly");
    assert_eq!(
        redis_args.get(appendonly + 1).map(String::as_str),
        Some("yes")
    );
    assert!(
        redis.text.contains("volumeClaimTemplates:"),
        "{}",
        redis.text
    );
    assert_eq!(container_port(redis, "redis"), "6379");
    assert_eq!(redis.values("serviceName"), ["arena-redis"]);
}

#[test]
fn monitoring_renders_and_selects_the_services() {
    let base = docs(&kustomize("k8s/base"));
    let all = docs(&kustomize("k8s/monitoring"));
    let monitors: Vec<&Doc> = all
        .iter()
        .filter(|d| d.kind() == "ServiceMonitor")
        .collect();
    assert_eq!(
        monitors.len(),
        2,
        "one ServiceMonitor each for the coordinator and workers"
    );
    for monitor in monitors {
        let service = find(&base, "Service", &monitor.name());
        // The selector's labels are the Service's labels.
        let wanted = monitor.values("app.kubernetes.io/name");
        assert_eq!(wanted, [service.name()], "{}", monitor.text);
        assert!(
            service
                .values("app.kubernetes.io/name")
                .contains(&service.name())
        );
        for port in monitor.values("port") {
            service_port(service, &port);
        }
        assert_eq!(monitor.values("path"), ["/metrics"]);
    }
    let rule = find(&all, "PrometheusRule", "arena");
    assert!(rule.values("alert").len() >= 4, "{}", rule.text);
}
