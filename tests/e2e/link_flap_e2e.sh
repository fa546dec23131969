#!/usr/bin/env bash
# End to end with the real programs on loopback: railwatch-sim writes sysfs trees for three
# hosts and flaps one link; three railwatch-agents stream to railwatchd; the diagnosis must
# reach the CLI and /metrics. Then the daemon is restarted and the agents must come back.
set -euo pipefail

BUILD=${1:?usage: link_flap_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

agents_connected() {  # agents_connected N
  [ "$("$CLI" --server="$GRPC" agents --json | grep -c '"connected": true')" -eq "$1" ]
}

# The agents read RDMA sysfs only (--netdevs=none: no netdev is named so): without a topology the
# daemon could not tell
# that the netdev carrier's flap and the RDMA port's are one link (the scenario suite covers both).
"$SIM" --root="$WORK/sys" --hosts=3 --flap=gpu-node-002/mlx5_6/1@6s \
  --ground_truth="$WORK/ground_truth.jsonl" >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_for 10 "simulated sysfs trees" test -e "$WORK/sys/gpu-node-003/class/infiniband/mlx5_7/ports/1/counters/link_downed"

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"
echo "daemon: gRPC $GRPC, metrics $METRICS"

for host in gpu-node-001 gpu-node-002 gpu-node-003; do
  "$AGENT" --server="$GRPC" --hostname="$host" --sysfs_root="$WORK/sys/$host" \
    --netdevs=none --backoff_initial=100ms --backoff_max=1s --log_state_dir="$WORK/state" \
    >"$WORK/agent-$host.log" 2>&1 &
  PIDS+=($!)
done
wait_for 30 "3 connected agents" agents_connected 3

# The flap is injected 6 s after the simulator started.
wait_for 60 "a firing link_flap diagnosis" \
  sh -c "'$CLI' --server='$GRPC' diagnoses --state=firing --json | grep -q '\"link_flap\"'"

"$CLI" --server="$GRPC" diagnoses --state=all --json >"$WORK/diagnoses.json"
grep -q '"value": "gpu-node-002"' "$WORK/diagnoses.json" || fail "culprit host missing"
grep -q '"value": "mlx5_6"' "$WORK/diagnoses.json" || fail "culprit device missing"
grep -q 'rules/runbooks/link-flap.md' "$WORK/diagnoses.json" || fail "runbook path missing"
grep -q 'fabric_rdma_link_downed_total{device=\\"mlx5_6\\",host=\\"gpu-node-002\\",port=\\"1\\"}' \
  "$WORK/diagnoses.json" || fail "evidence series missing"
[ "$(grep -c '"playbook":' "$WORK/diagnoses.json")" -eq 1 ] || fail "expected exactly one diagnosis"

"$CLI" --server="$GRPC" diagnoses >"$WORK/diagnoses.txt"
grep -q 'firing .*critical .*link_flap .*device=mlx5_6 host=gpu-node-002 port=1' "$WORK/diagnoses.txt" \
  || fail "human table: $(cat "$WORK/diagnoses.txt")"

curl -fsS "http://$METRICS/metrics" >"$WORK/metrics.txt" || fail "cannot scrape /metrics"
grep -q '^railwatch_diagnosis_active{playbook="link_flap",severity="critical",device="mlx5_6",host="gpu-node-002",port="1"} 1$' \
  "$WORK/metrics.txt" || fail "railwatch_diagnosis_active missing from /metrics"
grep -q '^fabric_rdma_link_downed_total{device="mlx5_6",host="gpu-node-002",port="1"} 1$' \
  "$WORK/metrics.txt" || fail "link_downed counter missing from /metrics"
grep -q '^railwatch_agents_connected 3$' "$WORK/metrics.txt" || fail "railwatch_agents_connected != 3"
grep -q '^railwatch_collector_success{collector="rdma_sysfs",host="gpu-node-001"} 1$' \
  "$WORK/metrics.txt" || fail "collector success metric missing"
[ "$(grep -c '^fabric_rdma_port_transmit_bytes_total{' "$WORK/metrics.txt")" -eq 24 ] \
  || fail "expected 24 NIC byte counters (3 hosts x 8 NICs)"

injected=$(sed -n 's/.*"injected_at_unix_nano": \([0-9]*\).*/\1/p' "$WORK/ground_truth.jsonl")
fired=$(json_field "$WORK/diagnoses.json" fired_at_unix_nano)
[ -n "$injected" ] && [ -n "$fired" ] || fail "missing injection or firing time"
delay_ms=$(( (fired - injected) / 1000000 ))
echo "link flap diagnosed ${delay_ms} ms after injection"
[ "$delay_ms" -ge 0 ] || fail "diagnosis before injection?"

# The daemon goes away: the CLI says so with its own exit code, and the agents reconnect to a
# new daemon on the same address on their own.
kill "$DAEMON_PID"
wait "$DAEMON_PID" || true
set +e
"$CLI" --server="$GRPC" --timeout=2 agents >/dev/null 2>"$WORK/cli-down.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "CLI exit code with the daemon down: $rc (want 3)"
grep -q "cannot reach railwatchd" "$WORK/cli-down.err" || fail "CLI error text: $(cat "$WORK/cli-down.err")"
sleep 1
start_daemon "$GRPC" "$WORK/ready2.json" "$WORK/daemon2.log"
wait_for 30 "agents to reconnect" agents_connected 3
grep -q "connected to daemon" "$WORK/agent-gpu-node-001.log" || fail "agent log"
grep -q "retrying in" "$WORK/agent-gpu-node-001.log" || fail "agent did not report its backoff"

echo "PASS: link flap diagnosed end to end in ${delay_ms} ms; agents reconnected after a daemon restart"
