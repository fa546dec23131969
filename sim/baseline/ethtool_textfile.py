"""The operator's ethtool cron job: `ethtool -S` dumps -> a node_exporter textfile.

node_exporter's own ethtool collector reads a NIC's statistics with the SIOCETHTOOL ioctl; the
simulator has no netdevs to ask, it writes the `ethtool -S` text a real NIC would print to
<root>/<host>/ethtool/<netdev>/stats. Many sites do not run the ethtool collector at all (it is
off by default and exports every one of mlx5's several hundred counters per port) but a small
script on a systemd timer that writes a textfile for node_exporter's textfile collector. This
module is that script: every --textfile_interval (30 s by default) it converts each host's dumps
into <textfile dir>/ethtool.prom, with the metric names and the `device` label that
node_exporter's ethtool collector gives the same counters (rx_prio3_pause ->
node_ethtool_received_prio3_pause{device="enp24s0np0"}), so the alerting rules are the ones an
operator would write against the ethtool collector on real hardware.

Standalone: python3 ethtool_textfile.py ETHTOOL_DIR OUT_FILE (one conversion).
"""

import os
import re
import sys

# node_exporter collector/ethtool_linux.go: SanitizeMetricName and buildEthtoolFQName.
_INVALID = re.compile(r"_*[^0-9A-Za-z_]+_*")
_RX = re.compile(r"(^|_)rx(_|$)")
_TX = re.compile(r"(^|_)tx(_|$)")
# The ethtool collector's fixed names for the generic counters.
_FIXED = {
    "rx_bytes": "node_ethtool_received_bytes_total",
    "rx_dropped": "node_ethtool_received_dropped_total",
    "rx_errors": "node_ethtool_received_errors_total",
    "rx_packets": "node_ethtool_received_packets_total",
    "tx_bytes": "node_ethtool_transmitted_bytes_total",
    "tx_errors": "node_ethtool_transmitted_errors_total",
    "tx_packets": "node_ethtool_transmitted_packets_total",
}


def metric_name(stat):
    """The name node_exporter's ethtool collector exports an `ethtool -S` counter under."""
    if stat in _FIXED:
        return _FIXED[stat]
    name = _INVALID.sub("_", stat).lower().lstrip("_")
    name = _RX.sub(r"\1received\2", name)
    name = _TX.sub(r"\1transmitted\2", name)
    return "node_ethtool_" + name


def parse_stats(text, where):
    """`ethtool -S` text -> ({stat: int}, [problems as 'file:line: ...'])."""
    stats, problems = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.endswith("statistics:"):
            continue
        name, sep, value = stripped.rpartition(":")
        try:
            if not sep or not name.strip():
                raise ValueError
            stats[name.strip()] = int(value.strip())
        except ValueError:
            problems.append(f"{where}:{number}: not 'name: integer': {stripped!r}")
    return stats, problems


def _escape(value):
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(netdev_stats):
    """{netdev: {stat: value}} -> exposition text, one family per metric name."""
    families = {}
    for netdev in sorted(netdev_stats):
        for stat, value in sorted(netdev_stats[netdev].items()):
            family = families.setdefault(metric_name(stat), {"stat": stat, "samples": {}})
            # Two stats that sanitise to one name: the collector would refuse the duplicate
            # too; keep the first.
            family["samples"].setdefault(netdev, value)
    lines = []
    for name in sorted(families):
        family = families[name]
        lines.append(f"# HELP {name} Network interface {family['stat']}")
        lines.append(f"# TYPE {name} untyped")
        for netdev, value in family["samples"].items():
            lines.append(f'{name}{{device="{_escape(netdev)}"}} {value}')
    return "\n".join(lines) + ("\n" if lines else "")


def read_dumps(ethtool_dir):
    """Every <ethtool_dir>/<netdev>/stats -> ({netdev: stats}, problems)."""
    netdev_stats, problems = {}, []
    try:
        netdevs = sorted(os.listdir(ethtool_dir))
    except FileNotFoundError:
        return netdev_stats, problems
    for netdev in netdevs:
        path = os.path.join(ethtool_dir, netdev, "stats")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except (FileNotFoundError, NotADirectoryError):
            continue  # a NIC that went away: its counters go away with it
        except OSError as e:
            problems.append(f"{path}: {e.strerror}")
            continue
        stats, bad = parse_stats(text, path)
        problems.extend(bad)
        if stats:
            netdev_stats[netdev] = stats
    return netdev_stats, problems


def write_textfile(ethtool_dir, out_path):
    """One run of the job: converts the dumps and replaces out_path atomically (the textfile
    collector must never read half a file). Returns the problems found."""
    netdev_stats, problems = read_dumps(ethtool_dir)
    tmp = os.path.join(os.path.dirname(out_path), "." + os.path.basename(out_path) + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(render(netdev_stats))
    os.replace(tmp, out_path)
    return problems


def main(argv):
    if len(argv) != 3:
        print("usage: ethtool_textfile.py ETHTOOL_DIR OUT_FILE", file=sys.stderr)
        return 2
    for problem in write_textfile(argv[1], argv[2]):
        print(problem, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
