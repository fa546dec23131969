"""Building blocks for railwatch's Grafana dashboards: panels, targets, variables and layout.

Plain Python (no grafanalib / grafonnet on the build machines): each helper returns the JSON
object Grafana 9.x-11.x stores (schemaVersion 37+), with the data source taken from the
`${datasource}` variable so a dashboard imports into any Grafana with a Prometheus source.
"""

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 37
GRID_WIDTH = 24
# Green at 0, red from 1: counts of firing diagnoses, stormed queues.
FIRING_STEPS = [{"color": "green", "value": None}, {"color": "red", "value": 1}]


def target(expr, legend="", instant=False, table=False, hide=False):
    """A Prometheus query. Instant queries (tables, "now" stats) read one point at the end."""
    t = {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "legendFormat": legend or "__auto",
        "range": not instant,
        "instant": instant,
    }
    if table:
        t["format"] = "table"
    if hide:
        t["hide"] = True
    return t


def _field_config(unit=None, mappings=None, thresholds=None, custom=None, decimals=None, **extra):
    defaults = {
        "color": {"mode": "palette-classic"},
        "mappings": mappings or [],
        "thresholds": {
            "mode": "absolute",
            "steps": thresholds or [{"color": "green", "value": None}],
        },
    }
    if unit:
        defaults["unit"] = unit
    if decimals is not None:
        defaults["decimals"] = decimals
    if custom:
        defaults["custom"] = custom
    defaults.update(extra)
    return {"defaults": defaults, "overrides": []}


def _panel(kind, title, description, targets, width, height, field_config, options, **extra):
    for i, t in enumerate(targets):
        t["refId"] = chr(ord("A") + i)
    p = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "gridPos": {"w": width, "h": height},
        "targets": targets,
        "fieldConfig": field_config,
        "options": options,
    }
    p.update(extra)
    return p


def _legend(calcs=("mean", "max"), placement="bottom"):
    return {"showLegend": True, "displayMode": "table", "placement": placement,
            "calcs": list(calcs)}


def timeseries(title, description, targets, unit=None, width=12, height=8, stack=False,
               bars=False, min_zero=True):
    custom = {
        "drawStyle": "bars" if bars else "line",
        "lineWidth": 1,
        "fillOpacity": 60 if bars else 10,
        "showPoints": "never",
        "spanNulls": False,
        "stacking": {"mode": "normal" if stack else "none", "group": "A"},
    }
    fc = _field_config(unit=unit, custom=custom)
    if min_zero:
        fc["defaults"]["min"] = 0
    options = {"legend": _legend(), "tooltip": {"mode": "multi", "sort": "desc"}}
    return _panel("timeseries", title, description, targets, width, height, fc, options)


def stat(title, description, targets, unit=None, width=4, height=4, mappings=None,
         thresholds=None, graph=True, decimals=None):
    options = {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "colorMode": "value",
        "graphMode": "area" if graph else "none",
        "justifyMode": "auto",
        "orientation": "auto",
        "textMode": "auto",
    }
    fc = _field_config(unit=unit, mappings=mappings, thresholds=thresholds, decimals=decimals)
    fc["defaults"]["color"] = {"mode": "thresholds"}
    return _panel("stat", title, description, targets, width, height, fc, options)


def table(title, description, targets, width=24, height=8, hidden_columns=(), rename=None,
          merge=False, unit=None):
    """Instant tables: one row per series, labels as columns; `merge` joins several queries
    on their common labels (one column per query's value)."""
    exclude = {"Time": True, "__name__": True}
    exclude.update({c: True for c in hidden_columns})
    transformations = []
    if merge:
        transformations.append({"id": "merge", "options": {}})
    transformations.append(
        {"id": "organize", "options": {"excludeByName": exclude, "renameByName": rename or {}}})
    options = {"showHeader": True, "cellHeight": "sm", "footer": {"show": False}}
    fc = _field_config(unit=unit, custom={"align": "auto", "filterable": True})
    return _panel("table", title, description, targets, width, height, fc, options,
                  transformations=transformations)


def bargauge(title, description, targets, unit=None, width=8, height=8):
    options = {
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "displayMode": "gradient",
        "orientation": "horizontal",
        "showUnfilled": True,
        "minVizHeight": 10,
        "minVizWidth": 0,
        "valueMode": "color",
    }
    fc = _field_config(unit=unit, thresholds=[{"color": "green", "value": None}],
                       min=0)
    fc["defaults"]["color"] = {"mode": "continuous-GrYlRd"}
    return _panel("bargauge", title, description, targets, width, height, fc, options)


def heatmap(title, description, targets, unit=None, width=12, height=10, repeat=None):
    """Rows are series (ports), columns time, colour the value: `calculate: false` keeps each
    series a row of its own instead of bucketing values."""
    options = {
        "calculate": False,
        "cellGap": 1,
        "color": {"mode": "scheme", "scheme": "Oranges", "steps": 64, "exponent": 0.5,
                  "fill": "dark-orange", "scale": "exponential", "reverse": False},
        "yAxis": {"axisPlacement": "left", "reverse": False},
        "rowsFrame": {"layout": "auto"},
        "showValue": "never",
        "tooltip": {"mode": "single", "yHistogram": False, "showColorScale": True},
        "legend": {"show": True},
        "exemplars": {"color": "rgba(255,0,255,0.7)"},
        "filterValues": {"le": 1e-9},
    }
    fc = _field_config(unit=unit, custom={"scaleDistribution": {"type": "linear"}})
    extra = {}
    if repeat:
        extra = {"repeat": repeat, "repeatDirection": "h", "maxPerRow": 4}
    return _panel("heatmap", title, description, targets, width, height, fc, options, **extra)


def state_timeline(title, description, targets, mappings, width=24, height=8,
                   thresholds=None):
    options = {
        "mergeValues": True,
        "showValue": "auto",
        "alignValue": "left",
        "rowHeight": 0.9,
        "legend": {"showLegend": True, "displayMode": "list", "placement": "bottom"},
        "tooltip": {"mode": "single", "sort": "none"},
    }
    fc = _field_config(mappings=mappings, thresholds=thresholds,
                       custom={"fillOpacity": 70, "lineWidth": 0})
    fc["defaults"]["color"] = {"mode": "thresholds"}
    return _panel("state-timeline", title, description, targets, width, height, fc, options)


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"w": GRID_WIDTH, "h": 1}}


def value_map(mapping):
    """{value: (text, colour)} -> a Grafana value mapping."""
    options = {str(k): {"text": text, "color": color, "index": i}
               for i, (k, (text, color)) in enumerate(mapping.items())}
    return [{"type": "value", "options": options}]


def datasource_variable():
    return {
        "type": "datasource", "name": "datasource", "label": "Data source",
        "query": "prometheus", "regex": "", "hide": 0, "refresh": 1,
        "includeAll": False, "multi": False, "current": {}, "options": [],
    }


def query_variable(name, label, query, multi=True, include_all=True, sort=1, description=""):
    """A variable filled by `label_values(selector, label)`. Multi-valued ones default to All
    (matched as the regex .*), so every panel shows the whole fabric at first."""
    v = {
        "type": "query", "name": name, "label": label, "description": description,
        "datasource": DATASOURCE,
        "definition": query,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "refresh": 2, "regex": "", "sort": sort, "hide": 0,
        "multi": multi, "includeAll": include_all, "options": [],
    }
    if include_all:
        v["allValue"] = ".*"
        v["current"] = {"selected": True, "text": ["All"], "value": ["$__all"]}
    else:
        v["current"] = {}
    return v


def layout(panels):
    """Assigns ids and grid positions: left to right, wrapping at 24 columns; rows full
    width. Ids follow the panels' order, so they stay stable while panels are appended."""
    x = y = 0
    line_height = 0
    for i, p in enumerate(panels, start=1):
        p["id"] = i
        pos = p["gridPos"]
        if p["type"] == "row" or x + pos["w"] > GRID_WIDTH:
            y += line_height
            x = line_height = 0
        pos["x"], pos["y"] = x, y
        x += pos["w"]
        line_height = max(line_height, pos["h"])
        if p["type"] == "row":
            y += pos["h"]
            x = line_height = 0
    return panels


def dashboard(uid, title, description, panels, variables, tags=("railwatch",),
              time_from="now-1h", refresh="30s"):
    return {
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "9.4.0"},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
        ],
        "uid": uid,
        "title": title,
        "description": description,
        "tags": list(tags),
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "refresh": refresh,
        "time": {"from": time_from, "to": "now"},
        "timepicker": {},
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "weekStart": "",
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard",
        }]},
        "links": [{
            "title": "railwatch", "type": "dashboards", "tags": ["railwatch"],
            "asDropdown": True, "includeVars": False, "keepTime": True, "icon": "external link",
            "targetBlank": False, "tooltip": "", "url": "",
        }],
        "templating": {"list": [datasource_variable()] + variables},
        "panels": layout(panels),
    }
