#pragma once

// Jobs from Kubernetes, as one node's kubelet sees them (issue 23 items 4 and 5, docs/JOBS.md
// "Kubernetes"): which pods on this host hold GPUs and RDMA devices, and the job each belongs
// to. The pods come from the kubelet's pod-resources API (jobs/kubelet_client.h, gRPC over a
// Unix socket) or from the texts people paste: the API's answer rendered as JSON, the kubelet's
// device-manager checkpoint and Multus' network-status annotation (readers below).
//
// Nothing here asks the API server: a pod's labels (training.kubeflow.org/job-name,
// jobset.sigs.k8s.io/jobset-name, batch.kubernetes.io/job-name) are not known, so the job is
// recognised from the pod's name (KubeJobName).
//
// No network and no gRPC: the readers and the rules are in railwatch_jobs, so that tests, the
// CLI and a fuzzer link them alone.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace railwatch::jobs {

// One device-plugin resource's devices assigned to a container (ContainerDevices), or one DRA
// device (ClaimResource: resource_name is the driver's name, the device id pool/device).
struct KubeDevice {
  std::string resource_name;            // "nvidia.com/gpu", "rdma/hca_shared_devices_a"
  std::vector<std::string> device_ids;  // GPU UUIDs, MIG ids, PCI addresses, IOMMU groups...
  std::vector<int64_t> numa_nodes;      // where the API says; NUMA node 0 may come as {}
  bool dynamic = false;                 // from dynamic_resources (DRA)
};

struct KubeContainer {
  std::string name;
  std::vector<KubeDevice> devices;
};

struct KubePod {
  std::string ns;    // namespace
  std::string name;  // empty where the source has none (a checkpoint names pods by UID)
  std::string uid;   // the checkpoint's PodUID; the pod-resources API gives none
  std::vector<KubeContainer> containers;
};

// What a device-plugin (or DRA driver) resource is to railwatch.
enum class KubeResourceKind { kOther, kGpu, kRdma };

// By its resource name, in this order (case-insensitive; the resource is the part after '/'):
//  1. GPUs and accelerators: a resource `gpu`, `gpu.*`, `gpu-*`, `mig-*` (nvidia.com/mig-1g.10gb),
//     `pgpu`, `vgpu`; the vendors gpu.intel.com, habana.ai (gaudi), aws.amazon.com (neuron*),
//     google.com (tpu); a DRA driver `gpu.<vendor>` (gpu.nvidia.com, gpu.amd.com).
//  2. RDMA devices: the vendor `rdma` (rdma/hca_shared_devices_a, rdma/rdma_shared_device_a),
//     or a resource naming rdma, hca, ib_pf, ib_vf, sriov, roce, mlnx, mlx5, hostdev,
//     netdevice, infiniband, or ending in _vf or _pf (nvidia.com/ib_pf, openshift.io/mlx5_vf).
//  3. Any other nvidia.com resource is a GPU: KubeVirt's plugin names passthrough GPUs by model
//     (nvidia.com/GA100_A100_PCIE_40GB) and vGPUs by type (nvidia.com/GRID_T4-16Q).
//  4. Otherwise, a resource whose device ids are all PCI addresses (SR-IOV VFs under a name a
//     site chose) is RDMA; anything else (CPUs, hugepages, FPGAs, ...) is kOther.
KubeResourceKind ClassifyKubeResource(std::string_view resource_name,
                                      const std::vector<std::string>& device_ids = {});

// "0000:08:00.0" or "08:00.0" (domain optional, hex).
bool LooksLikePciAddress(std::string_view id);

// The job a pod belongs to, from its name alone (the first rule that matches, once):
//   virt-launcher-<vm>[-<hash5>]                           KubeVirt: the virtual machine <vm>
//   <job>-(master|worker|chief|ps|evaluator|launcher)-<n>   Kubeflow PyTorchJob, TFJob, MPIJob,
//                                                          XGBoostJob, PaddleJob replicas
//   <job>-launcher, <job>-launcher-<hash5>                 MPIJob launcher (pod, or its Job's)
//   <name>-<n>-<hash5>                                     Indexed Job pod (a JobSet's: the
//                                                          JobSet's Job <jobset>-<rjob>-<j>)
//   <name>-<template hash>-<hash5>                         ReplicaSet / Deployment pod
//   <name>-<hash5>                                         Job pod (NonIndexed)
//   <name>-<n>, <name>-<n>-<m>                             StatefulSet ordinal; LeaderWorkerSet
//                                                          leader <lws>-<g>, worker <lws>-<g>-<w>
//   anything else                                          the pod's own name (a bare pod)
// <hash5> is 5 characters of the alphabet Kubernetes' generated names use
// (bcdfghjklmnpqrstvwxz2456789), a template hash 6 to 10 of them. A stripped name that would be
// empty is not stripped. Returned qualified by the namespace: "ml/llama-pretrain".
std::string KubeJobName(std::string_view ns, std::string_view pod_name);

// One job's share of a host: its pods there, their GPUs and RDMA devices.
struct KubeHostJob {
  std::string name;               // "ns/job"
  std::vector<std::string> pods;  // pod names (or UIDs), sorted
  uint32_t gpus = 0;              // distinct GPU device ids of its pods
  uint32_t rdma = 0;              // distinct RDMA device ids of its pods

  bool operator==(const KubeHostJob& o) const {
    return name == o.name && pods == o.pods && gpus == o.gpus && rdma == o.rdma;
  }
};

// The jobs of one host's pods, by name. A pod with neither a GPU nor an RDMA device is no job.
// Devices are counted by distinct id per pod (an init container's devices are reused by the
// app containers); a time-sliced GPU replica "GPU-<uuid>::<n>" counts as its GPU.
std::vector<KubeHostJob> HostJobsFromPods(const std::vector<KubePod>& pods);

// The `jobs` attribute of a `kubernetes.pods` event: one entry per job, ';'-separated, each
//   <ns>/<job>:pods=<n>:gpus=<n>:rdma=<n>:names=<pod>,<pod>,...
// ("ml/llama:pods=2:gpus=16:rdma=8:names=llama-worker-0,llama-worker-1"). Namespaces, pod
// names and so the jobs' names are DNS names (lower-case letters, digits, '-', '.'): the
// separators never occur in them. "" is no job.
std::string EncodeHostJobs(const std::vector<KubeHostJob>& jobs);
// The reverse; an entry that does not parse (no '/', a count that is no number) is skipped and
// counted in *bad when given. Unknown keys are ignored (a newer agent).
std::vector<KubeHostJob> DecodeHostJobs(std::string_view text, int* bad = nullptr);

// "train-worker-0", "train-worker-1", "train-worker-2", "launcher" -> "launcher,
// train-worker-0..2": runs of consecutive numbers after a common prefix are folded; at most
// `max_items` items, then "+N more".
std::string CompactPodNames(std::vector<std::string> names, size_t max_items = 6);

// What a reader could not read, with file:line:column where the text has one.
struct KubeProblem {
  std::string where;
  std::string message;
  std::string ToString() const { return where + ": " + message; }
};

struct KubePodsResult {
  std::vector<KubePod> pods;
  std::vector<KubeProblem> problems;
  // The checkpoint only: every device the kubelet's plugins registered, by resource.
  std::map<std::string, std::vector<std::string>> registered_devices;
};

// The pod-resources API's answer as JSON: a List response ({"podResources": [...]}, protojson;
// or "pod_resources" as protoc's names), a Get response ({"podResources": {...}}), one
// PodResources object, an array of them, or a fragment of such a text that is an object's
// inside ("pod": {...}: read as if wrapped in { }, which is a problem to report). Field names
// in either form (resourceName / resource_name, deviceIds / device_ids); NUMA nodes from
// topology.nodes[].ID (protojson omits a zero ID: {} is node 0) or from a tool's numaNodes [0];
// "devices": null is no devices.
KubePodsResult ReadPodResourcesJson(std::string_view text, const std::string& file);

// The kubelet's device-manager checkpoint (/var/lib/kubelet/device-plugins/
// kubelet_internal_checkpoint): {"Data": {"PodDeviceEntries": [{PodUID, ContainerName,
// ResourceName, DeviceIDs, AllocResp}], "RegisteredDevices": {...}}, "Checksum": n}. DeviceIDs
// is a list before Kubernetes 1.20 and a map NUMA node -> list from 1.20. Lines before the
// document (a shell prompt) are skipped; a truncated document gives its complete entries and a
// problem where it ends. Pods come by UID only (the checkpoint has no names).
KubePodsResult ReadKubeletCheckpoint(std::string_view text, const std::string& file);

// One interface of Multus' k8s.v1.cni.cncf.io/network-status annotation.
struct KubeNetworkInterface {
  std::string network;    // "default/sriov-net1", "k8s-pod-network"
  std::string interface;  // "net1"; "" for the cluster network when not given
  std::vector<std::string> ips;
  std::string mac;
  bool is_default = false;
  std::string device_type;     // device-info.type: "pci", "vdpa", ...
  std::string pci_address;     // device-info.pci.pci-address
  std::string rdma_device;     // device-info.pci.rdma-device ("mlx5_4")
  std::string pf_pci_address;  // device-info.pci.pf-pci-address
};

struct KubeNetworkStatusResult {
  std::vector<KubeNetworkInterface> interfaces;
  std::vector<KubeProblem> problems;
};

// The annotation's value (a JSON array), alone or after its key ("k8s.v1.cni.cncf.io/
// network-status:" on the line before, or "key: |" as kubectl's YAML prints it, or
// "key": "<escaped JSON>" as its JSON prints it).
KubeNetworkStatusResult ReadNetworkStatus(std::string_view text, const std::string& file);

}  // namespace railwatch::jobs
