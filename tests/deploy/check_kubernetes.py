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
  objects pass the same workload checks.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_lib import (DEPLOY_DIR, SOURCE_DIR, Problems, build_program, flag_name,  # noqa: E402
                        load_yaml, load_yaml_documents, program_flags, rel)

K8S_DIR = os.path.join(DEPLOY_DIR, "kubernetes")
ALERTS_FILE = os.path.join(DEPLOY_DIR, "prometheus", "railwatch-alerts.yml")
PROMETHEUS_RULE_FILE = os.path.join(K8S_DIR, "prometheusrule.yaml")
WORKLOAD_KINDS = {"Deployment", "DaemonSet", "StatefulSet"}
# Files a manifest directory may hold that are not resources of the kustomization.
NOT_RESOURCES = {"kustomization.yaml", "gnmi-credentials.example.yaml"}

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


def kubectl_rendered(p):
    """`kubectl kustomize` of the directory, or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("kubectl not installed: the kustomize rendering is not checked")
        return None
    with tempfile.TemporaryDirectory() as tmp:
        # Render a copy so that a stale prometheusrule.yaml cannot matter and nothing is written.
        copy = os.path.join(tmp, "kubernetes")
        shutil.copytree(K8S_DIR, copy)
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


def by_kind(objects, kind):
    return [(w, o) for w, o in objects if isinstance(o, dict) and o.get("kind") == kind]


def pod_spec(obj):
    return obj["spec"]["template"]["spec"]


def configmap_keys(objects, name):
    """Keys of the ConfigMap called `name` (or generated from it: name-<hash>), or None."""
    for _, cm in by_kind(objects, "ConfigMap"):
        cm_name = cm["metadata"]["name"]
        if cm_name == name or cm_name.rsplit("-", 1)[0] == name:
            return set(cm.get("data", {}))
    return None


def check_container_security(p, where, container, pod_security):
    sc = container.get("securityContext", {})
    name = container["name"]
    p.check(sc.get("allowPrivilegeEscalation") is False, where,
            f"container {name}: allowPrivilegeEscalation must be false")
    p.check(sc.get("readOnlyRootFilesystem") is True, where,
            f"container {name}: readOnlyRootFilesystem must be true")
    p.check(sc.get("capabilities", {}).get("drop") == ["ALL"], where,
            f"container {name}: must drop ALL capabilities")
    p.check(not sc.get("privileged", False), where, f"container {name}: privileged")
    resources = container.get("resources", {})
    p.check("requests" in resources and "memory" in resources.get("limits", {}), where,
            f"container {name}: needs resource requests and a memory limit")
    added = sc.get("capabilities", {}).get("add", [])
    run_as_root = sc.get("runAsUser", pod_security.get("runAsUser")) == 0
    if run_as_root:
        # Only the one-shot chown of the host agent's state directory runs as root.
        p.check(added == ["CHOWN"] and container.get("command", [""])[0] == "/bin/chown",
                where, f"container {name}: runs as root for something other than a chown")
    else:
        p.check(not added, where, f"container {name}: adds capabilities {added}")
        non_root = sc.get("runAsNonRoot", pod_security.get("runAsNonRoot"))
        p.check(non_root is True, where, f"container {name}: runAsNonRoot must be true")
    seccomp = sc.get("seccompProfile", pod_security.get("seccompProfile", {}))
    p.check(seccomp.get("type") == "RuntimeDefault", where,
            f"container {name}: seccompProfile RuntimeDefault")


def mount_for(container, volumes, path):
    """(mount, volume) whose mountPath contains `path`, deepest first, or (None, None)."""
    best = (None, None)
    for m in container.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if best[0] is None or len(mp) > len(best[0]["mountPath"]):
                best = (m, volumes.get(m["name"]))
    return best


def check_file_flag(p, where, objects, container, volumes, flag, value):
    """A flag naming files under /etc/railwatch or /host must point inside a mount; inside a
    ConfigMap mount, at one of the ConfigMap's keys."""
    for path in value.split(","):
        if not (path.startswith("/etc/railwatch") or path.startswith("/host")):
            continue
        mount, volume = mount_for(container, volumes, path)
        if not p.check(mount is not None, where,
                       f"container {container['name']}: --{flag} path {path} is in no mount"):
            continue
        inside = path[len(mount["mountPath"].rstrip("/")) + 1:]
        if volume and "configMap" in volume and inside:
            keys = configmap_keys(objects, volume["configMap"]["name"]) or set()
            p.check(inside.split("/")[0] in keys, where,
                    f"container {container['name']}: --{flag}={path}: ConfigMap "
                    f"{volume['configMap']['name']} has no key {inside} (keys: {sorted(keys)})")


def check_workload(p, where, obj, objects, build_dir):
    name = obj["metadata"]["name"]
    spec = obj["spec"]
    template_labels = spec["template"]["metadata"].get("labels", {})
    selector = spec["selector"].get("matchLabels", {})
    p.check(selector and all(template_labels.get(k) == v for k, v in selector.items()), where,
            f"{name}: selector {selector} does not match pod labels {template_labels}")
    pod = pod_spec(obj)
    p.check(pod.get("automountServiceAccountToken") is False, where,
            f"{name}: the pods do not use the Kubernetes API: automountServiceAccountToken false")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounted = set()
    pod_security = pod.get("securityContext", {})
    for container in pod.get("initContainers", []) + pod["containers"]:
        cname = container["name"]
        check_container_security(p, where, container, pod_security)
        for m in container.get("volumeMounts", []):
            mounted.add(m["name"])
            p.check(m["name"] in volumes, where,
                    f"{name}/{cname}: mounts volume {m['name']}, which the pod does not define")
        command = container.get("command", [])
        if not p.check(bool(command), where, f"{name}/{cname}: no command"):
            continue
        if command[0] == "/bin/chown":
            continue
        binary = build_program(build_dir, command[0])
        if not p.check(binary is not None and os.access(binary, os.X_OK), where,
                       f"{name}/{cname}: runs {command[0]}, not a built railwatch program"):
            continue
        flags = program_flags(binary)
        env = {e["name"] for e in container.get("env", [])}
        for arg in command[1:] + container.get("args", []):
            flag = flag_name(arg)
            if not p.check(flag is not None, where,
                           f"{name}/{cname}: argument {arg!r} is not a flag"):
                continue
            p.check(flag in flags, where,
                    f"{name}/{cname}: {os.path.basename(command[0])} has no flag --{flag}")
            for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
                p.check(var in env, where, f"{name}/{cname}: {arg} uses $({var}), not in env")
            if "=" in arg:
                check_file_flag(p, where, objects, container, volumes, flag,
                                arg.split("=", 1)[1])
    for vname, volume in volumes.items():
        p.check(vname in mounted, where, f"{name}: volume {vname} is mounted by no container")
        if "configMap" in volume:
            cm = volume["configMap"]["name"]
            p.check(configmap_keys(objects, cm) is not None, where,
                    f"{name}: volume {vname} names ConfigMap {cm}, which is not generated")


def container_args(obj, container_name):
    for c in pod_spec(obj)["containers"]:
        if c["name"] == container_name:
            return {flag_name(a): a.split("=", 1)[1] if "=" in a else ""
                    for a in c.get("command", [])[1:] + c.get("args", [])}
    return {}


def workload(objects, name):
    for where, obj in objects:
        if obj.get("kind") in WORKLOAD_KINDS and obj["metadata"]["name"] == name:
            return where, obj
    return None, None


def check_specific_workloads(p, objects):
    where, daemon = workload(objects, "railwatchd")
    if p.check(daemon is not None, "deploy/kubernetes", "no railwatchd Deployment"):
        p.check(daemon["kind"] == "Deployment" and daemon["spec"].get("replicas") == 1, where,
                "railwatchd must be a Deployment of 1 replica (its state is in memory)")
        p.check(daemon["spec"].get("strategy", {}).get("type") == "Recreate", where,
                "railwatchd: Recreate, or a rollout runs two daemons that split the agents")
        c = pod_spec(daemon)["containers"][0]
        for probe in ("readinessProbe", "livenessProbe"):
            http = c.get(probe, {}).get("httpGet", {})
            p.check(http.get("path") == "/metrics" and http.get("port") == "metrics", where,
                    f"railwatchd: {probe} must GET /metrics on the metrics port")
        args = container_args(daemon, c["name"])
        p.check(args.get("listen", "").startswith("0.0.0.0:") and
                args.get("metrics_listen", "").startswith("0.0.0.0:"), where,
                "railwatchd must listen on all addresses in a pod (--listen, --metrics_listen)")
    where, agents = workload(objects, "railwatch-agent")
    if p.check(agents is not None, "deploy/kubernetes", "no railwatch-agent DaemonSet"):
        pod = pod_spec(agents)
        p.check(agents["kind"] == "DaemonSet", where, "the host agent must be a DaemonSet")
        p.check(pod.get("hostNetwork") is True, where,
                "the host agent needs hostNetwork (ethtool ioctls, netlink link events)")
        p.check(pod.get("dnsPolicy") == "ClusterFirstWithHostNet", where,
                "hostNetwork pods need dnsPolicy ClusterFirstWithHostNet to resolve Services")
        args = container_args(agents, "agent")
        p.check(args.get("role") == "host", where, "host agent: --role=host")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        container = pod["containers"][0]
        mount, volume = mount_for(container, volumes, args.get("sysfs_root", "/sys"))
        p.check(mount is not None and mount.get("readOnly") is True and volume is not None and
                volume.get("hostPath", {}).get("path") == "/sys" and
                mount["mountPath"] == args.get("sysfs_root"), where,
                "host agent: the host's /sys must be mounted read-only at --sysfs_root")
    where, switch = workload(objects, "railwatch-switch-agent")
    if p.check(switch is not None, "deploy/kubernetes", "no railwatch-switch-agent Deployment"):
        p.check(switch["spec"].get("replicas") == 1, where,
                "switch agent: 1 replica (two would stream every switch twice)")
        args = container_args(switch, "switch-agent")
        p.check(args.get("role") == "switch" and bool(args.get("agent_id")), where,
                "switch agent: --role=switch and a fixed --agent_id (pod names change)")
        secrets = [v for v in pod_spec(switch).get("volumes", []) if "secret" in v]
        p.check(bool(secrets), where, "switch agent: the gNMI credentials come from a Secret")


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
