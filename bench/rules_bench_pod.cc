#include "bench/rules_bench_pod.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/vocabulary.h"

namespace railwatch::bench {

std::string HostName(int h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "gpu-node-%05d", h + 1);
  return buf;
}

std::string WriteTopology(int hosts, const std::string& path) {
  std::ofstream out(path);
  out << "switches:\n";
  const int spines = 8;
  for (int r = 0; r < kNics; ++r) {
    out << "  - name: leaf-r" << r << "\n    role: leaf\n    links:\n";
    for (int s = 0; s < spines; ++s) {
      out << "      - {port: up" << s << ", peer: spine-" << s << ", peer_port: p" << r << "}\n";
    }
  }
  for (int s = 0; s < spines; ++s) out << "  - {name: spine-" << s << ", role: spine}\n";
  out << "hosts:\n";
  for (int h = 0; h < hosts; ++h) {
    out << "  - name: " << HostName(h) << "\n    nics:\n";
    for (int n = 0; n < kNics; ++n) {
      out << "      - {device: mlx5_" << n << ", netdev: eth" << n << ", rail: " << n
          << ", switch: leaf-r" << n << ", port: p" << h << "}\n";
    }
  }
  out << "jobs:\n";
  for (int j = 0; j * 128 < hosts; ++j) {
    out << "  - name: job-" << j << "\n    hosts: [";
    for (int h = j * 128; h < std::min(hosts, (j + 1) * 128); ++h) {
      out << (h == j * 128 ? "" : ", ") << HostName(h);
    }
    out << "]\n";
  }
  return path;
}

namespace {

// One series of a NIC before the host and NIC are filled in.
struct Shape {
  const MetricSpec* metric = nullptr;
  bool rdma = false;  // labels device, port (else interface)
  int priority = -1;
  std::string direction;
  std::string counter;  // fabric_rdma_driver_stat_total's label
};

// The slope of one series of NIC (h, n): quiet, except the faults.
double Slope(const Shape& s, int h, int n) {
  const std::string_view name = s.metric->name;
  if (name == "fabric_rdma_port_transmit_bytes_total" ||
      name == "fabric_rdma_port_receive_bytes_total") {
    return (h == 7 && n == 3) ? 20e9 : 40e9;  // one degraded NIC
  }
  if (name == "fabric_rdma_port_rate_bytes_per_second") return 50e9;
  if (name == "fabric_rdma_port_state") return 4;
  if (name == "fabric_rdma_link_downed_total" && h == 11 && n == 2) return 0.2;  // flapping
  if (name == "fabric_pfc_pause_frames_total" && s.priority == 3) {
    return (h == 3 && n == 5 && s.direction == "tx") ? 20000 : 2;  // one storming NIC
  }
  return 0;
}

std::vector<Shape> LegacyShapes() {
  std::vector<Shape> out;
  for (const MetricSpec& m : CanonicalMetrics()) {
    const std::string_view name = m.name;
    if (!m.sysfs.empty() && !name.starts_with("fabric_rdma_driver")) {
      out.push_back(Shape{&m, true, -1, "", ""});
    } else if (name == "fabric_pfc_pause_frames_total" ||
               name == "fabric_netdev_priority_transmit_bytes_total" ||
               name == "fabric_netdev_priority_receive_bytes_total") {
      for (int p = 0; p < 8; ++p) {
        if (name == "fabric_pfc_pause_frames_total") {
          out.push_back(Shape{&m, false, p, "rx", ""});
          out.push_back(Shape{&m, false, p, "tx", ""});
        } else {
          out.push_back(Shape{&m, false, p, "", ""});
        }
      }
    }
  }
  return out;
}

// Every canonical series of an mlx5 NIC (those of the `read` metrics first), then driver
// counters up to per_nic.
std::vector<Shape> Mlx5Shapes(size_t per_nic, const std::vector<std::string>& read) {
  std::vector<Shape> out;
  const MetricSpec* driver_stat = nullptr;
  for (const MetricSpec& m : CanonicalMetrics()) {
    const std::string_view name = m.name;
    if (name == "fabric_rdma_driver_stat_total") driver_stat = &m;
    if (!m.sysfs.empty() && !name.starts_with("fabric_rdma_driver")) {
      out.push_back(Shape{&m, true, -1, "", ""});
    }
    absl::flat_hash_set<std::pair<bool, std::string>> shapes;  // (per priority, direction)
    for (const EthtoolSource& e : m.ethtool) {
      if (e.driver != "mlx5_core" || e.stat.find("{queue}") != std::string_view::npos) continue;
      shapes.insert(
          {e.stat.find("{priority}") != std::string_view::npos, std::string(e.direction)});
    }
    if (!m.netdev_sysfs.empty()) shapes.insert({false, ""});
    std::vector<std::pair<bool, std::string>> sorted(shapes.begin(), shapes.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [per_priority, direction] : sorted) {
      for (int p = per_priority ? 0 : -1; p < (per_priority ? 8 : 0); ++p) {
        out.push_back(Shape{&m, false, p, direction, ""});
      }
    }
  }
  std::stable_partition(out.begin(), out.end(), [&](const Shape& s) {
    return std::find(read.begin(), read.end(), s.metric->name) != read.end();
  });
  for (int k = 0; out.size() < per_nic && driver_stat != nullptr; ++k) {
    out.push_back(Shape{driver_stat, true, -1, "", absl::StrCat("hw_stat_", k)});
  }
  if (out.size() > per_nic) out.resize(per_nic);
  return out;
}

}  // namespace

std::vector<PodSeries> BuildPod(SeriesStore& store, int hosts, int per_nic,
                                const std::vector<std::string>& read, int* padding) {
  const std::vector<Shape> shapes =
      per_nic > 0 ? Mlx5Shapes(static_cast<size_t>(per_nic), read) : LegacyShapes();
  if (padding != nullptr) {
    *padding = static_cast<int>(std::count_if(shapes.begin(), shapes.end(),
                                              [](const Shape& s) { return !s.counter.empty(); }));
  }
  std::vector<PodSeries> series;
  series.reserve(static_cast<size_t>(hosts) * kNics * shapes.size());
  for (int h = 0; h < hosts; ++h) {
    const std::string host = HostName(h);
    for (int n = 0; n < kNics; ++n) {
      const std::string dev = absl::StrCat("mlx5_", n), netdev = absl::StrCat("eth", n);
      for (const Shape& s : shapes) {
        Labels l = {{"host", host}};
        if (s.rdma) {
          l.push_back({"device", dev});
          l.push_back({"port", "1"});
        } else {
          l.push_back({"interface", netdev});
        }
        if (s.priority >= 0) l.push_back({"priority", absl::StrCat(s.priority)});
        if (!s.direction.empty()) l.push_back({"direction", s.direction});
        if (!s.counter.empty()) l.push_back({"counter", s.counter});
        NormalizeLabels(l);
        const bool counter = s.metric->kind == MetricKind::kCounter;
        series.push_back(
            {store.Intern(s.metric->name, l, TraitsOf(s.metric->name, s.metric->kind)),
             Slope(s, h, n), counter});
      }
    }
  }
  return series;
}

void AppendTick(SeriesStore& store, std::span<const PodSeries> series, int64_t now, int tick) {
  constexpr size_t kBatch = 8192;
  std::vector<SeriesStore::PendingSample> batch;
  batch.reserve(kBatch);
  for (const PodSeries& s : series) {
    batch.push_back({s.ref, now, s.counter ? std::floor(s.per_second * tick) : s.per_second});
    if (batch.size() == kBatch) {
      store.AppendMany(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) store.AppendMany(batch);
}

}  // namespace railwatch::bench
