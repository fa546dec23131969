#!/usr/bin/env bash
# The operator's baseline end to end (ctest e2e.baseline; docs/BASELINE.md): Debian's
# node_exporter per simulated host and Debian's Prometheus with operator-rules.yml, started by
# baseline.py, on a simulated link flap. Checks:
#   - baseline.py writes its ready file once Prometheus has scraped every node_exporter;
#   - the flap of gpu-node-003/mlx5_1 turns RdmaLinkDown firing in Prometheus;
#   - on SIGTERM baseline.py exits 0, leaves no node_exporter or Prometheus behind, and writes
#     the diagnoses: a FIRING link_flap naming host and device, fired after the injection and
#     within two scrapes and an evaluation of it; nothing fired for any other NIC.
# The flap is late enough that Prometheus has scraped every host's counters before it (an
# increase needs a sample from before it); the check says so when a slow machine was not.
set -euo pipefail

BUILD=${1:?usage: baseline_e2e.sh BUILD_DIR}
# shellcheck source=../../tests/e2e/lib.sh
source "$(dirname "$0")/../../tests/e2e/lib.sh"
BASELINE=$SRC/sim/baseline/baseline.py
for program in /usr/bin/prometheus /usr/bin/prometheus-node-exporter; do
  [ -x "$program" ] || fail "$program not found: scripts/install-deps installs it"
done

HOSTS=4
"$SIM" --root="$WORK/sys" --hosts=$HOSTS --nics=2 --job=train:1-$HOSTS --duration=70s \
  --flap=gpu-node-003/mlx5_1/1@25s --ground_truth="$WORK/truth.jsonl" >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
python3 -B "$BASELINE" --root="$WORK/sys" --hosts=$HOSTS --work="$WORK/baseline" \
  --out="$WORK/diagnoses.json" --ready_file="$WORK/baseline-ready.json" \
  >"$WORK/baseline.log" 2>&1 &
BASELINE_PID=$!
PIDS+=("$BASELINE_PID")
wait_for 40 "the baseline's ready file" test -s "$WORK/baseline-ready.json"
PROM=$(json_field "$WORK/baseline-ready.json" prometheus)
echo "baseline ready after ${SECONDS} s: Prometheus $PROM"

link_down_firing() {
  curl -fsS "$PROM/api/v1/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(a["labels"].get("alertname") == "RdmaLinkDown" and a["state"] == "firing"
                  and a["labels"].get("host") == "gpu-node-003" for a in alerts) else 1)'
}
# Flap at 25 s; a scrape (10 s) and an evaluation (10 s) later at most, plus margin.
wait_for 55 "RdmaLinkDown firing for gpu-node-003" link_down_firing

kill -TERM "$BASELINE_PID"
status=0
wait "$BASELINE_PID" || status=$?
[ "$status" -eq 0 ] || fail "baseline.py exited with status $status"
left=$(pgrep -f -- "$WORK/baseline" || true)
[ -z "$left" ] || fail "processes left behind: $(ps -o pid,args -p "${left//$'\n'/,}")"

python3 - "$WORK/diagnoses.json" "$WORK/truth.jsonl" "$WORK/baseline-ready.json" <<'PY' ||
import json, sys
diagnoses = json.load(open(sys.argv[1]))["diagnoses"]
truth = [json.loads(line) for line in open(sys.argv[2])]
flaps = [t for t in truth if t.get("fault") == "link_flap"]
assert len(flaps) == 1, f"ground truth: {truth}"
injected = flaps[0]["injected_at_unix_nano"]
ready = int(json.load(open(sys.argv[3]))["ready_at_unix_nano"])
assert ready < injected, f"the baseline was ready {(ready - injected) / 1e9:.1f} s after the flap"
fired = [d for d in diagnoses if "fired_at_unix_nano" in d]
for d in diagnoses:
    culprit = {c["name"]: c["value"] for c in d["culprit"]}
    print(f'{d["state"]:26} {d["playbook"]:16} {d["tags"][1]:22} {culprit}')
problems = []
for d in diagnoses:
    assert set(d) >= {"id", "playbook", "state", "severity", "culprit", "summary",
                      "active_since_unix_nano", "explained_by"}, d
    assert all(isinstance(d[k], str) for k in d if k.endswith("_unix_nano")), d
flap = [d for d in fired if d["playbook"] == "link_flap" and d["state"] == "DIAGNOSIS_STATE_FIRING"
        and {"name": "host", "value": "gpu-node-003"} in d["culprit"]
        and {"name": "device", "value": "mlx5_1"} in d["culprit"]]
if not flap:
    problems.append("no FIRING link_flap naming gpu-node-003 mlx5_1")
else:
    delay_ms = (int(flap[0]["fired_at_unix_nano"]) - injected) / 1e6
    active_ms = (int(flap[0]["active_since_unix_nano"]) - injected) / 1e6
    print(f"link flap: active after {active_ms:.0f} ms, fired after {delay_ms:.0f} ms")
    if not 0 <= delay_ms <= 25000:
        problems.append(f"fired {delay_ms:.0f} ms after the injection (0 to 25,000 expected)")
others = [d for d in fired if d not in flap and not (
    d["playbook"] == "link_flap" and {"name": "host", "value": "gpu-node-003"} in d["culprit"])]
if others:
    problems.append(f"{len(others)} other diagnoses fired: {others}")
if problems:
    sys.exit("; ".join(problems))
PY
  fail "diagnoses (above)"
echo "PASS: the operator's baseline saw the link flap (${SECONDS} s)"
