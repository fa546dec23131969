# Shared by the end-to-end scripts: program paths, a work directory removed on exit with every
# started process (KEEP_WORK=1 keeps it), failure with the logs' tails, and polling. Source it
# after setting BUILD.
# shellcheck shell=bash
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIM=$BUILD/sim/railwatch-sim
DAEMON=$BUILD/daemon/railwatchd
AGENT=$BUILD/agent/railwatch-agent
CLI=$BUILD/cli/railwatch
WORK=$(mktemp -d "${TMPDIR:-/tmp}/railwatch-e2e-XXXXXX")
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${KEEP_WORK:-}" ]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for log in "$WORK"/*.log; do echo "--- $log" >&2; tail -n 20 "$log" >&2; done
  exit 1
}

# wait_for SECONDS DESCRIPTION COMMAND...: retries COMMAND every 0.2 s.
wait_for() {
  local secs=$1 what=$2
  shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "timed out after ${secs}s waiting for $what"
    sleep 0.2
  done
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now, for programs that take no
# port 0 (Prometheus, Alertmanager).
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

json_field() {  # json_field FILE KEY: first string value of KEY
  sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}

# start_daemon GRPC_LISTEN READY_FILE LOG: railwatchd with the shipped rules; sets DAEMON_PID,
# GRPC and METRICS from its ready file.
start_daemon() {
  rm -f "$2"
  "$DAEMON" --listen="$1" --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
    --ready_file="$2" >"$3" 2>&1 &
  DAEMON_PID=$!
  PIDS+=("$DAEMON_PID")
  wait_for 30 "daemon ready file $2" test -s "$2"
  GRPC=$(json_field "$2" grpc)
  METRICS=$(json_field "$2" metrics)
}
