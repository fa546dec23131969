"""deploy/kubernetes-overlays: each overlay's patches applied to the base objects (RFC 6902
add/replace, the only operations they use, so that no kustomize is needed), and what each must
give the host agent: exactly the privilege its sources need, and the mounts and flags that
use it (docs/OPERATIONS.md, "Kubernetes")."""
import copy
import os

import yaml

from deploy_lib import DEPLOY_DIR, build_program, flag_name, load_yaml, program_flags
from kube_workloads import container_args, mount_for, pod_spec, workload

OVERLAYS_DIR = os.path.join(DEPLOY_DIR, "kubernetes-overlays")
# What each overlay must add to the agent container: capabilities, privileged, flags (name:
# value) and, for each flag naming a path, the host path its mount must come from.
EXPECTED = {
    "node-health": {
        "capabilities": ["NET_ADMIN"], "privileged": False,
        "flags": {"optics": "on", "kubelet": "/var/lib/kubelet/pod-resources/kubelet.sock"},
        "host_paths": {"kubelet": ("/var/lib/kubelet/pod-resources", "Directory", False)},
    },
    "kernel-messages": {
        "capabilities": ["NET_ADMIN", "SYSLOG"], "privileged": True,
        "flags": {"optics": "on", "kubelet": "/var/lib/kubelet/pod-resources/kubelet.sock",
                  "kmsg": "/dev/kmsg"},
        "host_paths": {"kubelet": ("/var/lib/kubelet/pod-resources", "Directory", False),
                       "kmsg": ("/dev/kmsg", "CharDevice", True)},
    },
}


def _apply(doc, op):
    """One RFC 6902 add or replace on `doc` (in place); an error string, or None."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    node = doc
    for key in parts[:-1]:
        try:
            node = node[int(key)] if isinstance(node, list) else node[key]
        except (KeyError, IndexError, ValueError):
            return f"path {op['path']}: {key} does not exist"
    last = parts[-1]
    if op["op"] == "add":
        if isinstance(node, list):
            if last == "-":
                node.append(copy.deepcopy(op["value"]))
            else:
                node.insert(int(last), copy.deepcopy(op["value"]))
        else:
            node[last] = copy.deepcopy(op["value"])
    elif op["op"] == "replace":
        if isinstance(node, list):
            node[int(last)] = copy.deepcopy(op["value"])
        elif last not in node:
            return f"replace {op['path']}: nothing to replace"
        else:
            node[last] = copy.deepcopy(op["value"])
    else:
        return f"operation {op['op']} is not add or replace"
    return None


def overlay_objects(p, name, base):
    """The base objects with overlay `name` (and the overlays it builds on) applied."""
    where = f"deploy/kubernetes-overlays/{name}/kustomization.yaml"
    k = load_yaml(os.path.join(OVERLAYS_DIR, name, "kustomization.yaml"))
    resources = k.get("resources", [])
    if not p.check(len(resources) == 1, where, f"one resource (its base), not {resources}"):
        return None
    parent = os.path.basename(os.path.normpath(os.path.join(OVERLAYS_DIR, name, resources[0])))
    if resources[0] == "../../kubernetes":
        objects = copy.deepcopy(base)
    elif p.check(parent in EXPECTED, where, f"builds on {resources[0]}, not an overlay here"):
        objects = overlay_objects(p, parent, base)
    else:
        return None
    if objects is None:
        return None
    for patch in k.get("patches", []):
        target = patch.get("target", {})
        for _, obj in objects:
            if obj.get("kind") == target.get("kind") and \
               obj["metadata"]["name"] == target.get("name"):
                for op in yaml.safe_load(patch["patch"]):
                    error = _apply(obj, op)
                    p.check(error is None, where, f"patch of {target.get('name')}: {error}")
    return [(where, obj) for _, obj in objects]


def check_overlays(p, base, build_dir):
    present = sorted(d for d in os.listdir(OVERLAYS_DIR)
                     if os.path.isdir(os.path.join(OVERLAYS_DIR, d)))
    p.check(present == sorted(EXPECTED), "deploy/kubernetes-overlays",
            f"overlays {present}, expected {sorted(EXPECTED)}")
    rendered = {}
    for name, want in EXPECTED.items():
        objects = overlay_objects(p, name, base)
        if objects is None:
            continue
        rendered[name] = objects
        where, agents = workload(objects, "railwatch-agent")
        if not p.check(agents is not None, name, "no railwatch-agent DaemonSet"):
            continue
        pod = pod_spec(agents)
        c = pod["containers"][0]
        sc = c.get("securityContext", {})
        caps = sc.get("capabilities", {})
        p.check(caps.get("drop") == ["ALL"] and sorted(caps.get("add", [])) ==
                sorted(want["capabilities"]), where,
                f"{name}: capabilities {caps}, want all dropped but {want['capabilities']}")
        p.check(bool(sc.get("privileged", False)) == want["privileged"], where,
                f"{name}: privileged must be {want['privileged']}")
        # Kubernetes refuses privileged with allowPrivilegeEscalation false.
        p.check(sc.get("allowPrivilegeEscalation") is want["privileged"], where,
                f"{name}: allowPrivilegeEscalation must be {want['privileged']}")
        p.check(sc.get("runAsUser") == 0 and sc.get("runAsNonRoot") is False, where,
                f"{name}: added capabilities reach only a root container (runAsUser 0)")
        p.check(sc.get("readOnlyRootFilesystem") is True, where,
                f"{name}: readOnlyRootFilesystem must stay true")
        args = container_args(agents, c["name"])
        for flag, value in want["flags"].items():
            p.check(args.get(flag) == value, where, f"{name}: --{flag}={value} missing")
        binary = build_program(build_dir, c["command"][0])
        if p.check(binary is not None, where, f"{name}: {c['command'][0]} is not built"):
            flags = program_flags(binary)
            for arg in c.get("args", []):
                p.check(flag_name(arg) in flags, where, f"{name}: no flag {arg}")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for flag, (host_path, kind, read_only) in want["host_paths"].items():
            mount, volume = mount_for(c, volumes, args.get(flag, ""))
            ok = (mount is not None and volume is not None and
                  volume.get("hostPath", {}).get("path") == host_path and
                  volume["hostPath"].get("type") == kind and
                  bool(mount.get("readOnly", False)) == read_only)
            p.check(ok, where, f"{name}: --{flag} must be in a mount of the host's {host_path} "
                    f"({kind}, {'read-only' if read_only else 'writable'})")
        # Nothing else changes: every other object is the base's.
        for (_, b), (_, o) in zip(base, objects):
            if o is not agents:
                p.check(b == o, where, f"{name}: changes {o.get('kind')} "
                        f"{o.get('metadata', {}).get('name')}, not only the host agent")
    return rendered
