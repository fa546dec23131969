#!/usr/bin/python3
"""Checks deploy/systemd: the units' hardening, their flags against the built programs, and,
where systemd's tools are installed, what systemd itself says about the files.

  check_systemd.py BUILD_DIR

- every unit runs as the sysusers.d user, restarts on failure, and carries the hardening
  keys below; no capability is kept but the host agent's two (HOST_AGENT); only the host
  agent sees devices, and only RDMA verbs and /dev/kmsg;
- every flag of ExecStart, of the EnvironmentFile examples' variables (parsed the way systemd
  parses them) and of their "flags worth knowing" comments is in the program's --helpfull;
  every $VARIABLE ExecStart uses is set by its EnvironmentFile example;
- directories the flags write to are the unit's StateDirectory (ProtectSystem=strict leaves
  nothing else writable); /etc/railwatch/rules.d (in the daemon's --rules) is created;
- with systemd-analyze: `verify` is silent on every unit (run on copies whose ExecStart
  points at the built programs) and `security --offline` rates each at most MAX_EXPOSURE;
  with systemd-sysusers / systemd-tmpfiles: both files apply to an empty root.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_lib import (DEPLOY_DIR, Problems, build_dir_from_argv,  # noqa: E402
                        build_program, flag_name, program_flags, rel)

SYSTEMD_DIR = os.path.join(DEPLOY_DIR, "systemd")
MAX_EXPOSURE = 2.0  # systemd-analyze security: 0 (locked down) .. 10 (exposed)

# Keys every unit must set, with the value.
REQUIRED = {
    "User": "railwatch",
    "Group": "railwatch",
    "Restart": "on-failure",
    "NoNewPrivileges": "yes",
    "ProtectSystem": "strict",
    "ProtectHome": "yes",
    "PrivateTmp": "yes",
    "PrivateMounts": "yes",
    "ProtectKernelTunables": "yes",
    "ProtectKernelModules": "yes",
    "ProtectKernelLogs": "yes",
    "ProtectControlGroups": "yes",
    "ProtectClock": "yes",
    "RestrictNamespaces": "yes",
    "RestrictRealtime": "yes",
    "RestrictSUIDSGID": "yes",
    "LockPersonality": "yes",
    "MemoryDenyWriteExecute": "yes",
    "SystemCallArchitectures": "native",
    "CapabilityBoundingSet": "",
    "AmbientCapabilities": "",
}
# The host agent's exceptions (docs/OPERATIONS.md, "Host agent privileges"): two
# capabilities, CAP_NET_ADMIN for module EEPROMs (ethtool's module EEPROM get, netlink or
# ioctl) and CAP_SYSLOG for /dev/kmsg (kernel.dmesg_restrict=1, Debian's default), and the
# kernel log readable.
HOST_AGENT = {
    "ProtectKernelLogs": "no",
    "CapabilityBoundingSet": "CAP_NET_ADMIN CAP_SYSLOG",
    "AmbientCapabilities": "CAP_NET_ADMIN CAP_SYSLOG",
}
ADDRESS_FAMILIES = {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}


def parse_unit(path):
    """[(section, key, value, line)] of a unit file (keys may repeat)."""
    entries, section = [], None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, _, value = line.partition("=")
            entries.append((section, key.strip(), value.strip(), number))
    return entries


def values(entries, key):
    return [v for s, k, v, _ in entries if s == "Service" and k == key]


def last(entries, key):
    found = values(entries, key)
    return found[-1] if found else None


def parse_environment_file(path):
    """Variables of an EnvironmentFile: systemd's own parser where it can be reached (the
    environment.d generator uses it), else the same rules in Python (quotes, backslash-newline
    continuation, # comments)."""
    generator = "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator"
    if os.access(generator, os.X_OK):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "environment.d"))
            shutil.copy(path, os.path.join(tmp, "environment.d", "50-railwatch.conf"))
            env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_DIRS",)}
            env["XDG_CONFIG_HOME"] = tmp
            out = subprocess.run([generator], env=env, stdout=subprocess.PIPE, text=True,
                                 timeout=30, check=True).stdout
        # It prints NAME=VALUE lines of the merged environment, quoting values with spaces.
        result = {}
        for line in out.splitlines():
            name, _, value = line.partition("=")
            if name.startswith("RAILWATCH"):
                result[name] = " ".join(shlex.split(value))
        return result
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"\\\n", "", f.read())
    result = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            result[name.strip()] = " ".join(shlex.split(value))
    return result


def documented_flags(path):
    """Flags named in the example file's comments ("Other flags worth knowing")."""
    with open(path, encoding="utf-8") as f:
        return {m.group(1) for line in f if line.lstrip().startswith("#")
                for m in re.finditer(r"(?<![\w-])--([a-z][a-z0-9_]+)", line)}


def check_unit(p, path, build_dir):
    where = rel(path)
    entries = parse_unit(path)
    name = os.path.basename(path)
    required = dict(REQUIRED)
    if name == "railwatch-agent.service":
        required.update(HOST_AGENT)
    for key, want in required.items():
        got = last(entries, key)
        p.check(got == want, where, f"{key}={want!r} required, found {got!r}")
    families = set((last(entries, "RestrictAddressFamilies") or "").split())
    p.check(families == ADDRESS_FAMILIES, where,
            f"RestrictAddressFamilies must be {sorted(ADDRESS_FAMILIES)}, is {sorted(families)}")
    filters = values(entries, "SystemCallFilter")
    p.check("@system-service" in filters and "~@privileged @resources" in filters, where,
            f"SystemCallFilter: @system-service minus @privileged @resources, is {filters}")
    if name == "railwatch-agent.service":
        # The host agent opens /dev/infiniband/uverbs* through libibverbs: a closed device
        # policy that allows the verbs devices and nothing else, instead of PrivateDevices.
        p.check(last(entries, "PrivateDevices") == "no", where, "host agent: PrivateDevices=no")
        p.check(last(entries, "DevicePolicy") == "closed", where, "host agent: DevicePolicy=closed")
        p.check(values(entries, "DeviceAllow") == ["char-infiniband_verbs rw", "/dev/kmsg r"],
                where, "host agent: DeviceAllow=char-infiniband_verbs rw and /dev/kmsg r only")
    else:
        p.check(last(entries, "PrivateDevices") == "yes", where, "PrivateDevices=yes")
        p.check(not values(entries, "DeviceAllow"), where, "no DeviceAllow")

    exec_start = last(entries, "ExecStart") or ""
    argv = exec_start.split()
    binary = build_program(build_dir, argv[0]) if argv else None
    if not p.check(binary is not None and os.access(binary, os.X_OK), where,
                   f"ExecStart runs {argv[:1]}, not a built railwatch program"):
        return
    flags = program_flags(binary)
    env_files = values(entries, "EnvironmentFile")
    p.check(len(env_files) == 1 and env_files[0].startswith("-/etc/default/"), where,
            f"EnvironmentFile=-/etc/default/NAME expected, found {env_files}")
    example = os.path.join(SYSTEMD_DIR, "default", os.path.basename(env_files[0])) \
        if env_files else ""
    env = {}
    if p.check(os.path.exists(example), where, f"no example {rel(example)} for {env_files}"):
        env = parse_environment_file(example)
        for flag in documented_flags(example):
            p.check(flag in flags, rel(example), f"mentions --{flag}, which "
                    f"{os.path.basename(binary)} does not have")
    words = []
    for word in argv[1:]:
        var = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
        if var:
            p.check(var.group(1) in env, where, f"ExecStart uses ${var.group(1)}, which "
                    f"{rel(example)} does not set")
            words += env.get(var.group(1), "").split()
        else:
            words.append(word)
    given = {}
    for word in words:
        flag = flag_name(word)
        if p.check(flag is not None, where, f"ExecStart argument {word!r} is not a flag"):
            p.check(flag in flags, where, f"{os.path.basename(binary)} has no flag --{flag}")
            given[flag] = word.split("=", 1)[1] if "=" in word else ""
    state_dirs = {f"/var/lib/{d}" for v in values(entries, "StateDirectory") for d in v.split()}
    config_dirs = {f"/etc/{d}" for v in values(entries, "ConfigurationDirectory")
                   for d in v.split()}
    if "log_state_dir" in given:
        p.check(given["log_state_dir"] in state_dirs, where,
                f"--log_state_dir={given['log_state_dir']} is not a StateDirectory "
                f"({sorted(state_dirs)}): ProtectSystem=strict makes it read-only")
    for rules_dir in given.get("rules", "").split(","):
        if rules_dir.startswith("/etc/"):
            p.check(rules_dir in config_dirs or rules_dir in tmpfiles_dirs(), where,
                    f"{rules_dir} (in --rules) is created by neither ConfigurationDirectory "
                    "nor tmpfiles.d; railwatchd refuses to start without it")


def tmpfiles_dirs():
    dirs = set()
    for name in os.listdir(os.path.join(SYSTEMD_DIR, "tmpfiles.d")):
        with open(os.path.join(SYSTEMD_DIR, "tmpfiles.d", name), encoding="utf-8") as f:
            for line in f:
                fields = line.split()
                if fields and fields[0] == "d":
                    dirs.add(fields[1])
    return dirs


def check_with_systemd(p, units, build_dir):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        print("systemd-analyze not installed: units checked by this script only")
        return
    with tempfile.TemporaryDirectory() as tmp:
        for unit in units:
            with open(unit, encoding="utf-8") as f:
                text = f.read()
            for installed in ("/usr/bin/railwatchd", "/usr/bin/railwatch-agent"):
                text = text.replace(installed + " ", build_program(build_dir, installed) + " ")
            with open(os.path.join(tmp, os.path.basename(unit)), "w", encoding="utf-8") as f:
                f.write(text)
        copies = [os.path.join(tmp, os.path.basename(u)) for u in units]
        verify = subprocess.run([analyze, "verify", *copies], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=120, cwd=tmp)
        p.check(verify.returncode == 0 and not verify.stdout.strip(), "deploy/systemd",
                f"systemd-analyze verify: {verify.stdout.strip() or verify.returncode}")
        for copy in copies:
            sec = subprocess.run([analyze, "security", "--offline=true", copy],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 timeout=120, cwd=tmp)
            m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", sec.stdout)
            exposure = float(m.group(1)) if m else None
            p.check(exposure is not None and exposure <= MAX_EXPOSURE,
                    rel(os.path.join(SYSTEMD_DIR, os.path.basename(copy))),
                    f"systemd-analyze security: exposure {exposure} above {MAX_EXPOSURE}")
            print(f"{os.path.basename(copy)}: exposure {exposure} (systemd-analyze security)")


def check_sysusers_tmpfiles(p, units):
    sysusers_file = os.path.join(SYSTEMD_DIR, "sysusers.d", "railwatch.conf")
    with open(sysusers_file, encoding="utf-8") as f:
        users = [line.split()[1] for line in f
                 if line.strip() and not line.startswith("#") and line.split()[0] == "u"]
    p.check(users == ["railwatch"], rel(sysusers_file), f"declares users {users}, not railwatch")
    tmpfiles_file = os.path.join(SYSTEMD_DIR, "tmpfiles.d", "railwatch.conf")
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc"))
        if shutil.which("systemd-sysusers"):
            r = subprocess.run(["systemd-sysusers", f"--root={root}", sysusers_file],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            with open(os.path.join(root, "etc", "passwd"), encoding="utf-8") as f:
                passwd = f.read()
            p.check(r.returncode == 0 and passwd.startswith("railwatch:"), rel(sysusers_file),
                    f"systemd-sysusers: {r.stdout.strip()} / {passwd!r}")
        if shutil.which("systemd-tmpfiles"):
            r = subprocess.run(["systemd-tmpfiles", f"--root={root}", "--create", tmpfiles_file],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            made = all(os.path.isdir(root + d) for d in tmpfiles_dirs())
            p.check(r.returncode == 0 and made, rel(tmpfiles_file),
                    f"systemd-tmpfiles --create: {r.stdout.strip()} (created: {made})")


def main():
    build_dir = build_dir_from_argv(__doc__)
    p = Problems("systemd")
    units = sorted(os.path.join(SYSTEMD_DIR, f) for f in os.listdir(SYSTEMD_DIR)
                   if f.endswith(".service"))
    p.check(sorted(map(os.path.basename, units)) == [
        "railwatch-agent.service", "railwatch-ib-scanner.service",
        "railwatch-switch-agent.service", "railwatchd.service"],
        "deploy/systemd", f"units: {units}")
    for unit in units:
        check_unit(p, unit, build_dir)
    check_with_systemd(p, units, build_dir)
    check_sysusers_tmpfiles(p, units)
    return p.finish()


if __name__ == "__main__":
    sys.exit(main())
