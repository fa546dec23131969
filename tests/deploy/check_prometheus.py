#!/usr/bin/python3
"""Checks deploy/prometheus beyond what promtool checks (promtool's own tests are separate):

  check_prometheus.py

- the scrape job is `railwatch` (the self-alerts match it), honours labels, and the rule file
  it loads is the alerts file;
- every self-alert railwatch needs exists, with a severity, summary, description and a
  runbook_url whose anchor is a section of docs/OPERATIONS.md;
- the unit tests make every alert fire and also hold it quiet at least once;
- every railwatch_* metric an alert reads is one the code defines (a renamed metric would
  otherwise leave an alert that can never fire).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_lib import DEPLOY_DIR, SOURCE_DIR, Problems, load_yaml, rel  # noqa: E402

PROMETHEUS_DIR = os.path.join(DEPLOY_DIR, "prometheus")
ALERTS_FILE = os.path.join(PROMETHEUS_DIR, "railwatch-alerts.yml")
TESTS_FILE = os.path.join(PROMETHEUS_DIR, "railwatch-alerts.test.yml")
OPERATIONS = os.path.join(SOURCE_DIR, "docs", "OPERATIONS.md")
EXPECTED_ALERTS = {
    "RailwatchDown", "RailwatchAgentMissing", "RailwatchIngestLag", "RailwatchCollectorFailing",
    "RailwatchGnmiTargetDown", "RailwatchIngestErrors", "RailwatchRuleEvaluationSlow",
    "RailwatchNoPlaybooks", "RailwatchAlertmanagerFailing",
}
# Where the daemon and the agents name the metrics they export.
METRIC_SOURCES = ["daemon", "exporters", "agent", "gnmi", "common"]


def github_anchor(heading):
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def defined_metric_names():
    names = set()
    for d in METRIC_SOURCES:
        for root, _, files in os.walk(os.path.join(SOURCE_DIR, d)):
            for f in files:
                if f.endswith((".cc", ".h")):
                    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
                        names |= set(re.findall(r'"(railwatch_[a-z0-9_]+)"', fh.read()))
    return names


def check_config(p):
    where = rel(os.path.join(PROMETHEUS_DIR, "prometheus.yml"))
    config = load_yaml(os.path.join(PROMETHEUS_DIR, "prometheus.yml"))
    jobs = {j["job_name"]: j for j in config.get("scrape_configs", [])}
    job = jobs.get("railwatch")
    if p.check(job is not None, where, "no scrape job named railwatch"):
        p.check(job.get("honor_labels") is True, where, "job railwatch: honor_labels: true")
        p.check(job.get("metrics_path", "/metrics") == "/metrics", where, "metrics_path")
        targets = [t for sc in job.get("static_configs", []) for t in sc.get("targets", [])]
        p.check(any(t.endswith(":9741") for t in targets), where,
                "job railwatch: a target on railwatchd's default metrics port 9741")
    p.check(config.get("rule_files") == ["railwatch-alerts.yml"], where,
            "rule_files must load railwatch-alerts.yml (relative to the config file)")
    p.check(bool(config.get("alerting", {}).get("alertmanagers")), where, "no alerting section")


def check_alerts(p):
    where = rel(ALERTS_FILE)
    alerts = [r for g in load_yaml(ALERTS_FILE)["groups"] for r in g["rules"] if "alert" in r]
    names = {a["alert"] for a in alerts}
    p.check(names == EXPECTED_ALERTS, where, f"alerts {sorted(names)} differ from the expected "
            f"{sorted(EXPECTED_ALERTS)}")
    with open(OPERATIONS, encoding="utf-8") as f:
        anchors = {github_anchor(m) for m in re.findall(r"^#+ (.+)$", f.read(), re.M)}
    defined = defined_metric_names()
    for a in alerts:
        name = a["alert"]
        p.check(a.get("labels", {}).get("severity") in ("critical", "warning"), where,
                f"{name}: severity critical or warning")
        ann = a.get("annotations", {})
        for key in ("summary", "description", "runbook_url"):
            p.check(bool(ann.get(key)), where, f"{name}: no {key} annotation")
        anchor = ann.get("runbook_url", "").partition("#")[2]
        p.check(anchor == name.lower() and anchor in anchors, where,
                f"{name}: runbook_url anchor #{anchor} is not a section of docs/OPERATIONS.md "
                f"(expected a heading '{name}')")
        for metric in set(re.findall(r"\b(railwatch_[a-z0-9_]+)", a["expr"])):
            p.check(metric in defined, where, f"{name}: reads {metric}, which no code in "
                    f"{', '.join(METRIC_SOURCES)} defines")
    return names


def check_tests(p, names):
    where = rel(TESTS_FILE)
    tests = load_yaml(TESTS_FILE)
    p.check(tests.get("rule_files") == ["railwatch-alerts.yml"], where,
            "rule_files must be railwatch-alerts.yml")
    fired, quiet = set(), set()
    for t in tests.get("tests", []):
        for case in t.get("alert_rule_test", []):
            (fired if case.get("exp_alerts") else quiet).add(case["alertname"])
    for name in sorted(names):
        p.check(name in fired, where, f"no test makes {name} fire")
        p.check(name in quiet, where, f"no test holds {name} quiet (exp_alerts: [])")


def main():
    p = Problems("prometheus")
    check_config(p)
    names = check_alerts(p)
    check_tests(p, names)
    return p.finish()


if __name__ == "__main__":
    sys.exit(main())
