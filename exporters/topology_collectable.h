#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "store/event_store.h"
#include "topology/fabric_map.h"
#include "topology/topology.h"

namespace railwatch {

// What Prometheus cannot know: which rail a NIC is on, which switch port it plugs into, which
// switches are cabled together and which jobs run where. Exported as info series (value 1) so
// that a dashboard can join fabric series to them:
//
//   rate(fabric_rdma_port_transmit_bytes_total[1m])
//     * on(host, device) group_left(rail, switch) railwatch_topology_nic_info
//
//   railwatch_topology_nic_info{host,device,netdev,rail,switch,switch_port} 1
//   railwatch_topology_link_info{switch,interface,peer_switch,peer_interface} 1 (both ends)
//   railwatch_topology_switch_info{switch,role,dialect} 1
//   railwatch_job_host_info{job,host,source="topology|nccl"} 1
//   railwatch_job_gpus{job,source}
//
// The topology's families are built when it is set (at start, and when discovery changes the
// map); jobs are read from the registry at each scrape (NCCL logs teach it new ones).
class TopologyCollectable final : public prometheus::Collectable {
 public:
  // `topology` may be null (no --topology): only the jobs learnt from NCCL logs are exported.
  TopologyCollectable(std::shared_ptr<const Topology> topology, const JobRegistry& jobs);
  std::vector<prometheus::MetricFamily> Collect() const override;
  // The map changed (docs/TOPOLOGY.md, discovery).
  void SetTopology(std::shared_ptr<const Topology> topology);

 private:
  mutable absl::Mutex mu_;
  std::vector<prometheus::MetricFamily> topology_families_ ABSL_GUARDED_BY(mu_);
  const JobRegistry& jobs_;
};

// nccl-tests results that host agents tail (nccltests.summary events in the EventStore) as
// gauges, one per host and test, from that pair's latest completed run:
//
//   fabric_nccl_tests_bus_bandwidth_bytes_per_second{host,test}  average bus bandwidth
//   fabric_nccl_tests_last_run_timestamp_seconds{host,test}      when that run ended
//   railwatch_nccl_tests_invalid_summaries_total                  summaries that could not be read
//
// Each scrape reads only the events appended since the previous one (by sequence number) and
// keeps the latest result itself, so a result outlives the event log's eviction. A run that
// never reached "# Avg bus bandwidth" (complete=0) has no average and is left out.
class NcclTestsCollectable final : public prometheus::Collectable {
 public:
  explicit NcclTestsCollectable(const EventStore& events) : events_(events) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Result {
    double bytes_per_second = 0;
    int64_t time_unix_nano = 0;
  };
  // Folds the events appended since the last call into results_.
  void Update() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const EventStore& events_;
  mutable absl::Mutex mu_;  // scrapes may run concurrently
  mutable uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  mutable uint64_t invalid_ ABSL_GUARDED_BY(mu_) = 0;
  // (host, test) -> latest run; ordered so that the exposition is stable.
  mutable std::map<std::pair<std::string, std::string>, Result> results_ ABSL_GUARDED_BY(mu_);
};

}  // namespace railwatch
