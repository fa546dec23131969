#!/usr/bin/env bash
# The InfiniBand fabric scanner (railwatch-agent --role=ib-fabric) reading the tool output a
# site's cron jobs leave in a directory: the real OSC EDR fabric's `ibnetdiscover -p` and
# `perfquery -x` (tests/fixtures/ib): its switch ports' PMA counters reach railwatchd's /metrics
# as the canonical fabric_rdma_* series labelled by switch, GUID and port, move when a file is
# rewritten, and a file no reader knows or a LID no topology names does not fail the scanner;
# the subnet's links reach railwatchd's discovered fabric map.
set -euo pipefail

BUILD=${1:?usage: ib_fabric_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

OUT=$WORK/ib
mkdir -p "$OUT"
FIX=$SRC/tests/fixtures/ib
cp "$FIX/ibnetdiscover_p_01_osc_edr_ca_sw_lines_and_unconnected.txt" "$OUT/fabric.ports"
cp "$FIX/perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt" "$OUT/lid2052.pq"
cp "$FIX/perfquery_x_04_rhel75_lid10_all_zero_with_root_prompt_line.txt" "$OUT/lid10.pq"
echo "not a tool's output" >"$OUT/README"

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"
"$AGENT" --role=ib-fabric --agent_id=ib-scanner --server="$GRPC" --ib_tool_outputs="$OUT" \
  --interval=200ms --log_state_dir="$WORK" --backoff_initial=100ms >"$WORK/agent.log" 2>&1 &
PIDS+=($!)

scrape() { curl -fsS "http://$METRICS/metrics" >"$WORK/metrics.txt"; }
has() { scrape && grep -qxF "$1" "$WORK/metrics.txt"; }
PORT='guid="0x506b4b03005c2740",interface="1",switch="ib-i4l1s01"'

wait_for 20 "the switch port's discards at the daemon" \
  has "fabric_rdma_port_transmit_discards_total{$PORT} 20046"
grep -qxF "fabric_rdma_port_transmit_wait_total{$PORT} 41864608" "$WORK/metrics.txt" \
  || fail "PortXmitWait missing"
grep -qxF "fabric_rdma_port_transmit_bytes_total{$PORT} $((178791657177235 * 4))" \
  "$WORK/metrics.txt" || fail "PortXmitData not in bytes"
! grep -q '^fabric_rdma_[a-z_]*{.*host=' "$WORK/metrics.txt" || fail "a host label on the scanner's series"
grep -qxF 'railwatch_ib_scan_unrecognised_inputs{agent="ib-scanner"} 1' "$WORK/metrics.txt" \
  || fail "the README was not counted as unrecognised"
wait_for 5 "the unplaced LID named in the agent's log" \
  grep -qF "LID 10 ($OUT/lid10.pq:2) is in no topology" "$WORK/agent.log"

# The subnet's cabling reaches the fabric map (no topology file): the inter-switch link the -p
# report names, heard from both switches.
topology() { "$CLI" --server="$GRPC" topology --discovered -o yaml >"$WORK/topology.yaml" 2>&1; }
has_link() { topology && grep -qF "{port: \"1\", peer: ib-i1l2s01, peer_port: \"1\"}  # both ends" "$WORK/topology.yaml"; }
wait_for 20 "ib-i1l1s01 port 1 to ib-i1l2s01 port 1 in the discovered map" has_link

sed 's/20046/20051/' "$FIX/perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt" \
  >"$OUT/.lid2052.tmp"
mv "$OUT/.lid2052.tmp" "$OUT/lid2052.pq"
wait_for 10 "the discards to move" has "fabric_rdma_port_transmit_discards_total{$PORT} 20051"
has 'railwatch_collector_success{agent="ib-scanner",collector="ib_fabric"} 1' \
  || fail "the ib_fabric collector is not successful"

echo "PASS: ib-fabric scanner: switch port PMA counters at the daemon, links in the discovered map, rewritten file followed, unknown file and unplaced LID survived"
