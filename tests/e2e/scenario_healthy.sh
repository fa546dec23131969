#!/usr/bin/env bash
# Scenario: a healthy fabric. 12 hosts x 8 NICs, 2 spines: a 64-GPU job on hosts 1-8 at 80% of
# line rate, a 16-GPU job on hosts 9-10 at 50%, hosts 11-12 in no job (the background step
# rhythm), benign pauses, ECN marks and CNPs everywhere; no fault. For 30 s after every agent
# is connected, no playbook may fire, or even be pending.
set -euo pipefail

BUILD=${1:?usage: scenario_healthy.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

start_fabric 12 8 2 --job=train:1-8 --job=eval:9-10:0.5
start_scenario_daemon
start_agents
sleep 30
check_scenario healthy --healthy
echo "PASS: scenario healthy: 30 s, 96 NICs, 10 switches, nothing fired"
