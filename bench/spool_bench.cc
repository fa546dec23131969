// spool_bench: what the agent's on-disk spool (agent/spool.h) costs. A host agent's batch (1,000
// counters by default, the size SCALING.md sizes from) is appended --batches times; then the
// spool is opened again, as by a restarted agent (recovery scan), and every batch read back
// into a fresh registry (the replay). Prints FIGURE lines: append time per batch against the
// batch's serialisation alone, write rate, recovery time, replay rate. Medians of --runs.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/program.h"
#include "agent/spool.h"

ABSL_FLAG(int, series, 1000, "counters in a batch");
ABSL_FLAG(int, batches, 2000, "batches appended and replayed per run");
ABSL_FLAG(int, runs, 3, "runs; figures are medians");
ABSL_FLAG(std::string, dir, "", "where the spool goes (default: $TMPDIR or /tmp)");

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "spool_bench",
       .summary = "what the agent's on-disk spool costs: append, recovery scan and replay; prints FIGURE lines (medians of --runs).",
       .usage = "Usage: spool_bench [--series=1000] [--batches=2000] [--runs=3] [--dir=DIR]",
       .groups = {
          {"Benchmark", {"series", "batches", "runs", "dir"}},
       }});
  const int series = absl::GetFlag(FLAGS_series);
  const int batches = absl::GetFlag(FLAGS_batches);
  std::string base = absl::GetFlag(FLAGS_dir);
  if (base.empty()) base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const std::string dir = base + "/spool_bench." + std::to_string(getpid());

  std::vector<double> append_us, serialise_us, write_mb_s, recover_ms, replay_per_s;
  double bytes_per_batch = 0;
  for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
    std::filesystem::remove_all(dir);
    railwatch::SeriesRegistry registry(railwatch::Labels{{"host", "gpu-node-001"}});
    std::vector<uint32_t> ids;
    for (int i = 0; i < series; ++i) {
      ids.push_back(registry.Define("fabric_rdma_port_transmit_bytes_total",
                                    railwatch::MetricKind::kCounter,
                                    {{"device", "mlx5_" + std::to_string(i % 8)},
                                     {"port", std::to_string(i / 8)}},
                                    64));
    }
    railwatch::Spool::Options options;
    options.dir = dir;
    uint64_t first;
    std::mt19937_64 rng(run);
    std::vector<uint64_t> values(series, 1'000'000'000);
    railwatch::v1::Batch batch;
    {
      auto spool = railwatch::Spool::Open(options);
      if (!spool.ok()) {
        fprintf(stderr, "spool_bench: %s\n", std::string(spool.status().message()).c_str());
        return 1;
      }
      first = (*spool)->first_sequence();
      double append = 0, serialise = 0;
      for (int b = 0; b < batches; ++b) {
        batch.Clear();
        batch.set_sequence(first + b);
        const int64_t t = 1'700'000'000'000'000'000 + int64_t{b} * 1'000'000'000;
        for (int i = 0; i < series; ++i) {
          values[i] += rng() % 100'000;
          railwatch::v1::Point* p = batch.add_points();
          p->set_series_id(ids[i]);
          p->set_time_unix_nano(t);
          p->set_counter(values[i]);
        }
        auto s0 = Clock::now();
        const std::string bytes = batch.SerializeAsString();
        serialise += Seconds(s0);
        bytes_per_batch = static_cast<double>(bytes.size());
        auto a0 = Clock::now();
        if (absl::Status s = (*spool)->Append(batch, registry); !s.ok()) {
          fprintf(stderr, "spool_bench: %s\n", std::string(s.message()).c_str());
          return 1;
        }
        append += Seconds(a0);
      }
      append_us.push_back(append / batches * 1e6);
      serialise_us.push_back(serialise / batches * 1e6);
      write_mb_s.push_back(static_cast<double>((*spool)->stats().bytes_spooled) / append / 1e6);
    }
    // A restarted agent: recovery scan, then the replay into a registry of its own.
    auto r0 = Clock::now();
    auto spool = railwatch::Spool::Open(options);
    recover_ms.push_back(Seconds(r0) * 1e3);
    if (!spool.ok() || (*spool)->stats().batches_recovered != static_cast<uint64_t>(batches)) {
      fprintf(stderr, "spool_bench: recovery found the wrong number of batches\n");
      return 1;
    }
    railwatch::SeriesRegistry fresh(railwatch::Labels{{"host", "gpu-node-001"}});
    auto p0 = Clock::now();
    for (int b = 0; b < batches; ++b) {
      if (!(*spool)->Read(first + b, fresh, batch).ok() || batch.points_size() != series) {
        fprintf(stderr, "spool_bench: batch %d did not read back\n", b);
        return 1;
      }
    }
    replay_per_s.push_back(batches / Seconds(p0));
  }
  std::filesystem::remove_all(dir);
  printf("spool in %s, %d batches of %d counters (%.0f bytes serialised), %d runs\n", base.c_str(),
         batches, series, bytes_per_batch, absl::GetFlag(FLAGS_runs));
  printf("FIGURE spool_append_us_per_batch %.1f us\n", Median(append_us));
  printf("FIGURE spool_serialise_only_us_per_batch %.1f us\n", Median(serialise_us));
  printf("FIGURE spool_append_write_rate %.0f MB/s\n", Median(write_mb_s));
  printf("FIGURE spool_recover_ms %.1f ms\n", Median(recover_ms));
  printf("FIGURE spool_replay_batches_per_s %.0f batches/s\n", Median(replay_per_s));
  return 0;
}
