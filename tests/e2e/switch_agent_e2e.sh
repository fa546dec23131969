#!/usr/bin/env bash
# End to end with the real programs on loopback: railwatch-sim serves gNMI for eight leaves of
# four dialects (SONiC, Arista EOS, OpenConfig, Cumulus), one switch agent subscribes to all of
# them and streams to railwatchd, and /metrics must show the same canonical series for every
# dialect, moving with the simulated traffic and faults (a PFC storm, a link flap, a miswired
# LLDP neighbour).
set -euo pipefail

BUILD=${1:?usage: switch_agent_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

scrape() { curl -fsS "http://$METRICS/metrics" >"$1"; }

# value FILE SERIES: the sample value of one exact series line.
value() { awk -v s="$2" '$1 == s { print $2; exit }' "$1"; }

has() { grep -q "^$2 " "$1"; }

"$SIM" --root="$WORK/sys" --hosts=2 --nics=8 \
  --switch_dialects=sonic,arista-eos,openconfig,cumulus \
  --gnmi_targets_out="$WORK/targets.yaml" --topology_out="$WORK/topology.yaml" \
  --pfc_storm=gpu-node-001/mlx5_0@4s --pfc_storm_for=0 \
  --flap=gpu-node-002/mlx5_1/1@5s --lldp_miswire=leaf-r2/Ethernet1 \
  --ground_truth="$WORK/ground_truth.jsonl" >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_for 20 "the simulator's targets file" test -s "$WORK/targets.yaml"

start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"

"$AGENT" --role=switch --agent_id=switch-agent-1 --server="$GRPC" \
  --gnmi_targets="$WORK/targets.yaml" --gnmi_profiles="$SRC/profiles/gnmi" \
  --topology="$WORK/topology.yaml" --backoff_initial=100ms --backoff_max=1s \
  --log_state_dir="$WORK/state" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)

all_targets_connected() {
  [ "$("$CLI" --server="$GRPC" agents --json | grep -c '"connected": true')" -ge 9 ]
}
wait_for 30 "the switch agent and its 8 targets connected" all_targets_connected

# Leaf k holds NIC mlx5_k; dialects round-robin: r0 sonic, r1 arista-eos, r2 openconfig,
# r3 cumulus. Host 1 is panel position 0: Ethernet0 (SONiC), Ethernet1 (EOS, OpenConfig), swp1.
declare -A PORT1=([leaf-r0]=Ethernet0 [leaf-r1]=Ethernet1 [leaf-r2]=Ethernet1 [leaf-r3]=swp1
                  [leaf-r4]=Ethernet0 [leaf-r5]=Ethernet1 [leaf-r6]=Ethernet1 [leaf-r7]=swp1)
rx_bytes() { echo "fabric_switch_interface_receive_bytes_total{interface=\"${PORT1[$1]}\",switch=\"$1\"}"; }

every_leaf_reports() {
  scrape "$WORK/m.txt" || return 1
  for leaf in "${!PORT1[@]}"; do has "$WORK/m.txt" "$(rx_bytes "$leaf")" || return 1; done
}
wait_for 30 "byte counters of all 8 leaves on /metrics" every_leaf_reports
scrape "$WORK/m1.txt"

# The same canonical series whatever the dialect, moving with the traffic (Cumulus samples
# every 10 s at the fastest: its profile's minimum, so the window is longer than that).
all_moved() {
  scrape "$WORK/m2.txt" || return 1
  for leaf in "${!PORT1[@]}"; do
    s=$(rx_bytes "$leaf")
    a=$(value "$WORK/m1.txt" "$s"); b=$(value "$WORK/m2.txt" "$s")
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }' || return 1
  done
}
wait_for 25 "every leaf's receive bytes to move with traffic" all_moved
for leaf in "${!PORT1[@]}"; do
  oper="fabric_switch_interface_oper_up{interface=\"${PORT1[$leaf]}\",switch=\"$leaf\"}"
  [ "$(value "$WORK/m2.txt" "$oper")" = "1" ] || fail "$oper is not 1"
done
# Per-priority PFC from SONiC, EOS and Cumulus (OpenConfig has no per-priority PFC leaf; its
# link-level pause counter is fabric_link_pause_frames_total).
for s in 'fabric_pfc_pause_frames_total{direction="rx",interface="Ethernet0",priority="3",switch="leaf-r0"}' \
         'fabric_pfc_pause_frames_total{direction="rx",interface="Ethernet1",priority="3",switch="leaf-r1"}' \
         'fabric_pfc_pause_frames_total{direction="tx",interface="swp1",priority="3",switch="leaf-r3"}' \
         'fabric_link_pause_frames_total{direction="rx",interface="Ethernet1",switch="leaf-r2"}' \
         'fabric_switch_queue_ecn_marked_packets_total{interface="Ethernet1",queue="3",switch="leaf-r2"}' \
         'fabric_switch_queue_ecn_marked_packets_total{interface="Ethernet1",queue="3",switch="leaf-r1"}' \
         'fabric_switch_queue_ecn_marked_packets_total{interface="swp1",queue="3",switch="leaf-r3"}' \
         'fabric_switch_pfc_watchdog_stormed{interface="Ethernet0",queue="3",switch="leaf-r0"}'; do
  has "$WORK/m2.txt" "$s" || fail "missing on /metrics: $s"
done

# Switch optics and FEC (docs/LINK_HEALTH.md): every dialect's module readings under the
# port's own name (OpenConfig's transceiver components joined to their interfaces), the
# module's identity, its thresholds where the switch serves them (not EOS), and FEC counters.
for s in 'fabric_optics_temperature_celsius{interface="Ethernet0",switch="leaf-r0"}' \
         'fabric_optics_rx_power_dbm{interface="Ethernet0",lane="4",switch="leaf-r0"}' \
         'fabric_optics_threshold{interface="Ethernet0",level="warning_low",quantity="rx_power_dbm",switch="leaf-r0"}' \
         'fabric_optics_tx_power_dbm{interface="Ethernet1",lane="1",switch="leaf-r1"}' \
         'fabric_optics_tx_bias_amperes{interface="Ethernet1",lane="4",switch="leaf-r2"}' \
         'fabric_optics_threshold{interface="Ethernet1",level="alarm_high",quantity="temperature_celsius",switch="leaf-r2"}' \
         'fabric_optics_supply_voltage_volts{interface="swp1",switch="leaf-r3"}' \
         'fabric_switch_interface_fec_corrected_blocks_total{interface="Ethernet0",switch="leaf-r0"}' \
         'fabric_switch_interface_fec_codewords_total{interface="Ethernet0",switch="leaf-r0",symbol_errors="0"}' \
         'fabric_switch_interface_fec_corrected_blocks_total{interface="Ethernet1",switch="leaf-r1"}' \
         'fabric_switch_interface_pre_fec_bit_error_ratio{interface="Ethernet1",switch="leaf-r2"}' \
         'fabric_switch_interface_fec_uncorrectable_blocks_total{interface="swp1",switch="leaf-r3"}'; do
  has "$WORK/m2.txt" "$s" || fail "missing on /metrics: $s"
done
for leaf in leaf-r0 leaf-r1 leaf-r2 leaf-r3; do
  grep -q "^fabric_optics_module_info{form_factor=\"OSFP\",interface=\"${PORT1[$leaf]}\",media=\"400GBASE-DR4\",part_number=\"MMS4X00-NS400\",serial=\"MT2423FT[0-9]*\",switch=\"$leaf\",vendor=\"NVIDIA\"} 1" "$WORK/m2.txt" \
    || fail "no module identity for $leaf ${PORT1[$leaf]}"
done
! grep -q '^fabric_optics_threshold{[^}]*switch="leaf-r1"' "$WORK/m2.txt" \
  || fail "the simulated EOS serves no thresholds, yet leaf-r1 has some"
! grep -q '^fabric_optics_[a-z_]*{[^}]*component=' "$WORK/m2.txt" \
  || fail "an optics series kept its transceiver component instead of its interface"
rx=$(value "$WORK/m2.txt" 'fabric_optics_rx_power_dbm{interface="swp1",lane="2",switch="leaf-r3"}')
awk -v v="$rx" 'BEGIN { exit !(v > -6.9 && v < 4) }' || fail "leaf-r3 swp1 lane 2 receives ${rx} dBm"

# The PFC storm from gpu-node-001/mlx5_0 (leaf-r0 Ethernet0, SONiC) started at 4 s: pauses at
# storm rate on priority 3, and the switch's PFC watchdog fires.
storm='fabric_pfc_pause_frames_total{direction="rx",interface="Ethernet0",priority="3",switch="leaf-r0"}'
watchdog_fired() {
  scrape "$WORK/m3.txt" || return 1
  v=$(value "$WORK/m3.txt" 'fabric_switch_pfc_watchdog_storms_detected_total{interface="Ethernet0",queue="3",switch="leaf-r0"}')
  [ -n "$v" ] && [ "$v" -ge 1 ]
}
wait_for 30 "leaf-r0's PFC watchdog to count the storm" watchdog_fired
p1=$(value "$WORK/m3.txt" "$storm"); sleep 2; scrape "$WORK/m4.txt"; p2=$(value "$WORK/m4.txt" "$storm")
rate=$(( (p2 - p1) / 2 ))
echo "storm port pause rate: ${rate}/s"
[ "$rate" -gt 1000 ] || fail "PFC storm rate on leaf-r0 Ethernet0 too low: ${rate}/s"

# The flap of gpu-node-002/mlx5_1 at 5 s: leaf-r1 (EOS) Ethernet2 counted a carrier transition.
flapped() {
  scrape "$WORK/m5.txt" || return 1
  v=$(value "$WORK/m5.txt" 'fabric_switch_interface_carrier_transitions_total{interface="Ethernet2",switch="leaf-r1"}')
  [ -n "$v" ] && [ "$v" -ge 2 ]
}
wait_for 30 "leaf-r1 Ethernet2's carrier transitions after the flap" flapped

# The miswired LLDP neighbour on leaf-r2 Ethernet1, and only there.
[ "$(value "$WORK/m5.txt" 'fabric_lldp_neighbor_mismatch{interface="Ethernet1",switch="leaf-r2"}')" = "1" ] \
  || fail "LLDP mismatch on leaf-r2 Ethernet1 not reported"
[ "$(value "$WORK/m5.txt" 'fabric_lldp_neighbor_mismatch{interface="Ethernet2",switch="leaf-r2"}')" = "0" ] \
  || fail "leaf-r2 Ethernet2's LLDP neighbour should match the topology"
[ "$(grep -c '^fabric_lldp_neighbor_mismatch{.*} 1$' "$WORK/m5.txt")" -eq 1 ] \
  || fail "expected exactly one LLDP mismatch"
grep -q 'LLDP neighbour' "$WORK/agent.log" || fail "the agent did not log the LLDP mismatch"

# Per-target health, as series and in ListAgents.
has "$WORK/m5.txt" 'railwatch_gnmi_target_connected{agent="switch-agent-1",target="leaf-r3"}' \
  || fail "per-target health series missing"
"$CLI" --server="$GRPC" agents >"$WORK/agents.txt"
grep -q 'leaf-r7' "$WORK/agents.txt" || fail "railwatch agents does not list the targets: $(cat "$WORK/agents.txt")"

echo "PASS: 8 simulated switches of 4 dialects -> switch agent -> railwatchd: the same canonical" \
  "series on /metrics (optics and FEC too), storm rate ${rate}/s, flap and LLDP miswire seen"
