#!/usr/bin/python3
"""Helpers of prometheus_e2e.sh: the shipped Prometheus configuration made runnable on
loopback, and questions to a running Prometheus about railwatch's self-alerts.

  prometheus_api.py config OUT METRICS_ADDR       deploy/prometheus/prometheus.yml with the
                                                  target, 1 s intervals, the alerts file's
                                                  absolute path, and no Alertmanager
  prometheus_api.py rules-ok PROM                 every self-alert rule is loaded and
                                                  evaluates without error
  prometheus_api.py alerts PROM                   prints ALERTS (pending and firing), one line
                                                  each: alertname state label=value ...
  prometheus_api.py alert PROM NAME STATE [L=V..] exit 0 when that alert is in that state
  prometheus_api.py series PROM METRIC LABEL...   exit 0 when METRIC has series and each
                                                  carries every LABEL; prints how many
"""
import json
import os
import sys
import urllib.parse
import urllib.request

import yaml

PROMETHEUS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "deploy", "prometheus")


def query(prom, expr):
    url = f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)["data"]["result"]


def write_config(out, metrics):
    with open(os.path.join(PROMETHEUS_DIR, "prometheus.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config["rule_files"] = [os.path.abspath(os.path.join(PROMETHEUS_DIR, r))
                            for r in config["rule_files"]]
    del config["alerting"]  # no Alertmanager here: ALERTS shows what would be sent
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "railwatch"]
    job.update(scrape_interval="1s", scrape_timeout="1s",
               static_configs=[{"targets": [metrics]}])
    with open(out, "w", encoding="utf-8") as f:
        yaml.safe_dump(config, f)


def rules_ok(prom):
    with urllib.request.urlopen(f"{prom}/api/v1/rules", timeout=10) as r:
        groups = json.load(r)["data"]["groups"]
    rules = [rule for g in groups for rule in g["rules"]]
    bad = [f"{r['name']}: {r.get('lastError')}" for r in rules
           if r.get("health") != "ok" or r.get("lastError")]
    print(f"{len(rules)} rules loaded; unhealthy: {bad or 'none'}")
    return len(rules) == 9 and not bad


def alerts(prom):
    lines = []
    for s in query(prom, "ALERTS"):
        labels = dict(s["metric"])
        name, state = labels.pop("alertname"), labels.pop("alertstate")
        labels.pop("__name__", None)
        lines.append(" ".join([name, state] + [f"{k}={v}" for k, v in sorted(labels.items())]))
    return sorted(lines)


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "config":
        write_config(*args)
        return 0
    if command == "rules-ok":
        return 0 if rules_ok(args[0]) else 1
    if command == "alerts":
        print("\n".join(alerts(args[0])) or "(no alerts)")
        return 0
    if command == "alert":
        prom, name, state, *matchers = args
        want = [name, state] + matchers
        return 0 if any(all(w in line.split() for w in want) for line in alerts(prom)) else 1
    if command == "series":
        prom, metric, *labels = args
        result = query(prom, metric)
        missing = [s["metric"] for s in result if not all(l in s["metric"] for l in labels)]
        print(f"{metric}: {len(result)} series" + (f", without {labels}: {missing}" if missing else ""))
        return 0 if result and not missing else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
