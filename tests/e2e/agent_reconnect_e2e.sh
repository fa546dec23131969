#!/usr/bin/env bash
# An agent is back on a stream within a second of its daemon listening again (issue 19 item
# 8): the real railwatch-agent (--backoff_max=500ms) streams to the real railwatchd, which is
# SIGKILLed, stays away 1 s and then 8 s, and starts again on the same port. The delay is from
# the new daemon's log line "railwatchd ready" (it listens) to its line "agent ... connected".
# Before, the agent kept failing on gRPC's cached "connection refused" for 4-9 s.
set -euo pipefail
BUILD=${1:?usage: agent_reconnect_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

"$SIM" --root="$WORK/fabric" --hosts=1 --nics=2 --log_level=warn >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_for 10 "simulated host" test -d "$WORK/fabric/gpu-node-001/class/infiniband/mlx5_1"

PORT=$(free_port)
start_daemon "127.0.0.1:$PORT" "$WORK/ready-1.json" "$WORK/daemon-1.log"
"$AGENT" --server="127.0.0.1:$PORT" --sysfs_root="$WORK/fabric/gpu-node-001" \
  --hostname=gpu-node-001 --backoff_max=500ms --spool_dir=none --ethtool=false \
  --link_events=false >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
wait_for 20 "first connection" grep -q "agent gpu-node-001 connected" "$WORK/daemon-1.log"

n=1
for away in 1 8; do
  kill -KILL "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  sleep "$away"
  n=$((n + 1))
  start_daemon "127.0.0.1:$PORT" "$WORK/ready-$n.json" "$WORK/daemon-$n.log"
  wait_for 30 "the agent back after ${away}s away" \
    grep -q "agent gpu-node-001 connected" "$WORK/daemon-$n.log"
  # The two log lines' own times (milliseconds).
  at() { sed -n "s/^\([0-9T:.-]*\)Z .*$1.*/\1/p" "$WORK/daemon-$n.log" | head -n 1; }
  ms=$(/usr/bin/python3 -c 'import datetime, sys
t = [datetime.datetime.fromisoformat(a) for a in sys.argv[1:]]
print(round((t[1] - t[0]).total_seconds() * 1000))' "$(at 'railwatchd ready')" "$(at 'agent gpu-node-001 connected')")
  echo "FIGURE agent_reconnect_after_${away}s_ms $ms ms"
  [ "$ms" -lt 1000 ] || fail "the agent took ${ms} ms to come back after the daemon was away ${away}s"
done
echo "PASS: agent reconnect"
