// Memory per series in the SeriesStore with 10 minutes of 1 s history (issue 8), and the
// cost of an append.
//
//   build/release/bench/store_bench [--series=20000] [--samples=600] [--kind=]
//
// For each kind of series (each in a forked child, so one kind's freed memory does not hide
// the next one's growth) it interns --series series, appends --samples samples 1 s apart
// to each (a host's series in one AppendMany per collector, as ingest does) and prints
//   FIGURE store_bytes_per_series_<kind> <RSS growth / series> bytes
//   FIGURE store_accounted_bytes_per_series_<kind> <SeriesStore::MemoryBytes / series> bytes
//   FIGURE store_append_ns_per_sample_<kind> <ns> ns
// Kinds: constant (an error counter that never moves), busy (a 100 Gb/s byte counter with
// 2% noise), gauge (a temperature with a fraction), host_mix (a host of 8 NICs x 125 series
// as the simulator's hosts send them: per NIC 4 byte counters and 15 packet counters moving,
// 2 gauges, 104 error counters that stay put; sysfs and ethtool series carry their
// collector's time, a few ms apart).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/program.h"
#include "store/series_store.h"

ABSL_FLAG(int, series, 20000, "series per kind");
ABSL_FLAG(int, samples, 600, "samples appended per series, 1 s apart (the retention too)");
ABSL_FLAG(std::string, kind, "", "one kind only (constant, busy, gauge, host_mix); empty: all");

namespace railwatch {
namespace {

constexpr int64_t kSec = 1'000'000'000;

// Resident memory from /proc/self/statm (pages).
long RssKb() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

enum class Shape { kConstant, kBytes, kPackets, kGauge, kIntGauge };

struct Generated {
  SeriesRef ref;
  Shape shape;
  int collector;  // series of one collector on one host share a time
  double value;
};

double Next(Shape shape, double v, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  switch (shape) {
    case Shape::kConstant:
    case Shape::kIntGauge:
      return v;
    case Shape::kBytes:
      return v + std::floor(12.5e9 * noise(rng));  // 100 Gb/s
    case Shape::kPackets:
      return v + std::floor(12.5e9 / 4096 * noise(rng));
    case Shape::kGauge:
      return std::round((45 + 10 * std::uniform_real_distribution<double>(0, 1)(rng)) * 8) / 8 +
             0.1;
  }
  return v;
}

// A host's series: per NIC 4 byte counters, 15 packet counters, 2 gauges, 104 constant.
std::vector<Shape> HostShapes() {
  std::vector<Shape> nic;
  for (int i = 0; i < 4; ++i) nic.push_back(Shape::kBytes);
  for (int i = 0; i < 15; ++i) nic.push_back(Shape::kPackets);
  nic.push_back(Shape::kGauge);
  nic.push_back(Shape::kIntGauge);
  while (nic.size() < 125) nic.push_back(Shape::kConstant);
  return nic;
}

Shape ShapeOf(const std::string& kind, int i) {
  static const std::vector<Shape> host = HostShapes();
  if (kind == "busy") return Shape::kBytes;
  if (kind == "gauge") return Shape::kGauge;
  if (kind == "host_mix") return host[i % 125];
  return Shape::kConstant;
}

void RunKind(const std::string& kind, int series, int samples) {
  std::mt19937_64 rng(1);
  // The bench's own tables first, so that the RSS growth below is the store's alone.
  std::vector<Generated> all(series);
  std::vector<std::vector<size_t>> by_collector(2 * (series / 1000 + 1));
  size_t largest = 0;
  for (int i = 0; i < series; ++i) {
    // Half a NIC's series from sysfs, half from ethtool: two collectors, two times.
    const int collector = i / 1000 * 2 + (i % 125 % 2);
    by_collector[collector].push_back(i);
    largest = std::max(largest, by_collector[collector].size());
    const Shape shape = ShapeOf(kind, i);
    all[i] = {0, shape, collector,
              shape == Shape::kIntGauge ? 100000 : shape == Shape::kGauge ? 50.5 : 0};
  }
  std::vector<SeriesStore::PendingSample> batch;
  batch.reserve(largest);
  const long rss_before = RssKb();
  SeriesStore store(SeriesStore::Options{.capacity = static_cast<size_t>(samples)});
  for (int i = 0; i < series; ++i) {
    const int h = i / 1000, nic = i % 1000 / 125, k = i % 125;
    const Labels labels = {{"device", "mlx5_" + std::to_string(nic)},
                           {"host", "gpu-node-" + std::to_string(h)},
                           {"port", "1"}};
    const MetricKind mk = all[i].shape == Shape::kGauge || all[i].shape == Shape::kIntGauge
                              ? MetricKind::kGauge
                              : MetricKind::kCounter;
    all[i].ref = store.Intern("fabric_series_" + std::to_string(k), labels, mk, 64);
  }
  // One batch per collector a second, as agents send them.
  std::chrono::nanoseconds append_time{0};
  const int64_t t0 = 1'700'000'000 * kSec;
  for (int s = 0; s < samples; ++s) {
    for (size_t c = 0; c < by_collector.size(); ++c) {
      const int64_t t = t0 + s * kSec + static_cast<int64_t>(c) * 7'000'000 % kSec + s % 3 * 1000;
      batch.clear();
      for (size_t i : by_collector[c]) {
        all[i].value = Next(all[i].shape, all[i].value, rng);
        batch.push_back({all[i].ref, t, all[i].value});
      }
      const auto a = std::chrono::steady_clock::now();
      store.AppendMany(batch);
      append_time += std::chrono::steady_clock::now() - a;
    }
  }
  const long rss_after = RssKb();
  const double per_series = (rss_after - rss_before) * 1024.0 / series;
  std::printf("FIGURE store_bytes_per_series_%s %.0f bytes\n", kind.c_str(), per_series);
  std::printf("FIGURE store_accounted_bytes_per_series_%s %.0f bytes\n", kind.c_str(),
              static_cast<double>(store.MemoryBytes()) / series);
  std::printf("FIGURE store_append_ns_per_sample_%s %.1f ns\n", kind.c_str(),
              static_cast<double>(append_time.count()) / (static_cast<double>(series) * samples));
  std::fflush(stdout);
}

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "store_bench",
       .summary = "memory per series in the SeriesStore with 10 minutes of 1 s history, and the cost of an append; prints FIGURE lines.",
       .usage = "Usage: store_bench [--series=20000] [--samples=600] [--kind=constant|busy|gauge|host_mix]",
       .groups = {
          {"Benchmark", {"series", "samples", "kind"}},
       }});
  const int series = absl::GetFlag(FLAGS_series), samples = absl::GetFlag(FLAGS_samples);
  const std::string only = absl::GetFlag(FLAGS_kind);
  std::printf("series per kind: %d, samples per series: %d (1 s apart, retention %d)\n", series,
              samples, samples);
  for (const char* kind : {"constant", "busy", "gauge", "host_mix"}) {
    if (!only.empty() && only != kind) continue;
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      railwatch::RunKind(kind, series, samples);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "store_bench: kind %s failed\n", kind);
      return 1;
    }
  }
  return 0;
}
