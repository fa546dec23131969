#!/usr/bin/python3
"""Runs every query of every railwatch dashboard through a real Prometheus's HTTP API, as
Grafana would, and checks that it returns data.

For each dashboard: its variables are resolved first (label_values through
/api/v1/label/<name>/values?match[]=..., each must have values; multi-value variables then
stand for All, `.*`, single-value ones take the first value as Grafana does), then each panel
query is run with variables, $__rate_interval, $__interval and $__range substituted: instant
queries through /api/v1/query at the end, the others through /api/v1/query_range over the
whole window. Every query must succeed and return at least one series, except the ones listed
in OPTIONAL with the reason (they must still succeed). The scenario checks then look at what
some panels show: the storming NIC on top of the worst ports, the straggler, the nccl-tests
result, the refused ingest message.

  dashboard_queries.py --prometheus=http://127.0.0.1:9090 --dashboards=dashboards/json \
      --start=UNIX --storm=gpu-node-002/mlx5_1/leaf-r1/Ethernet2 \
      --straggler=gpu-node-003/mlx5_2 --nccl_tests=gpu-node-101/unknown/406.034

Prints one row per query (dashboard, panel, query, kind, series) and exits 1 on any failure.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dashboard_model as dm  # noqa: E402

NO_ALERTMANAGER = ("Alertmanager series exist only with railwatchd --alertmanager_url; this "
                   "test runs the daemon without one (the 'Alertmanager' stat shows 'not "
                   "configured', checked below)")
# (dashboard uid, panel title, refId or None for every query of the panel) -> why it may be
# empty here. Everything else must return data.
OPTIONAL = {
    ("railwatch-self", "Alertmanager posts", None): NO_ALERTMANAGER,
    ("railwatch-self", "Alerts sent and dropped", None): NO_ALERTMANAGER,
    ("railwatch-self", "Alertmanager queue and last success", None): NO_ALERTMANAGER,
    ("railwatch-infiniband", "Ports slower than their switch's fastest", None):
        "every switch port of the real NDR fabric the scanner reads here runs 4x NDR",
    ("railwatch-infiniband", "Module alarm flags set", None):
        "the real ibdiagnet2.cables modules have no alarm or warning flag set",
    ("railwatch-infiniband", "Counters stuck at all ones", None):
        "the real db_csv's 32-bit PortXmitData/Wait sit at all ones, but the 64-bit Extended "
        "columns of the same rows hold the larger counts and are read instead, so nothing is "
        "stuck",
    ("railwatch-pfc-ecn", "PFC pauses per NIC (host side)", "A"):
        "the NICs' own ethtool PFC counters: the simulator writes no ethtool statistics "
        "(docs/SIMULATOR.md); queries B and C show the same NICs from their leaf ports",
}


class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, params):
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=30) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            body = json.load(e)
        if body.get("status") != "success":
            raise RuntimeError(f"{body.get('errorType')}: {body.get('error')}")
        return body["data"]


def resolve_variables(prom, dashboard, window, builtins):
    """{name: value} for every variable; raises when a variable query finds nothing."""
    values = dict(builtins)
    for v in dm.variables(dashboard):
        if v.get("type") != "query":
            continue
        selector, label = dm.parse_label_values(dm.variable_query(v))
        params = {"start": window[0], "end": window[1]}
        if selector:
            params["match[]"] = dm.substitute(selector, values)
        found = prom.get(f"/api/v1/label/{label}/values", params)
        if not found:
            raise RuntimeError(f"variable {v['name']}: {dm.variable_query(v)} found no values")
        if v.get("multi") or v.get("includeAll"):
            values[v["name"]] = v.get("allValue") or ".*"
        else:
            numeric = v.get("sort") in (3, 4)
            values[v["name"]] = sorted(found, key=float if numeric else str)[0]
        print(f"  ${v['name']} = {values[v['name']]} ({len(found)} values)")
    return values


def run_query(prom, expr, instant, window, step):
    if instant:
        return prom.get("/api/v1/query", {"query": expr, "time": window[1]})["result"]
    return prom.get("/api/v1/query_range", {"query": expr, "start": window[0],
                                            "end": window[1], "step": step})["result"]


def last_value(series):
    if "value" in series:
        return float(series["value"][1])
    return float(series["values"][-1][1])


def values_of(series):
    if "value" in series:
        return [float(series["value"][1])]
    return [float(v) for _, v in series["values"]]


def scenario_checks(args):
    """(dashboard uid, panel title, refId) -> check(result) returning an error or None."""
    host, device, switch, port = args.storm.split("/")
    s_host, s_device = args.straggler.split("/")
    n_host, n_test, n_gbps = args.nccl_tests.split("/")

    def is_storm_port(result):
        top = max(result, key=last_value)["metric"]
        if (top.get("switch"), top.get("interface"), top.get("direction")) != (switch, port, "rx"):
            return f"worst port is {top}, not {switch} {port} rx (the storm's leaf port)"

    def storm_firing(result):
        if not any(r["metric"].get("playbook") == "pfc_storm" and r["metric"].get("host") == host
                   and r["metric"].get("device") == device for r in result):
            return f"no firing pfc_storm on {host} {device}: {[r['metric'] for r in result]}"

    def storm_nic_sends_most(result):
        top = max(result, key=last_value)["metric"]
        if (top.get("host"), top.get("device")) != (host, device):
            return f"NIC sending the most pauses is {top}, not {host} {device}"

    def is_straggler(result):
        if not any(r["metric"].get("host") == s_host and r["metric"].get("device") == s_device
                   for r in result):
            return f"no straggler_rail on {s_host} {s_device}: {[r['metric'] for r in result]}"

    def straggler_ratio(result):
        ratios = {(r["metric"].get("host"), r["metric"].get("device")): min(values_of(r))
                  for r in result}
        if ratios.get((s_host, s_device), 1) >= 0.7:
            return f"{s_host} {s_device} never fell below 0.7 of the median: {ratios}"

    def straggler_rate(result):
        rates = {(r["metric"].get("host"), r["metric"].get("device")): last_value(r)
                 for r in result}
        if rates.get((s_host, s_device)) != min(rates.values()) or \
                rates[(s_host, s_device)] >= max(rates.values()):
            return f"{s_host} {s_device} is not the slowest negotiated port: {rates}"

    def nccl_tests(result):
        for r in result:
            if r["metric"].get("host") == n_host and r["metric"].get("test") == n_test:
                if abs(last_value(r) - float(n_gbps) * 1e9) > 1:
                    return f"{n_host} {n_test}: {last_value(r)} B/s, not {n_gbps} GB/s"
                return None
        return f"no nccl-tests result for {n_host} {n_test}: {[r['metric'] for r in result]}"

    def no_alertmanager(result):
        if [last_value(r) for r in result] != [0.0]:
            return f"expected 0 (not configured), got {result}"

    def refused_message(result):
        if not any(r["metric"].get("reason") == "empty_message" for r in result):
            return f"no empty_message error: {[r['metric'] for r in result]}"

    return {
        ("railwatch-fabric-overview", "PFC pause rate", "A"): is_storm_port,
        ("railwatch-fabric-overview", "Firing now", "A"): storm_firing,
        ("railwatch-pfc-ecn", "PFC pauses per NIC (host side)", "B"): storm_nic_sends_most,
        ("railwatch-nccl-jobs", "Straggler diagnoses", "A"): is_straggler,
        ("railwatch-nccl-jobs", "Bandwidth ratio to the job's median NIC", "A"): straggler_ratio,
        ("railwatch-nic-health", "Negotiated port rate", "A"): straggler_rate,
        ("railwatch-nccl-jobs", "nccl-tests bus bandwidth (latest run)", "A"): nccl_tests,
        ("railwatch-self", "Alertmanager", "A"): no_alertmanager,
        ("railwatch-self", "Ingest errors by reason", "A"): refused_message,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prometheus", required=True)
    ap.add_argument("--dashboards", required=True)
    ap.add_argument("--start", type=float, required=True, help="window start (unix seconds)")
    ap.add_argument("--step", type=int, default=2)
    ap.add_argument("--rate_interval", type=int, default=10,
                    help="$__rate_interval in seconds (Grafana: max(4 x scrape, step + scrape))")
    ap.add_argument("--storm", required=True, help="HOST/DEVICE/SWITCH/PORT")
    ap.add_argument("--straggler", required=True, help="HOST/DEVICE")
    ap.add_argument("--nccl_tests", required=True, help="HOST/TEST/AVG_GBPS")
    args = ap.parse_args()

    prom = Prometheus(args.prometheus)
    end = time.time()
    window = (args.start, end)
    builtins = dm.builtin_values(int(end - args.start), args.step, args.rate_interval)
    checks = scenario_checks(args)
    rows, failures = [], []
    for name, d in dm.load_dashboards(args.dashboards):
        uid = d.get("uid")
        print(f"{uid}: variables")
        try:
            values = resolve_variables(prom, d, window, builtins)
        except RuntimeError as e:
            failures.append(f"{uid}: {e}")
            continue
        for p in dm.query_panels(d):
            for t in p.get("targets", []):
                ref, title = t.get("refId"), p.get("title")
                expr = dm.substitute(t["expr"], values)
                kind = "instant" if t.get("instant") and not t.get("range") else "range"
                optional = OPTIONAL.get((uid, title, ref)) or OPTIONAL.get((uid, title, None))
                try:
                    result = run_query(prom, expr, kind == "instant", window, args.step)
                except (RuntimeError, urllib.error.URLError) as e:
                    failures.append(f"{uid} / {title} / {ref}: {e}\n    {expr}")
                    rows.append((uid, title, ref, kind, "ERROR"))
                    continue
                note = ""
                if not result and not optional:
                    failures.append(f"{uid} / {title} / {ref}: no data\n    {expr}")
                    note = "  <- NO DATA"
                elif optional:
                    note = "  (optional: " + optional.split(";")[0] + ")"
                check = checks.pop((uid, title, ref), None)
                if check and result:
                    problem = check(result)
                    if problem:
                        failures.append(f"{uid} / {title} / {ref}: {problem}")
                        note += "  <- CHECK FAILED"
                    else:
                        note += "  (scenario check ok)"
                rows.append((uid, title, ref, kind, f"{len(result)}{note}"))
    for key in checks:
        failures.append(f"scenario check on {key} did not run (panel renamed, or no data)")

    widths = [max(len(str(r[i])) for r in rows + [("dashboard", "panel", "q", "kind", "")])
              for i in range(4)]
    header = ("dashboard", "panel", "q", "kind", "series")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths + [0])))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths + [0])))
    panels = len({(r[0], r[1]) for r in rows})
    print(f"{len(rows)} queries of {panels} panels; {len(failures)} failures")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
