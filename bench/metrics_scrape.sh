#!/usr/bin/env bash
# /metrics at 100k series (issue 8), from one command:
#  1. bench/metrics_bench in process: the store's render to text (median and p99) and the
#     allocations of a steady-state render;
#  2. the real railwatchd (shipped rules, loopback ports) fed AGENTS x SERIES series by
#     railwatch-loadgen over gRPC; once the store holds them all the load generator stops (so
#     that ingest does not move the daemon's memory) and curl scrapes http://.../metrics:
#     time to last byte, plain and gzip (median of 21), then the daemon's RSS before and after
#     SCRAPES more scrapes (half of them gzip).
#
# Usage: bench/metrics_scrape.sh [BUILD_DIR]   (default build/release)
# Environment: AGENTS (100), SERIES per agent (1000), SCRAPES (10000, 0: no RSS figure; 10,000
# take 5 to 10 minutes on 2 cores: SCRAPES=2000 for a quick run; the figure is named after
# the count), RENDERS (50).
# Prints FIGURE lines: metrics_render_100k_ms, metrics_render_100k_p99_ms,
# metrics_render_100k_allocations, metrics_server_scrape_100k_ms (in process),
# metrics_scrape_100k_ms, metrics_scrape_100k_gzip_ms, metrics_rss_growth_<N>k_scrapes_kb.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/release}
AGENTS=${AGENTS:-100}
SERIES=${SERIES:-1000}
SCRAPES=${SCRAPES:-10000}
# shellcheck source=../tests/e2e/lib.sh
source "$(dirname "$0")/../tests/e2e/lib.sh"
LOADGEN_BIN=$BUILD/bench/railwatch-loadgen
BENCH_BIN=$BUILD/bench/metrics_bench
for bin in "$DAEMON" "$LOADGEN_BIN" "$BENCH_BIN"; do
  [ -x "$bin" ] || { echo "metrics_scrape.sh: $bin not built" >&2; exit 2; }
done
command -v curl >/dev/null || { echo "metrics_scrape.sh: needs curl" >&2; exit 2; }

"$BENCH_BIN" --series=$((AGENTS * SERIES)) --renders="${RENDERS:-50}" --scrapes=0

# Series stay on /metrics for the whole run: --stale_after is longer than it.
"$DAEMON" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --stale_after=2h --ready_file="$WORK/ready.json" >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
PIDS+=("$DAEMON_PID")
wait_for 30 "daemon ready file" test -s "$WORK/ready.json"
GRPC=$(json_field "$WORK/ready.json" grpc)
METRICS=$(json_field "$WORK/ready.json" metrics)

"$LOADGEN_BIN" --server="$GRPC" --agents="$AGENTS" --series="$SERIES" --interval=1s \
  --duration=0 --log_level=warn >"$WORK/loadgen.log" 2>&1 &
LOADGEN=$!
PIDS+=("$LOADGEN")
store_series() {
  curl -sf "http://$METRICS/metrics" | awk '$1 == "railwatch_series" { printf "%.0f\n", $2 }'
}
have_all_series() { [ "$(store_series)" -ge $((AGENTS * SERIES)) ]; }
wait_for 120 "$((AGENTS * SERIES)) series in the store" have_all_series
sleep 2  # a second batch from every agent: every series has a value
kill "$LOADGEN"
wait "$LOADGEN" 2>/dev/null || true
echo "store: $(store_series) series; scraping http://$METRICS/metrics"

# Seconds to the last byte of one scrape; extra curl arguments (a header) pass through.
scrape_s() { curl -sf -o /dev/null -w '%{time_total}\n' "$@" "http://$METRICS/metrics"; }
median_ms() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] * 1000 }'; }
scrape_s >/dev/null
plain=$(for _ in $(seq 21); do scrape_s; done | median_ms)
gzip=$(for _ in $(seq 21); do scrape_s -H 'Accept-Encoding: gzip'; done | median_ms)
bytes=$(curl -sf "http://$METRICS/metrics" | wc -c)
gz_bytes=$(curl -sf -H 'Accept-Encoding: gzip' "http://$METRICS/metrics" | wc -c)
echo "FIGURE metrics_scrape_100k_ms $plain ms (railwatchd, curl, median of 21, $bytes bytes)"
echo "FIGURE metrics_scrape_100k_gzip_ms $gzip ms (railwatchd, curl, median of 21, $gz_bytes bytes)"

[ "$SCRAPES" -gt 0 ] || exit 0
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
for _ in $(seq 20); do scrape_s >/dev/null; scrape_s -H 'Accept-Encoding: gzip' >/dev/null; done
before=$(rss_kb)
start=$SECONDS
# Two curl processes at a time would measure curl; one process per 100 URLs keeps it cheap.
urls=()
for _ in $(seq 100); do urls+=(-o /dev/null "http://$METRICS/metrics"); done
for i in $(seq $((SCRAPES / 100))); do
  if [ $((i % 2)) = 0 ]; then
    curl -sf -H 'Accept-Encoding: gzip' "${urls[@]}"
  else
    curl -sf "${urls[@]}"
  fi
done
after=$(rss_kb)
echo "daemon RSS ${before} kB after warm-up, ${after} kB after $SCRAPES scrapes ($((SECONDS - start)) s)"
echo "FIGURE metrics_rss_growth_$((SCRAPES / 1000))k_scrapes_kb $((after - before)) kB"
kill -0 "$DAEMON_PID" || fail "railwatchd died"
