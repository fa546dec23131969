"""Workload checks of deploy/kubernetes (check_kubernetes.py): pods, containers, their flags,
volumes and security, and what the daemon, the host agents and the switch agent each need."""
import os
import re

from deploy_lib import build_program, flag_name, program_flags

WORKLOAD_KINDS = {"Deployment", "DaemonSet", "StatefulSet"}


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
