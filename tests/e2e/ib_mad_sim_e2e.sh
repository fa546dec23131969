#!/usr/bin/env bash
# The InfiniBand fabric scanner's MAD source end to end without files or hardware:
# railwatch-agent --role=ib-fabric --ib_source=sim:... discovers a simulated fat tree through
# the real IbMadSource (directed routes, PMA reads) and its switch ports' counters, rates and
# links reach railwatchd's /metrics and discovered fabric map.
set -euo pipefail

BUILD=${1:?usage: ib_mad_sim_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"
"$AGENT" --role=ib-fabric --agent_id=ib-scanner --server="$GRPC" \
  --ib_source=sim:leaves=2,spines=2,hosts_per_leaf=3,speed=HDR --interval=200ms \
  --log_state_dir="$WORK" --backoff_initial=100ms >"$WORK/agent.log" 2>&1 &
PIDS+=($!)

scrape() { curl -fsS "http://$METRICS/metrics" >"$WORK/metrics.txt"; }
has() { scrape && grep -qxF "$1" "$WORK/metrics.txt"; }
PORT='guid="0x0002c90300100001",interface="4",switch="leaf-01"'

# 2 leaves x 5 ports and 2 spines x 2 ports, every one cabled.
wait_for 20 "the scanner's switch ports at the daemon" \
  has 'railwatch_ib_scan_switch_ports{agent="ib-scanner"} 14'
grep -qxF "fabric_rdma_port_transmit_wait_total{$PORT} 0" "$WORK/metrics.txt" \
  || fail "leaf-01 port 4's PortXmitWait missing"
grep -qxF "fabric_rdma_port_rate_bytes_per_second{$PORT} 25000000000" "$WORK/metrics.txt" \
  || fail "leaf-01 port 4's rate (4x HDR) missing"
grep -qxF 'railwatch_ib_scan_inputs{agent="ib-scanner"} 10' "$WORK/metrics.txt" \
  || fail "not 10 nodes answering"

topology() { "$CLI" --server="$GRPC" topology --discovered -o yaml >"$WORK/topology.yaml" 2>&1; }
has_link() { topology && grep -qF '{port: "4", peer: spine-01, peer_port: "1"}  # both ends' "$WORK/topology.yaml"; }
wait_for 20 "leaf-01 port 4 to spine-01 port 1 in the discovered map" has_link
has 'railwatch_collector_success{agent="ib-scanner",collector="ib_fabric"} 1' \
  || fail "the ib_fabric collector is not successful"

echo "PASS: ib-fabric scanner on a simulated fabric through the MAD source: counters, rates, links"
