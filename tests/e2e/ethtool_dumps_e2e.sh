#!/usr/bin/env bash
# The host agent reading ethtool statistics from dump files (--ethtool_dumps), as it does on the
# simulated fabric: a host tree with a netdev (class/net/<if>/device) and the recorded mlx5
# `ethtool -S` dump in <root>/<host>/ethtool/<if>/{stats,driver}; the agent picks the netdev up
# by the default policy, and its per-priority series reach railwatchd's /metrics, move when the
# dump is rewritten, and a bad line or a netdev that goes away does not fail the collector.
set -euo pipefail

BUILD=${1:?usage: ethtool_dumps_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

HOST=gpu-node-001
ROOT=$WORK/fabric/$HOST
DUMP=$ROOT/ethtool/ens1f0np0
mkdir -p "$ROOT/class/net/ens1f0np0/device" "$ROOT/class/net/veth0" "$DUMP" "$ROOT/ethtool/veth0"
echo mlx5_core >"$DUMP/driver"
echo veth >"$ROOT/ethtool/veth0/driver"
echo "peer_ifindex: 4" >"$ROOT/ethtool/veth0/stats"

write_stats() {  # write_stats RX_PRIO3_PAUSE [EXTRA_LINE]: replaced with rename, as a writer should
  { cat "$SRC/tests/fixtures/ethtool/ethtool_S_mlx5_core_cx4_ethq_testfile_noindent.txt"
    printf 'rx_prio3_pause: %s\ntx_prio3_pause: 4\n%s' "$1" "${2:-}"; } >"$DUMP/stats.tmp"
  mv "$DUMP/stats.tmp" "$DUMP/stats"
}
write_stats 17

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"
"$AGENT" --server="$GRPC" --hostname="$HOST" --sysfs_root="$ROOT" --ethtool_dumps="$ROOT/ethtool" \
  --link_events=false --interval=200ms --log_state_dir="$WORK" --backoff_initial=100ms \
  >"$WORK/agent.log" 2>&1 &
PIDS+=($!)

scrape() { curl -fsS "http://$METRICS/metrics" >"$WORK/metrics.txt"; }
has() { scrape && grep -qxF "$1" "$WORK/metrics.txt"; }
rx3() { echo "fabric_pfc_pause_frames_total{direction=\"rx\",host=\"$HOST\",interface=\"ens1f0np0\",priority=\"3\"} $1"; }

wait_for 20 "rx priority 3 pauses at the daemon" has "$(rx3 17)"
grep -qxF "fabric_pfc_pause_frames_total{direction=\"tx\",host=\"$HOST\",interface=\"ens1f0np0\",priority=\"3\"} 4" \
  "$WORK/metrics.txt" || fail "tx priority 3 pauses missing"
grep -qxF "fabric_netdev_priority_transmit_bytes_total{host=\"$HOST\",interface=\"ens1f0np0\",priority=\"0\"} 2662454044895" \
  "$WORK/metrics.txt" || fail "priority 0 transmit bytes missing"
[ "$(grep -c '^fabric_netdev_priority_transmit_bytes_total{' "$WORK/metrics.txt")" -eq 8 ] \
  || fail "expected 8 priorities of transmit bytes"
! grep -q 'interface="veth0"' "$WORK/metrics.txt" || fail "veth0 (no device) was collected"

write_stats 1017 "bogus line"
wait_for 10 "rx priority 3 pauses to move" has "$(rx3 1017)"
wait_for 5 "the bad line logged with file:line" grep -qF "$DUMP/stats:754: no ':' in \"bogus line\"" "$WORK/agent.log"

rm -rf "$DUMP"
sleep 1
wait_for 5 "ethtool collector still successful" \
  has "railwatch_collector_success{collector=\"ethtool\",host=\"$HOST\"} 1"
! grep -q "collector ethtool" "$WORK/agent.log" || fail "the ethtool collector reported a failure"

echo "PASS: agent read ethtool dumps: per-priority PFC and traffic at the daemon, moved, bad line and gone netdev survived"
