#!/usr/bin/env bash
# Scenario: one link flaps five times within a minute. 4 hosts x 4 NICs in one job, 4 leaves,
# 1 spine; gpu-node-002/mlx5_1 port 1 (leaf-r1 Ethernet2, Arista EOS) goes down for 300 ms at
# 15, 22, 29, 36 and 43 s. Both ends see every flap (link_downed on the NIC, oper-status and
# carrier transitions on the leaf port); railwatchd must page exactly ONE link_flap for that
# link, naming host and device, with nothing before the first flap. The delay reported is the
# first flap's.
set -euo pipefail

BUILD=${1:?usage: scenario_link_flap.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

LINK=gpu-node-002/mlx5_1/1
start_fabric 4 4 1 --job=train:1-4 \
  --flap="$LINK@15s" --flap="$LINK@22s" --flap="$LINK@29s" --flap="$LINK@36s" --flap="$LINK@43s"
start_scenario_daemon
start_agents
fault_not_yet link_flap

wait_diagnosis 40 link_flap --culprit=host=gpu-node-002 --culprit=device=mlx5_1

five_flaps() { [ "$(grep -c '"fault": "link_flap"' "$WORK/truth.jsonl")" -eq 5 ]; }
wait_for 40 "the fifth flap" five_flaps
# Both ends of the link counted all five by the end: the NIC's link_downed, the leaf port's
# carrier transitions (two a flap).
both_ends_counted() {
  scrape "$WORK/m.txt" || return 1
  [ "$(metric "$WORK/m.txt" 'fabric_rdma_link_downed_total{device="mlx5_1",host="gpu-node-002",port="1"}')" = 5 ] &&
    [ "$(metric "$WORK/m.txt" 'fabric_switch_interface_carrier_transitions_total{interface="Ethernet2",switch="leaf-r1"}')" = 10 ]
}
wait_for 10 "link_downed 5 on the NIC and 10 carrier transitions on leaf-r1 Ethernet2" both_ends_counted
sleep 3  # the last flap's samples reach the engine
check_scenario link_flap --fault=link_flap --playbook=link_flap --count=1 \
  --culprit=host=gpu-node-002 --culprit=device=mlx5_1 --culprit=link="gpu-node-002/mlx5_1 <-> leaf-r1/Ethernet2" \
  --quiet_before_fault
echo "PASS: scenario link_flap: five flaps, one diagnosis"
