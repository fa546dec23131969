#!/usr/bin/env bash
# Scenario: one NIC's link renegotiates to half speed. 8 hosts x 4 NICs in one job at 80% of line
# rate, 4 leaves, 1 spine; from 15 s gpu-node-005/mlx5_1 runs at 200 Gb/s and carries half of
# what its rail peers carry, while the job's other NICs keep their rate. railwatchd must page
# straggler_rail naming that host and device within 10 s, and nothing before.
set -euo pipefail

BUILD=${1:?usage: scenario_straggler_rail.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

start_fabric 8 4 1 --job=train:1-8 --degrade=gpu-node-005/mlx5_1@15s:0.5
start_scenario_daemon
start_agents
fault_not_yet nic_degrade

degraded() { [ -n "$(injected_ns nic_degrade)" ]; }
wait_for 30 "the degradation's ground truth" degraded
wait_diagnosis 30 straggler_rail --culprit=host=gpu-node-005 --culprit=device=mlx5_1
sleep 3  # a second straggler (a peer wrongly taken for one) would show by now
check_scenario straggler_rail --fault=nic_degrade --playbook=straggler_rail --count=1 \
  --culprit=host=gpu-node-005 --culprit=device=mlx5_1 --culprit=rail=1 --culprit=job=train \
  --limit_ms=10000 --quiet_before_fault

scrape "$WORK/m.txt"
echo "gpu-node-005/mlx5_1 rate on /metrics: $(metric "$WORK/m.txt" \
  'fabric_rdma_port_rate_bytes_per_second{device="mlx5_1",host="gpu-node-005",port="1"}') bytes/s"
echo "PASS: scenario straggler_rail"
