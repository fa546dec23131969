"""Prometheus alerts -> railwatch diagnosis records, for scoring the baseline like railwatch.

The baseline's Prometheus is polled (GET /api/v1/alerts) every second; AlertTracker keeps, per
alert identity (its full label set), when it was first active (activeAt), when it fired and
whether it is still firing, and turns them into the records `railwatch diagnoses --state=all
--json` prints (protobuf JSON of railwatch.v1.Diagnosis: snake_case names, enums by name, 64-bit
integers as strings, empty fields left out).

When it fired: Prometheus evaluates a group every `interval`, sets activeAt to the timestamp of
the evaluation that first found the condition true, and turns the alert firing at the first
evaluation at least `for` later: activeAt + ceil(for / interval) x interval. That is when it
would have been sent to Alertmanager. The poll that first saw it firing (up to a second later)
bounds it from above.
"""

import datetime
import hashlib
import math

SEVERITIES = {"critical": "SEVERITY_CRITICAL", "warning": "SEVERITY_WARNING",
              "info": "SEVERITY_INFO"}
# Labels that say which alert it is or how it was scraped, not what is wrong.
_NOT_CULPRIT = {"alertname", "playbook", "severity", "job", "instance"}
_CULPRIT_ORDER = ["host", "device", "port", "interface", "switch"]


def parse_rfc3339_ns(text):
    """Prometheus' RFC 3339 time ('2026-11-21T16:36:05.123456789Z') -> Unix nanoseconds."""
    main, _, rest = text.partition(".")
    if rest:
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        zone = rest
    else:
        main, zone = text[:19], text[19:]
        digits = ""
    if zone in ("Z", "z", ""):
        zone = "+00:00"
    stamp = datetime.datetime.fromisoformat(main + zone)
    fraction = int((digits + "000000000")[:9]) if digits else 0
    return int(stamp.timestamp()) * 1_000_000_000 + fraction


def fired_at_ns(active_ns, for_s, interval_s, first_seen_firing_ns):
    """When the evaluation that turned the alert firing ran (see the module doc)."""
    steps = math.ceil(for_s / interval_s - 1e-9) if interval_s > 0 and for_s > 0 else 0
    computed = active_ns + int(round(steps * interval_s * 1e9))
    return min(computed, first_seen_firing_ns)


class AlertTracker:
    """rules: {alertname: (for_seconds, group_interval_seconds)} from /api/v1/rules.
    netdev_to_rdma(host, netdev) -> the RDMA device whose port that netdev is, or None."""

    def __init__(self, rules, netdev_to_rdma):
        self._rules = rules
        self._netdev_to_rdma = netdev_to_rdma
        self._alerts = {}  # identity -> record

    def observe(self, alerts, now_ns):
        """One successful poll: the `data.alerts` list of GET /api/v1/alerts."""
        seen = set()
        for alert in alerts:
            labels = alert.get("labels", {})
            identity = tuple(sorted(labels.items()))
            seen.add(identity)
            record = self._alerts.get(identity)
            if record is None:
                record = {"labels": labels, "active_ns": None, "first_firing_ns": None,
                          "fired_ns": None, "resolved_ns": None}
                self._alerts[identity] = record
            record["annotations"] = alert.get("annotations", {})
            record["state"] = alert.get("state", "")
            record["resolved_ns"] = None
            if record["active_ns"] is None and alert.get("activeAt"):
                record["active_ns"] = parse_rfc3339_ns(alert["activeAt"])
            if record["state"] == "firing" and record["first_firing_ns"] is None:
                record["first_firing_ns"] = now_ns
                for_s, interval_s = self._rules.get(labels.get("alertname"), (0.0, 0.0))
                record["fired_ns"] = fired_at_ns(record["active_ns"] or now_ns, for_s,
                                                 interval_s, now_ns)
        for identity, record in self._alerts.items():
            if identity not in seen and record["resolved_ns"] is None:
                record["resolved_ns"] = now_ns
                record["state"] = "resolved"

    def culprit(self, labels):
        values = {k: v for k, v in labels.items() if k not in _NOT_CULPRIT}
        rdma = self._netdev_to_rdma(values.get("host"), values.get("device"))
        if rdma:  # an ethtool or netclass series names the netdev: say which NIC it is
            values["interface"], values["device"] = values["device"], rdma
        names = [n for n in _CULPRIT_ORDER if n in values]
        names += sorted(n for n in values if n not in _CULPRIT_ORDER)
        return [{"name": n, "value": values[n]} for n in names]

    def diagnoses(self):
        """The records, oldest first. Alerts that were only ever pending and went away are
        left out (railwatch drops those too); ones still pending are PENDING."""
        out = []
        for identity, record in self._alerts.items():
            fired = record["fired_ns"] is not None
            if record["state"] == "firing":
                state = "DIAGNOSIS_STATE_FIRING"
            elif record["state"] == "pending" and not fired:
                state = "DIAGNOSIS_STATE_PENDING"
            elif fired:
                state = "DIAGNOSIS_STATE_RESOLVED"
            else:
                continue
            labels = record["labels"]
            digest = hashlib.sha256(repr(identity).encode()).hexdigest()[:16]
            diagnosis = {
                "id": f"baseline-{digest}",
                "playbook": labels.get("playbook", ""),
                "severity": SEVERITIES.get(labels.get("severity", ""), "SEVERITY_UNSPECIFIED"),
                "state": state,
                "summary": record["annotations"].get("summary", labels.get("alertname", "")),
                "description": record["annotations"].get("description", ""),
                "culprit": self.culprit(labels),
                "tags": ["baseline", labels.get("alertname", "")],
                "active_since_unix_nano": str(record["active_ns"] or 0),
                "explained_by": "",
            }
            if fired:
                diagnosis["fired_at_unix_nano"] = str(record["fired_ns"])
            if state == "DIAGNOSIS_STATE_RESOLVED":
                diagnosis["resolved_at_unix_nano"] = str(record["resolved_ns"])
            out.append(diagnosis)
        out.sort(key=lambda d: int(d["active_since_unix_nano"]))
        return out
