#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/labels.h"
#include "common/vocabulary.h"
#include "railwatch/v1/ingest.pb.h"

namespace railwatch::loadgen {

// How one series' value moves from batch to batch. The load is a quiet, healthy fabric: byte
// and packet counters climb at a steady modest rate with noise, everything else stays put, so
// the load raises no diagnosis.
struct SeriesBehaviour {
  double rate_per_second = 0;  // counters: mean increase per second (0: constant)
  double gauge = 0;            // gauges: the value
  uint64_t initial = 0;        // counters: the first reading
};

// One series of a simulated host, without its host label (every agent adds its own).
struct SeriesTemplate {
  std::string name;
  MetricKind kind = MetricKind::kCounter;
  Labels labels;  // sorted, without "host"
  SeriesBehaviour behaviour;
};

// The series every simulated host sends: 8 ConnectX NICs mlx5_0..7 (port 1, netdev
// enp<N>s0np0 as railwatch-sim names them) with `series` canonical series spread over them as
// the RDMA sysfs and ethtool collectors label them. Byte/packet counters, port state,
// per-priority PFC, ECN and traffic come first; beyond the catalog of canonical series a NIC has,
// fabric_rdma_driver_stat_total{counter="loadgen_N"} fills up (as an agent reports driver
// counters without a canonical name).
class HostPlan {
 public:
  static constexpr int kNics = 8;
  explicit HostPlan(int series);

  const std::vector<SeriesTemplate>& series() const { return series_; }
  size_t size() const { return series_.size(); }

  // Replaces `batch`'s definitions with every series of `host` (ids 0..size-1). Reuses the
  // repeated fields' allocations.
  void FillDefinitions(const std::string& host, v1::Batch& batch) const;

 private:
  std::vector<SeriesTemplate> series_;
};

// One simulated host's counter readings. Advance() fills a batch's points (ids 0..size-1,
// reusing the batch's point objects) with the readings at `now`.
class HostValues {
 public:
  HostValues(const HostPlan& plan, uint64_t seed);
  void Advance(int64_t now_unix_nano, v1::Batch& batch);

 private:
  uint64_t NextRandom();
  double Uniform();  // in [0, 1)

  const HostPlan& plan_;
  std::vector<uint64_t> counters_;  // index = series id; unused for gauges
  int64_t last_time_ = 0;
  uint64_t rng_;
};

}  // namespace railwatch::loadgen
