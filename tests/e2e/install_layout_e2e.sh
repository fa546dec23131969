#!/usr/bin/env bash
# The shipped data found without flags (common/shipped_data.h), as installed and relocated:
# `cmake --install` into a temporary prefix, then railwatchd, the CLI, the switch agent and
# railwatch-sim run from <prefix>/bin must take the playbooks, gNMI profiles and baseline
# script from <prefix>/share/railwatch, never from this source tree; the same once the whole
# prefix is moved elsewhere; and $RAILWATCH_SHARE_DIR wins over both.
set -euo pipefail

BUILD=${1:?usage: install_layout_e2e.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 ||
  fail "cmake --install failed"
for f in bin/railwatchd bin/railwatch bin/railwatch-agent bin/railwatch-sim \
  share/railwatch/rules/pfc-storm.yaml share/railwatch/rules/runbooks/pfc-storm.md \
  share/railwatch/profiles/gnmi/sonic.yaml share/railwatch/baseline/baseline.py; do
  test -e "$PREFIX/$f" || fail "the installation has no $f"
done

# check_layout ROOT: the programs under ROOT/bin read ROOT/share/railwatch.
check_layout() {
  local root=$1 share=$1/share/railwatch
  # The CLI: `rules list` names the file of every playbook.
  "$root/bin/railwatch" rules list --json >"$WORK/list.json" || fail "$root: rules list failed"
  python3 - "$WORK/list.json" "$share/rules/" <<'PY' || fail "$root: rules list read other playbooks"
import json, sys
sources = [p["source"] for p in json.load(open(sys.argv[1]))]
assert sources and all(s.startswith(sys.argv[2]) for s in sources), sources
PY
  # railwatchd: the playbooks it loads, from its log.
  rm -f "$WORK/ready.json"
  "$root/bin/railwatchd" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 \
    --ready_file="$WORK/ready.json" >"$WORK/daemon.log" 2>&1 &
  local pid=$!
  wait_for 20 "railwatchd from $root" test -s "$WORK/ready.json"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  grep -q "playbook pfc_storm from $share/rules/pfc-storm.yaml" "$WORK/daemon.log" ||
    fail "$root: railwatchd did not load $share/rules (daemon.log)"
  if grep "playbook .* from $SRC/" "$WORK/daemon.log"; then
    fail "$root: railwatchd read the source tree's playbooks"
  fi
  # The switch agent's profiles and railwatch-sim run's defaults, as their --help shows them.
  "$root/bin/railwatch-sim" run --help >"$WORK/sim-help.txt" 2>&1 || true
  grep -q "$share/rules" "$WORK/sim-help.txt" || fail "$root: railwatch-sim run --help names no $share/rules"
  grep -q "$share/baseline/baseline.py" "$WORK/sim-help.txt" ||
    fail "$root: railwatch-sim run --help names no $share/baseline/baseline.py"
  # An empty capture decodes to nothing (exit 5) but names the profile it found; a missing
  # profiles directory is "cannot list".
  "$root/bin/railwatch" gnmi decode --profile=sonic /dev/null >"$WORK/decode.txt" 2>&1 || true
  grep -q "profile sonic: 0 mapped" "$WORK/decode.txt" ||
    fail "$root: gnmi decode --profile=sonic found no profile: $(cat "$WORK/decode.txt")"
  echo "PASS: programs under $root/bin read $share"
}

check_layout "$PREFIX"
mv "$PREFIX" "$WORK/moved"
check_layout "$WORK/moved"

# $RAILWATCH_SHARE_DIR first: a copy of the data elsewhere.
mkdir -p "$WORK/elsewhere"
cp -r "$WORK/moved/share/railwatch/rules" "$WORK/elsewhere/"
RAILWATCH_SHARE_DIR=$WORK/elsewhere "$WORK/moved/bin/railwatch" rules list --json >"$WORK/list.json"
grep -q "\"$WORK/elsewhere/rules/" "$WORK/list.json" || fail "RAILWATCH_SHARE_DIR was not used"
echo "PASS: install layout (installed, relocated, RAILWATCH_SHARE_DIR)"
