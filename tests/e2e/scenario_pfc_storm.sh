#!/usr/bin/env bash
# Scenario: one GPU node's NIC starts a PFC storm. 8 hosts x 4 NICs in one job, 4 leaves (SONiC
# and Arista EOS alternating), 2 spines; gpu-node-003/mlx5_2 storms from 20 s on. The leaf
# relays the pauses to every other port and both uplinks, the spines receive them; railwatchd
# must page ONE pfc_storm naming gpu-node-003 mlx5_2 (the source, not a relay) within 2 sample
# intervals, with the relaying ports folded in as evidence rather than paged on their own, and
# nothing may fire in the healthy 20 s before.
set -euo pipefail

BUILD=${1:?usage: scenario_pfc_storm.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

start_fabric 8 4 2 --job=train:1-8 --pfc_storm=gpu-node-003/mlx5_2@20s --pfc_storm_for=0
start_scenario_daemon
start_agents

# leaf-r2 (SONiC: Ethernet<4 x position>) holds every host's mlx5_2: gpu-node-003 on Ethernet8,
# its uplinks at positions 8 and 9 (Ethernet32 to spine-0, Ethernet36 to spine-1). The spines'
# ports toward leaf-r2 are at position 2: spine-0 (SONiC) Ethernet8, spine-1 (EOS) Ethernet3.
pause() { echo "fabric_pfc_pause_frames_total{direction=\"$1\",interface=\"$2\",priority=\"3\",switch=\"$3\"}"; }
RELAYS=("$(pause tx Ethernet32 leaf-r2)" "$(pause tx Ethernet36 leaf-r2)"
        "$(pause rx Ethernet8 spine-0)" "$(pause rx Ethernet3 spine-1)")

all_reported() {
  scrape "$WORK/before.txt" || return 1
  for s in "${RELAYS[@]}"; do [ -n "$(metric "$WORK/before.txt" "$s")" ] || return 1; done
}
wait_for 15 "the uplinks' and spines' pause counters on /metrics" all_reported
fault_not_yet pfc_storm

storm_injected() { [ -n "$(injected_ns pfc_storm)" ]; }
wait_for 40 "the PFC storm's ground truth" storm_injected
relayed() {
  scrape "$WORK/during.txt" || return 1
  for s in "${RELAYS[@]}"; do
    # 3,000 relayed pauses a second against 2 benign ones: 1,000 more is the relay.
    awk -v a="$(metric "$WORK/before.txt" "$s")" -v b="$(metric "$WORK/during.txt" "$s")" \
      'BEGIN { exit !(b != "" && b - a > 1000) }' || return 1
  done
}
until relayed; do
  [ $(( ($(date +%s%N) - $(injected_ns pfc_storm)) / 1000000 )) -lt 10000 ] \
    || fail "the relayed pauses did not reach every uplink and spine at the daemon within 10 s"
  sleep 0.1
done
relay_ms=$(( ($(date +%s%N) - $(injected_ns pfc_storm)) / 1000000 ))
# The simulator relays in the storm's first 100 ms tick; what is measured here adds the gNMI
# sample (1 s), the switch agent's cycle (1 s) and this loop's scrape.
echo "scenario pfc_storm: pauses on both uplinks of leaf-r2 and both spines at the daemon after ${relay_ms} ms (limit 3000 ms)"
[ "$relay_ms" -le 3000 ] || fail "relay reached the daemon after ${relay_ms} ms"

wait_diagnosis 30 pfc_storm --culprit=host=gpu-node-003 --culprit=device=mlx5_2
# Give relays and symptoms a few more evaluations to show up (or wrongly page) on their own.
sleep 5
# Limit: 2 sample intervals (the gNMI sample that first carries the storm, the agent cycle that
# forwards it) plus the engine's 1 s evaluation tick.
check_scenario pfc_storm --fault=pfc_storm --playbook=pfc_storm --count=1 \
  --culprit=host=gpu-node-003 --culprit=device=mlx5_2 --culprit=leaf=leaf-r2 \
  --limit_ms=3000 --not_fired=pfc_pause_relay --explains=pfc_pause_relay --quiet_before_fault
echo "PASS: scenario pfc_storm"
