// What topology() and peer() cost per element, and a blast radius per diagnosis, on a pod of
// 1,024 hosts x 8 NICs (8 rails, 32 hosts per leaf: 256 leaves, 16 spines) with two jobs; and
// one discovery pass over what that pod's agents report (docs/TOPOLOGY.md).
//
//   build/release/bench/fabric_map_bench
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "topology/discovery.h"
#include "topology/fabric_map.h"
#include "topology/topology.h"

namespace railwatch {
namespace {

constexpr int kHosts = 1024;
constexpr int kRails = 8;
constexpr int kHostsPerLeaf = 32;
constexpr int kSpines = 16;

std::string Host(int h) { return absl::StrCat("gpu-node-", h); }
std::string Leaf(int group, int rail) { return absl::StrCat("leaf-g", group, "-r", rail); }

std::string PodYaml() {
  std::string y = "switches:\n";
  for (int s = 0; s < kSpines; ++s) absl::StrAppend(&y, "  - {name: spine-", s, ", role: spine}\n");
  const int groups = kHosts / kHostsPerLeaf;
  for (int g = 0; g < groups; ++g) {
    for (int r = 0; r < kRails; ++r) {
      absl::StrAppend(&y, "  - name: ", Leaf(g, r), "\n    role: leaf\n    links:\n");
      for (int s = 0; s < kSpines; ++s) {
        absl::StrAppend(&y, "      - {port: Ethernet", 256 + 4 * s, ", peer: spine-", s,
                        ", peer_port: Ethernet", 4 * (g * kRails + r), "}\n");
      }
    }
  }
  y += "hosts:\n";
  for (int h = 0; h < kHosts; ++h) {
    absl::StrAppend(&y, "  - name: ", Host(h), "\n    nics:\n");
    for (int r = 0; r < kRails; ++r) {
      absl::StrAppend(&y, "      - {device: mlx5_", r, ", netdev: enp", 12 + r, "s0np0, rail: ", r,
                      ", switch: ", Leaf(h / kHostsPerLeaf, r), ", port: Ethernet",
                      4 * (h % kHostsPerLeaf), "}\n");
    }
  }
  absl::StrAppend(&y, "jobs:\n  - name: train-a\n    hosts: [");
  for (int h = 0; h < kHosts / 2; ++h) absl::StrAppend(&y, h ? ", " : "", Host(h));
  absl::StrAppend(&y, "]\n  - name: train-b\n    hosts: [");
  for (int h = kHosts / 2; h < kHosts; ++h) absl::StrAppend(&y, h > kHosts / 2 ? ", " : "", Host(h));
  y += "]\n";
  return y;
}

struct Pod {
  Pod() {
    absl::StatusOr<Topology> t = Topology::LoadString(PodYaml(), "pod.yaml");
    if (!t.ok()) abort();
    topology = std::make_shared<const Topology>(*std::move(t));
    jobs.SetStatic(topology->jobs());
    fabric = std::make_unique<FabricMap>(topology, &jobs);
  }
  std::shared_ptr<const Topology> topology;
  JobRegistry jobs;
  std::unique_ptr<FabricMap> fabric;
};

Pod& GetPod() {
  static Pod* pod = new Pod();
  return *pod;
}

// A host PFC series: {direction, host, interface, priority}.
void BM_EnrichHostNetdev(benchmark::State& state) {
  Pod& pod = GetPod();
  const Labels base = {{"direction", "tx"}, {"host", Host(517)}, {"interface", "enp15s0np0"},
                       {"priority", "3"}};
  for (auto _ : state) {
    Labels l = base;
    pod.fabric->Enrich(l);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_EnrichHostNetdev);

// The copy of the element alone, to subtract.
void BM_CopyOnly(benchmark::State& state) {
  const Labels base = {{"direction", "tx"}, {"host", Host(517)}, {"interface", "enp15s0np0"},
                       {"priority", "3"}};
  for (auto _ : state) {
    Labels l = base;
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_CopyOnly);

// A switch port facing a NIC: {interface, priority, switch}.
void BM_EnrichSwitchPort(benchmark::State& state) {
  Pod& pod = GetPod();
  const Labels base = {{"interface", "Ethernet20"}, {"priority", "3"}, {"switch", Leaf(9, 3)}};
  for (auto _ : state) {
    Labels l = base;
    pod.fabric->Enrich(l);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_EnrichSwitchPort);

// peer() of a leaf port: the NIC behind it, enriched.
void BM_ToPeerSwitchPortToNic(benchmark::State& state) {
  Pod& pod = GetPod();
  const Labels base = {{"direction", "rx"}, {"interface", "Ethernet20"}, {"priority", "3"},
                       {"switch", Leaf(9, 3)}};
  for (auto _ : state) {
    Labels l = base;
    pod.fabric->ToPeer(l);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_ToPeerSwitchPortToNic);

// The same source asked again (the BFS is cached) and a new source each time (arg 1).
void BM_HopDistance(benchmark::State& state) {
  Pod& pod = GetPod();
  int i = 0;
  for (auto _ : state) {
    const std::string a = absl::StrCat(Host(state.range(0) ? (i++ % kHosts) : 5), "/mlx5_2");
    benchmark::DoNotOptimize(pod.fabric->HopDistance(a, "gpu-node-900/mlx5_6"));
  }
}
BENCHMARK(BM_HopDistance)->Arg(0)->Arg(1);

void BM_BlastLeaf(benchmark::State& state) {
  Pod& pod = GetPod();
  Labels culprit = {{"device", "mlx5_3"}, {"host", Host(300)}};
  pod.fabric->Enrich(culprit);
  for (auto _ : state) benchmark::DoNotOptimize(pod.fabric->Blast(culprit, "leaf"));
}
BENCHMARK(BM_BlastLeaf);

void BM_BlastFabric(benchmark::State& state) {
  Pod& pod = GetPod();
  Labels culprit = {{"switch", "spine-3"}};
  for (auto _ : state) benchmark::DoNotOptimize(pod.fabric->Blast(culprit, "fabric"));
}
BENCHMARK(BM_BlastFabric);

void BM_BuildIndex(benchmark::State& state) {
  Pod& pod = GetPod();
  for (auto _ : state) {
    FabricMap m(pod.topology, &pod.jobs);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_BuildIndex)->Unit(benchmark::kMillisecond);

// What the pod's agents report: every NIC's identity, every leaf port's LLDP neighbour (the
// host and its netdev) and every leaf-spine link from both ends.
DiscoveryFacts PodFacts(const Topology& t) {
  DiscoveryFacts f;
  for (const TopologyHost& h : t.hosts()) {
    for (const TopologyNic& n : h.nics) {
      f.nics.push_back({h.name, n.device, n.netdev, "", "", "", "Ethernet"});
      f.switch_ports.push_back({n.switch_name, n.switch_port, h.name, n.netdev, "", 1});
    }
  }
  for (const TopologySwitch& s : t.switches()) {
    f.switches.push_back(s.name);
    for (const TopologyLink& l : s.links) {
      f.switch_ports.push_back({s.name, l.port, l.peer, l.peer_port, "", 1});
      f.switch_ports.push_back({l.peer, l.peer_port, s.name, l.port, "", 1});
    }
  }
  return f;
}

// One pass of railwatchd's TopologyWatch after reading the store: discover, lay the file over
// it, print the map to see whether it changed. The discovered map must be the pod's.
void BM_DiscoveryPass(benchmark::State& state) {
  Pod& pod = GetPod();
  const DiscoveryFacts facts = PodFacts(*pod.topology);
  {
    const DiscoveredTopology d = DiscoverTopology(facts);
    if (!DiffTopologies(*pod.topology, d.topology).empty()) abort();
  }
  for (auto _ : state) {
    DiscoveredTopology d = DiscoverTopology(facts);
    absl::flat_hash_map<std::string, Provenance> provenance = d.provenance;
    Topology merged = MergeTopologies(*pod.topology, d.topology, provenance);
    std::string yaml = TopologyToYaml(merged, nullptr);
    benchmark::DoNotOptimize(yaml);
  }
  state.counters["nics"] = static_cast<double>(facts.nics.size());
}
BENCHMARK(BM_DiscoveryPass)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railwatch

BENCHMARK_MAIN();
