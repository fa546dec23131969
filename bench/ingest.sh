#!/usr/bin/env bash
# Daemon ingest throughput: railwatchd (shipped rules, default retention, loopback ports, a
# temporary directory) fed by railwatch-loadgen playing AGENTS host agents x SERIES series at
# 1 s over real gRPC streams. Once every agent is connected and a warm-up has passed (their
# first batches define all series), it measures over SECONDS: samples ingested per
# second (railwatch_ingest_samples_total on the daemon's /metrics), the daemon's CPU and the
# load generator's (sum of /proc/PID/task/*/schedstat over their threads), and the daemon's RSS.
#
# Usage: bench/ingest.sh [AGENTS] [SERIES] [SECONDS]   (defaults 1024 1000 20)
# Environment: BUILD_DIR (build/release), WARMUP (seconds after all agents connected, default
# 10), LOADGEN_THREADS (2), PERF_OUT (a file: perf record -g the daemon over the measurement).
# Prints FIGURE lines: ingest_samples_per_s, ingest_daemon_cores, ingest_samples_per_core_s,
# daemon_rss_mb, loadgen_cores; and the daemon's threads, context switches and rule evaluations/s.
set -euo pipefail
BUILD=${BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build/release}
AGENTS=${1:-1024}
SERIES=${2:-1000}
SECONDS_MEASURED=${3:-20}
WARMUP=${WARMUP:-10}
# Program paths, $WORK, cleanup of every started process on exit, start_daemon.
# shellcheck source=../tests/e2e/lib.sh
source "$(dirname "$0")/../tests/e2e/lib.sh"
LOADGEN_BIN=$BUILD/bench/railwatch-loadgen
for bin in "$DAEMON" "$LOADGEN_BIN"; do
  [ -x "$bin" ] || { echo "ingest.sh: $bin not built" >&2; exit 2; }
done

# Nanoseconds of CPU a process has used: the sum over its threads (threads that ended are
# not counted, which is why both processes are read while they run).
cpu_ns() {
  local sum=0 f v
  for f in /proc/"$1"/task/*/schedstat; do
    read -r v _ <"$f" 2>/dev/null || continue
    sum=$((sum + v))
  done
  echo "$sum"
}
metric() {  # metric NAME: its value on the daemon's /metrics (the first series of that name)
  curl -sf "http://$METRICS/metrics" | awk -v n="$1" '!done && ($1 == n || index($1, n "{") == 1) { printf "%.0f\n", $2; done = 1 }'
}
samples_total() { metric railwatch_ingest_samples_total; }

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"

"$LOADGEN_BIN" --server="$GRPC" --agents="$AGENTS" --series="$SERIES" \
  --interval=1s --duration=0 --threads="${LOADGEN_THREADS:-2}" --log_level=warn \
  >"$WORK/loadgen.log" 2>&1 &
LOADGEN=$!
PIDS+=("$LOADGEN")
started=$(date +%s%N)

connected() {
  curl -sf "http://$METRICS/metrics" | awk '$1 == "railwatch_agents_connected" { print $2 }'
}
for _ in $(seq 240); do
  [ "$(connected)" = "$AGENTS" ] && break
  sleep 0.25
done
all_connected_s=$(awk -v a="$started" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
sleep "$WARMUP"
kill -0 "$DAEMON_PID" 2>/dev/null || { echo "ingest.sh: railwatchd died" >&2; tail "$WORK/daemon.log" >&2; exit 1; }
ctxsw() {  # context switches of the daemon's threads so far
  cat /proc/"$DAEMON_PID"/task/*/status 2>/dev/null |
    awk '/ctxt_switches/ { n += $2 } END { printf "%.0f\n", n }'
}
c0=$(ctxsw); e0=$(metric railwatch_rule_evaluations_total)
s0=$(samples_total); d0=$(cpu_ns "$DAEMON_PID"); l0=$(cpu_ns "$LOADGEN"); t0=$(date +%s%N)
if [ -n "${PERF_OUT:-}" ]; then
  perf record -e cpu-clock -g -p "$DAEMON_PID" -o "$PERF_OUT" -- sleep "$SECONDS_MEASURED" \
    >"$WORK/perf.log" 2>&1
else
  sleep "$SECONDS_MEASURED"
fi
s1=$(samples_total); d1=$(cpu_ns "$DAEMON_PID"); l1=$(cpu_ns "$LOADGEN"); t1=$(date +%s%N)
c1=$(ctxsw); e1=$(metric railwatch_rule_evaluations_total)
threads=$(ls /proc/"$DAEMON_PID"/task | wc -l)
rss_kb=$(awk '/^VmRSS:/ { print $2 }' /proc/"$DAEMON_PID"/status)
agents_connected=$(connected)
diagnoses=$("$CLI" --server="$GRPC" diagnoses --state=all --json 2>/dev/null |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("diagnoses", [])))' 2>/dev/null || echo "?")

echo "load: $AGENTS agents x $SERIES series at 1 s; agents connected: $agents_connected;" \
  "diagnoses raised: $diagnoses; measured ${SECONDS_MEASURED}s after ${WARMUP}s warm-up"
tail -n 1 "$WORK/loadgen.log"
echo "all agents connected ${all_connected_s}s after the load generator started"
echo "daemon: $threads threads, $(( (c1 - c0) * 1000000000 / (t1 - t0) )) context switches/s," \
  "$(awk -v e="$((e1 - e0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f", e / (t / 1e9) }') rule evaluations/s"
awk -v s="$((s1 - s0))" -v d="$((d1 - d0))" -v l="$((l1 - l0))" -v t="$((t1 - t0))" \
  -v rss="$rss_kb" 'BEGIN {
    rate = s / (t / 1e9); cores = d / t; lcores = l / t
    printf "FIGURE ingest_samples_per_s %.0f samples/s\n", rate
    printf "FIGURE ingest_daemon_cores %.3f cores\n", cores
    printf "FIGURE ingest_samples_per_core_s %.0f samples/s/core\n", (cores > 0 ? rate / cores : 0)
    printf "FIGURE daemon_rss_mb %.1f MB\n", rss / 1024
    printf "FIGURE loadgen_cores %.3f cores\n", lcores
  }'
