#!/usr/bin/env python3
"""Normalises a Prometheus text exposition for a golden-file comparison.

The golden file records what /metrics exposes, not the readings: every family's HELP and TYPE
and every series (name and labels), sorted, with values dropped. Label values that change from
run to run (the version, the simulator's ephemeral ports) are replaced by a placeholder.

  exposition_golden.py check SCRAPE GOLDEN    exit 1 with a unified diff when they differ
  exposition_golden.py update SCRAPE GOLDEN   rewrite GOLDEN from SCRAPE
"""
import difflib
import re
import sys

# Labels whose values differ between runs or builds.
VOLATILE = {"version"}
SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+\S+(\s+\d+)?$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def normalise(text):
    families = {}  # name -> {"meta": [...], "series": set()}

    def family(name):
        return families.setdefault(name, {"meta": [], "series": set()})

    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            name = line.split()[2]
            family(name)["meta"].append(line)
            continue
        if line.startswith("#"):
            continue
        m = SERIES.match(line)
        if not m:
            raise SystemExit(f"scrape:{lineno}: not a sample line: {line!r}")
        name, labels = m.group(1), m.group(2) or ""
        pairs = [(k, "<" + k + ">" if k in VOLATILE else v) for k, v in LABEL.findall(labels)]
        pairs.sort()
        rendered = name + ("{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}" if pairs else "")
        # Histograms and summaries put _bucket/_sum/_count under the family name.
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        family(base if base in families else name)["series"].add(rendered)
    out = []
    for name in sorted(families):
        f = families[name]
        out.extend(sorted(f["meta"]))
        out.extend(sorted(f["series"]))
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("check", "update"):
        raise SystemExit(__doc__)
    mode, scrape, golden = sys.argv[1:]
    got = normalise(open(scrape, encoding="utf-8").read())
    if mode == "update":
        with open(golden, "w", encoding="utf-8") as f:
            f.write(got)
        print(f"wrote {golden}: {got.count(chr(10))} lines")
        return 0
    want = open(golden, encoding="utf-8").read()
    if got == want:
        print(f"exposition matches {golden} ({got.count(chr(10))} lines)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        want.splitlines(True), got.splitlines(True), golden, "scraped /metrics (normalised)"))
    print(f"\n/metrics differs from {golden}. If the change is intended, regenerate it with\n"
          f"  tests/e2e/metrics_exposition.sh BUILD_DIR --update\nand review the diff.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
