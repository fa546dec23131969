#!/usr/bin/env bash
# Measures the delay from an injected link flap to its diagnosis, over many flaps in one run:
# railwatch-sim (HOSTS hosts x 8 NICs) flaps FLAPS different ports, one every SPACING seconds;
# one railwatch-agent per host polls every second; the delay of each flap is the daemon's
# fired_at minus the simulator's injection time. Prints every delay, then min/median/p90/max.
#
# Usage: bench/flap_delay.sh [BUILD_DIR] (defaults: build/release, FLAPS=20, HOSTS=4, SPACING=1.7)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build/release}
FLAPS=${FLAPS:-20}
HOSTS=${HOSTS:-4}
SPACING_MS=${SPACING_MS:-1700}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/railwatch-bench-XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

flaps=()
for i in $(seq 0 $((FLAPS - 1))); do
  host=$(printf 'gpu-node-%03d' $((i % HOSTS + 1)))
  dev="mlx5_$(( (i / HOSTS) % 8 ))"
  flaps+=("$host/$dev/1@$((3000 + i * SPACING_MS))ms")
done
"$B/sim/railwatch-sim" --root="$WORK/sys" --hosts=$HOSTS --flap="$(IFS=,; echo "${flaps[*]}")" \
  --ground_truth="$WORK/truth.jsonl" --topology_out="$WORK/topology.yaml" >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
# With the fabric's topology, as a deployment has it: without one, the daemon cannot tell that
# a NIC's RDMA port and its netdev are one link, and a flap is two diagnoses (docs/PLAYBOOKS.md,
# "Element functions").
until [ -s "$WORK/topology.yaml" ]; do sleep 0.1; done
"$B/daemon/railwatchd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --topology="$WORK/topology.yaml" --ready_file="$WORK/ready.json" >"$WORK/daemon.log" 2>&1 &
PIDS+=($!)
until [ -s "$WORK/ready.json" ]; do sleep 0.1; done
GRPC=$(sed -n 's/.*"grpc": "\([^"]*\)".*/\1/p' "$WORK/ready.json")
for i in $(seq 1 $HOSTS); do
  host=$(printf 'gpu-node-%03d' "$i")
  until [ -d "$WORK/sys/$host" ]; do sleep 0.1; done
  "$B/agent/railwatch-agent" --server="$GRPC" --hostname="$host" --sysfs_root="$WORK/sys/$host" \
    --log_state_dir="$WORK/state" >"$WORK/agent-$host.log" 2>&1 &
  PIDS+=($!)
done
sleep $(( (3000 + FLAPS * SPACING_MS) / 1000 + 3 ))
"$B/cli/railwatch" --server="$GRPC" diagnoses --state=all --json >"$WORK/diagnoses.json"

python3 - "$WORK/truth.jsonl" "$WORK/diagnoses.json" "$FLAPS" <<'PY'
import json, statistics, sys
truth = [json.loads(l) for l in open(sys.argv[1])]
diags = json.load(open(sys.argv[2])).get("diagnoses", [])
fired = {}
for d in diags:
    c = {l["name"]: l["value"] for l in d["culprit"]}
    key = (c.get("host"), c.get("device"), c.get("port"))
    if key in fired:  # a second diagnosis of one port: counted as another diagnosis
        key = (d["playbook"], d["id"])
    fired[key] = int(d["fired_at_unix_nano"])
delays, missed = [], []
for t in truth:
    key = (t["host"], t["device"], t["port"])
    if key in fired:
        delays.append((fired[key] - t["injected_at_unix_nano"]) / 1e9)
    else:
        missed.append(key)
false = len(fired) - len(delays)
print("delays (s):", " ".join(f"{d:.3f}" for d in delays))
if delays:
    q = sorted(delays)
    p90 = q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))]
    print(f"flaps {len(truth)}  detected {len(delays)}  missed {len(missed)}  other diagnoses {false}")
    print(f"min {q[0]:.3f}  median {statistics.median(q):.3f}  p90 {p90:.3f}  max {q[-1]:.3f}  (seconds)")
for d in diags:
    c = {l["name"]: l["value"] for l in d["culprit"]}
    if (c.get("host"), c.get("device"), c.get("port")) not in {(t["host"], t["device"], t["port"]) for t in truth}:
        print("other diagnosis:", d["playbook"], d.get("summary", ""))
sys.exit(0 if len(delays) == int(sys.argv[3]) and not missed and not false else 1)
PY
