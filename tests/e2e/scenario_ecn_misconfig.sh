#!/usr/bin/env bash
# Scenario: one leaf's ECN threshold is 3 KB too high. 32 hosts x 8 NICs (256 GPUs) in one job,
# 8 leaves (SONiC and Arista EOS alternating), 2 spines, 32 host agents and the switch agent.
# From 25 s leaf-r5 marks (almost) nothing, pauses its ports instead, and the job drops to 60%.
# railwatchd must page ecn_misconfiguration naming leaf-r5 within 60 s, and no PFC storm: the
# pauses come from a leaf that lets its queues fill, not from a storming NIC.
set -euo pipefail

BUILD=${1:?usage: scenario_ecn_misconfig.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

start_fabric 32 8 2 --job=llama-256:1-32 --ecn_misconfig=leaf-r5@25s:3
start_scenario_daemon
start_agents
fault_not_yet ecn_misconfig

misconfigured() { [ -n "$(injected_ns ecn_misconfig)" ]; }
wait_for 40 "the ECN misconfiguration's ground truth" misconfigured
wait_diagnosis 75 ecn_misconfiguration --culprit=switch=leaf-r5
check_scenario ecn_misconfig --fault=ecn_misconfig --playbook=ecn_misconfiguration --count=1 \
  --culprit=switch=leaf-r5 --limit_ms=60000 --not_fired=pfc_storm --quiet_before_fault

# What the daemon saw, for the record: leaf-r5's marks and pauses against a healthy leaf's.
# SONiC (even leaves) names host position p Ethernet<4p>, EOS (odd) Ethernet<p+1>: host 1 is
# Ethernet1 on leaf-r5 and Ethernet0 on leaf-r4.
scrape "$WORK/m1.txt"
sleep 5
scrape "$WORK/m2.txt"
rate() { awk -v a="$(metric "$WORK/m1.txt" "$1")" -v b="$(metric "$WORK/m2.txt" "$1")" 'BEGIN { printf "%.0f", (b - a) / 5 }'; }
for leaf_port in leaf-r4:Ethernet0 leaf-r5:Ethernet1; do
  leaf=${leaf_port%%:*} port=${leaf_port#*:}
  echo "$leaf $port: ECN marks $(rate "fabric_switch_queue_ecn_marked_packets_total{interface=\"$port\",queue=\"3\",switch=\"$leaf\"}")/s," \
    "PFC pauses sent $(rate "fabric_pfc_pause_frames_total{direction=\"tx\",interface=\"$port\",priority=\"3\",switch=\"$leaf\"}")/s"
done
echo "PASS: scenario ecn_misconfig"
