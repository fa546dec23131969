# Shared by the Alertmanager end-to-end tests (alertmanager_e2e.sh, daemon_restart_e2e.sh): a
# webhook receiver and the real Alertmanager (no gossip) running the shipped route example
# with its receivers pointed at the webhook (/pager, /chat), short group timers and a 1 h
# repeat interval (alertmanager_check.py am-config). Source it after lib.sh.
# shellcheck shell=bash
PY=/usr/bin/python3
AMCHECK=$SRC/tests/e2e/alertmanager_check.py
NOTES=$WORK/notifications.jsonl

# start_alertmanager: sets WEBHOOK and AM (base URLs); notifications go to $NOTES.
start_alertmanager() {
  command -v prometheus-alertmanager >/dev/null ||
    fail "prometheus-alertmanager is not installed (scripts/install-deps)"
  "$PY" "$SRC/tests/e2e/webhook_receiver.py" --out="$NOTES" --port_file="$WORK/webhook.port" \
    >"$WORK/webhook.log" 2>&1 &
  PIDS+=($!)
  wait_for 10 "the webhook receiver" test -s "$WORK/webhook.port"
  WEBHOOK="http://127.0.0.1:$(cat "$WORK/webhook.port")"
  # Its web listener takes no port 0: a free port from the OS, just released.
  local port
  port=$(free_port)
  AM="http://127.0.0.1:$port"
  "$PY" "$AMCHECK" am-config "$SRC/deploy/alertmanager/alertmanager.yml" "$WORK/am.yml" "$WEBHOOK"
  mkdir -p "$WORK/am-data"
  prometheus-alertmanager --config.file="$WORK/am.yml" --storage.path="$WORK/am-data" \
    --web.listen-address="127.0.0.1:$port" --cluster.listen-address= \
    >"$WORK/alertmanager.log" 2>&1 &
  PIDS+=($!)
  wait_for 20 "Alertmanager ready on $AM" curl -fsS "$AM/-/ready"
}

# notified ALERTNAME STATUS: a notification with that status for that alert reached the pager.
notified() { "$PY" "$AMCHECK" has "$NOTES" --path=/pager --alertname="$1" --status="$2"; }
