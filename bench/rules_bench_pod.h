#pragma once

// The synthetic pod of bench/rules_bench: hosts x 8 NICs, their series in a SeriesStore, the
// topology file, and the traffic appended each second (quiet except one storming NIC, one
// flapping link and one NIC at half speed, so the rules have real diagnoses to build).

#include <span>
#include <string>
#include <vector>

#include "store/series_store.h"

namespace railwatch::bench {

inline constexpr int kNics = 8;

std::string HostName(int h);

// Writes the pod's topology (one leaf per rail, 8 spines, jobs of 128 hosts) to `path`.
std::string WriteTopology(int hosts, const std::string& path);

struct PodSeries {
  SeriesRef ref;
  double per_second;  // counter slope (gauges: constant value)
  bool counter;
};

// Interns the pod's series. per_nic == 0: the issue-5 set (the vocabulary's sysfs counters
// plus per-priority pause and byte counters, about 88 a NIC). per_nic > 0: the canonical
// series an mlx5 NIC reports (sysfs counters, every mlx5 ethtool statistic per priority and
// direction, netdev sysfs files: 164), those of the metrics in `read` (what the playbooks
// read) first, cut at per_nic, or padded with driver counters
// (fabric_rdma_driver_stat_total{counter}) up to it. *padding (may be null) is set to the
// driver counters added to each NIC.
std::vector<PodSeries> BuildPod(SeriesStore& store, int hosts, int per_nic,
                                const std::vector<std::string>& read, int* padding);

// Appends one sample per series at `now` (second number `tick`), in batches.
void AppendTick(SeriesStore& store, std::span<const PodSeries> series, int64_t now, int tick);

}  // namespace railwatch::bench
