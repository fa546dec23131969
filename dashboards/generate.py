#!/usr/bin/python3
"""Writes railwatch's Grafana dashboards, dashboards/json/*.json, from the definitions in
boards_*.py. Edit those, then run this script; never edit the JSON by hand.

  dashboards/generate.py           rewrite the JSON files
  dashboards/generate.py --check   exit 1 (and name them) when a file differs from what the
                                   definitions give (the unit test runs this)
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from boards_fabric import fabric_overview, nic_health, pfc_ecn  # noqa: E402
from boards_ib import infiniband  # noqa: E402
from boards_ops import nccl_jobs, railwatch_self  # noqa: E402

BOARDS = {
    "railwatch-fabric-overview.json": fabric_overview,
    "railwatch-pfc-ecn.json": pfc_ecn,
    "railwatch-nic-health.json": nic_health,
    "railwatch-nccl-jobs.json": nccl_jobs,
    "railwatch-infiniband.json": infiniband,
    "railwatch-self.json": railwatch_self,
}
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "json")


def render(build):
    return json.dumps(build(), indent=2, sort_keys=False) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="compare instead of writing; exit 1 when a file is stale")
    parser.add_argument("--out", default=OUT_DIR, help="directory of the JSON files")
    args = parser.parse_args()
    stale = []
    for name, build in BOARDS.items():
        path = os.path.join(args.out, name)
        text = render(build)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
            continue
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}")
    if stale:
        print("stale (run dashboards/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
