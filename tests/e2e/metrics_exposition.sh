#!/usr/bin/env bash
# /metrics end to end: a small simulated fabric (2 hosts x 2 NICs, a SONiC and an EOS leaf, one
# spine, one job) with a PFC storm, its agents and railwatchd. The scrape must pass
# `promtool check metrics` (names, units, HELP, _total counters) and match the golden file
# tests/golden/metrics_exposition.txt: every family's HELP/TYPE and every series, values
# dropped (tests/e2e/exposition_golden.py).
#
#   metrics_exposition.sh BUILD_DIR            check
#   metrics_exposition.sh BUILD_DIR --update   regenerate the golden file (review the diff)
set -euo pipefail

BUILD=${1:?usage: metrics_exposition.sh BUILD_DIR [--update]}
MODE=check
[ "${2:-}" = "--update" ] && MODE=update
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"
GOLDEN=$SRC/tests/golden/metrics_exposition.txt

start_fabric 2 2 1 --job=train:1-2 --seed=7 --pfc_storm=gpu-node-001/mlx5_0@10s \
  --pfc_storm_for=0
start_scenario_daemon
start_agents
wait_diagnosis 40 pfc_storm --culprit=host=gpu-node-001 --culprit=device=mlx5_0
# Two more agent cycles, so that every collector has reported since the storm began.
sleep 3
scrape "$WORK/metrics.txt" || fail "cannot scrape http://$METRICS/metrics"
echo "scraped $(grep -vc '^#' "$WORK/metrics.txt") series from http://$METRICS/metrics"

promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 || true
if [ -s "$WORK/promtool.out" ]; then
  cat "$WORK/promtool.out"
  fail "promtool check metrics found problems (above)"
fi
echo "promtool check metrics: clean"

/usr/bin/python3 "$SRC/tests/e2e/exposition_golden.py" "$MODE" "$WORK/metrics.txt" "$GOLDEN" \
  || fail "exposition differs from the golden file (diff above)"
echo "PASS: metrics exposition"
