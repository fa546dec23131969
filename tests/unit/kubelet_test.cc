// Jobs from Kubernetes (jobs/kubelet.h): the readers on the real kubelet texts of
// tests/fixtures/kubernetes (CATALOGUE section T), resource kinds, job names from pod names, a
// host's jobs and their encoding. ctest -R '^Kube'

#include "jobs/kubelet.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch::kubelet_test {

using ::railwatch::jobs::ClassifyKubeResource;
using ::railwatch::jobs::CompactPodNames;
using ::railwatch::jobs::DecodeHostJobs;
using ::railwatch::jobs::EncodeHostJobs;
using ::railwatch::jobs::HostJobsFromPods;
using ::railwatch::jobs::KubeContainer;
using ::railwatch::jobs::KubeDevice;
using ::railwatch::jobs::KubeHostJob;
using ::railwatch::jobs::KubeJobName;
using ::railwatch::jobs::KubePod;
using ::railwatch::jobs::KubeResourceKind;
using ::railwatch::jobs::LooksLikePciAddress;
using ::railwatch::jobs::ReadKubeletCheckpoint;
using ::railwatch::jobs::ReadNetworkStatus;
using ::railwatch::jobs::ReadPodResourcesJson;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kCheckpoint[] =
    "kubelet_01_internal_checkpoint_pre1.20_gpu_poddeviceentries_truncated.txt";
constexpr char kNetworkStatus[] =
    "kubelet_02_multus_network_status_annotation_sriov_vf_rdma_device.txt";
constexpr char kFragment[] =
    "kubelet_03_podresources_list_fragment_kubevirt_pgpu_iommu_id_and_ib_pf_bdf_numa_tool_"
    "rendered.json";

std::string KubeFixture(const std::string& name) {
  const std::string text = railwatch::testing::ReadFixture("kubernetes/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

KubeDevice Device(std::string resource, std::vector<std::string> ids) {
  KubeDevice d;
  d.resource_name = std::move(resource);
  d.device_ids = std::move(ids);
  return d;
}

// ---- the real texts ----

TEST(KubeReaders, PodResourcesFragmentKubevirtPgpuAndIbPf) {
  const std::string text = KubeFixture(kFragment);
  const auto r = ReadPodResourcesJson(text, "kubelet_03.json");
  ASSERT_THAT(r.pods, SizeIs(1));
  const KubePod& pod = r.pods[0];
  EXPECT_EQ(pod.ns, "tenant-d");
  EXPECT_EQ(pod.name, "virt-launcher-testvm");
  ASSERT_THAT(pod.containers, SizeIs(2));
  EXPECT_EQ(pod.containers[0].name, "compute");
  ASSERT_THAT(pod.containers[0].devices, SizeIs(2));
  const KubeDevice& pgpu = pod.containers[0].devices[0];
  EXPECT_EQ(pgpu.resource_name, "nvidia.com/PGPU");
  EXPECT_THAT(pgpu.device_ids, ElementsAre("94"));  // an IOMMU group, not a BDF
  EXPECT_THAT(pgpu.numa_nodes, IsEmpty());
  const KubeDevice& ib = pod.containers[0].devices[1];
  EXPECT_EQ(ib.resource_name, "nvidia.com/ib_pf");
  EXPECT_THAT(ib.device_ids, ElementsAre("0000:08:00.0"));
  EXPECT_THAT(ib.numa_nodes, ElementsAre(0));
  EXPECT_EQ(pod.containers[1].name, "hook-sidecar-0");  // "devices": null
  EXPECT_THAT(pod.containers[1].devices, IsEmpty());
  // A fragment is read, and said to be one, at its first member.
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].where, "kubelet_03.json:1:3");
  EXPECT_THAT(r.problems[0].message, HasSubstr("fragment"));

  // What railwatch makes of it: one GPU (by IOMMU group), one RDMA PF, the VM as the job.
  EXPECT_EQ(ClassifyKubeResource(pgpu.resource_name, pgpu.device_ids), KubeResourceKind::kGpu);
  EXPECT_EQ(ClassifyKubeResource(ib.resource_name, ib.device_ids), KubeResourceKind::kRdma);
  const std::vector<KubeHostJob> jobs = HostJobsFromPods(r.pods);
  ASSERT_THAT(jobs, SizeIs(1));
  EXPECT_EQ(jobs[0].name, "tenant-d/testvm");
  EXPECT_EQ(jobs[0].gpus, 1u);
  EXPECT_EQ(jobs[0].rdma, 1u);
  EXPECT_THAT(jobs[0].pods, ElementsAre("virt-launcher-testvm"));
}

TEST(KubeReaders, FragmentThatStillDoesNotParseSaysWhere) {
  // The fragment cut short inside its devices: the error's place in the text as given.
  const std::string text = KubeFixture(kFragment);
  const std::string cut = text.substr(0, text.find("\"0000:08:00.0\""));
  const auto r = ReadPodResourcesJson(cut, "cut.json");
  EXPECT_THAT(r.pods, IsEmpty());
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_THAT(r.problems[0].message, HasSubstr("not JSON: syntax error"));
  EXPECT_THAT(r.problems[0].message, HasSubstr("no complete pod"));
  EXPECT_THAT(r.problems[0].where, HasSubstr("cut.json:17:"));
}

TEST(KubeReaders, CheckpointPre120TruncatedGivesItsCompleteEntries) {
  const std::string text = KubeFixture(kCheckpoint);
  const auto r = ReadKubeletCheckpoint(text, "kubelet_01.txt");
  ASSERT_THAT(r.pods, SizeIs(2));
  EXPECT_EQ(r.pods[0].uid, "9a422c32-4fc2-11e9-bb64-505dac4c3a38");
  EXPECT_EQ(r.pods[0].name, "");  // the checkpoint names pods by UID only
  ASSERT_THAT(r.pods[0].containers, SizeIs(1));
  EXPECT_EQ(r.pods[0].containers[0].name, "notebook");
  ASSERT_THAT(r.pods[0].containers[0].devices, SizeIs(1));
  EXPECT_EQ(r.pods[0].containers[0].devices[0].resource_name, "nvidia.com/gpu");
  EXPECT_THAT(r.pods[0].containers[0].devices[0].device_ids,
              ElementsAre("GPU-ad63c684-5593-111a-cbb1-c1451ebcd0aa"));
  EXPECT_EQ(r.pods[1].uid, "368e63c4-2d97-11e9-8954-505dac4a7d28");
  EXPECT_THAT(r.pods[1].containers[0].devices[0].device_ids,
              ElementsAre("GPU-72cbf723-9f70-7d49-a6bb-626fcb3f8c30"));
  // The truncation is reported where the text ends (line 23: the file ends mid-array).
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].where, "kubelet_01.txt:23:15");
  EXPECT_THAT(r.problems[0].message, HasSubstr("truncated"));
  EXPECT_THAT(r.problems[0].message, HasSubstr("2 complete PodDeviceEntries entries"));
  // By UID: two one-GPU jobs.
  const std::vector<KubeHostJob> jobs = HostJobsFromPods(r.pods);
  ASSERT_THAT(jobs, SizeIs(2));
  EXPECT_EQ(jobs[0].gpus, 1u);
}

TEST(KubeReaders, CheckpointFrom120ByNumaNode) {
  // Kubernetes 1.20+: DeviceIDs is a map NUMA node -> ids; a whole document.
  const std::string text = R"({"Data": {"PodDeviceEntries": [
    {"PodUID": "u1", "ContainerName": "main", "ResourceName": "nvidia.com/gpu",
     "DeviceIDs": {"0": ["GPU-a", "GPU-b"], "1": ["GPU-c"]}, "AllocResp": "x"}],
   "RegisteredDevices": {"nvidia.com/gpu": ["GPU-a", "GPU-b", "GPU-c", "GPU-d"]}},
   "Checksum": 1})";
  const auto r = ReadKubeletCheckpoint(text, "cp.json");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.pods, SizeIs(1));
  const KubeDevice& d = r.pods[0].containers[0].devices[0];
  EXPECT_THAT(d.device_ids, ElementsAre("GPU-a", "GPU-b", "GPU-c"));
  EXPECT_THAT(d.numa_nodes, ElementsAre(0, 1));
  EXPECT_THAT(r.registered_devices.at("nvidia.com/gpu"), SizeIs(4));
}

TEST(KubeReaders, MultusNetworkStatusSriovVfWithRdmaDevice) {
  const std::string text = KubeFixture(kNetworkStatus);
  const auto r = ReadNetworkStatus(text, "kubelet_02.txt");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.interfaces, SizeIs(2));
  EXPECT_EQ(r.interfaces[0].network, "k8s-pod-network");
  EXPECT_THAT(r.interfaces[0].ips, ElementsAre("192.168.107.206"));
  EXPECT_TRUE(r.interfaces[0].is_default);
  EXPECT_EQ(r.interfaces[0].rdma_device, "");
  const auto& vf = r.interfaces[1];
  EXPECT_EQ(vf.network, "default/sriov-net1");
  EXPECT_EQ(vf.interface, "net1");
  EXPECT_THAT(vf.ips, ElementsAre("10.56.217.2"));
  EXPECT_EQ(vf.mac, "7a:bb:87:d9:b4:94");
  EXPECT_FALSE(vf.is_default);
  EXPECT_EQ(vf.device_type, "pci");
  EXPECT_EQ(vf.pci_address, "0000:03:00.3");
  EXPECT_EQ(vf.rdma_device, "mlx5_4");
}

TEST(KubeReaders, NetworkStatusAsKubectlPrintsIt) {
  // kubectl get pod -o json: the annotation's value is an escaped string.
  const std::string json =
      R"("k8s.v1.cni.cncf.io/network-status": "[{\n \"name\": \"default/rdma-net\",\n \"interface\": \"net1\",\n \"device-info\": {\"type\": \"pci\", \"pci\": {\"pci-address\": \"0000:3b:00.2\", \"rdma-device\": \"mlx5_7\"}}\n}]")";
  auto r = ReadNetworkStatus(json, "pod.json");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.interfaces, SizeIs(1));
  EXPECT_EQ(r.interfaces[0].rdma_device, "mlx5_7");
  // -o yaml: "key: |" and the JSON on the lines after.
  const std::string yaml =
      "    k8s.v1.cni.cncf.io/network-status: |-\n      [{\n          \"name\": \"a\",\n"
      "          \"interface\": \"net1\"\n      }]\n    other: x\n";
  r = ReadNetworkStatus(yaml, "pod.yaml");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.interfaces, SizeIs(1));
  EXPECT_EQ(r.interfaces[0].interface, "net1");
  // Broken JSON: where.
  r = ReadNetworkStatus("[{\"name\": \"a\",\n \"ips\": [1,}]", "bad.txt");
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_THAT(r.problems[0].where, HasSubstr("bad.txt:2:"));
}

TEST(KubeReaders, ListAnswerInProtojsonWithNumaZeroAsEmptyObject) {
  // grpcurl's rendering: lowerCamel names; NUMA node 0 has no "ID" (protojson omits zero).
  const std::string text = R"(
$ grpcurl -plaintext -unix /var/lib/kubelet/pod-resources/kubelet.sock v1.PodResourcesLister/List
{
  "podResources": [
    {"name": "llama-worker-0", "namespace": "ml", "containers": [{"name": "pytorch",
      "devices": [{"resourceName": "nvidia.com/gpu", "deviceIds": ["GPU-0", "GPU-1"],
                   "topology": {"nodes": [{}]}},
                  {"resourceName": "nvidia.com/gpu", "deviceIds": ["GPU-2"],
                   "topology": {"nodes": [{"ID": "1"}]}}],
      "cpuIds": ["1", "2"]}]},
    {"name": "coredns-5d78c9869d-x7kq2", "namespace": "kube-system",
     "containers": [{"name": "coredns"}]}
  ]
})";
  const auto r = ReadPodResourcesJson(text, "list.json");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_THAT(r.pods, SizeIs(2));
  EXPECT_THAT(r.pods[0].containers[0].devices[0].numa_nodes, ElementsAre(0));
  EXPECT_THAT(r.pods[0].containers[0].devices[1].numa_nodes, ElementsAre(1));
  const auto jobs = HostJobsFromPods(r.pods);
  ASSERT_THAT(jobs, SizeIs(1));  // coredns holds no device: no job
  EXPECT_EQ(jobs[0].name, "ml/llama");
  EXPECT_EQ(jobs[0].gpus, 3u);
}

TEST(KubeReaders, DamagedListKeepsTheWholePodsBeforeTheDamage) {
  const std::string text = R"({"pod_resources": [
  {"name": "a-0", "namespace": "ml", "containers": [{"name": "c", "devices": [
    {"resource_name": "amd.com/gpu", "device_ids": ["0000:c1:00.0"]}]}]},
  {"name": "a-1", "namespace": "ml", "containers": [{"name": "c", "devices": [
    {"resource_name": "amd.com/gpu", "device_ids": ["0000:)";
  const auto r = ReadPodResourcesJson(text, "cut.json");
  ASSERT_THAT(r.pods, SizeIs(1));
  EXPECT_EQ(r.pods[0].name, "a-0");
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].where, "cut.json:5:59");
  EXPECT_THAT(r.problems[0].message, HasSubstr("the 1 complete pod(s) before it are read"));
  // Not the API's answer at all.
  const auto other = ReadPodResourcesJson(R"({"kind": "Pod"})", "pod.json");
  EXPECT_THAT(other.pods, IsEmpty());
  ASSERT_THAT(other.problems, SizeIs(1));
  EXPECT_THAT(other.problems[0].message, HasSubstr("no pod resources"));
}

TEST(KubeReaders, EveryPrefixOfEveryTextIsReadWithoutThrowing) {
  // What a paste cut anywhere gives: never an exception, and a problem whenever nothing is read.
  for (const char* name : {kCheckpoint, kNetworkStatus, kFragment}) {
    const std::string text = KubeFixture(name);
    for (size_t n = 0; n <= text.size(); ++n) {
      const std::string_view prefix(text.data(), n);
      const auto pods = ReadPodResourcesJson(prefix, name);
      EXPECT_TRUE(!pods.pods.empty() || !pods.problems.empty()) << name << " " << n;
      const auto checkpoint = ReadKubeletCheckpoint(prefix, name);
      EXPECT_TRUE(!checkpoint.pods.empty() || !checkpoint.problems.empty()) << name << " " << n;
      const auto status = ReadNetworkStatus(prefix, name);
      EXPECT_TRUE(!status.interfaces.empty() || !status.problems.empty()) << name << " " << n;
    }
  }
}

// ---- the rules ----

TEST(KubeRules, ResourceKinds) {
  const auto kind = [](const char* name, std::vector<std::string> ids = {}) {
    return ClassifyKubeResource(name, ids);
  };
  EXPECT_EQ(kind("nvidia.com/gpu"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("nvidia.com/gpu.shared"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("nvidia.com/mig-1g.10gb"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("nvidia.com/PGPU"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("nvidia.com/GA100_A100_PCIE_40GB"), KubeResourceKind::kGpu);  // KubeVirt
  EXPECT_EQ(kind("amd.com/gpu"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("gpu.intel.com/i915"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("habana.ai/gaudi"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("aws.amazon.com/neuron"), KubeResourceKind::kGpu);
  EXPECT_EQ(kind("gpu.nvidia.com"), KubeResourceKind::kGpu);  // a DRA driver
  EXPECT_EQ(kind("rdma/hca_shared_devices_a"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("rdma/rdma_shared_device_a"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("nvidia.com/ib_pf"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("openshift.io/mlx5_vf"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("intel.com/intel_sriov_netdevice"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("nvidia.com/hostdev"), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("example.com/nics", {"0000:3b:00.2", "3b:00.3"}), KubeResourceKind::kRdma);
  EXPECT_EQ(kind("example.com/fpga", {"fpga0"}), KubeResourceKind::kOther);
  EXPECT_EQ(kind("hugepages-1Gi"), KubeResourceKind::kOther);
  EXPECT_TRUE(LooksLikePciAddress("0000:08:00.0"));
  EXPECT_TRUE(LooksLikePciAddress("af:00.1"));
  EXPECT_FALSE(LooksLikePciAddress("94"));
  EXPECT_FALSE(LooksLikePciAddress("GPU-ad63c684-5593"));
  EXPECT_FALSE(LooksLikePciAddress("0000:08:00"));
}

TEST(KubeRules, JobNamesFromPodNames) {
  // Kubeflow training operators.
  EXPECT_EQ(KubeJobName("ml", "llama-master-0"), "ml/llama");
  EXPECT_EQ(KubeJobName("ml", "llama-worker-15"), "ml/llama");
  EXPECT_EQ(KubeJobName("ml", "tf-mnist-chief-0"), "ml/tf-mnist");
  EXPECT_EQ(KubeJobName("ml", "tf-mnist-ps-1"), "ml/tf-mnist");
  // MPIJob: the launcher (a pod, or its Job's pod) and the workers.
  EXPECT_EQ(KubeJobName("hpc", "nccl-allreduce-launcher"), "hpc/nccl-allreduce");
  EXPECT_EQ(KubeJobName("hpc", "nccl-allreduce-launcher-x7k2p"), "hpc/nccl-allreduce");
  EXPECT_EQ(KubeJobName("hpc", "nccl-allreduce-worker-3"), "hpc/nccl-allreduce");
  // Indexed Job and JobSet pods: <job>-<index>-<hash5>.
  EXPECT_EQ(KubeJobName("ml", "bench-3-x7k2p"), "ml/bench");
  EXPECT_EQ(KubeJobName("ml", "pretrain-workers-0-12-bq9zt"), "ml/pretrain-workers-0");
  // Job (NonIndexed) and Deployment pods.
  EXPECT_EQ(KubeJobName("ml", "eval-v2-hlflt"), "ml/eval-v2");
  EXPECT_EQ(KubeJobName("serve", "vllm-7d4b9c8f6-x7k2p"), "serve/vllm");
  // StatefulSet ordinals; LeaderWorkerSet leader <lws>-<g> and worker <lws>-<g>-<w>.
  EXPECT_EQ(KubeJobName("ml", "trainer-7"), "ml/trainer");
  EXPECT_EQ(KubeJobName("serve", "llama405b-0"), "serve/llama405b");
  EXPECT_EQ(KubeJobName("serve", "llama405b-0-3"), "serve/llama405b");
  // KubeVirt.
  EXPECT_EQ(KubeJobName("tenant-d", "virt-launcher-testvm-21300-hlflt"), "tenant-d/testvm-21300");
  EXPECT_EQ(KubeJobName("tenant-d", "virt-launcher-testvm"), "tenant-d/testvm");
  // Bare pods and words that are no hash (vowels): the pod's own name.
  EXPECT_EQ(KubeJobName("ml", "debug"), "ml/debug");
  EXPECT_EQ(KubeJobName("ml", "nccl-tests"), "ml/nccl-tests");
  EXPECT_EQ(KubeJobName("ml", "train-llama"), "ml/train-llama");
  EXPECT_EQ(KubeJobName("ml", "0"), "ml/0");
}

TEST(KubeRules, HostJobsCountDistinctDevicesPerPod) {
  KubePod a;
  a.ns = "ml";
  a.name = "llama-worker-0";
  // An init container's GPUs are the app container's again; time-sliced replicas of one GPU.
  a.containers.push_back({"init", {Device("nvidia.com/gpu", {"GPU-0", "GPU-1"})}});
  a.containers.push_back(
      {"main",
       {Device("nvidia.com/gpu", {"GPU-0", "GPU-1"}),
        Device("nvidia.com/gpu.shared", {"GPU-2::0", "GPU-2::1"}),
        Device("rdma/hca_shared_devices_a", {"r0", "r1"}), Device("hugepages-2Mi", {"x"})}});
  KubePod b = a;
  b.name = "llama-worker-1";
  KubePod dns;
  dns.ns = "kube-system";
  dns.name = "coredns-5d78c9869d-x7kq2";
  dns.containers.push_back({"coredns", {}});
  KubePod nic_only;
  nic_only.ns = "net";
  nic_only.name = "probe";
  nic_only.containers.push_back({"c", {Device("openshift.io/mlx5_vf", {"0000:3b:00.2"})}});
  const auto jobs = HostJobsFromPods({b, dns, a, nic_only});
  ASSERT_THAT(jobs, SizeIs(2));
  EXPECT_EQ(jobs[0].name, "ml/llama");
  EXPECT_THAT(jobs[0].pods, ElementsAre("llama-worker-0", "llama-worker-1"));
  EXPECT_EQ(jobs[0].gpus, 6u);  // 3 GPUs each
  EXPECT_EQ(jobs[0].rdma, 4u);
  EXPECT_EQ(jobs[1].name, "net/probe");  // RDMA alone is a job
  EXPECT_EQ(jobs[1].gpus, 0u);
  EXPECT_EQ(jobs[1].rdma, 1u);

  const std::string encoded = EncodeHostJobs(jobs);
  EXPECT_EQ(encoded,
            "ml/llama:pods=2:gpus=6:rdma=4:names=llama-worker-0,llama-worker-1;"
            "net/probe:pods=1:gpus=0:rdma=1:names=probe");
  EXPECT_EQ(DecodeHostJobs(encoded), jobs);
  EXPECT_THAT(DecodeHostJobs(""), IsEmpty());
  int bad = 0;
  const auto decoded = DecodeHostJobs("noslash:gpus=1;ml/x:gpus=two;ml/y:gpus=2:future=1", &bad);
  EXPECT_EQ(bad, 2);
  ASSERT_THAT(decoded, SizeIs(1));
  EXPECT_EQ(decoded[0].name, "ml/y");
  EXPECT_EQ(decoded[0].gpus, 2u);
}

TEST(KubeRules, CompactPodNames) {
  EXPECT_EQ(CompactPodNames({"train-worker-2", "train-worker-0", "train-worker-1", "train-worker-3",
                             "train-master-0"}),
            "train-master-0, train-worker-0..3");
  EXPECT_EQ(CompactPodNames({"a-0", "a-1", "a-5", "b"}), "a-0, a-1, a-5, b");
  EXPECT_EQ(CompactPodNames({"p1", "p2", "p3"}, 2), "p1, p2, +1 more");
}

}  // namespace railwatch::kubelet_test
