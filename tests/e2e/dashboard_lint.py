#!/usr/bin/python3
"""Offline checks of railwatch's Grafana dashboards (dashboards/json/*.json):

- each file parses, has a uid (unique across files), a title and schemaVersion >= 37;
- a `datasource` variable of type datasource (query prometheus), and every panel and query
  takes its data source from it, so the dashboards import into any Grafana;
- panel ids and titles are unique, panels fit the 24-column grid and do not overlap;
- every panel but rows has queries; every query has an expr and a unique refId;
- every variable used (queries, titles, variable queries, repeats) is defined or Grafana's own,
  and a repeat names a multi-value variable;
- every expr, with variables substituted, parses as PromQL (`promtool check rules`);
- the JSON is what dashboards/generate.py writes from its definitions (`--check`);
- the provisioning files (dashboards/provisioning) parse and name a source and a path.

  dashboard_lint.py [SOURCE_DIR]     exit 0 when all hold, 1 with every problem listed
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dashboard_model as dm  # noqa: E402

MIN_SCHEMA_VERSION = 37
DATASOURCE_UID = "${datasource}"


def check_datasource(where, ds, problems):
    if not isinstance(ds, dict) or ds.get("uid") != DATASOURCE_UID \
            or ds.get("type") != "prometheus":
        problems.append(f"{where}: datasource must be {{type: prometheus, uid: "
                        f"{DATASOURCE_UID}}}, is {ds!r}")


def check_grid(name, panels, problems):
    taken = {}
    for p in panels:
        pos = p.get("gridPos", {})
        x, y, w, h = (pos.get(k) for k in ("x", "y", "w", "h"))
        if None in (x, y, w, h) or x < 0 or w <= 0 or h <= 0 or x + w > 24:
            problems.append(f"{name}: panel {p.get('title')!r}: bad gridPos {pos}")
            continue
        for cx in range(x, x + w):
            for cy in range(y, y + h):
                if (cx, cy) in taken:
                    problems.append(f"{name}: panels {taken[(cx, cy)]!r} and {p.get('title')!r} "
                                    "overlap")
                    return
                taken[(cx, cy)] = p.get("title")


def lint_dashboard(name, d, problems):
    for key in ("uid", "title"):
        if not d.get(key):
            problems.append(f"{name}: no {key}")
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < MIN_SCHEMA_VERSION:
        problems.append(f"{name}: schemaVersion {d.get('schemaVersion')} < {MIN_SCHEMA_VERSION}")

    defined = {}
    for v in dm.variables(d):
        if v.get("name") in defined:
            problems.append(f"{name}: variable {v.get('name')} defined twice")
        defined[v.get("name")] = v
    ds_var = defined.get("datasource")
    if not ds_var or ds_var.get("type") != "datasource" or ds_var.get("query") != "prometheus":
        problems.append(f"{name}: needs a variable `datasource` of type datasource, query "
                        "prometheus")
    known = set(defined) | dm.BUILTIN_VARIABLES

    def check_vars(where, text):
        for used in sorted(dm.variables_used(text) - known):
            problems.append(f"{where}: uses ${used}, which is not defined")

    for v in dm.variables(d):
        if v.get("type") == "query":
            where = f"{name}: variable {v['name']}"
            check_datasource(where, v.get("datasource"), problems)
            q = dm.variable_query(v)
            if dm.parse_label_values(q) is None:
                problems.append(f"{where}: query {q!r} is not label_values(selector, label)")
            check_vars(where, q)

    ids = set()
    titles = set()
    for p in dm.query_panels(d):
        if p.get("title") in titles:
            problems.append(f"{name}: two panels titled {p.get('title')!r}")
        titles.add(p.get("title"))
    for p in dm.panels(d):
        where = f"{name}: panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids or not isinstance(p.get("id"), int):
            problems.append(f"{where}: id missing or not unique")
        ids.add(p.get("id"))
        check_vars(where, p.get("title", ""))
        if p.get("type") == "row":
            continue
        check_datasource(where, p.get("datasource"), problems)
        if p.get("repeat"):
            rv = defined.get(p["repeat"])
            if not rv or not (rv.get("multi") or rv.get("includeAll")):
                problems.append(f"{where}: repeats on {p['repeat']}, not a multi-value "
                                "variable")
        targets = p.get("targets") or []
        if not targets:
            problems.append(f"{where}: no queries")
        refs = set()
        for t in targets:
            if not (t.get("expr") or "").strip():
                problems.append(f"{where}: query {t.get('refId')} has no expr")
            if not t.get("refId") or t.get("refId") in refs:
                problems.append(f"{where}: refId {t.get('refId')!r} missing or repeated")
            refs.add(t.get("refId"))
            check_datasource(f"{where} query {t.get('refId')}", t.get("datasource"), problems)
            check_vars(f"{where} query {t.get('refId')}", t.get("expr", ""))
    check_grid(name, list(dm.panels(d)), problems)


def placeholder_values(d):
    """Values that make every expr plain PromQL: multi-value variables match anything."""
    values = dm.builtin_values(3600, 15, 60)
    for v in dm.variables(d):
        multi = v.get("multi") or v.get("includeAll")
        values[v["name"]] = ".*" if multi else "placeholder"
    return values


def check_promql(dashboards, problems):
    """Every expr through promtool's parser, as recording rules (one group per dashboard)."""
    lines = ["groups:"]
    where = {}
    n = 0
    for name, d in dashboards:
        lines.append(f"  - name: {d.get('uid', name)!r}")
        lines.append("    rules:")
        values = placeholder_values(d)
        exprs = [(f"panel {p.get('title')!r} query {t.get('refId')}", t.get("expr", ""))
                 for p in dm.query_panels(d) for t in p.get("targets", [])]
        for v in dm.variables(d):
            parsed = dm.parse_label_values(dm.variable_query(v)) if v.get("type") == "query" \
                else None
            if parsed and parsed[0]:
                exprs.append((f"variable {v['name']}", f"group({parsed[0]})"))
        for what, expr in exprs:
            n += 1
            where[n] = f"{name}: {what}"
            text = dm.substitute(expr, values).replace("\n", " ")
            lines.append(f"      - record: dashboard_expr_{n}")
            lines.append(f"        expr: {json.dumps(text)}")  # JSON strings are YAML
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        r = subprocess.run(["promtool", "check", "rules", path], capture_output=True, text=True)
    except FileNotFoundError:
        problems.append("promtool not found: install Debian's prometheus package "
                        "(scripts/install-deps) to check the PromQL")
        return 0
    finally:
        os.unlink(path)
    if r.returncode != 0:
        out = r.stdout + r.stderr
        for i, text in where.items():
            out = out.replace(f"dashboard_expr_{i}\"", f"dashboard_expr_{i}\" ({text})")
        problems.append(f"promtool check rules:\n{out}")
    return n


def check_provisioning(src, problems):
    """The provisioning files parse and say what Grafana needs."""
    import yaml  # Debian's python3-yaml, for /usr/bin/python3
    base = os.path.join(src, "dashboards", "provisioning")
    try:
        with open(os.path.join(base, "datasources", "railwatch.yaml"), encoding="utf-8") as f:
            ds = yaml.safe_load(f)
        with open(os.path.join(base, "dashboards", "railwatch.yaml"), encoding="utf-8") as f:
            boards = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        problems.append(f"provisioning: {e}")
        return
    sources = ds.get("datasources") or []
    if ds.get("apiVersion") != 1 or not sources or sources[0].get("type") != "prometheus" \
            or not sources[0].get("url"):
        problems.append("provisioning/datasources/railwatch.yaml: needs apiVersion 1 and a "
                        "prometheus data source with a url")
    providers = boards.get("providers") or []
    if boards.get("apiVersion") != 1 or not providers or providers[0].get("type") != "file" \
            or not (providers[0].get("options") or {}).get("path"):
        problems.append("provisioning/dashboards/railwatch.yaml: needs apiVersion 1 and a file "
                        "provider with options.path")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    directory = os.path.join(src, "dashboards", "json")
    problems = []
    dashboards = dm.load_dashboards(directory)
    if len(dashboards) < 5:
        problems.append(f"{directory}: {len(dashboards)} dashboards, expected 5")
    uids = {}
    for name, d in dashboards:
        if d.get("uid") in uids:
            problems.append(f"{name}: uid {d.get('uid')} also in {uids[d['uid']]}")
        uids[d.get("uid")] = name
        lint_dashboard(name, d, problems)
    exprs = check_promql(dashboards, problems)
    check_provisioning(src, problems)
    gen = subprocess.run([sys.executable, os.path.join(src, "dashboards", "generate.py"),
                          "--check"], capture_output=True, text=True)
    if gen.returncode != 0:
        problems.append(f"dashboards/generate.py --check: {gen.stderr.strip()}")
    panels = sum(len(dm.query_panels(d)) for _, d in dashboards)
    if problems:
        print("\n".join(f"FAIL: {p}" for p in problems))
        return 1
    print(f"PASS: {len(dashboards)} dashboards, {panels} panels, {exprs} expressions parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
