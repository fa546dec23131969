#!/usr/bin/python3
"""Checks deploy/kubernetes against itself, the alert rules and the built programs.

  check_kubernetes.py BUILD_DIR            check
  check_kubernetes.py --write-prometheusrule   regenerate prometheusrule.yaml from
                                           deploy/prometheus/railwatch-alerts.yml

What is checked (every problem is reported, not only the first):
- every manifest parses and has apiVersion, kind, metadata.name; kustomization.yaml lists
  exactly the manifests there are, and its ConfigMap generators' files exist;
- workloads: selectors match their pod labels; containers run a railwatch program whose
  --helpfull has every flag of their args; $(VAR) in args is a defined env var; volume mounts
  name existing volumes and every volume is mounted; ConfigMap volumes name a generated
  ConfigMap; file flags point inside a mount, and into a ConfigMap at one of its keys;
  resources, non-root, no privilege escalation, read-only root, all capabilities dropped;
- the host agent: hostNetwork with ClusterFirstWithHostNet DNS, the host's /sys read-only at
  its --sysfs_root; railwatchd: 1 replica, Recreate, probes on /metrics;
- Services select a workload's pods and their targetPorts are container ports of it;
  the ServiceMonitor selects the Service, names its port, honours labels, and its job label
  yields job="railwatch"; the PrometheusRule carries exactly the groups of the alerts file;
- the ConfigMaps' playbooks and topology load in a real railwatchd (started on free loopback
  ports with the shipped rules), and the gNMI targets name shipped profiles and credential
  files of the mounted Secret;
- where kubectl is installed, `kubectl kustomize` renders the directory and the rendered
  objects pass the same workload checks;
- deploy/kubernetes-overlays (kube_overlays.py): each overlay grants the host agent exactly
  the capabilities and privilege its sources need, with their flags and host mounts, and
  changes nothing else (its patches applied here; with kubectl, compared to kustomize's).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_lib import (DEPLOY_DIR, SOURCE_DIR, Problems, load_yaml,  # noqa: E402
                        load_yaml_documents, rel)
from kube_overlays import OVERLAYS_DIR, check_overlays  # noqa: E402
from kube_workloads import (WORKLOAD_KINDS, by_kind, check_specific_workloads,  # noqa: E402
                            check_workload, pod_spec, workload)

K8S_DIR = os.path.join(DEPLOY_DIR, "kubernetes")
ALERTS_FILE = os.path.join(DEPLOY_DIR, "prometheus", "railwatch-alerts.yml")
PROMETHEUS_RULE_FILE = os.path.join(K8S_DIR, "prometheusrule.yaml")
# Files a manifest directory may hold that are not resources of the kustomization.
NOT_RESOURCES = {"kustomization.yaml", "gnmi-credentials.example.yaml",
                 "tls-secrets.example.yaml"}

PROMETHEUS_RULE_HEADER = """\
# GENERATED from deploy/prometheus/railwatch-alerts.yml by
#   tests/deploy/check_kubernetes.py --write-prometheusrule
# Do not edit: edit the alerts file and regenerate (a test checks that the groups are equal).
# Your Prometheus resource must select this PrometheusRule (kube-prometheus-stack:
# ruleSelector, by default the label `release: <its release name>`).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: railwatch-self
  labels:
    app.kubernetes.io/name: railwatchd
    app.kubernetes.io/part-of: railwatch
spec:
"""


def prometheus_rule_text():
    """The PrometheusRule: the alerts file's groups (with their comments) under spec."""
    with open(ALERTS_FILE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index("groups:")
    body = "\n".join(("  " + line) if line.strip() else "" for line in lines[start:])
    return PROMETHEUS_RULE_HEADER + body + "\n"


# --- loading ----------------------------------------------------------------------------------

def load_manifests(p):
    """The kustomization's objects as Kubernetes would get them (namespace set, ConfigMaps
    generated from files), without kustomize: [(file, object)]."""
    kustomization = load_yaml(os.path.join(K8S_DIR, "kustomization.yaml"))
    resources = kustomization.get("resources", [])
    present = sorted(f for f in os.listdir(K8S_DIR)
                     if f.endswith(".yaml") and f not in NOT_RESOURCES)
    p.check(sorted(resources) == present, "deploy/kubernetes/kustomization.yaml",
            f"resources {sorted(resources)} differ from the manifests present {present}")
    objects = []
    for name in resources:
        path = os.path.join(K8S_DIR, name)
        if not p.check(os.path.exists(path), rel(path), "listed in kustomization.yaml, missing"):
            continue
        try:
            docs = load_yaml_documents(path)
        except yaml.YAMLError as e:
            p.add(rel(path), f"does not parse: {e}")
            continue
        for doc in docs:
            objects.append((rel(path), doc))
    for gen in kustomization.get("configMapGenerator", []):
        data = {}
        for f in gen.get("files", []):
            path = os.path.join(K8S_DIR, f)
            if p.check(os.path.exists(path), "deploy/kubernetes/kustomization.yaml",
                       f"configMapGenerator {gen['name']}: {f} does not exist"):
                with open(path, encoding="utf-8") as fh:
                    data[os.path.basename(f)] = fh.read()
        objects.append(("deploy/kubernetes/kustomization.yaml",
                        {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": gen["name"]}, "data": data}))
    namespace = kustomization.get("namespace")
    for _, obj in objects:
        if isinstance(obj, dict) and obj.get("kind") != "Namespace":
            obj.setdefault("metadata", {}).setdefault("namespace", namespace)
    return objects


def kubectl_rendered(p, overlay=None, name=None):
    """`kubectl kustomize` of the directory (or of `overlay`, a directory of
    deploy/kubernetes-overlays), or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("kubectl not installed: the kustomize rendering is not checked")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        # Render a copy so that a stale prometheusrule.yaml cannot matter and nothing is written.
        copy = os.path.join(tmp, "kubernetes")
        shutil.copytree(K8S_DIR, copy)
        if overlay is not None:
            shutil.copytree(OVERLAYS_DIR, os.path.join(tmp, "kubernetes-overlays"))
            copy = os.path.join(tmp, "kubernetes-overlays", name)
        result = subprocess.run([kubectl, "kustomize", copy], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    if not p.check(result.returncode == 0, "deploy/kubernetes",
                   f"kubectl kustomize failed: {result.stderr.strip()}"):
        return None
    return [("kubectl kustomize", d) for d in yaml.safe_load_all(result.stdout) if d]


# --- checks -----------------------------------------------------------------------------------

def check_basics(p, objects):
    for where, obj in objects:
        if not p.check(isinstance(obj, dict), where, "a document is not a mapping"):
            continue
        for key in ("apiVersion", "kind", "metadata"):
            p.check(key in obj, where, f"{obj.get('kind', '?')} has no {key}")
        p.check(bool(obj.get("metadata", {}).get("name")), where,
                f"{obj.get('kind')} has no metadata.name")
        if obj.get("kind") != "Namespace":
            p.check(obj.get("metadata", {}).get("namespace") == "railwatch", where,
                    f"{obj.get('kind')} {obj.get('metadata', {}).get('name')} is not in "
                    "namespace railwatch")


def check_services(p, objects):
    workloads = [o for _, o in objects if o.get("kind") in WORKLOAD_KINDS]
    for where, svc in by_kind(objects, "Service"):
        selector = svc["spec"].get("selector", {})
        matched = [w for w in workloads
                   if all(w["spec"]["template"]["metadata"]["labels"].get(k) == v
                          for k, v in selector.items())]
        name = svc["metadata"]["name"]
        if not p.check(selector and len(matched) == 1, where,
                       f"Service {name}: selector {selector} matches {len(matched)} workloads"):
            continue
        containers = pod_spec(matched[0])["containers"]
        ports = [cp for c in containers for cp in c.get("ports", [])]
        for sp in svc["spec"]["ports"]:
            target = sp.get("targetPort", sp["port"])
            ok = any(cp.get("name") == target if isinstance(target, str)
                     else cp["containerPort"] == target for cp in ports)
            p.check(ok, where, f"Service {name} port {sp.get('name')}: targetPort {target} is "
                    f"no container port of {matched[0]['metadata']['name']}")
    names = {s["metadata"]["name"]: s for _, s in by_kind(objects, "Service")}
    daemon = names.get("railwatchd")
    if p.check(daemon is not None, "deploy/kubernetes", "no railwatchd Service"):
        by_port = {sp["name"]: sp["port"] for sp in daemon["spec"]["ports"]}
        p.check(by_port == {"grpc": 9740, "metrics": 9741}, "railwatchd Service",
                f"ports must be grpc 9740 and metrics 9741, are {by_port}")


def the_one(p, objects, kind):
    """(file, object) of the only object of a kind, or (None, None) after a problem."""
    found = by_kind(objects, kind)
    if not p.check(len(found) == 1, "deploy/kubernetes",
                   f"expected one {kind}, found {len(found)}"):
        return None, None
    return found[0]


def check_service_monitor(p, objects):
    where, sm = the_one(p, objects, "ServiceMonitor")
    if sm is None:
        return
    spec = sm["spec"]
    selector = spec["selector"]["matchLabels"]
    services = [s for _, s in by_kind(objects, "Service")
                if all(s["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]
    if not p.check(len(services) == 1, where, f"selects {len(services)} Services, not 1"):
        return
    svc = services[0]
    port_names = {sp["name"] for sp in svc["spec"]["ports"]}
    for ep in spec["endpoints"]:
        p.check(ep.get("port") in port_names, where, f"endpoint port {ep.get('port')} is not "
                f"a port of Service {svc['metadata']['name']} ({sorted(port_names)})")
        p.check(ep.get("honorLabels") is True, where,
                "honorLabels must be true (the daemon re-exports agents' labels)")
        p.check(ep.get("path", "/metrics") == "/metrics", where, "path must be /metrics")
    job = svc["metadata"].get("labels", {}).get(spec.get("jobLabel", ""),
                                                 svc["metadata"]["name"])
    p.check(job == "railwatch", where,
            f"the scrape job would be {job!r}; the self-alerts expect job=\"railwatch\"")


def check_prometheus_rule(p, objects):
    where, rule = the_one(p, objects, "PrometheusRule")
    if rule is None:
        return
    alerts = load_yaml(ALERTS_FILE)
    p.check(rule["spec"].get("groups") == alerts["groups"], where,
            "groups differ from deploy/prometheus/railwatch-alerts.yml; regenerate with "
            "tests/deploy/check_kubernetes.py --write-prometheusrule")


def check_config_loads(p, objects, build_dir):
    """The playbooks and topology ConfigMaps load in a real railwatchd."""
    rules = configmap_data(objects, "railwatch-playbooks")
    topology = configmap_data(objects, "railwatch-topology")
    if not (p.check(rules is not None, "deploy/kubernetes", "no railwatch-playbooks ConfigMap")
            and p.check(topology is not None and "topology.yaml" in topology,
                        "deploy/kubernetes", "no railwatch-topology ConfigMap with topology.yaml")):
        return
    with tempfile.TemporaryDirectory() as tmp:
        rules_dir = os.path.join(tmp, "rules.d")
        os.mkdir(rules_dir)
        for key, text in rules.items():
            with open(os.path.join(rules_dir, key), "w", encoding="utf-8") as f:
                f.write(text)
        topology_file = os.path.join(tmp, "topology.yaml")
        with open(topology_file, "w", encoding="utf-8") as f:
            f.write(topology["topology.yaml"])
        ready = os.path.join(tmp, "ready.json")
        daemon = subprocess.Popen(
            [os.path.join(build_dir, "daemon", "railwatchd"), "--listen=127.0.0.1:0",
             "--metrics_listen=127.0.0.1:0", f"--rules={SOURCE_DIR}/rules,{rules_dir}",
             f"--topology={topology_file}", f"--ready_file={ready}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            # Wait for the daemon's verdict: ready (it loaded everything) or exited (it did not).
            deadline = time.monotonic() + 60
            while daemon.poll() is None and not os.path.exists(ready) and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            loaded = os.path.exists(ready) and daemon.poll() is None
        finally:
            daemon.terminate()
            output = daemon.communicate(timeout=30)[0]
        p.check(loaded, "deploy/kubernetes/config",
                f"railwatchd does not start with the ConfigMaps' playbooks and topology:\n{output}")
        if loaded:
            print(f"railwatchd loads the ConfigMaps: {json.load(open(ready))}")


def configmap_data(objects, name):
    for _, cm in by_kind(objects, "ConfigMap"):
        if cm["metadata"]["name"] == name:
            return cm.get("data", {})
    return None


def check_gnmi_targets(p, objects):
    targets = (configmap_data(objects, "railwatch-gnmi-targets") or {}).get("gnmi-targets.yaml")
    if not p.check(targets is not None, "deploy/kubernetes",
                   "no railwatch-gnmi-targets ConfigMap with gnmi-targets.yaml"):
        return
    where = "deploy/kubernetes/config/gnmi-targets.yaml"
    doc = yaml.safe_load(targets)
    profiles = {f[:-5] for f in os.listdir(os.path.join(SOURCE_DIR, "profiles", "gnmi"))
                if f.endswith(".yaml")}
    defaults = doc.get("defaults", {})
    secret_keys = set(load_yaml_documents(
        os.path.join(K8S_DIR, "gnmi-credentials.example.yaml"))[0]["stringData"])
    names = set()
    for t in doc.get("targets", []):
        p.check(t.get("name") and t["name"] not in names, where, f"target {t} needs a unique name")
        names.add(t.get("name"))
        p.check(":" in t.get("address", ""), where, f"target {t.get('name')}: address needs a port")
        profile = t.get("profile", defaults.get("profile"))
        p.check(profile in profiles, where, f"target {t.get('name')}: no profile {profile}")
    files = [defaults.get("password_file")] + list(defaults.get("tls", {}).values())
    for f in filter(None, files):
        if f.startswith("/etc/railwatch/secrets/"):
            p.check(os.path.basename(f) in secret_keys, where,
                    f"{f}: the Secret example has no key {os.path.basename(f)}")


def check_objects(p, objects, build_dir):
    """Every check of the objects themselves: on the files, and on kustomize's rendering."""
    check_basics(p, objects)
    for where, obj in objects:
        if obj.get("kind") in WORKLOAD_KINDS:
            check_workload(p, where, obj, objects, build_dir)
    check_specific_workloads(p, objects)
    check_services(p, objects)
    check_service_monitor(p, objects)
    check_prometheus_rule(p, objects)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", nargs="?")
    parser.add_argument("--write-prometheusrule", action="store_true")
    args = parser.parse_args()
    if args.write_prometheusrule:
        with open(PROMETHEUS_RULE_FILE, "w", encoding="utf-8") as f:
            f.write(prometheus_rule_text())
        print(f"wrote {rel(PROMETHEUS_RULE_FILE)}")
        return 0
    if not args.build_dir:
        parser.error("BUILD_DIR is required")
    args.build_dir = os.path.abspath(args.build_dir)
    p = Problems("kubernetes")
    objects = load_manifests(p)
    check_objects(p, objects, args.build_dir)
    check_gnmi_targets(p, objects)
    check_config_loads(p, objects, args.build_dir)
    overlays = check_overlays(p, objects, args.build_dir)
    for name, overlay in overlays.items():
        kubectl = kubectl_rendered(p, os.path.join(OVERLAYS_DIR, name), name)
        if kubectl is not None:
            _, ours = workload(overlay, "railwatch-agent")
            _, theirs = workload(kubectl, "railwatch-agent")
            # The same container, but for the image kustomize's `images` renames.
            mine = dict(pod_spec(ours)["containers"][0], image=None)
            kube = dict(pod_spec(theirs)["containers"][0], image=None) if theirs else None
            p.check(mine == kube, f"deploy/kubernetes-overlays/{name}",
                    f"kubectl kustomize renders the agent container otherwise than the check: "
                    f"{kube} != {mine}")
    rendered = kubectl_rendered(p)
    if rendered is not None:
        check_objects(p, rendered, args.build_dir)
        images = {c["image"] for _, o in rendered if o.get("kind") in WORKLOAD_KINDS
                  for c in pod_spec(o).get("initContainers", []) + pod_spec(o)["containers"]}
        p.check(images == {"registry.example/railwatch:0.1.0"}, "kubectl kustomize",
                f"images after kustomize: {sorted(images)}")
    return p.finish()


if __name__ == "__main__":
    sys.exit(main())
