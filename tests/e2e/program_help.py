#!/usr/bin/python3
"""Every railwatch program answers --help with its own flags (issue 19 item 4).

For each program built with common/program.h: `--help` exits 0, prints the program's name and
usage, and lists every flag that `--helpfull` (Abseil's list of every flag linked in) shows
from railwatch's own files, with its default, under a named group (none under "Other
flags"). `--version` prints the version. The CLI (`railwatch`) and `railwatch-sim run` have
their own help: they must exit 0 and list their commands and flags.

Usage: program_help.py BUILD_DIR
"""
import re
import subprocess
import sys

BUILD = sys.argv[1]

# Programs whose main uses ParseProgramFlags, by path under the build directory.
PROGRAMS = [
    "daemon/railwatchd",
    "agent/railwatch-agent",
    "sim/railwatch-sim",
    "bench/railwatch-loadgen",
    "bench/metrics_bench",
    "bench/rules_bench",
    "bench/spool_bench",
    "bench/state_save_bench",
    "bench/store_bench",
    "tests/railwatch_spool_driver",
]

failures = []


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def own_flags(helpfull):
    """Flags listed under 'Flags from <file>:' sections whose file is not Abseil's own."""
    flags, own = set(), False
    for line in helpfull.splitlines():
        m = re.match(r"\s*Flags from (.*):$", line)
        if m:
            own = "absl/" not in m.group(1)
            continue
        m = re.match(r"\s{4}--([A-Za-z0-9_]+) \(", line)
        if m and own:
            flags.add(m.group(1))
    return flags


for program in PROGRAMS:
    path = f"{BUILD}/{program}"
    name = program.rsplit("/", 1)[1]
    rc, text = run([path, "--help"])
    if rc != 0:
        failures.append(f"{name} --help exited {rc}")
        continue
    if "No flags matched" in text or not text.startswith(name + " "):
        failures.append(f"{name} --help does not start with the program's name:\n{text[:300]}")
    if "Usage:" not in text:
        failures.append(f"{name} --help has no Usage: line")
    if "\nOther flags:" in text:
        failures.append(f"{name}: flags without a group in --help:\n" +
                        text.split("\nOther flags:", 1)[1][:400])
    rc, full = run([path, "--helpfull"])
    expected = own_flags(full)
    if not expected:
        failures.append(f"{name} --helpfull lists none of its own flags (exit {rc})")
    for flag in sorted(expected):
        m = re.search(rf"^  --(\[no\])?{flag}(=\S+)?  \(default ([^\n]*)\)$", text, re.M)
        if not m:
            failures.append(f"{name} --help does not list --{flag} with its default")
    rc, version = run([path, "--version"])
    if rc != 0 or not version.startswith(name + " "):
        failures.append(f"{name} --version: exit {rc}, {version[:80]!r}")
    print(f"{name}: {len(expected)} flags listed")

# The CLI's own help: the command list, and a command's flags.
for args, must in [(["--help"], ["diagnoses", "triage", "rules"]),
                   (["diagnoses", "--help"], ["--state", "--json"])]:
    rc, text = run([f"{BUILD}/cli/railwatch"] + args)
    if rc != 0 or any(m not in text for m in must):
        failures.append(f"railwatch {' '.join(args)}: exit {rc}, missing some of {must}")
# A flag the command does not take is a usage error (exit 2) that names it, not ignored.
for args, flag in [(["top", "--state=firing"], "--state"),
                   (["--server=127.0.0.1:1", "rules", "list"], "--server"),
                   (["version", "--json"], "--json")]:
    p = subprocess.run([f"{BUILD}/cli/railwatch"] + args, capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 2 or f"{flag} does not apply" not in p.stderr:
        failures.append(f"railwatch {' '.join(args)}: exit {p.returncode}, stderr "
                        f"{p.stderr[:200]!r}: want exit 2 saying {flag} does not apply")
# `railwatch --help`: the commands, then every flag (as --helpfull lists them) with its default.
rc, text = run([f"{BUILD}/cli/railwatch", "--help"])
cli_flags = re.findall(r"^  --([a-z_]+) \(default ", text, re.M)
if rc != 0 or "Connection" not in text or len(cli_flags) < 20 or len(set(cli_flags)) != len(cli_flags):
    failures.append(f"railwatch --help: exit {rc}, flags {cli_flags}: want every flag once, grouped")
# An unknown flag is exit 2, with the flag it is close to.
p = subprocess.run([f"{BUILD}/cli/railwatch", "diagnoses", "--stat=firing"], capture_output=True,
                   text=True, timeout=60)
if p.returncode != 2 or "did you mean --state?" not in p.stderr:
    failures.append(f"railwatch diagnoses --stat=firing: exit {p.returncode}, {p.stderr[:200]!r}")
rc, text = run([f"{BUILD}/sim/railwatch-sim", "run", "--help"])
if rc != 0 or "--jobs" not in text:
    failures.append(f"railwatch-sim run --help: exit {rc}, no --jobs in:\n{text[:300]}")

if failures:
    print("FAIL:\n" + "\n".join(failures))
    sys.exit(1)
print("PASS: every program's --help lists its flags")
