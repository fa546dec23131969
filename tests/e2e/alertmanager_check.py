#!/usr/bin/python3
"""Helpers of alertmanager_e2e.sh: the test's Alertmanager config and rules override, and the
checks on what the webhook received (tests/e2e/webhook_receiver.py writes one JSON line per
notification: {"path", "received_at_unix_nano", "body"}).

  am-config SHIPPED OUT WEBHOOK      the shipped route example with every receiver replaced by
                                     the webhook at WEBHOOK/<receiver name> and short timers
  rules-override SHIPPED_RULES OUT   link_flap with its 5m windows and keep_firing_for scaled
                                     down (--scale), pfc_storm's keep_firing_for shortened
  has NOTIFICATIONS --path P --alertname A --status S    exit 0 when such a notification came
  count NOTIFICATIONS --path P --alertname A             how many came
  storm NOTIFICATIONS TRUTH [--expect L=V ...]           the PFC storm's page, field by field
  flap NOTIFICATIONS TRUTH --path P                      one flapping link: 1 or 2 notifications
  timeline NOTIFICATIONS TRUTH --path P                  each notification, timed from its fault
"""
import argparse
import json
import re
import sys

import yaml


def load_notifications(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def injected_ns(truth, fault):
    with open(truth) as f:
        for line in f:
            t = json.loads(line)
            if t.get("fault") == fault:
                return int(t["injected_at_unix_nano"])
    return None


def of_alertname(notes, alertname, path=None):
    return [n for n in notes
            if n["body"].get("groupLabels", {}).get("alertname") == alertname
            and (path is None or n["path"] == path)]


def am_config(args):
    with open(args.shipped) as f:
        config = yaml.safe_load(f)
    config["receivers"] = [
        {"name": r["name"],
         "webhook_configs": [{"url": f"{args.webhook}/{r['name']}", "send_resolved": True}]}
        for r in config["receivers"]]

    def shorten(route):
        for key, value in (("group_wait", "1s"), ("group_interval", "2s"),
                           ("repeat_interval", "1h")):
            if key in route or route is config["route"]:
                route[key] = value
        for child in route.get("routes", []):
            shorten(child)

    shorten(config["route"])
    with open(args.out, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)


def rules_override(args):
    with open(args.shipped) as f:
        items = yaml.safe_load(f)
    flap = next(i for i in items if i.get("playbook") == "link_flap")
    # 5m windows and keep_firing_for 5m, divided by --scale: a flap every 30 s for 10 minutes
    # becomes a flap every 30/scale s for 600/scale s.
    seconds = int(300 / args.scale)
    condition = flap["condition"].replace("[5m]", f"[{seconds}s]")
    if "[5m]" in condition or f"[{seconds}s]" not in condition:
        sys.exit("link_flap's condition has no [5m] window to scale: update this test")
    override = [
        {"playbook": "link_flap", "condition": condition, "keep_firing_for": f"{seconds}s",
         "override": {"condition": "replace", "keep_firing_for": "replace"}},
        {"playbook": "pfc_storm", "keep_firing_for": args.storm_keep_firing_for,
         "override": {"keep_firing_for": "replace"}},
    ]
    with open(args.out, "w") as f:
        f.write("# Written by tests/e2e/alertmanager_check.py rules-override\n")
        yaml.safe_dump(override, f, sort_keys=False)
    print(f"link_flap windows and keep_firing_for: {seconds}s (1/{args.scale:g} of 5m)")


def has(args):
    notes = of_alertname(load_notifications(args.notifications), args.alertname, args.path)
    return 0 if any(n["body"].get("status") == args.status for n in notes) else 1


def count(args):
    print(len(of_alertname(load_notifications(args.notifications), args.alertname, args.path)))


def storm(args):
    notes = of_alertname(load_notifications(args.notifications), "pfc_storm", args.path)
    firing = [n for n in notes if n["body"]["status"] == "firing"]
    if not firing:
        sys.exit("no firing pfc_storm notification")
    body = firing[0]["body"]
    problems = []
    if len(body["alerts"]) != 1:
        problems.append(f"{len(body['alerts'])} alerts in the notification, expected 1")
    alert = body["alerts"][0]
    labels, notes_ = alert["labels"], alert["annotations"]
    for kv in args.expect:
        name, value = kv.split("=", 1)
        if labels.get(name) != value:
            problems.append(f"label {name}={labels.get(name)!r}, expected {value!r}")
    if alert["status"] != "firing":
        problems.append(f"alert status {alert['status']}")
    if "diagnosis_id" in labels or any(
            notes_.get("diagnosis_id", "\0") in v for v in labels.values()):
        problems.append("the diagnosis id is in the labels")
    want = {
        "summary": r"PFC storm: gpu-node-003 mlx5_2",
        "runbook_url": r"^https://runbooks\.example/railwatch/pfc-storm\.md$",
        # The first command confirms the culprit on the culprit (issue 19 item 10).
        "first_steps": r"^ssh gpu-node-003 ethtool -S enp56s0np0",
        # The job it stalls and its hosts first, then where the fault is.
        "blast_radius": r"^job train stalls \(16 GPUs on 4 hosts: gpu-node-001, gpu-node-002, "
                        r"gpu-node-003 and 1 more\); the fault is on 4 hosts \(leaf scope\): ",
        "cost_per_minute": r"^\$8/min$",
        "gpus": r"^16$",
        "jobs": r"^train$",
        "description": r"Evidence:\n- fabric_pfc_pause_frames_total\{.*(gpu-node-003|leaf-r2).*rate over 3s = ",
        "railwatch_explain": r"^railwatch explain [0-9a-f]+$",
        "location": r"gpu-node-003 mlx5_2",
    }
    for name, pattern in want.items():
        if not re.search(pattern, notes_.get(name, "")):
            problems.append(f"annotation {name}={notes_.get(name)!r} does not match {pattern}")
    if "<host" in notes_.get("first_steps", ""):
        problems.append("first_steps has a blank culprit")
    if not re.match(r"^http://railwatch\.example/diagnoses/[0-9a-f]+$", alert.get("generatorURL", "")):
        problems.append(f"generatorURL {alert.get('generatorURL')!r}")
    for p in problems:
        print("  " + p, file=sys.stderr)
    t0 = injected_ns(args.truth, "pfc_storm")
    print(f"pfc_storm page: {json.dumps({'labels': labels, 'annotations': notes_}, indent=1)}")
    print(f"pfc_storm: injected -> webhook (firing) "
          f"{(firing[0]['received_at_unix_nano'] - t0) / 1e6:.0f} ms")
    return 1 if problems else 0


def timeline(args):
    """Every notification at one receiver, timed from its fault's first injection."""
    faults = {"pfc_storm": "pfc_storm", "link_flap": "link_flap"}
    with open(args.truth) as f:
        truth = [json.loads(line) for line in f if line.strip()]
    for n in load_notifications(args.notifications):
        if n["path"] != args.path:
            continue
        alertname = n["body"].get("groupLabels", {}).get("alertname", "?")
        times = [int(t["injected_at_unix_nano"]) for t in truth
                 if t.get("fault") == faults.get(alertname)]
        since = "(no ground truth)"
        if times:
            since = f"{(n['received_at_unix_nano'] - times[0]) / 1e9:6.1f} s after the injection"
        if len(times) > 1 and n["received_at_unix_nano"] > times[-1]:
            since += f", {(n['received_at_unix_nano'] - times[-1]) / 1e9:.1f} s after the last"
        print(f"  {args.path} {alertname:10} {n['body']['status']:8} {since}")


def flap(args):
    all_notes = load_notifications(args.notifications)
    notes = of_alertname(all_notes, "link_flap", args.path)
    t0 = injected_ns(args.truth, "link_flap")
    with open(args.truth) as f:
        flaps = sum(1 for line in f if json.loads(line).get("fault") == "link_flap")
    statuses = [n["body"]["status"] for n in notes]
    alerts = [a for n in notes for a in n["body"]["alerts"]]
    fingerprints = sorted({a["fingerprint"] for a in alerts})
    print(f"link_flap: {flaps} flaps injected; {len(notes)} notification(s) on {args.path}: "
          f"{', '.join(statuses)}; {len(fingerprints)} alert identity(ies)")
    if notes and t0:
        print(f"link_flap: first flap -> webhook (firing) "
              f"{(notes[0]['received_at_unix_nano'] - t0) / 1e6:.0f} ms")
    problems = []
    if not 1 <= len(notes) <= 2:
        problems.append(f"{len(notes)} notifications for one flapping link, expected 1 or 2")
    if notes and statuses[0] != "firing":
        problems.append("the first notification is not a firing one")
    if len(notes) == 2 and statuses[1] != "resolved":
        problems.append("the second notification is not the resolve")
    if len(fingerprints) != 1:
        problems.append(f"{len(fingerprints)} different alerts for one link")
    for p in problems:
        print("  " + p, file=sys.stderr)
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("am-config")
    p.add_argument("shipped")
    p.add_argument("out")
    p.add_argument("webhook")
    p = sub.add_parser("rules-override")
    p.add_argument("shipped")
    p.add_argument("out")
    p.add_argument("--scale", type=float, default=15)
    p.add_argument("--storm_keep_firing_for", default="5s")
    p = sub.add_parser("has")
    p.add_argument("notifications")
    p.add_argument("--path", required=True)
    p.add_argument("--alertname", required=True)
    p.add_argument("--status", required=True)
    p = sub.add_parser("count")
    p.add_argument("notifications")
    p.add_argument("--path", required=True)
    p.add_argument("--alertname", required=True)
    p = sub.add_parser("storm")
    p.add_argument("notifications")
    p.add_argument("truth")
    p.add_argument("--path", required=True)
    p.add_argument("--expect", action="append", default=[])
    p = sub.add_parser("timeline")
    p.add_argument("notifications")
    p.add_argument("truth")
    p.add_argument("--path", required=True)
    p = sub.add_parser("flap")
    p.add_argument("notifications")
    p.add_argument("truth")
    p.add_argument("--path", required=True)
    args = ap.parse_args()
    handler = {"am-config": am_config, "rules-override": rules_override, "has": has, "count": count,
               "storm": storm, "flap": flap, "timeline": timeline}[args.command]
    sys.exit(handler(args) or 0)


if __name__ == "__main__":
    main()
