#!/usr/bin/python3
"""Checks deploy/Containerfile without building it (no container engine is needed):

  check_containerfile.py BUILD_DIR

- the build stage starts from debian:bookworm, runs scripts/install-deps, copies every
  directory the top-level CMakeLists.txt adds, and builds Release without tests;
- the runtime stage starts from Debian bookworm, installs no -dev package and only packages
  that exist (each is installed on this Debian 12 machine), runs as a fixed non-root uid (the
  one deploy/kubernetes runs as), holds the three programs in /usr/bin and the playbooks and
  gNMI profiles in /usr/share/railwatch, and its ENTRYPOINT/CMD flags are railwatchd's;
- every shared library `ldd` reports for the three built programs comes from a package that
  the runtime stage installs, directly or through its dependencies, and every library a
  program names itself (DT_NEEDED) from a package it installs by name: the image cannot miss
  one. A library ldd cannot find is a failure too.
"""
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_lib import (DEPLOY_DIR, SOURCE_DIR, Problems,  # noqa: E402
                        build_dir_from_argv, flag_name, program_flags, rel)

CONTAINERFILE = os.path.join(DEPLOY_DIR, "Containerfile")
PROGRAMS = {"railwatchd": "daemon/railwatchd", "railwatch-agent": "agent/railwatch-agent",
            "railwatch": "cli/railwatch"}
# Sanitizer runtimes appear in the ASan preset's binaries only; a release image never has them.
SANITIZER_LIBS = re.compile(r"^lib(asan|ubsan|lsan|tsan)\.so")
WHERE = rel(CONTAINERFILE)


def parse_stages():
    """[{'from': image, 'name': alias, 'instructions': [(KEYWORD, args, line)]}]"""
    stages, logical, start = [], "", 0
    with open(CONTAINERFILE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not logical and (not stripped or stripped.startswith("#")):
            continue
        if logical and stripped.startswith("#"):
            continue  # comments inside a continued instruction
        if not logical:
            start = number
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        keyword, _, args = logical.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = args.split()
            stages.append({"from": words[0],
                           "name": words[2] if len(words) > 2 and words[1].upper() == "AS"
                           else None, "instructions": []})
        elif stages:
            stages[-1]["instructions"].append((keyword, args.strip(), start))
        logical = ""
    return stages


def instructions(stage, keyword):
    return [(a, n) for k, a, n in stage["instructions"] if k == keyword]


def apt_packages(stage):
    packages = []
    for args, _ in instructions(stage, "RUN"):
        for command in re.split(r"&&|;", args):
            words = shlex.split(command)
            if "apt-get" in words and "install" in words:
                packages += [w for w in words[words.index("install") + 1:]
                             if not w.startswith("-")]
    return packages


def exec_form(args):
    return json.loads(args) if args.startswith("[") else shlex.split(args)


def check_build_stage(p, stage):
    p.check(stage["from"] == "debian:bookworm", WHERE,
            f"build stage FROM debian:bookworm, is {stage['from']}")
    runs = " ".join(a for a, _ in instructions(stage, "RUN"))
    p.check("install-deps" in runs, WHERE, "build stage must install with scripts/install-deps")
    p.check("-DCMAKE_BUILD_TYPE=Release" in runs and "-DRAILWATCH_BUILD_TESTS=OFF" in runs,
            WHERE, "build stage: cmake Release without tests")
    copied = set()
    for args, _ in instructions(stage, "COPY"):
        words = [w for w in args.split() if not w.startswith("--")]
        copied |= {w.rstrip("/") for w in words[:-1]}
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as f:
        # add_subdirectory(proto ${RAILWATCH_PART}): the directory is the first argument.
        subdirs = re.findall(r"^\s*add_subdirectory\((\w+)[\s)]", f.read(), re.M)
    p.check(len(subdirs) >= 10, WHERE, f"found only {subdirs} in CMakeLists.txt's add_subdirectory")
    for d in subdirs + ["CMakeLists.txt", "rules", "profiles"]:
        if d != "tests":
            p.check(d in copied, WHERE, f"build stage does not COPY {d}, which the build needs")
    for program in PROGRAMS:
        p.check(f"/out/usr/bin/{program}" in runs, WHERE,
                f"build stage does not install {program} into /out/usr/bin")


def check_runtime_stage(p, stage, build_dir):
    p.check(stage["from"].startswith("debian:bookworm"), WHERE,
            f"runtime stage FROM debian:bookworm(-slim), is {stage['from']}")
    packages = apt_packages(stage)
    p.check(bool(packages), WHERE, "runtime stage installs no package")
    for package in packages:
        p.check(not package.endswith("-dev"), WHERE, f"runtime stage installs {package}")
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.check(status.stdout == "install ok installed", WHERE,
                f"{package}: not a Debian 12 package installed here (a typo?)")
    users = instructions(stage, "USER")
    user = users[-1][0] if users else "root"
    uid = user.split(":")[0]
    p.check(uid not in ("root", "0"), WHERE, f"runtime stage runs as {user}")
    runs = " ".join(a for a, _ in instructions(stage, "RUN"))
    p.check(f"--uid {uid}" in runs, WHERE, f"USER {user}: no useradd --uid {uid}")
    kube_uids = set()
    kube_dir = os.path.join(DEPLOY_DIR, "kubernetes")
    for name in os.listdir(kube_dir):
        if name.endswith(".yaml"):
            text = open(os.path.join(kube_dir, name), encoding="utf-8").read()
            kube_uids |= set(re.findall(r"runAsUser: (\d+)", text)) - {"0"}
    p.check(kube_uids <= {uid}, WHERE,
            f"deploy/kubernetes runs as uid {sorted(kube_uids)}, the image's user is {uid}")
    copies = [a for a, _ in instructions(stage, "COPY")]
    p.check("--from=build /out/usr/bin/ /usr/bin/" in copies, WHERE,
            "runtime stage must COPY --from=build /out/usr/bin/ /usr/bin/")
    for d in ("rules", "profiles"):
        p.check(f"{d}/ /usr/share/railwatch/{d}/" in copies, WHERE,
                f"runtime stage must copy {d}/ to /usr/share/railwatch/{d}/")
    entry = instructions(stage, "ENTRYPOINT")
    cmd = instructions(stage, "CMD")
    if p.check(entry and exec_form(entry[-1][0]) == ["/usr/bin/railwatchd"], WHERE,
               "ENTRYPOINT must be [\"/usr/bin/railwatchd\"]"):
        flags = program_flags(os.path.join(build_dir, PROGRAMS["railwatchd"]))
        for arg in exec_form(cmd[-1][0]) if cmd else []:
            p.check(flag_name(arg) in flags, WHERE, f"CMD: railwatchd has no flag {arg}")
    return packages


# --- shared libraries -------------------------------------------------------------------------

def installed_packages():
    """{package: set of packages it depends on (Depends, Pre-Depends; every alternative)}
    and {virtual package: providers}, from dpkg's database."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Depends}\t${Pre-Depends}\t"
                          "${Provides}\n"], stdout=subprocess.PIPE, text=True, check=True).stdout
    depends, provides = {}, {}
    for line in out.splitlines():
        name, dep, pre, prov = (line.split("\t") + ["", "", ""])[:4]
        names = set()
        for field in (dep, pre):
            for alternative in re.split(r"[,|]", field):
                word = alternative.strip().split(" ")[0].split(":")[0]
                if word:
                    names.add(word)
        depends[name] = names
        for v in prov.split(","):
            word = v.strip().split(" ")[0]
            if word:
                provides.setdefault(word, set()).add(name)
    return depends, provides


def closure(packages, depends, provides):
    seen, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for dep in depends.get(name, set()):
            todo += [dep] + sorted(provides.get(dep, set()))
    return seen


def library_candidates(library_path):
    """The spellings dpkg may know a library by (merged /usr: /lib and /usr/lib are one)."""
    candidates = []
    for path in (library_path, os.path.realpath(library_path)):
        candidates.append(path)
        if path.startswith("/usr/lib/"):
            candidates.append(path[len("/usr"):])
        elif path.startswith("/lib"):
            candidates.append("/usr" + path)
    return candidates


def packages_of(library_paths):
    """{library path: the Debian package that ships it, or None}, in one dpkg-query call."""
    candidates = {path: library_candidates(path) for path in library_paths}
    every = sorted({c for cs in candidates.values() for c in cs})
    out = subprocess.run(["dpkg-query", "-S", *every], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    owner = {}
    for line in out.splitlines():
        m = re.match(r"^([^\s:,]+)(?::[a-z0-9]+)?: (/\S+)$", line)
        if m:
            owner[m.group(2)] = m.group(1)
    return {path: next((owner[c] for c in cs if c in owner), None)
            for path, cs in candidates.items()}


def ldd(binary):
    """{soname: path or None (not found)} of every library the binary loads."""
    out = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, check=True).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+) \(0x)", line)
        if m:
            libs[m.group(1)] = m.group(3)
    return libs


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def check_libraries(p, packages, build_dir):
    depends, provides = installed_packages()
    listed = set(packages)
    reachable = closure(listed, depends, provides)
    total, skipped = set(), set()
    libraries = {}  # program -> (direct sonames, {soname: path})
    for program, relative in PROGRAMS.items():
        binary = os.path.join(build_dir, relative)
        if p.check(os.access(binary, os.X_OK), WHERE, f"{binary} is not built"):
            libraries[program] = (needed(binary), ldd(binary))
    owners = packages_of({path for _, libs in libraries.values()
                          for path in libs.values() if path})
    for program, (direct, libs) in libraries.items():
        for soname, path in sorted(libs.items()):
            if SANITIZER_LIBS.match(soname):
                skipped.add(soname)
                continue
            if not p.check(path is not None, WHERE, f"{program}: ldd cannot find {soname}"):
                continue
            package = owners[path]
            if not p.check(package is not None, WHERE,
                           f"{program}: {path} belongs to no Debian package"):
                continue
            total.add(soname)
            p.check(package in reachable, WHERE,
                    f"{program}: {soname} is in {package}, which the runtime stage does not "
                    "install (add it to the apt-get install list)")
            if soname in direct:
                p.check(package in listed, WHERE,
                        f"{program} links {soname} itself: install {package} by name, not "
                        "through another package's dependencies")
    note = f" (sanitizer runtimes left out: {sorted(skipped)})" if skipped else ""
    print(f"{len(total)} shared libraries of {len(PROGRAMS)} programs, all from the "
          f"{len(listed)} packages of the runtime stage or their dependencies{note}")


def main():
    build_dir = build_dir_from_argv(__doc__)
    p = Problems("containerfile")
    stages = parse_stages()
    names = [s["name"] for s in stages]
    if not p.check(names == ["build", "runtime"], WHERE,
                   f"stages must be build and runtime, are {names}"):
        return p.finish()
    check_build_stage(p, stages[0])
    packages = check_runtime_stage(p, stages[1], build_dir)
    check_libraries(p, packages, build_dir)
    return p.finish()


if __name__ == "__main__":
    sys.exit(main())
