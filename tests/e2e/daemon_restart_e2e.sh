#!/usr/bin/env bash
# A railwatchd restart neither pages again nor forgets a firing diagnosis (issue 9, item 3).
#
# The real railwatchd with --state_dir, the real Alertmanager (short group timers, repeat
# interval 1 h) and a webhook receiver, on a simulated 2 hosts x 2 NICs fabric where
# gpu-node-002/mlx5_1 storms PFC from 15 s for 50 s:
#  1. pfc_storm fires; the pager gets one firing notification.
#  2. railwatchd is stopped with SIGTERM and started again on the same state dir and gRPC
#     port while the storm goes on. Right after the start, before any agent is back, the
#     Query API lists the diagnosis firing with the same id and active_since; the daemon logs
#     RESTORED, not FIRING; railwatch_diagnoses_fired_total stays 0; the pager gets no second
#     firing notification.
#  3. The same after SIGKILL (nothing saved at exit: what was saved at the transition counts).
#  4. The storm stops: the resolve reaches the pager, for the same incident; still one page.
set -euo pipefail

BUILD=${1:?usage: daemon_restart_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"
# shellcheck source=alertmanager_lib.sh
source "$(dirname "$0")/alertmanager_lib.sh"
STATE=$WORK/state

# 1. Webhook receiver and Alertmanager.
start_alertmanager

# 2. The fabric and railwatchd. The agents reconnect to the same port after each restart.
# With a spine: right after a start, the spine's view of the leaf relaying the storm can have
# its window filled before the leaf's own pause counters have a rate, and pfc_storm used to
# fire on the leaf as a source for a few seconds (2 runs in 9). A window that does not hold its
# data yet now decides nothing (docs/PLAYBOOKS.md, "Windows that do not hold their data yet"):
# the only page is the NIC's.
start_fabric 2 2 1 --job=train:1-2 --pfc_storm=gpu-node-002/mlx5_1@15s --pfc_storm_for=50s
"$PY" "$AMCHECK" rules-override "$SRC/rules/link-flap.yaml" "$WORK/override.yaml" \
  --storm_keep_firing_for=5s >/dev/null
GRPC_PORT=$(free_port)
DAEMON_FLAGS=(--listen="127.0.0.1:$GRPC_PORT" --rules="$SRC/rules,$WORK/override.yaml"
  --state_dir="$STATE" --restore_grace=15s
  --alertmanager_url="$AM" --alertmanager_resend_interval=2s --alertmanager_timeout=5s)
start_scenario_daemon "${DAEMON_FLAGS[@]}"
start_agents
fault_not_yet pfc_storm

firing_notes() {
  "$PY" - "$NOTES" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    b = json.loads(line)["body"]
    if json.loads(line)["path"] == "/pager" and b.get("groupLabels", {}).get("alertname") == "pfc_storm":
        n += b.get("status") == "firing"
print(n)
PY
}

# storm_diagnosis: "ID STATE ACTIVE_SINCE" of the pfc_storm diagnosis (active first).
storm_diagnosis() {
  "$CLI" --server="$GRPC" diagnoses --state=all --json >"$WORK/diagnoses.json" || return 1
  python3 - "$WORK/diagnoses.json" <<'PY'
import json, sys
ds = [d for d in json.load(open(sys.argv[1])).get("diagnoses", []) if d.get("playbook") == "pfc_storm"]
if not ds:
    sys.exit(1)
d = ds[0]
print(d["id"], d.get("state", "").replace("DIAGNOSIS_STATE_", ""), d.get("active_since_unix_nano"))
PY
}

wait_for 60 "a firing pfc_storm notification at the pager" notified pfc_storm firing
read -r ID STATE_BEFORE SINCE < <(storm_diagnosis) || fail "pfc_storm fired but is not listed"
[ "$STATE_BEFORE" = FIRING ] || fail "pfc_storm is $STATE_BEFORE, not FIRING"
test -s "$STATE/diagnoses.json" || fail "no $STATE/diagnoses.json after the diagnosis fired"
grep -q "\"$ID\"" "$STATE/diagnoses.json" || fail "diagnosis $ID is not in the state file"
echo "fired: pfc_storm id $ID since $SINCE"

# dump_pause_series: what the daemon holds of the switches' received pauses, for a failure.
dump_pause_series() {
  "$CLI" --server="$GRPC" series --json --range=20s \
    'fabric_pfc_pause_frames_total{switch!="",direction="rx",priority="3"}' >"$WORK/rx-series.json" || true
  "$PY" - "$WORK/rx-series.json" <<'PY' || true
import json, sys
for s in json.load(open(sys.argv[1])).get("series", []):
    pts = s.get("points", [])
    print(json.dumps({k: v for k, v in s.items() if k != "points"}), json.dumps(pts[-6:]))
PY
}

# restart SIGNAL N: stops railwatchd with SIGNAL, starts it again on the same state dir, and
# checks it carried the incident on without announcing it again.
restart() {
  local signal=$1 n=$2
  kill "-$signal" "$DAEMON_PID"
  wait "$DAEMON_PID" 2>/dev/null || true
  mv "$WORK/daemon.log" "$WORK/daemon-before-$n.log"
  rm -f "$WORK/ready.json"
  local t0=$SECONDS
  start_scenario_daemon "${DAEMON_FLAGS[@]}"
  local id state since
  read -r id state since < <(storm_diagnosis) || fail "restart $n ($signal): no pfc_storm listed"
  [ "$id" = "$ID" ] || fail "restart $n ($signal): id $id, was $ID"
  [ "$state" = FIRING ] || fail "restart $n ($signal): $state right after the start, not FIRING"
  [ "$since" = "$SINCE" ] || fail "restart $n ($signal): active_since $since, was $SINCE"
  grep -q "RESTORED firing pfc_storm" "$WORK/daemon.log" || fail "restart $n: no RESTORED log line"
  echo "restart $n ($signal): pfc_storm $id listed FIRING since $since right after the start ($((SECONDS - t0)) s)"
  # The agents come back and the storm is seen again; give Alertmanager several group
  # intervals to page if it were going to.
  wait_for 30 "the agents back after restart $n" all_connected 2 2
  sleep 8
  if grep "FIRING pfc_storm" "$WORK/daemon.log"; then
    dump_pause_series
    fail "restart $n ($signal): the daemon announced pfc_storm again (FIRING in its log)"
  fi
  scrape "$WORK/m.txt"
  local fired
  fired=$(metric "$WORK/m.txt" 'railwatch_diagnoses_fired_total{playbook="pfc_storm",severity="critical"}')
  [ "${fired:-0}" = 0 ] || fail "restart $n: railwatch_diagnoses_fired_total is $fired, not 0"
  read -r id state since < <(storm_diagnosis) || fail "restart $n: pfc_storm gone"
  [ "$id $state $since" = "$ID FIRING $SINCE" ] ||
    fail "restart $n: pfc_storm is now '$id $state $since', not '$ID FIRING $SINCE'"
  [ "$(firing_notes)" = 1 ] || fail "restart $n ($signal): the pager got $(firing_notes) firing notifications"
  echo "PASS: restart $n ($signal): same incident, not paged again (1 firing notification)"
}

restart TERM 1
restart KILL 2

# 4. The storm ends (at 65 s): the resolve, for this incident, and never a second page.
wait_for 90 "the resolved pfc_storm notification" notified pfc_storm resolved
grep -q "RESOLVED pfc_storm .*(id $ID)" "$WORK/daemon.log" ||
  fail "the daemon did not log the resolve of $ID"
sleep 4
[ "$(firing_notes)" = 1 ] || fail "the pager got $(firing_notes) firing notifications in all"
echo "notifications at the pager:"
"$PY" "$AMCHECK" timeline "$NOTES" "$WORK/truth.jsonl" --path=/pager
echo "PASS: daemon restart e2e (SIGTERM and SIGKILL: one page, one resolve, id $ID kept)"
