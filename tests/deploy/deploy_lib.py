"""Shared by the deploy/ checks: the programs' flags, problem collection, YAML loading.

Run with /usr/bin/python3 (Debian's python3-yaml).
"""
import os
import re
import subprocess
import sys

import yaml

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY_DIR = os.path.join(SOURCE_DIR, "deploy")

# Where a unit or a manifest runs a program from, and where the build puts it.
INSTALLED_PROGRAMS = {
    "/usr/bin/railwatchd": "daemon/railwatchd",
    "/usr/bin/railwatch-agent": "agent/railwatch-agent",
    "/usr/bin/railwatch": "cli/railwatch",
}

_FLAG_LINE = re.compile(r"^\s+--([A-Za-z0-9_]+) \(")
_flag_cache = {}


def build_program(build_dir, installed_path):
    """The built binary behind an installed path (/usr/bin/railwatchd), or None."""
    relative = INSTALLED_PROGRAMS.get(installed_path)
    return os.path.join(build_dir, relative) if relative else None


def program_flags(binary):
    """Every flag name `binary --helpfull` lists (Abseil's own included)."""
    if binary not in _flag_cache:
        out = subprocess.run([binary, "--helpfull"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=30).stdout
        flags = {m.group(1) for line in out.splitlines() if (m := _FLAG_LINE.match(line))}
        if not flags:
            raise RuntimeError(f"{binary} --helpfull listed no flags:\n{out[:500]}")
        # Abseil's usage flags are not listed under --helpfull.
        _flag_cache[binary] = flags | {"help", "helpfull", "helpshort", "version"}
    return _flag_cache[binary]


def flag_name(arg):
    """'--listen=0.0.0.0:9740' -> 'listen'; None for anything that is not a flag."""
    m = re.match(r"^--?([A-Za-z0-9_]+)(=|$)", arg)
    return m.group(1) if m else None


class Problems:
    """Collects every problem (file:line: message) and reports them all at the end."""

    def __init__(self, name):
        self.name = name
        self.items = []
        self.checks = 0

    def check(self, ok, where, message):
        self.checks += 1
        if not ok:
            self.items.append(f"{where}: {message}")
        return ok

    def add(self, where, message):
        self.check(False, where, message)

    def finish(self):
        for item in self.items:
            print(f"FAIL {item}", file=sys.stderr)
        status = "FAILED" if self.items else "OK"
        print(f"{self.name}: {self.checks} checks, {len(self.items)} problems: {status}")
        return 1 if self.items else 0


def build_dir_from_argv(usage):
    """The one argument, BUILD_DIR, as an absolute path; exits with the usage without it."""
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    return os.path.abspath(sys.argv[1])


def rel(path):
    return os.path.relpath(path, SOURCE_DIR)


def load_yaml_documents(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)
