#!/usr/bin/env bash
# Jobs from a real Slurm (issue 23 item 4): Debian's munged, slurmctld and slurmd run on
# loopback in the work directory (one node, this machine's short host name, gres gpu:8 on
# stand-in device nodes), railwatchd polls `squeue --json` every second (--slurm=squeue), a job
# submitted with sbatch appears in the daemon's jobs (railwatch topology --jobs: its node, 8 GPUs,
# its name, user and partition) within one poll, and leaves within one poll of scancel.
# The same with Debian's slurmrestd (22.05.8, openapi v0.0.36-v0.0.38) on a Unix socket with
# rest_auth/local: a second railwatchd asks it (--slurm=slurmrestd:unix:PATH, the API version
# discovered), sees the same job come and go, and keeps it while slurmctld does not answer.
# Needs root (slurmd runs jobs as the submitting user; the device nodes are made with mknod).
set -euo pipefail

BUILD=${1:?usage: slurm_jobs_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

for p in munged slurmctld slurmd slurmrestd sbatch squeue scancel; do
  command -v "$p" >/dev/null || fail "$p not found: scripts/install-deps installs slurm-wlm, slurmrestd and munge"
done
[ "$(id -u)" -eq 0 ] || fail "needs root (slurmd, mknod)"

S=$WORK/slurm
NODE=$(hostname -s)
mkdir -p "$S/munge" "$S/state" "$S/spool" "$S/dev"
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge/key"
chmod 400 "$S/munge/key"
munged -F -f -S "$S/munge/sock" --key-file="$S/munge/key" --log-file="$S/munge/log" \
  --pid-file="$S/munge/pid" --seed-file="$S/munge/seed" >"$WORK/munged.log" 2>&1 &
PIDS+=($!)
wait_for 10 "munged's socket" test -S "$S/munge/sock"

# Eight GPUs for Slurm's gres plugin: character devices (1,3 is /dev/null's), never opened.
for i in 0 1 2 3 4 5 6 7; do mknod "$S/dev/gpu$i" c 1 3; done
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
cat >"$S/slurm.conf" <<EOF
ClusterName=railwatch-e2e
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# squeue and slurmrestd retry a controller that does not answer for MessageTimeout (10 s by
# default): 3 s keeps the last part of this test short.
MessageTimeout=3
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$S/gres.conf" <<EOF
AutoDetect=off
NodeName=$NODE Name=gpu File=$S/dev/gpu[0-7]
EOF
export SLURM_CONF=$S/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$WORK/slurmctld.out.log" 2>&1 &
PIDS+=($!)
wait_for 20 "slurmctld" scontrol ping
# slurmrestd on a Unix socket, rest_auth/local (a client of its own uid); root is SlurmUser
# here, which slurmrestd refuses unless told. Its default plugins include the slurmdbd ones,
# fatal without slurmdbd: the three slurmctld ones Debian ships.
REST=$S/slurmrestd.sock
SLURMRESTD_SECURITY=disable_user_check slurmrestd -f "$SLURM_CONF" -a rest_auth/local \
  -s openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38 "unix:$REST" >"$WORK/slurmrestd.log" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$WORK/slurmd.out.log" 2>&1 &
PIDS+=($!)
node_idle() { sinfo -h -n "$NODE" -o %T | grep -qx idle; }
wait_for 30 "node $NODE idle" node_idle

rm -f "$WORK/ready.json" "$WORK/ready-rest.json"
"$DAEMON" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --ready_file="$WORK/ready.json" --slurm=squeue --slurm_interval=1s >"$WORK/daemon.log" 2>&1 &
PIDS+=($!)
wait_for 10 "slurmrestd's socket" test -S "$REST"
"$DAEMON" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --rules="$SRC/rules" \
  --ready_file="$WORK/ready-rest.json" --slurm="slurmrestd:unix:$REST" --slurm_interval=1s \
  --state_dir="$WORK/state-rest" >"$WORK/daemon-rest.log" 2>&1 &
PIDS+=($!)
wait_for 30 "daemon ready" test -s "$WORK/ready.json"
wait_for 30 "the slurmrestd daemon ready" test -s "$WORK/ready-rest.json"
GRPC=$(json_field "$WORK/ready.json" grpc)
GRPC_REST=$(json_field "$WORK/ready-rest.json" grpc)

# jobs_now [GRPC]: the daemon's jobs into $WORK/jobs.txt (the squeue daemon's by default).
jobs_now() { "$CLI" --server="${1:-$GRPC}" topology --jobs >"$WORK/jobs.txt" 2>&1; }
for g in "$GRPC" "$GRPC_REST"; do
  jobs_now "$g" || fail "railwatch topology --jobs failed: $(cat "$WORK/jobs.txt")"
  grep -q "^No jobs known" "$WORK/jobs.txt" || fail "jobs before any was submitted: $(cat "$WORK/jobs.txt")"
done
wait_for 10 "the slurmrestd daemon discovering v0.0.38" \
  grep -q "slurm: slurmrestd unix:$REST asked for /slurm/v0.0.38/jobs (discovered" "$WORK/daemon-rest.log"

JOB=$(sbatch --parsable --chdir="$WORK" --output=/dev/null --gres=gpu:8 -J model_pretrain --wrap "sleep 300") || fail "sbatch failed"
submitted=$SECONDS
has_job() { jobs_now "${1:-}" && grep -E "^slurm-$JOB +8 +8 +$NODE +slurm .*model_pretrain by root in gpu" "$WORK/jobs.txt"; }
wait_for 10 "slurm-$JOB in the daemon's jobs" has_job
echo "slurm-$JOB in the daemon's jobs $((SECONDS - submitted)) s after sbatch (poll: 1 s)"
wait_for 10 "slurm-$JOB in the jobs of the daemon asking slurmrestd" has_job "$GRPC_REST"
echo "slurm-$JOB in the slurmrestd daemon's jobs $((SECONDS - submitted)) s after sbatch (poll: 1 s)"

# A diagnosis on the job's host carries the job in its blast radius: a host agent on $NODE
# tails an NCCL log, and an IB completion error in it fires nccl_failure (blast radius: job).
mkdir -p "$WORK/nccl" "$WORK/empty-sys"
: >"$WORK/nccl/train.log"
"$AGENT" --server="$GRPC" --hostname="$NODE" --sysfs_root="$WORK/empty-sys" --interval=1s \
  --ethtool=false --link_events=false --lldp_source=off --log_paths="$WORK/nccl/*.log" \
  --log_state_dir="$WORK/agent-state" --backoff_initial=100ms --backoff_max=1s \
  >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
sleep 1
echo "$NODE:3301:3390 [0] NCCL WARN NET/IB : Got completion from peer 10.0.3.4<56041> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.3.7 remoteGids ::ffff:10.0.3.4 hca mlx5_0" \
  >>"$WORK/nccl/train.log"
diagnoses_now() { "$CLI" --server="$GRPC" diagnoses --json >"$WORK/diagnoses.json" 2>&1; }
# blast_jobs: the jobs of the blast radius of the nccl_failure diagnoses on $NODE, one a line.
blast_jobs() {
  /usr/bin/python3 - "$WORK/diagnoses.json" "$NODE" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
for d in json.loads(text).get("diagnoses", []) if text.strip().startswith("{") else []:
    culprit = {l["name"]: l["value"] for l in d.get("culprit", [])}
    if d.get("playbook") == "nccl_failure" and culprit.get("host") == sys.argv[2]:
        for j in d.get("blast_radius", {}).get("jobs", []):
            print(j.get("job", ""))
PY
}
in_blast() { diagnoses_now && blast_jobs | grep -qx "slurm-$JOB"; }
wait_for 20 "slurm-$JOB in the blast radius of the diagnosis on $NODE" in_blast
grep -q '"nccl_failure"' "$WORK/diagnoses.json" || fail "no nccl_failure diagnosis: $(cat "$WORK/diagnoses.json")"
echo "slurm-$JOB in the blast radius of nccl_failure on $NODE"

scancel "$JOB"
cancelled=$SECONDS
no_job() { jobs_now "${1:-}" && ! grep -q "^slurm-$JOB " "$WORK/jobs.txt"; }
wait_for 15 "slurm-$JOB gone from the daemon's jobs" no_job
echo "slurm-$JOB gone $((SECONDS - cancelled)) s after scancel"
wait_for 15 "slurm-$JOB gone from the slurmrestd daemon's jobs" no_job "$GRPC_REST"
echo "slurm-$JOB gone from the slurmrestd daemon's jobs $((SECONDS - cancelled)) s after scancel"
# The diagnosis still fires (5 minutes of window) and its blast radius no longer has the job.
left_blast() { diagnoses_now && grep -q '"nccl_failure"' "$WORK/diagnoses.json" &&
  ! blast_jobs | grep -qx "slurm-$JOB"; }
wait_for 15 "slurm-$JOB gone from the diagnosis' blast radius" left_blast
echo "slurm-$JOB left the diagnosis' blast radius $((SECONDS - cancelled)) s after scancel"

# slurmctld stops answering: the daemon keeps what it knew and says so once.
JOB2=$(sbatch --parsable --chdir="$WORK" --output=/dev/null --gres=gpu:4 -J eval --wrap "sleep 300") || fail "second sbatch failed"
for g in "$GRPC" "$GRPC_REST"; do
  wait_for 10 "slurm-$JOB2 in the jobs of $g" sh -c "'$CLI' --server='$g' topology --jobs | grep -q '^slurm-$JOB2 '"
done
kill "$(cat "$S/slurmctld.pid")"
# squeue retries for MessageTimeout (3 s) before it gives up; slurmrestd then answers HTTP 500
# with Slurm's errors.
wait_for 40 "the failing poll in the daemon's log" \
  grep -q "slurm: .*the last known jobs are kept" "$WORK/daemon.log"
jobs_now && grep -q "^slurm-$JOB2 " "$WORK/jobs.txt" || fail "a job was dropped because slurmctld stopped answering"
wait_for 20 "the failing slurmrestd poll in its daemon's log" \
  grep -q "slurm: slurmrestd unix:$REST: GET /slurm/v0.0.38/jobs: HTTP 500: .*Failed while looking for jobs.* (the last known jobs are kept" "$WORK/daemon-rest.log"
jobs_now "$GRPC_REST" && grep -q "^slurm-$JOB2 " "$WORK/jobs.txt" ||
  fail "the slurmrestd daemon dropped a job because slurmctld stopped answering"
scancel "$JOB2" 2>/dev/null || true
echo "PASS"
