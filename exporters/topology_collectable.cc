#include "exporters/topology_collectable.h"

#include <limits>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace railwatch {
namespace {

using LabelList = std::vector<prometheus::ClientMetric::Label>;

prometheus::MetricFamily NewFamily(const char* name, const char* help,
                                   prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddGauge(prometheus::MetricFamily& family, LabelList labels, double value) {
  prometheus::ClientMetric& m = family.metric.emplace_back();
  m.label = std::move(labels);
  m.gauge.value = value;
}

prometheus::MetricFamily NicInfo(const Topology& topology) {
  prometheus::MetricFamily f = NewFamily(
      "railwatch_topology_nic_info",
      "Always 1; one series per NIC of the topology file: its host, RDMA device, netdev, rail "
      "and the switch port it plugs into. Join fabric series on (host, device) to get rails.");
  for (const TopologyHost& host : topology.hosts()) {
    for (const TopologyNic& nic : host.nics) {
      AddGauge(f,
               {{"host", host.name},
                {"device", nic.device},
                {"netdev", nic.netdev},
                {"rail", nic.rail >= 0 ? absl::StrCat(nic.rail) : ""},
                {"switch", nic.switch_name},
                {"switch_port", nic.switch_port}},
               1);
    }
  }
  return f;
}

// Each cable once from each end, whichever end (or both) the file wrote it on, so that a join
// on (switch, interface) finds the far end from either side.
prometheus::MetricFamily LinkInfo(const Topology& topology) {
  std::set<std::tuple<std::string, std::string, std::string, std::string>> ends;
  for (const TopologySwitch& sw : topology.switches()) {
    for (const TopologyLink& link : sw.links) {
      ends.emplace(sw.name, link.port, link.peer, link.peer_port);
      ends.emplace(link.peer, link.peer_port, sw.name, link.port);
    }
  }
  prometheus::MetricFamily f = NewFamily(
      "railwatch_topology_link_info",
      "Always 1; one series per end of each switch-to-switch cable of the topology file: the "
      "switch port and the switch port at the other end.");
  for (const auto& [sw, port, peer, peer_port] : ends) {
    AddGauge(f,
             {{"switch", sw},
              {"interface", port},
              {"peer_switch", peer},
              {"peer_interface", peer_port}},
             1);
  }
  return f;
}

prometheus::MetricFamily SwitchInfo(const Topology& topology) {
  prometheus::MetricFamily f =
      NewFamily("railwatch_topology_switch_info",
                "Always 1; one series per switch of the topology file, with its role (leaf, "
                "spine ...) and gNMI dialect.");
  for (const TopologySwitch& sw : topology.switches()) {
    AddGauge(f, {{"switch", sw.name}, {"role", sw.role}, {"dialect", sw.dialect}}, 1);
  }
  return f;
}

std::string_view EventHost(const StoredEvent& e) {
  if (const std::string* h = FindLabel(e.labels, "host"); h != nullptr) return *h;
  return {};
}

}  // namespace

TopologyCollectable::TopologyCollectable(std::shared_ptr<const Topology> topology,
                                         const JobRegistry& jobs)
    : jobs_(jobs) {
  SetTopology(std::move(topology));
}

void TopologyCollectable::SetTopology(std::shared_ptr<const Topology> topology) {
  std::vector<prometheus::MetricFamily> families;
  if (topology != nullptr) {
    families.push_back(NicInfo(*topology));
    families.push_back(LinkInfo(*topology));
    families.push_back(SwitchInfo(*topology));
  }
  absl::MutexLock lock(&mu_);
  topology_families_ = std::move(families);
}

std::vector<prometheus::MetricFamily> TopologyCollectable::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  {
    absl::MutexLock lock(&mu_);
    out = topology_families_;
  }
  prometheus::MetricFamily hosts = NewFamily(
      "railwatch_job_host_info",
      "Always 1; one series per job and host it has ranks on, from the topology file's jobs "
      "(source=topology) or learnt from NCCL communicator log lines (source=nccl).");
  prometheus::MetricFamily gpus =
      NewFamily("railwatch_job_gpus", "GPUs a job holds (its ranks, for jobs learnt from NCCL).");
  for (const JobInfo& job : jobs_.All()) {
    for (const std::string& host : job.hosts) {
      AddGauge(hosts, {{"training_job", job.name}, {"host", host}, {"source", job.source}}, 1);
    }
    AddGauge(gpus, {{"training_job", job.name}, {"source", job.source}}, job.gpus);
  }
  out.push_back(std::move(hosts));
  out.push_back(std::move(gpus));
  return out;
}

void NcclTestsCollectable::Update() const {
  uint64_t newest = last_seq_;
  events_.ForEach(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                  [&](const StoredEvent& e) {
                    if (e.seq <= last_seq_) return;
                    newest = std::max(newest, e.seq);
                    if (e.kind != "nccltests.summary") return;
                    const std::string* avg = e.Attribute("avg_busbw_gbps");
                    if (avg == nullptr || avg->empty()) return;  // incomplete run: no average
                    const std::string_view host = EventHost(e);
                    double gbps = 0;
                    if (host.empty() || !absl::SimpleAtod(*avg, &gbps) || gbps < 0) {
                      ++invalid_;
                      const std::string* file = e.Attribute("file");
                      const std::string* line = e.Attribute("line");
                      spdlog::warn("nccl-tests summary {}:{} from host \"{}\": bus bandwidth "
                                   "\"{}\" is not a number of GB/s (or no host); left out",
                                   file ? *file : "?", line ? *line : "?", host, *avg);
                      return;
                    }
                    const std::string* test = e.Attribute("test");
                    const std::string test_name = test && !test->empty() ? *test : "unknown";
                    Result& r = results_[{std::string(host), test_name}];
                    if (e.time_unix_nano < r.time_unix_nano) return;  // an older run, replayed
                    // nccl-tests prints GB/s (10^9 bytes a second).
                    r.bytes_per_second = gbps * 1e9;
                    r.time_unix_nano = e.time_unix_nano;
                  });
  last_seq_ = newest;
}

std::vector<prometheus::MetricFamily> NcclTestsCollectable::Collect() const {
  absl::MutexLock lock(&mu_);
  Update();
  prometheus::MetricFamily busbw =
      NewFamily("fabric_nccl_tests_bus_bandwidth_bytes_per_second",
                "Average bus bandwidth of the latest completed nccl-tests run of a test on a "
                "host (its \"# Avg bus bandwidth\" line), from the logs the host agent tails.");
  prometheus::MetricFamily when =
      NewFamily("fabric_nccl_tests_last_run_timestamp_seconds",
                "Unix time of the summary line of the latest completed nccl-tests run of a test "
                "on a host.");
  for (const auto& [key, r] : results_) {
    const LabelList labels = {{"host", key.first}, {"test", key.second}};
    AddGauge(busbw, labels, r.bytes_per_second);
    AddGauge(when, labels, static_cast<double>(r.time_unix_nano) / 1e9);
  }
  prometheus::MetricFamily invalid = NewFamily(
      "railwatch_nccl_tests_invalid_summaries_total",
      "nccl-tests summaries whose average bus bandwidth could not be read (logged with file:line).",
      prometheus::MetricType::Counter);
  invalid.metric.emplace_back().counter.value = static_cast<double>(invalid_);
  return {std::move(busbw), std::move(when), std::move(invalid)};
}

}  // namespace railwatch
