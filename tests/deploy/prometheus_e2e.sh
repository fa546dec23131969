#!/usr/bin/env bash
# The shipped Prometheus configuration and self-alert rules against the real programs.
#
# A small simulated fabric (2 hosts x 2 NICs, 2 leaves, 1 spine) with its switch agent and host
# agents, railwatchd (with an Alertmanager URL nobody listens on, so that its notifier's series
# exist), and Debian's Prometheus running deploy/prometheus/prometheus.yml as shipped except for
# the target, 1 s intervals and no Alertmanager. Checks:
#   - all nine rules load and evaluate without error; every railwatch_* series they read is
#     scraped, with the labels their annotations name;
#   - a healthy fabric raises no self-alert, not even a pending one;
#   - a host agent that stops makes RailwatchAgentMissing pending for that agent, and a
#     railwatchd that stops makes RailwatchDown pending for its instance.
set -euo pipefail

BUILD=${1:?usage: prometheus_e2e.sh BUILD_DIR}
# shellcheck source=../e2e/lib.sh
source "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=../e2e/scenario_lib.sh
source "$(dirname "$0")/../e2e/scenario_lib.sh"
PY=/usr/bin/python3  # Debian's python3-yaml
API=$SRC/tests/deploy/prometheus_api.py
command -v /usr/bin/prometheus >/dev/null ||
  fail "/usr/bin/prometheus not found: scripts/install-deps installs Debian's prometheus"

start_fabric 2 2 1
start_scenario_daemon --alertmanager_url="http://127.0.0.1:$(free_port)"
start_agents

# Prometheus takes no port 0.
PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
"$PY" "$API" config "$WORK/prometheus.yml" "$METRICS" || fail "cannot write the configuration"
/usr/bin/prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_for 30 "Prometheus ready" curl -fsS "$PROM/-/ready"
wait_for 30 "a scrape of railwatchd" "$PY" "$API" series "$PROM" 'up{job="railwatch"} == 1'

# Every series the rules read, with the labels their annotations use.
wait_for 20 "the agents' series in Prometheus" "$PY" "$API" series "$PROM" \
  railwatch_collector_success collector
failed=()
for spec in "railwatch_agent_connected agent role" \
    "railwatch_agent_last_seen_timestamp_seconds agent role" \
    "railwatch_agent_lag_seconds agent role" \
    "railwatch_collector_success collector" \
    "railwatch_gnmi_target_connected agent target" \
    "railwatch_ingest_errors_total reason" \
    "railwatch_rule_evaluation_duration_seconds" \
    "railwatch_playbooks_loaded" \
    "railwatch_alertmanager_posts_total alertmanager result" \
    "railwatch_alertmanager_last_success_timestamp_seconds alertmanager"; do
  # shellcheck disable=SC2086  # spec is "METRIC LABEL..."
  "$PY" "$API" series "$PROM" $spec || failed+=("no ${spec%% *} with its labels")
done
[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}")"

# Let every rule evaluate a few times over the healthy fabric.
wait_for 20 "the nine rules loaded and healthy" "$PY" "$API" rules-ok "$PROM"
sleep 3
"$PY" "$API" alerts "$PROM" | tee "$WORK/alerts-healthy.txt"
[ "$(cat "$WORK/alerts-healthy.txt")" = "(no alerts)" ] ||
  fail "self-alerts on a healthy fabric (above)"

# A host agent stops: the daemon marks it disconnected, the rule turns pending at once (it
# would fire after its 5 minutes).
AGENT_PID=
for pid in "${PIDS[@]}"; do  # the processes this test started
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--hostname=gpu-node-002 "; then
    AGENT_PID=$pid
  fi
done
[ -n "$AGENT_PID" ] || fail "cannot find gpu-node-002's agent"
kill "$AGENT_PID"
wait_for 15 "RailwatchAgentMissing pending for gpu-node-002" \
  "$PY" "$API" alert "$PROM" RailwatchAgentMissing pending agent=gpu-node-002 role=host
"$PY" "$API" alerts "$PROM"

# railwatchd stops: its scrape fails and RailwatchDown is pending for that instance.
kill "$DAEMON_PID"
wait_for 15 "RailwatchDown pending for $METRICS" \
  "$PY" "$API" alert "$PROM" RailwatchDown pending "instance=$METRICS" job=railwatch
"$PY" "$API" alerts "$PROM"
echo "PASS: the shipped Prometheus configuration and self-alerts (${SECONDS} s)"
