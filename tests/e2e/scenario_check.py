#!/usr/bin/env python3
"""Checks a scenario's diagnoses against the simulator's ground truth and measures the delay.

Input: `railwatch diagnoses --state=all --json` (DIAGNOSES) and the simulator's ground-truth
JSON lines (TRUTH). The delay is the first matching diagnosis' fired_at_unix_nano (when it
paged) minus the fault's injected_at_unix_nano; active_since (when the condition first held)
is printed beside it.

  scenario_check.py NAME DIAGNOSES TRUTH --fault=pfc_storm --playbook=pfc_storm \
      --culprit=host=gpu-node-002 --culprit=device=mlx5_3 --limit_ms=2000 --count=1 \
      --not_fired=pfc_pause_relay --explains=pfc_pause_relay --quiet_before_fault

Exit status 0 when every check holds; 1 with the reasons (and the diagnoses in short) when not.
`--wait` only asks whether a matching diagnosis has fired yet (exit 0/1, no output).
`--healthy` (no --fault, no --playbook): nothing fired at all, and nothing is pending.
"""

import argparse
import json
import os
import sys


def load_diagnoses(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    return json.loads(text).get("diagnoses", []) if text else []


def load_truth(path):
    if not os.path.exists(path):  # written at the first fault
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def nanos(d, key):
    return int(d.get(key, "0") or 0)


def culprit(d):
    return {label["name"]: label.get("value", "") for label in d.get("culprit", [])}


def short(d):
    labels = " ".join(f"{k}={v}" for k, v in sorted(culprit(d).items()))
    state = d.get("state", "").replace("DIAGNOSIS_STATE_", "").lower()
    return (f"  {d.get('playbook')} [{state}] {labels} active_since={nanos(d, 'active_since_unix_nano')}"
            f" fired_at={nanos(d, 'fired_at_unix_nano')} explained_by={d.get('explained_by', '')!r}"
            f" explains={len(d.get('explains', []))}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("diagnoses")
    p.add_argument("truth")
    p.add_argument("--fault", help="ground-truth fault kind; its first line counts")
    p.add_argument("--playbook")
    p.add_argument("--culprit", action="append", default=[], help="LABEL=VALUE the culprit must carry")
    p.add_argument("--limit_ms", type=int)
    p.add_argument("--count", type=int, help="exactly this many fired diagnoses of the playbook")
    p.add_argument("--not_fired", action="append", default=[], help="a playbook that must not have fired")
    p.add_argument("--explains", action="append", default=[],
                   help="a playbook whose results the diagnosis must hold as evidence")
    p.add_argument("--quiet_before_fault", action="store_true",
                   help="no diagnosis of any playbook fired before the fault was injected")
    p.add_argument("--wait", action="store_true")
    p.add_argument("--healthy", action="store_true")
    a = p.parse_args()
    if not a.healthy and (a.fault is None or a.playbook is None):
        p.error("--fault and --playbook are required (or --healthy)")

    try:
        diagnoses = load_diagnoses(a.diagnoses)
        truth = load_truth(a.truth)
    except (OSError, ValueError):
        if a.wait:
            return 1
        raise
    wanted = dict(kv.split("=", 1) for kv in a.culprit)
    fired = [d for d in diagnoses if d.get("playbook") == a.playbook and nanos(d, "fired_at_unix_nano")]
    matching = [d for d in fired if all(culprit(d).get(k) == v for k, v in wanted.items())]
    if a.wait:
        return 0 if matching else 1

    if a.healthy:
        if truth:
            print(f"scenario {a.name}: FAILED: the ground truth has faults: {truth}", file=sys.stderr)
            return 1
        if diagnoses:
            print(f"scenario {a.name}: FAILED: diagnoses in a healthy fabric:", file=sys.stderr)
            for d in diagnoses:
                print(short(d), file=sys.stderr)
            return 1
        print(f"scenario {a.name}: no diagnosis, firing, pending or resolved")
        return 0

    problems = []
    faults = [t for t in truth if t.get("fault") == a.fault]
    if not faults:
        problems.append(f"no {a.fault} in the ground truth")
    if not matching:
        problems.append(f"no fired {a.playbook} diagnosis with culprit {wanted}")
    if a.count is not None and len(fired) != a.count:
        problems.append(f"{len(fired)} fired {a.playbook} diagnoses, want {a.count}")
    for other in a.not_fired:
        for d in diagnoses:
            if d.get("playbook") == other and nanos(d, "fired_at_unix_nano"):
                problems.append(f"{other} fired on its own: {short(d).strip()}")
    if faults and matching:
        injected = int(faults[0]["injected_at_unix_nano"])
        first = min(matching, key=lambda d: nanos(d, "fired_at_unix_nano"))
        delay_ms = (nanos(first, "fired_at_unix_nano") - injected) // 1_000_000
        active_ms = (nanos(first, "active_since_unix_nano") - injected) // 1_000_000
        limit = f"limit {a.limit_ms} ms" if a.limit_ms is not None else "no limit"
        print(f"scenario {a.name}: detected in {delay_ms} ms ({limit}); condition held from "
              f"{active_ms} ms; culprit {' '.join(f'{k}={v}' for k, v in sorted(culprit(first).items()))}")
        if delay_ms < 0:
            problems.append(f"fired {-delay_ms} ms before the fault was injected")
        if a.limit_ms is not None and delay_ms > a.limit_ms:
            problems.append(f"detected in {delay_ms} ms, above the limit of {a.limit_ms} ms")
        for symptom in a.explains:
            if not any(e.split(" ", 1)[0] == symptom for e in first.get("explains", [])):
                problems.append(f"{a.playbook} holds no {symptom} result as evidence "
                                f"(explains: {first.get('explains', [])})")
        if a.quiet_before_fault:
            for d in diagnoses:
                if 0 < nanos(d, "fired_at_unix_nano") < injected:
                    problems.append(f"fired before the fault (healthy period): {short(d).strip()}")
    if problems:
        print(f"scenario {a.name}: FAILED", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        print("diagnoses:", file=sys.stderr)
        for d in diagnoses:
            print(short(d), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
