#!/usr/bin/env bash
# Detection delay under load (issue 8): plays sim/scenarios/load one at a time with
# `railwatch-sim run --load=LOAD` (railwatch-loadgen's quiet agents in the same railwatchd as the
# scenario's simulated fabric) and prints, per fault, its delay and target, and the false
# diagnoses (the load's quiet hosts must raise none) as FIGURE lines for bench/run.
#
# Usage: bench/detection_under_load.sh [BUILD_DIR] [LOAD]   (defaults: build/release, 1024x1000)
# Environment: SCENARIOS (default sim/scenarios/load): the scenario files or directory to play.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build/release}
LOAD=${2:-1024x1000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/railwatch-load-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

set +e
# shellcheck disable=SC2086
"$B/sim/railwatch-sim" run --jobs=1 --json --load="$LOAD" ${SCENARIOS:-"$SRC/sim/scenarios/load"} \
  >"$WORK/scores.json" 2>"$WORK/progress.log"
rc=$?
set -e
grep -E "connected|ending|FAILED|error" "$WORK/progress.log" | tail -n 40 || true
python3 - "$WORK/scores.json" "$LOAD" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"load: {sys.argv[2]} (agents x series) beside each scenario")
for s in j["scenarios"]:
    print(f"{'ok  ' if s['passed'] else 'FAIL'} {s['name']}: set-up {s.get('setup_s', 0):.1f} s, "
          f"false {len(s['false_diagnoses'])}")
    for d in s["false_diagnoses"]:
        print(f"       false: {d.get('playbook', '')} {d.get('summary', '')}")
    for f in s["faults"]:
        if not f["detected"]:
            print(f"       {f['kind']}: missed")
            print(f"FIGURE detection_missed_{f['kind']} 1 count")
            continue
        print(f"       {f['kind']:<12} {f['delay_ms'] / 1000:.2f} s (target "
              f"{(f['target_ms'] or 0) / 1000:.0f} s), culprit "
              f"{'right' if f['right_culprit'] else 'WRONG'}")
        print(f"FIGURE detection_delay_{f['kind']}_ms {f['delay_ms']:.0f} ms")
        if f["target_ms"]:
            print(f"FIGURE detection_delay_{f['kind']}_target_ms {f['target_ms']:.0f} ms")
    print(f"FIGURE detection_false_{s['name']} {len(s['false_diagnoses'])} count")
PY
exit "$rc"
