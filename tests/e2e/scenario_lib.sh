# Shared by the detection scenarios (scenario_*.sh): a simulated fabric with its switches, one
# switch agent for all of them, one host agent per simulated host, railwatchd with the shipped
# rules and the simulator's topology; waiting for a diagnosis and checking it against the
# ground truth (scenario_check.py). Source it after lib.sh.
# shellcheck shell=bash
CHECK=$SRC/tests/e2e/scenario_check.py
AGENT_LOGS=$WORK/agents  # not *.log in $WORK: fail() would print 30 agents' tails

host_name() { printf 'gpu-node-%03d' "$1"; }

# start_fabric HOSTS NICS SPINES [SIM FLAGS...]: railwatch-sim with switches, its targets,
# topology and ground-truth files under $WORK. The leaves alternate SONiC and Arista EOS: both
# stream per-priority PFC and queue ECN counters every second (OpenConfig has no per-priority
# PFC leaf; Cumulus samples every 10 s at the fastest).
start_fabric() {
  HOSTS=$1 NICS=$2 SPINES=$3
  shift 3
  "$SIM" --root="$WORK/sys" --hosts="$HOSTS" --nics="$NICS" --spines="$SPINES" \
    --switch_dialects=sonic,arista-eos --gnmi_targets_out="$WORK/targets.yaml" \
    --topology_out="$WORK/topology.yaml" --ground_truth="$WORK/truth.jsonl" "$@" \
    >"$WORK/sim.log" 2>&1 &
  PIDS+=($!)
  SIM_STARTED_NS=$(date +%s%N)
  wait_for 30 "the simulator's targets and topology files" \
    test -s "$WORK/targets.yaml" -a -s "$WORK/topology.yaml"
}

# start_scenario_daemon [FLAGS...]: railwatchd with the shipped rules, the topology and any
# further flags (a later --rules replaces the shipped ones); sets GRPC, METRICS, DAEMON_PID.
start_scenario_daemon() {
  "$DAEMON" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
    --topology="$WORK/topology.yaml" --ready_file="$WORK/ready.json" "$@" \
    >"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=("$DAEMON_PID")
  wait_for 30 "daemon ready file" test -s "$WORK/ready.json"
  GRPC=$(json_field "$WORK/ready.json" grpc)
  METRICS=$(json_field "$WORK/ready.json" metrics)
}

# all_connected HOSTS TARGETS: every host agent, the switch agent and each of its gNMI targets
# connected; writes who is not to $WORK/not-connected.txt.
all_connected() {
  "$CLI" --server="$GRPC" agents --json >"$WORK/agents.json" 2>/dev/null || return 1
  python3 - "$WORK/agents.json" "$1" "$2" >"$WORK/not-connected.txt" <<'PY'
import json, sys
agents = json.load(open(sys.argv[1])).get("agents", [])
hosts, targets = int(sys.argv[2]), int(sys.argv[3])
up = [a for a in agents if a.get("connected")]
switch = [a for a in up if a.get("agent_id") == "switch-agent"]
up_targets = [t["name"] for a in switch for t in a.get("targets", []) if t.get("connected")]
missing = []
if len(up) - len(switch) < hosts:
    missing.append(f"{len(up) - len(switch)} of {hosts} host agents")
if not switch:
    missing.append("the switch agent")
if len(up_targets) < targets:
    missing.append(f"{len(up_targets)} of {targets} gNMI targets ({', '.join(sorted(up_targets))})")
print("; ".join(missing))
sys.exit(1 if missing else 0)
PY
}

# start_agents: the switch agent and HOSTS host agents, all polling every second; waits until
# every agent and every gNMI target is connected. The simulator writes no netdevs, so the host
# agents' ethtool and netlink collectors would find nothing: they are off.
start_agents() {
  mkdir -p "$AGENT_LOGS"
  "$AGENT" --role=switch --agent_id=switch-agent --server="$GRPC" --interval=1s \
    --gnmi_targets="$WORK/targets.yaml" --gnmi_profiles="$SRC/profiles/gnmi" \
    --topology="$WORK/topology.yaml" --backoff_initial=100ms --backoff_max=1s \
    --log_state_dir="$WORK/state" >"$WORK/switch-agent.log" 2>&1 &
  PIDS+=($!)
  local h host
  for h in $(seq 1 "$HOSTS"); do
    host=$(host_name "$h")
    # The jobs' NCCL Inspector records the simulator writes (sim/inspector_writer.h); each
    # agent keeps its read offsets and spool in a state directory of its own.
    "$AGENT" --server="$GRPC" --hostname="$host" --sysfs_root="$WORK/sys/$host" --interval=1s \
      --ethtool=false --link_events=false --backoff_initial=100ms --backoff_max=1s \
      --nccl_inspector="$WORK/sys/$host/nccl/inspector/*.log" \
      --optics_dir="$WORK/sys/$host/optics" --optics_interval=2s --kmsg="$WORK/sys/$host/kmsg" \
      --log_state_dir="$WORK/agent-state/$host" >"$AGENT_LOGS/$host.log" 2>&1 &
    PIDS+=($!)
  done
  local deadline=$((SECONDS + 60))
  until all_connected "$HOSTS" $((NICS + SPINES)); do
    [ $SECONDS -lt $deadline ] || fail "after 60 s still connected: $(cat "$WORK/not-connected.txt")"
    sleep 0.5
  done
  echo "agents connected $(( ($(date +%s%N) - SIM_STARTED_NS) / 1000000 )) ms after the simulator started"
}

# fault_not_yet KIND: fails the scenario when the fault is already in the ground truth (the
# set-up took longer than the fault's offset, so there was no healthy period to check).
fault_not_yet() {
  if grep -q "\"fault\": \"$1\"" "$WORK/truth.jsonl" 2>/dev/null; then
    fail "$1 was injected before the agents were up: raise its offset"
  fi
}

fetch_diagnoses() { "$CLI" --server="$GRPC" diagnoses --state=all --json >"$WORK/diagnoses.json"; }

# wait_diagnosis SECONDS PLAYBOOK [--culprit=L=V ...]: until such a diagnosis has fired.
diagnosis_fired() {
  local playbook=$1
  shift
  fetch_diagnoses && python3 "$CHECK" wait "$WORK/diagnoses.json" "$WORK/truth.jsonl" --wait \
    --fault=any --playbook="$playbook" "$@"
}
wait_diagnosis() {
  local secs=$1
  shift
  wait_for "$secs" "a fired $1 diagnosis" diagnosis_fired "$@"
}

# check_scenario NAME [scenario_check.py flags]: the final checks on fresh diagnoses.
check_scenario() {
  local name=$1
  shift
  fetch_diagnoses || fail "cannot list diagnoses"
  python3 "$CHECK" "$name" "$WORK/diagnoses.json" "$WORK/truth.jsonl" "$@" \
    || fail "scenario $name: checks failed (above)"
}

scrape() { curl -fsS "http://$METRICS/metrics" >"$1"; }

# metric FILE SERIES: the sample value of one exact series line (empty when absent).
metric() { awk -v s="$2" '$1 == s { print $2; exit }' "$1"; }

# injected_ns KIND: the first injection time of that fault in the ground truth.
injected_ns() {
  sed -n "s/.*\"fault\": \"$1\".*\"injected_at_unix_nano\": \([0-9]*\).*/\1/p" "$WORK/truth.jsonl" |
    head -n 1
}
