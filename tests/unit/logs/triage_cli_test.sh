#!/usr/bin/env bash
# `railwatch triage`, the real binary: the human summary and --json on the real-world samples,
# standard input, and a run mixing garbage, a missing file and a directory.
set -euo pipefail

BUILD=${1:?usage: triage_cli_test.sh BUILD_DIR}
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
CLI=$BUILD/cli/railwatch
FIX=$SRC/tests/fixtures/logs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/railwatch-triage-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect FILE TEXT: FILE holds TEXT (a fixed string).
expect() {
  grep -qF -- "$2" "$1" || { echo "--- $1" >&2; cat "$1" >&2; fail "missing: $2"; }
}

# 1. The 3 AM case: what failed, where, the likely cause, the next command.
"$CLI" triage "$FIX/nccl_03_ib_status12_vendor129_roce_gid_ipv6.log" >"$WORK/human.txt"
expect "$WORK/human.txt" "FAIL  IB completion error IBV_WC_RETRY_EXC_ERR (status 12), vendor err 0x81, 3 times"
expect "$WORK/human.txt" "kp-ddp-worker-0 pid 3468 cudaDev 4"
expect "$WORK/human.txt" "10.216.210.236 (ports 54862, 49892)"
expect "$WORK/human.txt" "Transport retry counter exceeded"
expect "$WORK/human.txt" "rdma statistic show link"
expect "$WORK/human.txt" "Read 13 lines: 11 parsed into 6 events"
# The diagnosis is the shipped nccl_failure playbook's (found from the build tree), with its
# runbook's commands.
expect "$WORK/human.txt" "playbook      nccl_failure (critical): NCCL failure on kp-ddp-worker-0"
expect "$WORK/human.txt" "runbook next  ssh kp-ddp-worker-0 nvidia-smi -q -d ERROR"

# 2. Every sample at once as JSON lines: exit 0, one object per line, the summary last.
"$CLI" triage --json "$FIX"/* >"$WORK/all.jsonl" 2>"$WORK/all.err" || fail "triage of the samples exited $?"
[ -s "$WORK/all.jsonl" ] || fail "no JSON output"
if grep -vqE '^\{"kind":".*\}$' "$WORK/all.jsonl"; then fail "a line that is not a JSON object"; fi
tail -n 1 "$WORK/all.jsonl" >"$WORK/summary.json"
expect "$WORK/summary.json" '"kind":"triage.summary","verdict":"failure"'
expect "$WORK/summary.json" "\"files\":$(ls "$FIX" | wc -l),\"files_unreadable\":0"
expect "$WORK/summary.json" '"malformed":0'
# The one sample of NCCL 2.28.9's invalid RAS JSON is read after a repair, and triage says so.
expect "$WORK/all.err" "ras_09_v2.28.9_json_missing_rank_unresponsive_INVALID_missing_comma.json:1: invalid JSON read after adding 1 missing comma"
if grep -v "invalid JSON read after adding" "$WORK/all.err" >&2; then
  fail "problems reported on the samples"
fi
expect "$WORK/all.jsonl" '"kind":"pytorch.watchdog_timeout"'
expect "$WORK/all.jsonl" '"kind":"nccl_ras.report"'
# The six NCCL Inspector samples (JSON records and Prometheus textfiles): one event per member.
[ "$(grep -c '"kind":"nccl_inspector.summary"' "$WORK/all.jsonl")" -eq 7 ] || fail "want 7 Inspector members"
expect "$WORK/all.jsonl" '"avg_busbw_gbps":406.034'
# Rows per CATALOGUE.md: nccl_01 25, nccltests_01 5, nccltests_04 12, nccltests_05 25.
[ "$(grep -c '"kind":"nccltests.result"' "$WORK/all.jsonl")" -eq 67 ] || fail "want 67 nccl-tests rows"

# 3. Standard input.
"$CLI" triage - <"$FIX/pytorch_04_watchdog_timeout_legacy_E_format_ofa.log" >"$WORK/stdin.txt"
expect "$WORK/stdin.txt" "FAIL  PyTorch watchdog timeout: ALLREDUCE SeqNum 469508"
expect "$WORK/stdin.txt" "reported by 5 ranks"

# 4. Garbage, a missing file and a directory: every input gets an answer, the missing one is
#    named, and the exit code says "not found" (4).
head -c 65536 /dev/urandom >"$WORK/garbage.bin"
printf 'h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer 1.2.3.4<5> with status=\n' \
  >"$WORK/cut.log"
set +e
"$CLI" triage "$WORK/garbage.bin" "$WORK/missing.log" "$WORK" "$WORK/cut.log" \
  "$FIX/nccl_08_ib_error12_no_peer_legacy_format.log" >"$WORK/mixed.txt" 2>"$WORK/mixed.err"
rc=$?
set -e
[ "$rc" -eq 4 ] || fail "want exit code 4 for a missing file, got $rc"
expect "$WORK/mixed.err" "railwatch triage: $WORK/missing.log: no such file"
expect "$WORK/mixed.err" "railwatch triage: $WORK: is a directory"
expect "$WORK/mixed.err" "railwatch triage: $WORK/cut.log:1: IB completion error without a numeric status"
expect "$WORK/mixed.txt" "Could not read $WORK/missing.log: no such file."
expect "$WORK/mixed.txt" "FAIL  IB completion error IBV_WC_RETRY_EXC_ERR (status 12)"
expect "$WORK/mixed.txt" "not understood (skipped)"

# 5. No file at all is a usage error.
set +e
"$CLI" triage >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "want exit code 2 without files, got $rc"

echo "triage CLI: ok"
