#!/usr/bin/env bash
# The scenario suite (sim/scenarios/*.yaml, docs/DETECTION.md) through the real programs:
# `railwatch-sim run` plays every scenario, three at a time, and exits non-zero when one misses
# its expect: block (a fault not detected or with the wrong culprit, a false diagnosis). The
# score table is printed and kept in BUILD/scenario-suite.{txt,json} for docs/DETECTION.md
# (scenario-suite-discovered.{txt,json} without a topology file).
# The large scenarios (sim/scenarios/large: 64 and 256 hosts) are not run here (docs/DETECTION.md).
# RAILWATCH_TOPOLOGY_SOURCE=discovered plays them without a topology file: railwatchd discovers
# the map, and each run checks it against the simulator's topology (docs/TOPOLOGY.md).
# Usage: scenario_suite.sh BUILD_DIR [SCENARIO.yaml...]   (default: every file in sim/scenarios)
set -euo pipefail

BUILD=${1:?usage: scenario_suite.sh BUILD_DIR [SCENARIO.yaml...]}
shift
scenarios=("$@")
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

source_=${RAILWATCH_TOPOLOGY_SOURCE:-file}
out="$BUILD/scenario-suite"
[ "$source_" = file ] || out="$out-$source_"
set +e
[ ${#scenarios[@]} -gt 0 ] || scenarios=("$SRC/sim/scenarios")
"$SIM" run --jobs="${RAILWATCH_SUITE_JOBS:-3}" --json --out="$WORK/runs" \
  --topology_source="$source_" \
  "${scenarios[@]}" >"$out.json" 2>"$WORK/progress.log"
rc=$?
set -e
grep -E "connected|ending|FAILED|error|discovered map" "$WORK/progress.log" | tail -n 80 || true

python3 - "$out.json" <<'PY' | tee "$out.txt"
import json, sys
j = json.load(open(sys.argv[1]))
for s in j["scenarios"]:
    flag = "ok  " if s["passed"] else "FAIL"
    print(f"{flag} {s['name']}: {s['hosts']} hosts, {s['duration_s']:.0f} s, "
          f"false {len(s['false_diagnoses'])}")
    for f in s["faults"]:
        delay = f"{f['delay_ms'] / 1000:.2f} s" if f["detected"] else "missed"
        print(f"       {f['kind']:<20} {f.get('playbook', ''):<22} {delay:>9}"
              f"  culprit {'right' if f['right_culprit'] else 'WRONG'}")
    for p in s.get("problems", []):
        print(f"       - {p}")
print(json.dumps(j["summary"]))
PY
[ "$rc" -eq 0 ] || fail "railwatch-sim run exited $rc: a scenario missed its expect: block (above)"
echo "PASS: scenario suite"
