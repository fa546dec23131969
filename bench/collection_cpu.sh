#!/usr/bin/env bash
# CPU per collection cycle and memory of railwatch-agent, side by side with node_exporter's
# infiniband collector reading the same sysfs tree (issue 3's targets: at most 1/5 of
# node_exporter's CPU per cycle, at most 1 ms of CPU per cycle, agent RSS at most 20 MB).
#
# One simulated host with 8 ConnectX-7-like NICs (all counters and hw_counters) is written by
# railwatch-sim; node_exporter (Debian's prometheus-node-exporter) reads it through
# --path.sysfs and is scraped CYCLES times; railwatch-agent reads it every INTERVAL and streams
# to a local railwatchd for CYCLES cycles. CPU is the processes' own accounting: the sum over
# their threads of /proc/PID/task/*/schedstat (ns), before and after.
#
# Usage: bench/collection_cpu.sh [BUILD_DIR]   (CYCLES=300, INTERVAL_MS=50)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build/release}
CYCLES=${CYCLES:-300}
INTERVAL_MS=${INTERVAL_MS:-50}
EXTRA_AGENT_FLAGS=${EXTRA_AGENT_FLAGS:-}
command -v prometheus-node-exporter >/dev/null || {
  echo "collection_cpu: installing prometheus-node-exporter" >&2
  apt-get install -y -qq --no-install-recommends prometheus-node-exporter >/dev/null
}
# The tree lives in memory (tmpfs) like sysfs, not on a disk file system.
WORK=$(mktemp -d "${BENCH_TMPDIR:-/dev/shm}/railwatch-bench-XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT

# Nanoseconds of CPU used so far by all threads of PID.
cpu_ns() {
  local pid=$1 total=0 t
  for t in /proc/$pid/task/*/schedstat; do
    read -r run _ <"$t" && total=$((total + run))
  done
  echo $total
}

"$B/sim/railwatch-sim" --root="$WORK/sys" --hosts=1 --nics=8 --tick=100ms >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
HOST_ROOT="$WORK/sys/gpu-node-001"
until [ -d "$HOST_ROOT/class/infiniband/mlx5_7" ]; do sleep 0.1; done

# node_exporter: only its infiniband collector, on the simulated tree.
NE_PORT=$((20000 + RANDOM % 20000))
prometheus-node-exporter --path.sysfs="$HOST_ROOT" --collector.disable-defaults \
  --collector.infiniband --web.listen-address=127.0.0.1:$NE_PORT >"$WORK/ne.log" 2>&1 &
NE=$!
PIDS+=($NE)
until curl -sf "http://127.0.0.1:$NE_PORT/metrics" -o "$WORK/ne.prom"; do sleep 0.1; done
ne_series=$(grep -c '^node_infiniband' "$WORK/ne.prom" || true)
for _ in 1 2 3 4 5; do curl -sf "http://127.0.0.1:$NE_PORT/metrics" -o /dev/null; done  # warm up
before=$(cpu_ns $NE)
for _ in $(seq "$CYCLES"); do curl -sf "http://127.0.0.1:$NE_PORT/metrics" -o /dev/null; done
ne_ns=$(( ($(cpu_ns $NE) - before) / CYCLES ))

# railwatch: daemon + agent on the same tree.
"$B/daemon/railwatchd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --ready_file="$WORK/ready.json" >"$WORK/daemon.log" 2>&1 &
PIDS+=($!)
until [ -s "$WORK/ready.json" ]; do sleep 0.1; done
GRPC=$(sed -n 's/.*"grpc": "\([^"]*\)".*/\1/p' "$WORK/ready.json")
# shellcheck disable=SC2086
"$B/agent/railwatch-agent" --server="$GRPC" --hostname=gpu-node-001 --sysfs_root="$HOST_ROOT" \
  --interval=${INTERVAL_MS}ms --log_state_dir="$WORK/state" $EXTRA_AGENT_FLAGS >"$WORK/agent.log" 2>&1 &
AG=$!
PIDS+=($AG)
sleep 3  # discovery, connection, first batches
read -r poll_before _ </proc/$AG/task/$AG/schedstat  # the poll thread: collection + batch
before=$(cpu_ns $AG)
start=$(date +%s%N)
sleep "$(awk -v c="$CYCLES" -v i="$INTERVAL_MS" 'BEGIN { printf "%.3f", c * i / 1000 }')"
elapsed_ns=$(( $(date +%s%N) - start ))
agent_cycles=$(( elapsed_ns / (INTERVAL_MS * 1000000) ))
ag_ns=$(( ($(cpu_ns $AG) - before) / agent_cycles ))
read -r poll_after _ </proc/$AG/task/$AG/schedstat
poll_ns=$(( (poll_after - poll_before) / agent_cycles ))
rss_kb=$(awk '/^VmRSS/ {print $2}' /proc/$AG/status)
hwm_kb=$(awk '/^VmHWM/ {print $2}' /proc/$AG/status)
# What the RSS is made of: pages only this process has (heap, stacks, its writable data) and
# shared libraries' clean pages (gRPC, protobuf, libstdc++ ...: the same pages every process
# that maps them uses, the daemon's too), and PSS, which divides shared pages among them.
read -r private_kb shared_clean_kb pss_kb < <(awk '/^Private_(Clean|Dirty):/ {p += $2}
  /^Shared_Clean:/ {s = $2} /^Pss:/ {q = $2} END {print p, s, q}' /proc/$AG/smaps_rollup)
ag_series=$("$B/cli/railwatch" --server="$GRPC" agents --json | sed -n 's/.*"series": *"\{0,1\}\([0-9]*\).*/\1/p' | head -1)

awk -v ne="$ne_ns" -v ag="$ag_ns" -v poll="$poll_ns" -v iv="$INTERVAL_MS" -v nes="$ne_series" -v ags="${ag_series:-?}" -v rss="$rss_kb" \
    -v hwm="$hwm_kb" -v private="$private_kb" -v shared="$shared_clean_kb" -v pss="$pss_kb" -v cycles="$CYCLES" -v nics="$(ls "$HOST_ROOT/class/infiniband" | wc -l)" 'BEGIN {
  printf "tree: 1 host, %d NICs; %d cycles each\n", nics, cycles
  printf "%-36s %12s %8s\n", "", "CPU/cycle", "series"
  printf "%-36s %9.1f us %8s\n", "node_exporter infiniband (scrape)", ne / 1000, nes
  printf "%-36s %9.1f us %8s\n", "railwatch-agent, whole process", ag / 1000, ags
  printf "%-36s %9.1f us\n", "  of which the poll thread", poll / 1000
  printf "agent interval: %d ms\n", iv
  printf "ratio agent / node_exporter: %.3f whole process, %.3f poll thread (target <= 0.2)\n", ag / ne, poll / ne
  printf "agent CPU per cycle: %.3f ms whole process, %.3f ms poll thread (target <= 1 ms)\n", ag / 1e6, poll / 1e6
  printf "agent RSS: %.1f MB, peak %.1f MB (target <= 20 MB): %.1f MB its own, %.1f MB shared library pages; PSS %.1f MB\n", rss / 1024, hwm / 1024, private / 1024, shared / 1024, pss / 1024
  # For bench/run: share of one core at this interval (issue 8: at most 0.5% at 1 s).
  printf "FIGURE agent_cpu_percent_of_core %.3f %%\n", ag / (iv * 1e6) * 100
  # Side by side with node_exporter on the same tree (issue 19 item 9: at most 0.40).
  printf "FIGURE agent_cpu_per_cycle_ms %.3f ms\n", ag / 1e6
  printf "FIGURE agent_poll_thread_per_cycle_ms %.3f ms\n", poll / 1e6
  printf "FIGURE node_exporter_cpu_per_scrape_ms %.3f ms\n", ne / 1e6
  printf "FIGURE agent_to_node_exporter_ratio %.3f ratio\n", ag / ne
  printf "FIGURE agent_rss_mb %.1f MB\n", hwm / 1024
  printf "FIGURE agent_private_mb %.1f MB\n", private / 1024
  printf "FIGURE agent_shared_library_mb %.1f MB\n", shared / 1024
  printf "FIGURE agent_pss_mb %.1f MB\n", pss / 1024
}'
