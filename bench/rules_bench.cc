// Rule evaluation at scale: a synthetic pod (hosts x 8 NICs, each NIC with every canonical
// RDMA/RoCE counter and per-priority PFC, ECN and byte counters: about 100 series a NIC, 1M
// series for 11,368 NICs), its topology (one leaf per rail, spines), the shipped playbooks
// cloned (renamed) up to --playbooks, and the time of one Engine::EvaluateOnce.
//
//   build/release/bench/rules_bench [--hosts=1421] [--playbooks=50] [--ticks=21]
//                                   [--retention=60] [--rules=rules]
//
// Prints series, playbooks, ms per evaluation (median, p90, max over --ticks after the first,
// which fills caches and is printed apart; one core: the engine evaluates on one thread) and
// memory per series (RSS growth while building the store divided by series). Traffic is quiet except one storming NIC, one flapping link and one
// degraded NIC, so the tick also does the work of real diagnoses.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/vocabulary.h"
#include "engine/engine.h"

ABSL_FLAG(int, hosts, 1421, "hosts (8 NICs each; 1421 gives 1.0M series)");
ABSL_FLAG(int, playbooks, 50, "playbooks: the shipped ones, cloned under new names up to this");
ABSL_FLAG(int, ticks, 21, "evaluations to time (the first, cold, is reported apart)");
ABSL_FLAG(int, retention, 60, "samples kept per series");
ABSL_FLAG(int, warmup, 12, "samples appended before timing (fills the rate windows)");
ABSL_FLAG(std::string, rules, RAILWATCH_SOURCE_DIR "/rules", "shipped rules directory");

namespace railwatch {
namespace {

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

constexpr int kNics = 8;

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

struct Series {
  SeriesRef ref;
  double per_second;  // counter slope (gauges: constant value)
  bool counter;
};

int Main() {
  const int hosts = absl::GetFlag(FLAGS_hosts);
  FakeClock clock;
  SeriesStore store(SeriesStore::Options{static_cast<size_t>(absl::GetFlag(FLAGS_retention))});

  const long rss0 = RssKb();
  std::vector<Series> series;
  for (int h = 0; h < hosts; ++h) {
    const std::string host = HostName(h);
    for (int n = 0; n < kNics; ++n) {
      const std::string dev = absl::StrCat("mlx5_", n), netdev = absl::StrCat("eth", n);
      for (const MetricSpec& m : CanonicalMetrics()) {
        const std::string_view name = m.name;
        Labels l;
        bool counter = m.kind == MetricKind::kCounter;
        double slope = 0;
        if (!m.sysfs.empty() && name.rfind("fabric_rdma_driver", 0) != 0) {
          l = {{"device", dev}, {"host", host}, {"port", "1"}};
          if (name == "fabric_rdma_port_transmit_bytes_total" ||
              name == "fabric_rdma_port_receive_bytes_total") {
            slope = (h == 7 && n == 3) ? 20e9 : 40e9;  // one degraded NIC
          }
          if (name == "fabric_rdma_port_rate_bytes_per_second") slope = 50e9;
          if (name == "fabric_rdma_port_state") slope = 4;
        } else if (name == "fabric_pfc_pause_frames_total" ||
                   name == "fabric_netdev_priority_transmit_bytes_total" ||
                   name == "fabric_netdev_priority_receive_bytes_total") {
          for (int p = 0; p < 8; ++p) {
            for (const char* dir : {"rx", "tx"}) {
              if (name != "fabric_pfc_pause_frames_total" && std::string(dir) == "tx") continue;
              Labels pl = {{"host", host}, {"interface", netdev},
                           {"priority", absl::StrCat(p)}};
              if (name == "fabric_pfc_pause_frames_total") pl.push_back({"direction", dir});
              NormalizeLabels(pl);
              double s = 0;
              if (name == "fabric_pfc_pause_frames_total" && p == 3) {
                s = (h == 3 && n == 5 && std::string(dir) == "tx") ? 20000 : 2;
              }
              series.push_back({store.Intern(name, pl, m.kind), s, true});
            }
          }
          continue;
        } else {
          continue;
        }
        NormalizeLabels(l);
        series.push_back({store.Intern(name, l, m.kind), slope, counter});
      }
    }
  }
  // A flapping link.
  for (Series& s : series) {
    SeriesMeta meta = store.Meta(s.ref);
    if (meta.name == "fabric_rdma_link_downed_total" && *FindLabel(meta.labels, "host") ==
                                                           HostName(11) &&
        *FindLabel(meta.labels, "device") == "mlx5_2") {
      s.per_second = 0.2;
    }
  }
  auto append_all = [&](int tick) {
    clock.Advance(absl::Seconds(1));
    const int64_t now = clock.NowNanos();
    for (const Series& s : series) {
      store.Append(s.ref, now, s.counter ? std::floor(s.per_second * tick) : s.per_second);
    }
  };
  for (int t = 0; t < absl::GetFlag(FLAGS_warmup); ++t) append_all(t);
  const long rss1 = RssKb();

  // Playbooks: the shipped set, cloned under new names.
  const std::string topo_path = WriteTopology(hosts, "/tmp/rules_bench_topology.yaml");
  absl::StatusOr<Topology> topo = Topology::LoadFile(topo_path);
  if (!topo.ok()) {
    std::fprintf(stderr, "topology: %s\n", std::string(topo.status().message()).c_str());
    return 1;
  }
  auto topology = std::make_shared<const Topology>(std::move(*topo));
  JobRegistry jobs;
  jobs.SetStatic(topology->jobs());
  FabricMap fabric(topology, &jobs);
  EventStore events(EventStore::Options{});

  std::vector<Playbook> playbooks;
  const int want = absl::GetFlag(FLAGS_playbooks);
  for (int copy = 0; static_cast<int>(playbooks.size()) < want; ++copy) {
    LoadResult r = LoadPlaybooks({absl::GetFlag(FLAGS_rules)});
    if (!r.ok() || r.playbooks.empty()) {
      for (const LoadProblem& p : r.problems) std::fprintf(stderr, "%s\n", p.ToString().c_str());
      return 1;
    }
    for (Playbook& pb : r.playbooks) {
      if (static_cast<int>(playbooks.size()) >= want) break;
      if (copy > 0) {
        pb.name = absl::StrCat(pb.name, "_copy", copy);
        for (ExplainRule& e : pb.explains) {
          for (std::string& s : e.playbooks) s = absl::StrCat(s, "_copy", copy);
        }
      }
      playbooks.push_back(std::move(pb));
    }
  }
  const size_t n_playbooks = playbooks.size();
  Engine engine(Engine::Options{}, std::move(playbooks), store, clock,
                Engine::Sources{&events, &fabric});

  std::vector<double> ms;
  for (int t = 0; t < absl::GetFlag(FLAGS_ticks); ++t) {
    append_all(absl::GetFlag(FLAGS_warmup) + t);
    const auto start = std::chrono::steady_clock::now();
    engine.EvaluateOnce();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                           start)
                     .count());
  }
  // The first evaluation fills the selectors' caches; the steady state is the rest.
  std::vector<double> sorted(ms.size() > 1 ? ms.begin() + 1 : ms.begin(), ms.end());
  std::sort(sorted.begin(), sorted.end());
  size_t active = 0;
  for (const v1::Diagnosis& d : engine.List()) active += d.state() != v1::DIAGNOSIS_STATE_RESOLVED;
  std::printf("series: %zu\nplaybooks: %zu\nsamples per series: %d (retention)\n",
              store.size(), n_playbooks, absl::GetFlag(FLAGS_retention));
  std::printf("evaluation ms per tick after the first: median %.1f, p90 %.1f, max %.1f; "
              "first (cold caches) %.1f\n",
              sorted[sorted.size() / 2], sorted[sorted.size() * 9 / 10], sorted.back(), ms[0]);
  std::printf("memory per series: %.0f bytes (RSS %ld -> %ld kB)\n",
              (rss1 - rss0) * 1024.0 / static_cast<double>(store.size()), rss0, rss1);
  // Where the time goes: each distinct playbook's condition alone.
  std::printf("per playbook (condition only, ms):");
  for (const Playbook& pb : engine.playbooks()) {
    if (pb.name.find("_copy") != std::string::npos) continue;
    EvalContext ctx{store, &events, &fabric, clock.NowNanos()};
    const auto start = std::chrono::steady_clock::now();
    const size_t n = pb.condition->Evaluate(ctx).size();
    std::printf(" %s %.1f (%zu)", pb.name.c_str(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          start)
                    .count(),
                n);
  }
  std::printf("\n");
  std::printf("active diagnoses: %zu\n", active);
  for (const v1::Diagnosis& d : engine.List()) {
    if (d.state() != v1::DIAGNOSIS_STATE_RESOLVED) {
      std::printf("  %s %s\n", d.playbook().c_str(), d.location().c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return railwatch::Main();
}
