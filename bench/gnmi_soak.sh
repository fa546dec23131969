#!/usr/bin/env bash
# The switch agent against gNMI servers with gRPC's default keepalive policy for DURATION
# (issue 19 item 6): railwatch-sim serves SWITCHES SONiC leaves (grpc::Server with no keepalive
# settings: C-core's default, as sonic-gnmi's grpc-go default is: a ping sooner than 5 minutes
# after the previous one, with no data in between, is a strike, and the third strike is
# answered with GOAWAY "too_many_pings"). SONiC's profile subscribes to two gNMI targets per
# switch: COUNTERS_DB counters (SAMPLE) and OC-YANG oper-status (on change, silent after its
# first answer). One switch agent streams to railwatchd; at the end the agent's own series say
# how many streams failed and resubscribed. Before, each switch's OC-YANG stream drew a GOAWAY
# about 30 s after every subscription.
#
# Usage: bench/gnmi_soak.sh [BUILD_DIR]   (DURATION=30m; HOSTS=4 hosts x 2 NICs: one SONiC leaf
# per rail)
# Prints FIGURE gnmi_soak_stream_errors, gnmi_soak_reconnects (both must be 0) and the samples.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/release}
DURATION=${DURATION:-30m}
HOSTS=${HOSTS:-4}
# shellcheck source=../tests/e2e/lib.sh
source "$(dirname "$0")/../tests/e2e/lib.sh"

"$SIM" --root="$WORK/sys" --hosts="$HOSTS" --nics=2 --switch_dialects=sonic \
  --gnmi_targets_out="$WORK/targets.yaml" --topology_out="$WORK/topology.yaml" \
  --log_level=warn >"$WORK/sim.log" 2>&1 &
PIDS+=($!)
wait_for 20 "the simulator's targets file" test -s "$WORK/targets.yaml"
SWITCHES=$(grep -c "address:" "$WORK/targets.yaml")
start_daemon 127.0.0.1:0 "$WORK/ready.json" "$WORK/daemon.log"
"$AGENT" --role=switch --agent_id=soak --server="$GRPC" --gnmi_targets="$WORK/targets.yaml" \
  --gnmi_profiles="$SRC/profiles/gnmi" --spool_dir=none >"$WORK/agent.log" 2>&1 &
PIDS+=($!)

# sum SERIES: the sum of the daemon's samples of one self-series of the switch agent.
sum() {
  curl -fsS "http://$METRICS/metrics" |
    awk -v n="$1" '$1 ~ "^"n"[{ ]" || $1 == n { s += $NF } END { printf "%d\n", s }'
}
wait_for 30 "every switch streaming" sh -c "[ \$(curl -fsS http://$METRICS/metrics |
  grep -c '^railwatch_gnmi_target_connected{.* 1$') -ge $SWITCHES ]"
echo "$SWITCHES SONiC switches connected; running $DURATION"
sleep "$DURATION"
errors=$(sum railwatch_gnmi_target_errors_total)
reconnects=$(sum railwatch_gnmi_target_reconnects_total)
updates=$(sum railwatch_gnmi_target_updates_total)
goaways=$(grep -c "too_many_pings\|ENHANCE_YOUR_CALM" "$WORK/agent.log" || true)
echo "FIGURE gnmi_soak_stream_errors $errors count"
echo "FIGURE gnmi_soak_reconnects $reconnects count"
echo "FIGURE gnmi_soak_goaway_lines $goaways count"
echo "FIGURE gnmi_soak_updates $updates count"
[ "$errors" -eq 0 ] && [ "$reconnects" -eq 0 ] && [ "$goaways" -eq 0 ] ||
  fail "streams failed during the soak ($errors errors, $reconnects reconnects, $goaways GOAWAY lines)"
echo "PASS: no stream lost in $DURATION"
