"""What the dashboard tests read from Grafana dashboard JSON: panels (rows' nested panels
included), their queries, the template variables and how Grafana substitutes them.

Used by dashboard_lint.py (offline) and dashboard_queries.py (against a real Prometheus).
"""

import glob
import json
import os
import re

# Variables Grafana itself provides to Prometheus queries.
BUILTIN_VARIABLES = {
    "__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms",
    "__all", "__from", "__to", "__dashboard", "__org", "__user", "timeFilter",
}

# $name, ${name}, ${name:format}, [[name]]; "$1" in label_replace is not a variable.
_VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]")


def variables_used(text):
    names = set()
    for m in _VARIABLE.finditer(text or ""):
        name = next(g for g in m.groups() if g)
        if not name.isdigit():
            names.add(name)
    return names


def load_dashboards(directory):
    """[(file name, dashboard)] of every *.json in `directory`, sorted by name."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out.append((os.path.basename(path), json.load(f)))
    return out


def panels(dashboard):
    """Every panel, rows' collapsed panels included, in order."""
    for p in dashboard.get("panels", []):
        yield p
        for inner in p.get("panels", []) or []:
            yield inner


def query_panels(dashboard):
    return [p for p in panels(dashboard) if p.get("type") != "row"]


def variables(dashboard):
    return dashboard.get("templating", {}).get("list", [])


def variable_query(variable):
    q = variable.get("query")
    return q.get("query", "") if isinstance(q, dict) else (q or "")


_LABEL_VALUES = re.compile(r"^\s*label_values\((?:(.*),\s*)?(\w+)\s*\)\s*$", re.S)


def parse_label_values(query):
    """label_values(selector, label) -> (selector or "", label); None for other forms."""
    m = _LABEL_VALUES.match(query)
    return (m.group(1) or "", m.group(2)) if m else None


def substitute(text, values):
    """Grafana's interpolation for Prometheus: each variable by its value (a multi-value
    selection is already a regex such as `.*` or `(a|b)` in `values`)."""
    def repl(m):
        name = next(g for g in m.groups() if g)
        if name.isdigit() or name not in values:
            return m.group(0)
        return values[name]
    return _VARIABLE.sub(repl, text)


def builtin_values(range_seconds, step_seconds, rate_interval_seconds):
    return {
        "__rate_interval": f"{rate_interval_seconds}s",
        "__interval": f"{step_seconds}s",
        "__interval_ms": str(step_seconds * 1000),
        "__range": f"{range_seconds}s",
        "__range_s": str(range_seconds),
        "__range_ms": str(range_seconds * 1000),
    }
