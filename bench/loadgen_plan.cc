#include "bench/loadgen_plan.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace railwatch::loadgen {
namespace {

// 400 Gb/s ports carrying a modest 20 Gb/s of RDMA traffic each, on lossless priority 3.
constexpr double kBytesPerSecond = 2.5e9;
constexpr double kBytesPerPacket = 4096;
constexpr double kPortRateBytes = 5e10;
constexpr std::string_view kTrafficPriority = "3";

// Lower ranks are sent first when --series is smaller than the catalog.
enum Rank { kTraffic = 0, kPfcEcn = 1, kRdmaOther = 2, kEthtoolOther = 3 };

bool IsTraffic(std::string_view name) {
  return name == "fabric_rdma_port_transmit_bytes_total" ||
         name == "fabric_rdma_port_receive_bytes_total" ||
         name == "fabric_rdma_port_transmit_packets_total" ||
         name == "fabric_rdma_port_receive_packets_total" ||
         name == "fabric_rdma_port_unicast_transmit_packets_total" ||
         name == "fabric_rdma_port_unicast_receive_packets_total" ||
         name == "fabric_netdev_priority_receive_bytes_total" ||
         name == "fabric_netdev_priority_transmit_bytes_total" ||
         name == "fabric_netdev_priority_receive_packets_total" ||
         name == "fabric_netdev_priority_transmit_packets_total";
}

bool IsPfcOrEcn(std::string_view name) {
  return name.starts_with("fabric_pfc_") || name.find("ecn") != std::string_view::npos ||
         name.find("cnp") != std::string_view::npos;
}

SeriesBehaviour BehaviourOf(std::string_view name, MetricKind kind, const Labels& labels) {
  SeriesBehaviour b;
  if (kind == MetricKind::kGauge) {
    if (name == "fabric_rdma_port_state") b.gauge = 4;  // ACTIVE
    if (name == "fabric_rdma_port_physical_state") b.gauge = 5;  // LinkUp
    if (name == "fabric_rdma_port_rate_bytes_per_second") b.gauge = kPortRateBytes;
    return b;
  }
  if (!IsTraffic(name)) return b;  // error, pause and event counters stay where they are
  const bool bytes = name.find("_bytes_") != std::string_view::npos;
  double rate = bytes ? kBytesPerSecond : kBytesPerSecond / kBytesPerPacket;
  if (const std::string* priority = FindLabel(labels, "priority")) {
    // The RDMA traffic rides the lossless priority; the rest is a trickle of TCP.
    if (*priority != kTrafficPriority) rate = *priority == "0" ? rate * 1e-5 : 0;
  }
  b.rate_per_second = rate;
  b.initial = static_cast<uint64_t>(rate * 3600);  // an hour of traffic since the last reset
  return b;
}

struct Candidate {
  Rank rank;
  SeriesTemplate series;
};

void Add(std::vector<Candidate>& out, Rank rank, std::string_view name, MetricKind kind,
         Labels labels) {
  NormalizeLabels(labels);
  SeriesBehaviour b = BehaviourOf(name, kind, labels);
  out.push_back({rank, {std::string(name), kind, std::move(labels), b}});
}

// Every canonical series one mlx5 NIC reports, with its labels (host aside).
std::vector<Candidate> NicCatalog(int nic) {
  const std::string device = absl::StrCat("mlx5_", nic);
  const std::string netdev = absl::StrFormat("enp%ds0np0", 0x18 + nic * 0x10);
  std::vector<Candidate> out;
  for (const MetricSpec& m : CanonicalMetrics()) {
    const std::string_view name = m.name;
    const bool port_attribute = name == "fabric_rdma_port_state" ||
                                name == "fabric_rdma_port_physical_state" ||
                                name == "fabric_rdma_port_rate_bytes_per_second";
    if (!m.sysfs.empty() || port_attribute) {
      const Rank rank = IsTraffic(name) || port_attribute ? kTraffic
                        : IsPfcOrEcn(name)                ? kPfcEcn
                                                          : kRdmaOther;
      Add(out, rank, name, m.kind, {{"device", device}, {"port", "1"}});
    }
    for (const EthtoolSource& s : m.ethtool) {
      if (s.driver != "mlx5_core" || s.stat.find("{queue}") != std::string_view::npos) continue;
      const Rank rank = IsTraffic(name) || IsPfcOrEcn(name) ? kPfcEcn : kEthtoolOther;
      Labels labels = {{"interface", netdev}};
      if (!s.direction.empty()) labels.push_back({"direction", std::string(s.direction)});
      if (s.stat.find("{priority}") == std::string_view::npos) {
        Add(out, rank, name, m.kind, std::move(labels));
        continue;
      }
      for (int p = 0; p < 8; ++p) {
        Labels with_priority = labels;
        with_priority.push_back({"priority", absl::StrCat(p)});
        Add(out, rank, name, m.kind, std::move(with_priority));
      }
    }
    for (std::string_view file : m.netdev_sysfs) {
      (void)file;
      Add(out, kEthtoolOther, name, m.kind, {{"interface", netdev}});
      break;
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  // The same series from two alternative sources (mlx5 lists one per direction) once only.
  std::vector<Candidate> unique;
  for (Candidate& c : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const Candidate& u) {
      return u.series.name == c.series.name && u.series.labels == c.series.labels;
    });
    if (!seen) unique.push_back(std::move(c));
  }
  return unique;
}

}  // namespace

HostPlan::HostPlan(int series) {
  for (int nic = 0; nic < kNics; ++nic) {
    const size_t want = static_cast<size_t>(series / kNics + (nic < series % kNics ? 1 : 0));
    std::vector<Candidate> catalog = NicCatalog(nic);
    for (size_t i = 0; i < want && i < catalog.size(); ++i) {
      series_.push_back(std::move(catalog[i].series));
    }
    for (size_t i = catalog.size(); i < want; ++i) {
      Labels labels = {{"counter", absl::StrCat("loadgen_", i - catalog.size())},
                       {"device", absl::StrCat("mlx5_", nic)},
                       {"port", "1"}};
      NormalizeLabels(labels);
      series_.push_back({"fabric_rdma_driver_stat_total", MetricKind::kCounter, std::move(labels),
                         {}});
    }
  }
}

void HostPlan::FillDefinitions(const std::string& host, v1::Batch& batch) const {
  auto& defs = *batch.mutable_definitions();
  while (defs.size() > static_cast<int>(series_.size())) defs.RemoveLast();
  for (size_t id = 0; id < series_.size(); ++id) {
    const SeriesTemplate& t = series_[id];
    v1::SeriesDefinition* d =
        static_cast<int>(id) < defs.size() ? defs.Mutable(static_cast<int>(id)) : defs.Add();
    d->set_id(static_cast<uint32_t>(id));
    d->set_name(t.name);
    d->set_kind(t.kind == MetricKind::kCounter ? v1::SERIES_KIND_COUNTER : v1::SERIES_KIND_GAUGE);
    d->set_help(std::string(MetricHelp(t.name)));
    // Sorted by name with host among them, as an agent's registry sends them.
    auto& labels = *d->mutable_labels();
    labels.Clear();
    bool host_done = false;
    for (const Label& l : t.labels) {
      if (!host_done && l.name > "host") {
        v1::Label* h = labels.Add();
        h->set_name("host");
        h->set_value(host);
        host_done = true;
      }
      v1::Label* pl = labels.Add();
      pl->set_name(l.name);
      pl->set_value(l.value);
    }
    if (!host_done) {
      v1::Label* h = labels.Add();
      h->set_name("host");
      h->set_value(host);
    }
  }
}

HostValues::HostValues(const HostPlan& plan, uint64_t seed)
    : plan_(plan), counters_(plan.size()), rng_(seed | 1) {
  for (size_t i = 0; i < plan.size(); ++i) counters_[i] = plan.series()[i].behaviour.initial;
}

uint64_t HostValues::NextRandom() {
  // xorshift64: cheap, and good enough for noise on a counter's slope.
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return rng_;
}

double HostValues::Uniform() { return static_cast<double>(NextRandom() >> 11) * 0x1.0p-53; }

void HostValues::Advance(int64_t now_unix_nano, v1::Batch& batch) {
  const double dt = last_time_ == 0 ? 0 : static_cast<double>(now_unix_nano - last_time_) / 1e9;
  last_time_ = now_unix_nano;
  auto& points = *batch.mutable_points();
  while (points.size() > static_cast<int>(counters_.size())) points.RemoveLast();
  const std::vector<SeriesTemplate>& series = plan_.series();
  for (size_t id = 0; id < series.size(); ++id) {
    v1::Point* p = static_cast<int>(id) < points.size() ? points.Mutable(static_cast<int>(id))
                                                        : points.Add();
    p->set_series_id(static_cast<uint32_t>(id));
    p->set_time_unix_nano(now_unix_nano);
    const SeriesBehaviour& b = series[id].behaviour;
    if (series[id].kind == MetricKind::kGauge) {
      p->set_gauge(b.gauge);
      continue;
    }
    if (b.rate_per_second > 0 && dt > 0) {
      // +-10% noise around the mean slope, and the fraction of a count rounded up with its
      // probability, so that slow counters (a few packets a second) keep their mean rate.
      const double noise = 0.9 + 0.2 * Uniform();
      const double increase = b.rate_per_second * dt * noise;
      const double whole = std::floor(increase);
      counters_[id] += static_cast<uint64_t>(whole) + (Uniform() < increase - whole ? 1 : 0);
    }
    p->set_counter(counters_[id]);
  }
}

}  // namespace railwatch::loadgen
