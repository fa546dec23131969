#!/usr/bin/env bash
# railwatchd -> the real Alertmanager -> a webhook the test runs, on the simulated fabric.
#
# Alertmanager (prometheus-alertmanager, no gossip) runs the shipped route example
# (deploy/alertmanager/alertmanager.yml) with its receivers pointed at the webhook
# (/pager, /chat) and short group timers. railwatchd gets --alertmanager_url and the shipped
# playbooks plus an override file (alertmanager_check.py rules-override).
#
# Two faults on one 4 hosts x 4 NICs fabric, one job:
#  (a) gpu-node-003/mlx5_2 storms PFC from 15 s for 12 s: the pager gets a firing pfc_storm
#      naming the host, device, leaf and rail, with summary, runbook URL, first steps with the
#      host filled in, blast radius and cost; when the storm stops (keep_firing_for shortened
#      to 5 s) it gets the resolve.
#  (b) gpu-node-002/mlx5_1 port 1 flaps every 2 s for 40 s: "every 30 s for 10 minutes" with
#      time compressed 15 times, the link_flap playbook's 5m windows and keep_firing_for 5m
#      scaled the same way (20 s). The pager must get at most 2 notifications for it (one
#      firing, at most one resolved) and at least 1; the test waits for the resolve.
# Prints the figures: notifications per incident, delay from injection to the webhook.
set -euo pipefail

BUILD=${1:?usage: alertmanager_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"
# shellcheck source=alertmanager_lib.sh
source "$(dirname "$0")/alertmanager_lib.sh"

# 1-2. The webhook receiver and Alertmanager.
start_alertmanager

# 3. The fabric, both faults at 15 s (the agents are up by then).
FLAPS=()
for t in $(seq 15 2 53); do FLAPS+=("--flap=gpu-node-002/mlx5_1/1@${t}s"); done
start_fabric 4 4 1 --job=train:1-4 --pfc_storm=gpu-node-003/mlx5_2@15s --pfc_storm_for=12s \
  "${FLAPS[@]}"

# 4. railwatchd posting to Alertmanager every 2 s (endsAt 8 s ahead).
# ALERTMANAGER_E2E_SCALE=150 (2 s windows and keep_firing_for, shorter than the flaps' period)
# shows what the check below catches: an incident that resolves and fires again on each flap.
"$PY" "$AMCHECK" rules-override "$SRC/rules/link-flap.yaml" "$WORK/override.yaml" \
  --scale="${ALERTMANAGER_E2E_SCALE:-15}"
start_scenario_daemon --rules="$SRC/rules,$WORK/override.yaml" \
  --alertmanager_url="$AM" --alertmanager_resend_interval=2s --alertmanager_timeout=5s \
  --cluster=e2e --external_url=http://railwatch.example \
  --runbook_url_base=https://runbooks.example/railwatch
start_agents
fault_not_yet pfc_storm
fault_not_yet link_flap

# (a) The storm's page, then its resolve.
wait_for 45 "a firing pfc_storm notification at the pager" notified pfc_storm firing
"$PY" "$AMCHECK" storm "$NOTES" "$WORK/truth.jsonl" --path=/pager \
  --expect=alertname=pfc_storm --expect=playbook=pfc_storm --expect=severity=critical \
  --expect=host=gpu-node-003 --expect=device=mlx5_2 --expect=switch=leaf-r2 --expect=rail=2 \
  --expect=training_job=train --expect=cluster=e2e || fail "the pfc_storm notification (above)"
# The shipped route sends critical alerts to the pager and (continue: true) to chat.
wait_for 10 "pfc_storm at the chat receiver too" \
  "$PY" "$AMCHECK" has "$NOTES" --path=/chat --alertname=pfc_storm --status=firing
wait_for 40 "the resolved pfc_storm notification" notified pfc_storm resolved
echo "PASS: pfc_storm paged with its culprit, runbook, first steps, blast radius and cost; resolved"

# (b) The flapping link: wait for its resolve (last flap at 53 s + 20 s window + 20 s
# keep_firing_for + group_interval), then a few more group intervals for anything extra.
# A third notification fails at once (below) rather than at the timeout.
flap_over() {
  notified link_flap resolved ||
    [ "$("$PY" "$AMCHECK" count "$NOTES" --path=/pager --alertname=link_flap)" -gt 2 ]
}
wait_for 90 "the resolved link_flap notification" flap_over
sleep 6
"$PY" "$AMCHECK" flap "$NOTES" "$WORK/truth.jsonl" --path=/pager ||
  fail "the flapping link's notifications (above)"

echo "notifications at the pager:"
"$PY" "$AMCHECK" timeline "$NOTES" "$WORK/truth.jsonl" --path=/pager

# railwatchd's own account of it.
scrape "$WORK/m.txt"
for s in "railwatch_alertmanager_posts_total{alertmanager=\"$AM\",result=\"ok\"}" \
         "railwatch_alertmanager_alerts_sent_total{alertmanager=\"$AM\"}"; do
  v=$(metric "$WORK/m.txt" "$s")
  awk -v v="$v" 'BEGIN { exit !(v != "" && v + 0 > 0) }' || fail "$s is '$v'"
  echo "$s $v"
done
[ "$(metric "$WORK/m.txt" railwatch_alertmanager_dropped_total)" = 0 ] ||
  fail "railwatch_alertmanager_dropped_total is not 0"
errors=$(metric "$WORK/m.txt" "railwatch_alertmanager_posts_total{alertmanager=\"$AM\",result=\"error\"}")
[ "$errors" = 0 ] || fail "posts to Alertmanager failed: $errors"
echo "PASS: alertmanager e2e ($(wc -l <"$NOTES") notifications received in all)"
