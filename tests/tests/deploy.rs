//! Checks of the deployment files in `deploy/` against the real tools and the
//! real binary:
//!
//! * `kubectl kustomize` renders `deploy/k8s/base` and `deploy/k8s/monitoring`,
//!   and the rendered objects agree with each other (ports, names, selectors);
//! * every `arena` flag and `ARENA_*` variable used in a manifest, the compose
//!   file or a systemd unit is one the binary accepts (`arena ... --help`);
//! * `kubectl kustomize` renders the Redis Sentinel overlay
//!   `deploy/k8s/sentinel`, whose sentinels, data nodes and coordinator URL
//!   name each other consistently, as the compose override
//!   `deploy/compose/sentinel.yaml` does; both share one start script;
//! * `promtool check rules` accepts `deploy/prometheus/rules.yml`, and the
//!   PrometheusRule embeds exactly its groups;
//! * a real Prometheus server scrapes a coordinator and a worker through a
//!   short tournament (with a bot that makes faults), loads the alert rules,
//!   answers every dashboard query, and every metric name the rules and the
//!   dashboard use is one the binaries export.
//!
//! The tools come from Debian's `kubernetes-client` and `prometheus`
//! packages; a missing tool fails the test (never skips it). `ARENA_KUBECTL`,
//! `ARENA_PROMTOOL` and `ARENA_PROMETHEUS` point at other executables.

#[path = "e2e/support/mod.rs"]
#[allow(dead_code, unused_imports)]
mod support;

#[path = "deploy/consistency.rs"]
mod consistency;
#[path = "deploy/http.rs"]
mod http;
#[path = "deploy/kustomize.rs"]
mod kustomize;
#[path = "deploy/live.rs"]
mod live;
#[path = "deploy/rules.rs"]
mod rules;
#[path = "deploy/sentinel.rs"]
mod sentinel;
#[path = "deploy/tools.rs"]
mod tools;
#[path = "deploy/yaml.rs"]
mod yaml;
