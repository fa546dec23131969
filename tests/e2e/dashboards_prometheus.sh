#!/usr/bin/env bash
# The Grafana dashboards against a real Prometheus: every panel's query returns data.
#
# A simulated fabric (4 hosts x 4 NICs in one job, 4 leaves alternating SONiC and Arista EOS,
# 2 spines) where gpu-node-003/mlx5_2 renegotiates to half speed at 8 s (a straggler) and
# gpu-node-002/mlx5_1 starts a PFC storm at 24 s; railwatchd --topology; one switch agent and
# a host agent per host; one more host agent (gpu-node-101) tailing real nccl-tests output; a
# client that sends railwatchd a malformed Ingest message; an InfiniBand fabric scanner
# reading a real NDR fabric's ibdiagnet2.db_csv and .cables (tests/fixtures/ib), the db_csv
# rewritten once with one
# switch port's errors, discards and credit waits grown. Debian's Prometheus scrapes
# railwatchd every second. Then dashboard_queries.py runs every query of every dashboard
# through Prometheus's HTTP API and checks what some panels show; the exposition must pass
# `promtool check metrics`.
set -euo pipefail

BUILD=${1:?usage: dashboards_prometheus.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"
PY=/usr/bin/python3  # Debian's python3-grpcio
for tool in /usr/bin/prometheus promtool; do
  command -v "$tool" >/dev/null || fail "$tool not found: scripts/install-deps installs Debian's prometheus"
done

start_fabric 4 4 2 --job=train:1-4 --degrade=gpu-node-003/mlx5_2@8s \
  --pfc_storm=gpu-node-002/mlx5_1@24s --pfc_storm_for=0
start_scenario_daemon

# Prometheus takes no port 0: ask the OS for a free one.
PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: railwatch
    # Prometheus' defaults: railwatchd exports no job or instance label (the training job is
    # training_job, docs/DASHBOARDS.md), so nothing needs honor_labels.
    static_configs:
      - targets: ['$METRICS']
EOF
/usr/bin/prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_for 30 "Prometheus ready" curl -fsS "$PROM/-/ready"
PROM_START=$(date +%s)

start_agents

# nccl-tests output from two real runs (tests/fixtures/logs), tailed by a host agent of its
# own; the files appear after the agent started, as a new run's log would.
mkdir -p "$WORK/nccl-tests" "$WORK/empty-sys"
"$AGENT" --server="$GRPC" --hostname=gpu-node-101 --sysfs_root="$WORK/empty-sys" \
  --interval=1s --ethtool=false --link_events=false --log_paths="$WORK/nccl-tests/*.log" \
  --log_state_dir="$WORK/log-state" --backoff_initial=100ms --backoff_max=1s \
  >"$AGENT_LOGS/gpu-node-101.log" 2>&1 &
PIDS+=($!)
sleep 1
cp "$SRC/tests/fixtures/logs/nccltests_01_allreduce_2node_h100_16ranks_table.txt" \
  "$WORK/nccl-tests/allreduce-16ranks.log"
cp "$SRC/tests/fixtures/logs/nccltests_05_single_node_a10g_header_error_column.txt" \
  "$WORK/nccl-tests/allreduce-1gpu.log"

# A client that speaks Ingest wrongly: an AgentMessage with neither hello nor batch. The
# daemon must refuse it and count it (the ingest errors panel).
"$PY" - "$GRPC" <<'PY' || fail "malformed Ingest message"
import sys
import grpc
call = grpc.insecure_channel(sys.argv[1]).stream_stream(
    "/railwatch.v1.Ingest/Stream", request_serializer=lambda b: b,
    response_deserializer=lambda b: b)
try:
    for _ in call(iter([b""]), timeout=10):
        pass
    sys.exit("railwatchd accepted an empty AgentMessage")
except grpc.RpcError as e:
    if e.code() != grpc.StatusCode.INVALID_ARGUMENT:
        sys.exit(f"expected INVALID_ARGUMENT, got {e.code()}: {e.details()}")
    print(f"railwatchd refused the malformed message: {e.details()}")
PY

# The InfiniBand dashboard's switch ports: the fabric scanner on a real db_csv (272 nodes).
mkdir -p "$WORK/ib"
IBDB=$SRC/tests/fixtures/ib/db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv
cp "$IBDB" "$WORK/ib/ibdiagnet2.db_csv"
cp "$SRC/tests/fixtures/ib/ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt" \
  "$WORK/ib/ibdiagnet2.cables"
"$AGENT" --role=ib-fabric --agent_id=ib-scanner --server="$GRPC" --ib_tool_outputs="$WORK/ib" \
  --interval=1s --log_state_dir="$WORK/ib-state" --backoff_initial=100ms --backoff_max=1s \
  >"$AGENT_LOGS/ib-scanner.log" 2>&1 &
PIDS+=($!)

wait_diagnosis 40 straggler_rail --culprit=host=gpu-node-003 --culprit=device=mlx5_2

# The next ibdiagnet run: the spine's port 1 went down once, recovered once, counted 5 symbol
# errors, discarded
# 20 packets and waited for credits 1e9 ticks more (written aside and renamed, as a cron would).
"$PY" - "$IBDB" "$WORK/ib/.next" <<'PY' || fail "cannot write the next ibdiagnet run"
import sys
src, dst = sys.argv[1], sys.argv[2]
bump = {"LinkDownedCounterExt": 1, "LinkErrorRecoveryCounterExt": 1,
        "SymbolErrorCounterExt": 5, "PortXmitDiscardsExt": 20, "PortXmitWaitExt": 10**9}
out, header, section = [], None, None
for line in open(src, encoding="utf-8", newline=""):
    text = line.rstrip("\r\n")
    if text.startswith("START_"):
        section, header = text[6:], None
    elif section == "PM_INFO" and header is None:
        header = text.split(",")
    elif section == "PM_INFO" and text.startswith("0xb0cf0e0300d33fc0,") and text.split(",")[2] == "1":
        cells = text.split(",")
        for name, by in bump.items():
            i = header.index(name)
            cells[i] = str(int(cells[i]) + by)
        line = ",".join(cells) + line[len(text):]
    out.append(line)
with open(dst, "w", encoding="utf-8", newline="") as f:
    f.write("".join(out))
PY
mv "$WORK/ib/.next" "$WORK/ib/ibdiagnet2.db_csv"

wait_diagnosis 40 pfc_storm --culprit=host=gpu-node-002 --culprit=device=mlx5_1

prom_has() {  # prom_has QUERY: the instant query returns at least one series
  curl -fsS "$PROM/api/v1/query" --data-urlencode "query=$1" |
    "$PY" -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["data"]["result"] else 1)'
}
wait_for 20 "the nccl-tests result in Prometheus" \
  prom_has 'fabric_nccl_tests_bus_bandwidth_bytes_per_second{host="gpu-node-101"}'
failed=()
# The storm must fill a whole rate window ($__rate_interval = 10 s below) before the "now"
# panels are read.
sleep 11

"$PY" "$SRC/tests/e2e/dashboard_queries.py" --prometheus="$PROM" \
  --dashboards="$SRC/dashboards/json" --start="$PROM_START" --step=2 --rate_interval=10 \
  --storm=gpu-node-002/mlx5_1/leaf-r1/Ethernet2 --straggler=gpu-node-003/mlx5_2 \
  --nccl_tests=gpu-node-101/unknown/406.034 || failed+=("dashboard queries (above)")

scrape "$WORK/metrics.txt" || fail "cannot scrape $METRICS"
if promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.txt" 2>&1 &&
    [ ! -s "$WORK/promtool.txt" ]; then
  echo "promtool check metrics: clean ($(grep -vc '^#' "$WORK/metrics.txt") samples)"
else
  cat "$WORK/promtool.txt"
  failed+=("promtool check metrics: problems in railwatchd's exposition (above)")
fi

[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
echo "PASS: dashboards through Prometheus (${SECONDS} s)"
