#!/usr/bin/env bash
# `railwatch-sim run` end to end on the smallest scenario (tests/fixtures/scenarios/
# tiny-link-flap.yaml: 4 hosts x 2 NICs, one flap at 12 s, 25 s): exit 0, the JSON of
# docs/SCENARIOS.md with the flap detected on the right link and nothing false, the work
# directory's files, `railwatch-sim score` on them agreeing, a bad scenario refused with exit 2,
# and, interrupted with SIGINT, exit 1 with no process left behind.
set -euo pipefail

BUILD=${1:?usage: scenario_runner_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

SCENARIO=$SRC/tests/fixtures/scenarios/tiny-link-flap.yaml
RUN=$WORK/tiny-link-flap

# Processes whose command line names the work directory (the runner's children all do).
leftovers() { pgrep -f -a -- "$1" | grep -v pgrep || true; }

set +e
# --settle=0: run to the scenario's duration, so the JSON's duration_s and `score` on the files agree
# with the scenario's (e2e.scenario.suite runs with the default early end).
"$SIM" run --settle=0 --json --keep --out="$WORK" "$SCENARIO" >"$WORK/run.json" 2>"$WORK/run-progress.log"
rc=$?
set -e
cat "$WORK/run-progress.log"
[ "$rc" -eq 0 ] || { cat "$WORK/run.json"; fail "railwatch-sim run exited $rc"; }
[ -z "$(leftovers "$WORK")" ] || fail "processes left behind: $(leftovers "$WORK")"

python3 - "$WORK/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["scenarios"][0]
assert s["name"] == "tiny-link-flap" and s["system"] == "railwatch", s
assert s["hosts"] == 4 and s["duration_s"] == 25, s
assert 0 < s["setup_s"] < 12, s
assert s["passed"] is True and s["problems"] == [] and s["error"] == "", s
assert s["false_diagnoses"] == [] and s["false_per_host_hour"] == 0, s
f = s["faults"][0]
assert f["kind"] == "link_flap" and f["playbook"] == "link_flap", f
assert f["culprit"] == {"host": "gpu-node-002", "device": "mlx5_1"}, f
assert f["injected"] and f["detected"] and f["right_culprit"], f
assert 0 <= f["delay_ms"] <= 10000 and f["target_ms"] == 2000, f
assert f["diagnosis_id"], f
sm = j["summary"]
assert (sm["faults"], sm["detected"], sm["right_culprit"], sm["false_diagnoses"]) == (1, 1, 1, 0), sm
print(f"runner: flap detected in {f['delay_ms']} ms, set-up {s['setup_s']:.1f} s")
PY

for f in truth.jsonl diagnoses.json topology.yaml targets.yaml logs/railwatchd.log \
  logs/railwatch-sim.log logs/switch-agent.log logs/gpu-node-004.log; do
  [ -s "$RUN/$f" ] || fail "no $f in the work directory"
done
"$SIM" score --scenario="$SCENARIO" --truth="$RUN/truth.jsonl" --diagnoses="$RUN/diagnoses.json" \
  >"$WORK/score.txt" || { cat "$WORK/score.txt"; fail "railwatch-sim score disagrees"; }
grep -q '^link_flap  12s  gpu-node-002 mlx5_1  link_flap' "$WORK/score.txt" ||
  { cat "$WORK/score.txt"; fail "no row for the flap in the table"; }

# A scenario with a mistake: exit 2 and the file:line.
printf 'duration: 10s\nfaults:\n  - {kind: link_flap, at: 5s, host: gpu-node-009, device: mlx5_0}\n' \
  >"$WORK/bad.yaml"
set +e
"$SIM" run "$WORK/bad.yaml" 2>"$WORK/bad.txt"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "a bad scenario exited $rc, want 2"
grep -q "bad.yaml:3:37: error\[not-in-topology\]: host \`gpu-node-009\` is not in the topology" "$WORK/bad.txt" ||
  { cat "$WORK/bad.txt"; fail "no file:line for the bad host"; }

# Ctrl-C once everything runs: exit 1, nothing left behind.
mkdir -p "$WORK/interrupted"
"$SIM" run --out="$WORK/interrupted" "$SCENARIO" >"$WORK/int.txt" 2>&1 &
RUNNER=$!
wait_for 30 "the agents of the interrupted run" grep -q "connected" "$WORK/int.txt"
kill -INT "$RUNNER"
set +e
wait "$RUNNER"
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$WORK/int.txt"; fail "interrupted run exited $rc, want 1"; }
grep -q "interrupted" "$WORK/int.txt" || { cat "$WORK/int.txt"; fail "no word of the interruption"; }
[ -z "$(leftovers "$WORK/interrupted")" ] || fail "left behind: $(leftovers "$WORK/interrupted")"
[ ! -e "$WORK/interrupted/tiny-link-flap" ] || fail "the interrupted run's work directory stayed"
echo "PASS: railwatch-sim run: scored, scored again, refused, interrupted"
