#!/usr/bin/env python3
"""The operator's baseline on a simulated fabric: node_exporter + Prometheus alerting rules.

Runs what an operator would otherwise run on the hosts railwatch-sim plays: Debian's
prometheus-node-exporter per simulated host (--path.sysfs=<root>/<host>, infiniband, netclass
and textfile collectors), the ethtool textfile job (ethtool_textfile.py) and Debian's
Prometheus with operator-rules.yml, all on loopback. Polls the firing alerts every second
and, on SIGTERM or SIGINT, writes them as railwatch diagnosis records (alerts.py), stops
everything it started and exits. docs/BASELINE.md.

  baseline.py --root=SIMROOT --hosts=N --work=DIR --out=FILE --ready_file=F
              [--node_exporter=PATH] [--prometheus=PATH] [--rules=FILE]
              [--scrape_interval=10s] [--evaluation_interval=10s] [--textfile_interval=30s]

Exit status: 0 after a clean stop, 1 when a program failed (FILE is still written), 2 usage.
"""

import argparse
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alerts as alerts_mod  # noqa: E402
import ethtool_textfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_PR_SET_PDEATHSIG = 1


def log(message):
    print(f"{time.strftime('%H:%M:%S')} baseline: {message}", file=sys.stderr, flush=True)


def parse_duration(text):
    """'10s', '500ms', '1m30s' -> seconds."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 10s, 500ms, 1m30s)")
    return sum(float(n) * units[u] for n, u in parts)


def prom_duration(seconds):
    return f"{int(seconds * 1000)}ms"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """Children get SIGTERM if this process dies without cleaning up (SIGKILL)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def http_get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


class Baseline:
    def __init__(self, args):
        self.args = args
        self.hosts = [f"gpu-node-{i:03d}" for i in range(1, args.hosts + 1)]
        self.children = {}  # name -> Popen
        self.exporters = {}  # host -> port
        self.prometheus = None
        self.netdevs = {}  # (host, netdev) -> RDMA device
        self.failed = []
        self.stopping = False

    # ---- processes -------------------------------------------------------------------------

    def _spawn(self, name, command):
        logs = os.path.join(self.args.work, "logs")
        os.makedirs(logs, exist_ok=True)
        with open(os.path.join(logs, name + ".log"), "ab") as out:
            child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        self.children[name] = child
        return child

    def _exporter_command(self, host, port):
        textfile_dir = os.path.join(self.args.work, "textfile", host)
        return [self.args.node_exporter, f"--path.sysfs={os.path.join(self.args.root, host)}",
                "--collector.disable-defaults", "--collector.infiniband",
                "--collector.netclass", "--collector.textfile",
                f"--collector.textfile.directory={textfile_dir}",
                f"--web.listen-address=127.0.0.1:{port}", "--web.disable-exporter-metrics",
                "--log.level=warn"]

    def _await_listener(self, name, url, deadline):
        """True once url answers; False when the program exited because its port was taken
        (between our probe and its bind: try another); raises on any other exit."""
        child = self.children[name]
        while child.poll() is None:
            try:
                http_get(url)
                return True
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} never answered {url} (logs/{name}.log)")
                time.sleep(0.05)
        with open(os.path.join(self.args.work, "logs", name + ".log"), errors="replace") as f:
            tail = f.read()[-4000:]
        if "address already in use" in tail:
            return False
        reason = next((line for line in tail.splitlines()
                       if line.startswith("panic:") or "level=error" in line), "")
        raise RuntimeError(f"{name} exited with status {child.returncode}: {reason} "
                           f"(logs/{name}.log)")

    def start_exporters(self, deadline):
        """One node_exporter per host, each on a free port, once the simulator has made the
        host's tree (node_exporter refuses a --path.sysfs that does not exist)."""
        for host in self.hosts:
            while not os.path.isdir(os.path.join(self.args.root, host)):
                if self.stopping:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no {os.path.join(self.args.root, host)}: is the "
                                       "simulator running with this --root?")
                time.sleep(0.1)
        log(f"the simulator's {len(self.hosts)} host trees are there")
        pending = list(self.hosts)
        while pending:
            for host in pending:
                self.exporters[host] = free_port()
                self._spawn("node-exporter-" + host,
                            self._exporter_command(host, self.exporters[host]))
            pending = [host for host in pending if not self._await_listener(
                "node-exporter-" + host, f"http://127.0.0.1:{self.exporters[host]}/metrics",
                deadline)]

    def prometheus_config(self):
        scrape = prom_duration(self.args.scrape_interval)
        lines = ["# Generated by sim/baseline/baseline.py.", "global:",
                 f"  scrape_interval: {scrape}",
                 f"  scrape_timeout: {prom_duration(min(self.args.scrape_interval, 10))}",
                 f"  evaluation_interval: {prom_duration(self.args.evaluation_interval)}",
                 "rule_files:", f"  - {json.dumps(os.path.abspath(self.args.rules))}",
                 "scrape_configs:", "  - job_name: node", "    static_configs:"]
        for host in self.hosts:
            lines += [f"      - targets: ['127.0.0.1:{self.exporters[host]}']",
                      f"        labels: {{host: {host}}}"]
        return "\n".join(lines) + "\n"

    def start_prometheus(self, deadline):
        config = os.path.join(self.args.work, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(self.prometheus_config())
        while True:
            port = free_port()
            self._spawn("prometheus", [
                self.args.prometheus, f"--config.file={config}",
                f"--storage.tsdb.path={os.path.join(self.args.work, 'prometheus-data')}",
                f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
            self.prometheus = f"http://127.0.0.1:{port}"
            if self._await_listener("prometheus", self.prometheus + "/-/ready", deadline):
                return

    def stop_children(self):
        for child in self.children.values():
            if child.poll() is None:
                child.terminate()
        end = time.monotonic() + 5
        for child in self.children.values():
            try:
                child.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    def check_children(self):
        """A program that exits before we stop it is a failure (reported, the rest go on);
        one killed by a SIGTERM to our whole process group is not."""
        for name, child in self.children.items():
            code = child.poll()
            if code is None or code == -signal.SIGTERM or self.stopping or name in self.failed:
                continue
            self.failed.append(name)
            log(f"{name} exited with status {code} (logs/{name}.log)")

    # ---- the ethtool job and the NIC names --------------------------------------------------

    def run_textfile_job(self):
        for host in self.hosts:
            out = os.path.join(self.args.work, "textfile", host, "ethtool.prom")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            for problem in ethtool_textfile.write_textfile(
                    os.path.join(self.args.root, host, "ethtool"), out):
                log(problem)
        self.learn_netdevs()

    def learn_netdevs(self):
        """What ibdev2netdev prints, from <root>/<host>/class/infiniband/*/ports/*/gid_attrs/
        ndevs/0; remembered after the NIC goes away."""
        for host in self.hosts:
            base = os.path.join(self.args.root, host, "class", "infiniband")
            try:
                devices = os.listdir(base)
            except FileNotFoundError:
                continue
            for device in devices:
                ports = os.path.join(base, device, "ports")
                for port in os.listdir(ports) if os.path.isdir(ports) else []:
                    try:
                        with open(os.path.join(ports, port, "gid_attrs", "ndevs", "0")) as f:
                            netdev = f.read().strip()
                    except OSError:
                        continue
                    if netdev:
                        self.netdevs[(host, netdev)] = device

    # ---- Prometheus' API ---------------------------------------------------------------------

    def api(self, path):
        body = json.loads(http_get(self.prometheus + path))
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]

    def all_targets_scraped(self):
        targets = self.api("/api/v1/targets?state=active")["activeTargets"]
        up = [t for t in targets if t.get("health") == "up"]
        return len(targets) == len(self.hosts) and len(up) == len(targets)

    def rule_timings(self):
        timings = {}
        for group in self.api("/api/v1/rules?type=alert")["groups"]:
            for rule in group["rules"]:
                timings[rule["name"]] = (float(rule.get("duration", 0)),
                                         float(group.get("interval", 0)))
        return timings

    def write_ready(self):
        ready = {"prometheus": self.prometheus,
                 "node_exporters": {h: f"http://127.0.0.1:{p}" for h, p in self.exporters.items()},
                 "ready_at_unix_nano": str(time.time_ns())}
        write_atomically(self.args.ready_file, json.dumps(ready, indent=1) + "\n")

    # ---- the run -----------------------------------------------------------------------------

    def run(self):
        start = time.monotonic()
        deadline = start + self.args.ready_timeout
        self.run_textfile_job()
        self.start_exporters(deadline)
        if self.stopping:  # stopped before it started: it saw nothing
            return alerts_mod.AlertTracker({}, self.rdma_device)
        log(f"{len(self.hosts)} node_exporters up after {time.monotonic() - start:.1f} s")
        self.start_prometheus(deadline)
        log(f"Prometheus up after {time.monotonic() - start:.1f} s")
        tracker = alerts_mod.AlertTracker(self.rule_timings(), self.rdma_device)
        while not self.all_targets_scraped():
            if self.stopping:
                return tracker
            if time.monotonic() > deadline:
                raise RuntimeError("Prometheus has not scraped every node_exporter "
                                   f"within {self.args.ready_timeout:.0f} s")
            time.sleep(0.2)
        self.write_ready()
        log(f"ready after {time.monotonic() - start:.1f} s: Prometheus {self.prometheus} has "
            f"scraped {len(self.hosts)} node_exporters")
        next_textfile = time.monotonic() + self.args.textfile_interval
        while not self.stopping:
            self.poll(tracker)
            self.check_children()
            if time.monotonic() >= next_textfile:
                self.run_textfile_job()
                next_textfile += self.args.textfile_interval
            sleep_until = time.monotonic() + self.args.poll_interval
            while not self.stopping and time.monotonic() < sleep_until:
                time.sleep(0.05)
        self.poll(tracker)  # the last word, if Prometheus is still up
        return tracker

    def poll(self, tracker):
        try:
            data = self.api("/api/v1/alerts")
        except (OSError, ValueError, RuntimeError) as e:
            if not self.stopping:
                log(f"cannot read alerts: {e}")
            return
        tracker.observe(data.get("alerts", []), time.time_ns())

    def rdma_device(self, host, netdev):
        return self.netdevs.get((host, netdev)) if host and netdev else None


def write_atomically(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", required=True, help="the simulator's --root")
    p.add_argument("--hosts", required=True, type=int, help="simulated hosts (gpu-node-001 ...)")
    p.add_argument("--work", required=True, help="work directory (configs, TSDB, logs)")
    p.add_argument("--out", required=True, help="diagnoses JSON written on SIGTERM/SIGINT")
    p.add_argument("--ready_file", required=True,
                   help="written once Prometheus has scraped every node_exporter")
    p.add_argument("--node_exporter", default="/usr/bin/prometheus-node-exporter")
    p.add_argument("--prometheus", default="/usr/bin/prometheus")
    p.add_argument("--rules", default=os.path.join(HERE, "operator-rules.yml"))
    p.add_argument("--scrape_interval", type=parse_duration, default=10.0)
    p.add_argument("--evaluation_interval", type=parse_duration, default=10.0)
    p.add_argument("--textfile_interval", type=parse_duration, default=30.0,
                   help="period of the ethtool textfile job")
    p.add_argument("--poll_interval", type=parse_duration, default=1.0)
    p.add_argument("--ready_timeout", type=parse_duration, default=60.0)
    args = p.parse_args(argv)
    if args.hosts < 1:
        p.error("--hosts must be at least 1")
    for flag in ("node_exporter", "prometheus"):
        if not os.access(getattr(args, flag), os.X_OK):
            p.error(f"--{flag}={getattr(args, flag)} is not an executable "
                    "(scripts/install-deps installs Debian's prometheus and "
                    "prometheus-node-exporter)")
    if not os.path.isfile(args.rules):
        p.error(f"--rules={args.rules}: no such file")
    return args


def main(argv):
    args = parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    baseline = Baseline(args)

    def stop(signum, _frame):
        baseline.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tracker, status = None, 0
    try:
        try:
            tracker = baseline.run()
        except (RuntimeError, OSError) as e:
            log(f"error: {e}")
            status = 1
        if tracker is not None:
            diagnoses = tracker.diagnoses()
            write_atomically(args.out, json.dumps({"diagnoses": diagnoses}, indent=1) + "\n")
            fired = sum(1 for d in diagnoses if "fired_at_unix_nano" in d)
            log(f"wrote {len(diagnoses)} diagnoses ({fired} fired) to {args.out}")
    finally:
        baseline.stop_children()
    return 1 if status or baseline.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
