#!/usr/bin/env bash
# The `railwatch` CLI against the real railwatchd: a simulated fabric (4 hosts x 2 NICs, 2
# leaves, 1 spine) where gpu-node-003/mlx5_1 starts a PFC storm at 12 s. `watch --json` runs
# from before the storm and must print the pfc_storm diagnosis as it fires and exit 0 on
# SIGINT; then every Query command is run on the live daemon and its table or JSON checked;
# then the CLI over TLS and mutual TLS to a second daemon, and exit 3 once the daemon is gone.
set -euo pipefail

BUILD=${1:?usage: cli_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"

start_fabric 4 2 1 --job=train:1-4 --pfc_storm=gpu-node-003/mlx5_1@12s --pfc_storm_for=0
start_scenario_daemon
start_agents
C=("$CLI" --server="$GRPC")

# watch, live, from before the storm.
"${C[@]}" watch --json --state=all >"$WORK/watch.jsonl" 2>"$WORK/watch.log" &
WATCH_PID=$!
PIDS+=("$WATCH_PID")
wait_for 10 "watch's SYNCED line" grep -q KIND_SYNCED "$WORK/watch.jsonl"
wait_diagnosis 40 pfc_storm --culprit=host=gpu-node-003 --culprit=device=mlx5_1
wait_for 10 "watch to print the storm firing" \
  grep -q '"kind":"KIND_FIRING".*"playbook":"pfc_storm"' "$WORK/watch.jsonl"
kill -INT "$WATCH_PID"
rc=0
wait "$WATCH_PID" || rc=$?
[ "$rc" -eq 0 ] || fail "watch exited $rc on SIGINT (want 0): $(cat "$WORK/watch.log")"
python3 - "$WORK/watch.jsonl" <<'PY' || fail "watch --json is not one JSON object per line"
import json, sys
kinds = [json.loads(line)["kind"] for line in open(sys.argv[1])]
assert kinds.index("KIND_SYNCED") < kinds.index("KIND_FIRING"), kinds
PY

# diagnoses: the table, the JSON, the filters.
"${C[@]}" diagnoses >"$WORK/diagnoses.txt"
grep -q 'firing .*critical .*pfc_storm .*device=mlx5_1 host=gpu-node-003' "$WORK/diagnoses.txt" \
  || fail "diagnoses table: $(cat "$WORK/diagnoses.txt")"
ID=$("${C[@]}" diagnoses --playbook=pfc_storm --host=gpu-node-003 --severity=critical \
  --since=10m --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["diagnoses"][0]["id"])')
[ -n "$ID" ] || fail "no pfc_storm diagnosis through the filters"
"${C[@]}" diagnoses --severity=info --playbook=pfc_storm >"$WORK/none.txt"
grep -qx 'No active diagnoses.' "$WORK/none.txt" || fail "severity filter: $(cat "$WORK/none.txt")"

# explain: the timeline, the blast radius, the runbook with the culprit filled in.
"${C[@]}" explain "$ID" >"$WORK/explain.txt"
for want in "Timeline (UTC):" "FIRING    held for the playbook" \
  "Blast radius: job train stalls (8 GPUs on" "the fault is on 4 hosts (leaf scope)" \
  "8 GPUs stalled, about" "job train: 8 GPUs" \
  "Commands (culprit filled in):" "ssh gpu-node-003 ethtool -S enp40s0np0"; do
  grep -qF "$want" "$WORK/explain.txt" || fail "explain lacks \"$want\": $(cat "$WORK/explain.txt")"
done
# To a file, then grep: `cmd | grep -q` under pipefail fails when grep's early exit makes the
# CLI die of SIGPIPE before it has written everything.
"${C[@]}" explain "$ID" --runbook >"$WORK/runbook.txt"
grep -q '^## ' "$WORK/runbook.txt" || fail "explain --runbook: no runbook text: $(head -20 "$WORK/runbook.txt")"
rc=0
"${C[@]}" explain 000000000000 2>/dev/null || rc=$?
[ "$rc" -eq 4 ] || fail "explain of an unknown id exited $rc (want 4)"

# agents, playbooks, topology.
"${C[@]}" agents >"$WORK/agents.txt"
[ "$(grep -cE '^gpu-node-00[1-4] +host +gpu-node-00[1-4] +ok ' "$WORK/agents.txt")" -eq 4 ] \
  || fail "agents HEALTH: $(cat "$WORK/agents.txt")"
grep -qE '^pfc_storm +critical +yes +[0-9]+ +1 ' <("${C[@]}" playbooks) \
  || fail "playbooks: $("${C[@]}" playbooks)"
"${C[@]}" topology >"$WORK/topology.txt"
grep -q '^4 hosts, 8 NICs, 3 switches, 1 jobs' "$WORK/topology.txt" \
  || fail "topology: $(cat "$WORK/topology.txt")"
grep -qE '^train +8 +8 +gpu-node-001' <("${C[@]}" topology --jobs) || fail "topology --jobs"

# top: the storm's pauses arrive on leaf-r1's port to gpu-node-003 mlx5_1 (Ethernet3); the
# host agents run without ethtool, so the NIC's own counters are not there.
"${C[@]}" top pfc --limit=3 >"$WORK/top.txt"
[ "$(wc -l <"$WORK/top.txt")" -eq 4 ] || fail "top --limit=3: $(cat "$WORK/top.txt")"
sed -n 2p "$WORK/top.txt" | grep -qE '^leaf-r1 +Ethernet3 +3 +rx +[0-9.]+ +1 +leaf-r1$' \
  || fail "top pfc: the worst port is not leaf-r1 Ethernet3: $(cat "$WORK/top.txt")"
"${C[@]}" top ecn --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["ports"]' \
  || fail "top ecn found no ECN marks"
"${C[@]}" top errors >/dev/null || fail "top errors"

# series: a selector's samples, an expression's values.
"${C[@]}" series 'fabric_pfc_pause_frames_total{switch="leaf-r1",interface="Ethernet3",direction="rx"}' \
  --range=1m >"$WORK/series.txt"
# Any number of points: under ASan the agents connect later and fewer seconds are stored.
grep -qE '^fabric_pfc_pause_frames_total\{direction="rx",interface="Ethernet3",priority="3",switch="leaf-r1"\} +[1-9][0-9]* ' \
  "$WORK/series.txt" || fail "series selector: $(cat "$WORK/series.txt")"
# A 5 s window: a longer one still holds the healthy seconds before the storm, which pull the
# rate under the threshold until the window has filled with the storm.
storm_rate_listed() {
  "${C[@]}" series 'rate(fabric_pfc_pause_frames_total{direction="rx"}[5s]) > 1000' \
    >"$WORK/expr.log" && grep -qE '^rx +Ethernet3 +3 +leaf-r1 +[0-9.]+$' "$WORK/expr.log"
}
# (On failure the last answer is in expr.log, which fail() prints.)
wait_for 15 "the series expression to list leaf-r1 Ethernet3" storm_rate_listed
rc=0
"${C[@]}" series 'rate((' 2>/dev/null || rc=$?
[ "$rc" -eq 5 ] || fail "a query the daemon cannot parse exited $rc (want 5)"

# TLS and mutual TLS to a second daemon (no agents): the client certificate works, a plain
# client gets 3, one without a certificate 6.
CERTS=$WORK/certs
mkdir -p "$CERTS"
(
  cd "$CERTS"
  key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  # shellcheck disable=SC2086
  {
    openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj '/CN=rw CA'
    printf 'subjectAltName=DNS:railwatchd.example,IP:127.0.0.1\n' >server.ext
    openssl req $key -keyout server.key -out server.csr -subj '/CN=railwatchd'
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.pem
    openssl req $key -keyout client.key -out client.csr -subj '/CN=oncall'
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem
  } >openssl.log 2>&1
) || fail "openssl: $(cat "$CERTS/openssl.log")"
"$DAEMON" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --tls_cert="$CERTS/server.pem" --tls_key="$CERTS/server.key" --tls_client_ca="$CERTS/ca.pem" \
  --ready_file="$WORK/tls-ready.json" >"$WORK/daemon-tls.log" 2>&1 &
PIDS+=($!)
wait_for 30 "the TLS daemon's ready file" test -s "$WORK/tls-ready.json"
TLS_GRPC=$(json_field "$WORK/tls-ready.json" grpc)
"$CLI" --server="$TLS_GRPC" --tls_ca="$CERTS/ca.pem" --tls_cert="$CERTS/client.pem" \
  --tls_key="$CERTS/client.key" --tls_server_name=railwatchd.example playbooks >"$WORK/tls.txt" \
  || fail "playbooks over mutual TLS"
grep -q '^pfc_storm ' "$WORK/tls.txt" || fail "playbooks over mutual TLS: $(cat "$WORK/tls.txt")"
rc=0  # no TLS: the handshake fails
"$CLI" --server="$TLS_GRPC" --timeout=3 agents >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "plain text against the mutual-TLS daemon exited $rc (want 3)"
rc=0  # TLS without a client certificate (or token): the Query API refuses it (docs/SECURITY.md)
"$CLI" --server="$TLS_GRPC" --timeout=3 --tls_ca="$CERTS/ca.pem" --tls_server_name=railwatchd.example \
  agents >/dev/null 2>"$WORK/refused.txt" || rc=$?
[ "$rc" -eq 6 ] || fail "TLS without a client certificate exited $rc (want 6): $(cat "$WORK/refused.txt")"
grep -q 'wants credentials' "$WORK/refused.txt" || fail "refusal: $(cat "$WORK/refused.txt")"

# The daemon goes away: exit 3 with a clear line.
kill "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
rc=0
"${C[@]}" --timeout=2 diagnoses >/dev/null 2>"$WORK/down.err" || rc=$?
[ "$rc" -eq 3 ] || fail "diagnoses with the daemon gone exited $rc (want 3)"
grep -q "cannot reach railwatchd" "$WORK/down.err" || fail "error text: $(cat "$WORK/down.err")"

echo "PASS: railwatch watch, diagnoses, explain, agents, playbooks, topology, top, series against" \
  "the real daemon; TLS and mutual TLS; exit codes 3, 4, 5, 6"
