// Rule evaluation at scale: a synthetic pod (bench/rules_bench_pod.h), its topology, the
// shipped playbooks (cloned under new names up to --playbooks, or the shipped set alone with
// --playbooks=0), and the time of one Engine::EvaluateOnce per simulated second.
//
//   issue 8, 1,024 hosts x 1,000 series, shipped playbooks, retention 600, 2 threads:
//     build/release/bench/rules_bench --hosts=1024 --series_per_host=1000 --playbooks=0
//         --retention=600 --threads=2
//   issue 5, 1M series, 50 playbooks: build/release/bench/rules_bench (the defaults)
//
// Steady state: before timing, --warmup seconds of samples are appended (default: as many as
// --retention keeps, so every ring is full and a 10-minute window holds 600 samples, as in a
// daemon that has run for ten minutes), and the engine evaluates every --warmup_every seconds
// of them (untimed), so selector caches are warm and diagnoses with `for` up to a few minutes
// have fired. Then each of --ticks seconds appends one sample per series (untimed) and times
// one evaluation. Prints p50/p90/p99/max of those and FIGURE lines for bench/run.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "bench/rules_bench_pod.h"
#include "common/clock.h"
#include "common/program.h"
#include "engine/engine.h"

ABSL_FLAG(int, hosts, 1421, "hosts (8 NICs each; 1421 gives 1.0M series with the issue-5 set)");
ABSL_FLAG(int, series_per_host, 0,
          "series per host (a multiple of 8: canonical mlx5 series, padded with driver "
          "counters); 0: the issue-5 set of about 704");
ABSL_FLAG(int, playbooks, 50,
          "playbooks: the shipped ones, cloned under new names up to this; 0: the shipped set");
ABSL_FLAG(int, threads, 1, "Engine::Options::threads");
ABSL_FLAG(int, ticks, 60, "evaluations to time");
ABSL_FLAG(int, retention, 60, "samples kept per series");
ABSL_FLAG(int, warmup, -1, "seconds of samples appended before timing; -1: --retention");
ABSL_FLAG(int, warmup_every, 30, "evaluate (untimed) every this many warm-up seconds");
ABSL_FLAG(std::string, rules, RAILWATCH_SOURCE_DIR "/rules", "shipped rules directory");
ABSL_FLAG(bool, per_playbook, true, "print each shipped condition's time alone");
ABSL_FLAG(int, ingest_seconds, 0,
          "then run the engine's own thread this many seconds under continuous ingest (each "
          "second's samples in 1,024 slices spread over the second, a Poke after each, as "
          "1,024 agents would) and print evaluations per second");

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

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// User + system CPU time of every thread of the process.
double CpuMs() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::optional<std::vector<Playbook>> LoadClones(int want) {
  std::vector<Playbook> playbooks;
  for (int copy = 0; copy == 0 || static_cast<int>(playbooks.size()) < want; ++copy) {
    LoadResult r = LoadPlaybooks({absl::GetFlag(FLAGS_rules)});
    if (!r.ok() || r.playbooks.empty()) {
      for (const LoadProblem& p : r.problems) std::fprintf(stderr, "%s\n", p.ToString().c_str());
      return std::nullopt;
    }
    for (Playbook& pb : r.playbooks) {
      if (want > 0 && static_cast<int>(playbooks.size()) >= want) break;
      if (copy > 0) {
        pb.name = absl::StrCat(pb.name, "_copy", copy);
        for (ExplainRule& e : pb.explains) {
          for (std::string& s : e.playbooks) s = absl::StrCat(s, "_copy", copy);
        }
      }
      playbooks.push_back(std::move(pb));
    }
    if (want <= 0) break;
  }
  return playbooks;
}

int Main() {
  const int hosts = absl::GetFlag(FLAGS_hosts);
  const int retention = absl::GetFlag(FLAGS_retention);
  const int warmup = absl::GetFlag(FLAGS_warmup) < 0 ? retention : absl::GetFlag(FLAGS_warmup);
  const auto began = std::chrono::steady_clock::now();
  FakeClock clock;
  SeriesStore store(SeriesStore::Options{static_cast<size_t>(retention)});

  std::optional<std::vector<Playbook>> playbooks = LoadClones(absl::GetFlag(FLAGS_playbooks));
  if (!playbooks) return 1;
  std::vector<std::string> read;
  for (const Playbook& pb : *playbooks) {
    if (pb.condition != nullptr) pb.condition->CollectMetricNames(read);
  }

  const long rss0 = RssKb();
  int padding = 0;
  const std::vector<bench::PodSeries> series = bench::BuildPod(
      store, hosts, absl::GetFlag(FLAGS_series_per_host) / bench::kNics, read, &padding);

  int second = 0;
  auto append = [&] {
    clock.Advance(absl::Seconds(1));
    bench::AppendTick(store, series, clock.NowNanos(), second++);
  };

  const std::string topo_path =
      bench::WriteTopology(hosts, absl::StrCat("/tmp/rules_bench_topology.", getpid(), ".yaml"));
  absl::StatusOr<Topology> topo = Topology::LoadFile(topo_path);
  std::remove(topo_path.c_str());
  if (!topo.ok()) {
    std::fprintf(stderr, "topology: %s\n", std::string(topo.status().message()).c_str());
    return 1;
  }
  auto topology = std::make_shared<const Topology>(std::move(*topo));
  JobRegistry jobs;
  jobs.SetStatic(topology->jobs());
  FabricMap fabric(topology, &jobs);
  EventStore events(EventStore::Options{});

  const size_t n_playbooks = playbooks->size();
  Engine::Options options;
  options.threads = absl::GetFlag(FLAGS_threads);
  Engine engine(options, std::move(*playbooks), store, clock, Engine::Sources{&events, &fabric});

  // Warm-up: fill the rings, evaluating now and then (the first evaluation is the cold one).
  double cold_ms = -1;
  const int every = std::max(1, absl::GetFlag(FLAGS_warmup_every));
  for (int t = 0; t < warmup; ++t) {
    append();
    if ((t + 1) % every == 0 || t + 1 == warmup) {
      const auto start = std::chrono::steady_clock::now();
      engine.EvaluateOnce();
      if (cold_ms < 0) cold_ms = Ms(start);
    }
  }
  const long rss1 = RssKb();

  // Wall time per tick, and the CPU time of the process's threads over it (what the tick
  // costs whatever else runs on the machine).
  std::vector<double> ms, cpu_ms;
  for (int t = 0; t < absl::GetFlag(FLAGS_ticks); ++t) {
    append();
    const double cpu0 = CpuMs();
    const auto start = std::chrono::steady_clock::now();
    engine.EvaluateOnce();
    ms.push_back(Ms(start));
    cpu_ms.push_back(CpuMs() - cpu0);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  size_t active = 0, firing = 0;
  for (const AlertRecord& a : engine.List()) {
    active += a.state != AlertState::kResolved;
    firing += a.firing();
  }
  std::printf("series: %zu (%d hosts, %zu a NIC of which %d driver counters)\n", store.size(),
              hosts, series.size() / hosts / bench::kNics, padding);
  std::printf("playbooks: %zu\nthreads: %d\n", n_playbooks, engine.threads());
  std::printf("samples per series: %d retained, %d appended before timing\n", retention, warmup);
  std::printf(
      "evaluation ms per tick, %zu steady-state ticks: p50 %.1f, p90 %.1f, p99 %.1f, "
      "max %.1f; first (cold caches) %.1f\n",
      sorted.size(), Percentile(sorted, 0.5), Percentile(sorted, 0.9), Percentile(sorted, 0.99),
      sorted.back(), cold_ms);
  std::printf("CPU ms per tick (all threads): p50 %.1f, p99 %.1f\n", Percentile(cpu_ms, 0.5),
              Percentile(cpu_ms, 0.99));
  std::printf("memory per series: %.0f bytes (RSS %ld -> %ld kB)\n",
              (rss1 - rss0) * 1024.0 / static_cast<double>(store.size()), rss0, rss1);
  if (absl::GetFlag(FLAGS_per_playbook)) {
    // Where the time goes: each distinct playbook's condition alone.
    std::printf("per playbook (condition only, ms):");
    for (const Playbook& pb : engine.playbooks()) {
      if (pb.name.find("_copy") != std::string::npos) continue;
      EvalContext ctx{store, &events, &fabric, clock.NowNanos()};
      const auto start = std::chrono::steady_clock::now();
      const size_t n = pb.condition->Evaluate(ctx).size();
      std::printf(" %s %.1f (%zu)", pb.name.c_str(), Ms(start), n);
    }
    std::printf("\n");
  }
  std::printf("active diagnoses: %zu (%zu firing)\n", active, firing);
  for (const AlertRecord& a : engine.List()) {
    if (a.state != AlertState::kResolved) {
      std::printf("  %s %s %s\n", a.playbook.c_str(), a.location.c_str(),
                  a.firing() ? "firing" : "pending");
    }
  }
  if (const int seconds = absl::GetFlag(FLAGS_ingest_seconds); seconds > 0) {
    // The engine's thread, poked the way ingest pokes it; the clock moves a second a second.
    const uint64_t before = engine.stats().evaluations;
    engine.Start();
    constexpr size_t kSlices = 1024;
    const auto began_ingest = std::chrono::steady_clock::now();
    for (int s = 0; s < seconds; ++s) {
      clock.Advance(absl::Seconds(1));
      const int64_t now = clock.NowNanos();
      const auto second_start = std::chrono::steady_clock::now();
      const size_t per_slice = (series.size() + kSlices - 1) / kSlices;
      for (size_t k = 0; k < kSlices; ++k) {
        const size_t from = std::min(series.size(), k * per_slice);
        const size_t to = std::min(series.size(), from + per_slice);
        bench::AppendTick(store, std::span(series).subspan(from, to - from), now, second);
        engine.Poke();
        std::this_thread::sleep_until(second_start +
                                      std::chrono::microseconds(1'000'000 * (k + 1) / kSlices));
      }
      ++second;
    }
    engine.Stop();
    const double wall = Ms(began_ingest) / 1000;
    const double per_second = static_cast<double>(engine.stats().evaluations - before) / wall;
    std::printf(
        "under continuous ingest (%d s, 1,024 pokes a second): %.1f evaluations a "
        "second, last took %.1f ms\n",
        seconds, per_second, engine.stats().last_duration_seconds * 1000);
    std::printf("FIGURE rules_evaluations_per_s_under_ingest %.1f 1/s\n", per_second);
  }
  std::printf("FIGURE rules_tick_p99_ms %.1f ms\n", Percentile(sorted, 0.99));
  std::printf("FIGURE rules_tick_p50_ms %.1f ms\n", Percentile(sorted, 0.5));
  std::printf("run time: %.0f s\n", Ms(began) / 1000);
  return 0;
}

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "rules_bench",
       .summary =
           "rule evaluation at scale: a synthetic pod, its topology and the shipped playbooks; "
           "times Engine::EvaluateOnce per simulated second and prints FIGURE lines.",
       .usage = "Usage: rules_bench [--hosts=1421] [--series_per_host=N] [--playbooks=50] "
                "[--threads=1] [--ticks=60]",
       .groups = {
           {"Pod", {"hosts", "series_per_host", "retention", "ingest_seconds"}},
           {"Playbooks", {"rules", "playbooks", "per_playbook"}},
           {"Timing", {"threads", "ticks", "warmup", "warmup_every"}},
       }});
  return railwatch::Main();
}
