//! The alert rules: promtool accepts them, and the PrometheusRule embeds
//! exactly the groups of `deploy/prometheus/rules.yml`.

use std::process::Command;

use crate::support::process::output;
use crate::tools::{deploy, promtool, read};

/// The `spec:` of the PrometheusRule source, de-indented: a rule file.
pub fn prometheus_rule_spec() -> String {
    let text = read(&deploy("k8s/monitoring/prometheusrule.yaml"));
    let (_, spec) = text
        .split_once("\nspec:\n")
        .expect("prometheusrule.yaml has a top-level spec:");
    spec.lines()
        .map(|line| {
            if line.trim().is_empty() {
                ""
            } else {
                line.strip_prefix("  ").unwrap_or_else(|| {
                    panic!("prometheusrule.yaml: {line:?} is not indented under spec:")
                })
            }
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// A rule file without comment lines and trailing blank lines.
fn significant(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{}\n", l.trim_end()))
        .collect::<String>()
        .trim_end()
        .to_owned()
}

fn check_rules(path: &std::path::Path) -> String {
    let mut command = Command::new(promtool());
    command.args(["check", "rules"]).arg(path);
    output(command)
}

#[test]
fn promtool_accepts_the_rules() {
    let rules = deploy("prometheus/rules.yml");
    let report = check_rules(&rules);
    let alerts = read(&rules).matches("- alert: ").count();
    assert!(alerts >= 4, "{report}");
    assert!(
        report.contains(&format!("SUCCESS: {alerts} rules found")),
        "{report}"
    );
}

#[test]
fn prometheus_rule_embeds_rules_yml() {
    let spec = prometheus_rule_spec();
    let rules = read(&deploy("prometheus/rules.yml"));
    assert!(
        significant(&spec) == significant(&rules),
        "deploy/k8s/monitoring/prometheusrule.yaml's spec differs from deploy/prometheus/rules.yml; \
         regenerate it (see the comment at its top)\n--- spec:\n{spec}\n--- rules.yml:\n{rules}"
    );
    // And the embedded copy is a valid rule file in its own right.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.yml");
    std::fs::write(&path, &spec).unwrap();
    check_rules(&path);
}
