// railwatch-loadgen: plays many host agents against railwatchd over real Ingest streams, to
// measure the daemon's ingest (bench/ingest.sh, docs/BENCHMARKS.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/program.h"
#include "bench/loadgen_client.h"
#include "common/logging.h"
#include "common/signals.h"

ABSL_FLAG(std::string, server, "127.0.0.1:9740", "railwatchd's gRPC address");
ABSL_FLAG(int, agents, 1024, "simulated host agents, one stream and connection each");
ABSL_FLAG(int, series, 1000, "series per agent, spread over its 8 NICs");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1), "one batch per agent this often");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(60), "how long to run; 0: until SIGTERM/SIGINT");
ABSL_FLAG(std::string, host_prefix, "load-", "agent i is host <prefix><5-digit i>");
ABSL_FLAG(int, threads, 2, "threads driving the streams");
ABSL_FLAG(int, first_host, 0, "index of the first agent (to split a fleet over processes)");

namespace railwatch::loadgen {
namespace {

struct Totals {
  uint64_t samples = 0, batches = 0, acked = 0, skipped = 0, started = 0, failed = 0;
  int64_t connected = 0;
};

Totals Sum(const std::vector<std::unique_ptr<Worker>>& workers) {
  Totals t;
  for (const auto& w : workers) {
    const Counters& c = w->counters();
    t.samples += c.samples_sent.load(std::memory_order_relaxed);
    t.batches += c.batches_sent.load(std::memory_order_relaxed);
    t.acked += c.batches_acked.load(std::memory_order_relaxed);
    t.skipped += c.batches_skipped.load(std::memory_order_relaxed);
    t.started += c.streams_started.load(std::memory_order_relaxed);
    t.failed += c.streams_failed.load(std::memory_order_relaxed);
    t.connected += c.connected.load(std::memory_order_relaxed);
  }
  return t;
}

int Main(absl::Notification& stop) {
  const int agents = absl::GetFlag(FLAGS_agents);
  const int series = absl::GetFlag(FLAGS_series);
  const int threads = absl::GetFlag(FLAGS_threads);
  const int first_host = absl::GetFlag(FLAGS_first_host);
  const absl::Duration interval = absl::GetFlag(FLAGS_interval);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  if (absl::GetFlag(FLAGS_server).empty() || agents < 1 || series < 1 || threads < 1 ||
      first_host < 0 || int64_t{first_host} + agents > 100000 ||
      interval < absl::Milliseconds(10) || duration < absl::ZeroDuration()) {
    fprintf(stderr,
            "railwatch-loadgen: need --server, --agents >= 1, --series >= 1, --threads >= 1, "
            "0 <= --first_host, --first_host + --agents <= 100000 (5-digit host index), "
            "--interval >= 10ms, --duration >= 0\n");
    return 2;
  }

  const HostPlan plan(series);
  const WorkerOptions options{absl::GetFlag(FLAGS_server), interval,
                              absl::GetFlag(FLAGS_host_prefix)};
  // Agents start spread evenly over one interval, round-robin over the workers, a moment from
  // now (creating the channels takes a while for thousands of agents).
  std::vector<std::vector<std::pair<int, absl::Duration>>> shares(static_cast<size_t>(threads));
  for (int i = 0; i < agents; ++i) {
    shares[static_cast<size_t>(i % threads)].push_back({first_host + i, interval * i / agents});
  }
  const absl::Time start = absl::Now() + absl::Milliseconds(200);
  std::vector<std::unique_ptr<Worker>> workers;
  for (auto& share : shares) {
    workers.push_back(std::make_unique<Worker>(options, plan, std::move(share), start));
  }
  spdlog::info("{} agents x {} series ({} per host plan) every {} to {} on {} threads", agents,
               series, plan.size(), absl::FormatDuration(interval), options.server, threads);
  const absl::Time began = absl::Now();
  for (auto& w : workers) w->Start();

  Totals last;
  absl::Time last_time = began;
  const absl::Time end =
      duration == absl::ZeroDuration() ? absl::InfiniteFuture() : began + duration;
  while (!stop.HasBeenNotified()) {
    const absl::Time next = std::min(last_time + absl::Seconds(1), end);
    if (stop.WaitForNotificationWithDeadline(next)) break;
    const absl::Time now = absl::Now();
    const Totals t = Sum(workers);
    const double dt = absl::ToDoubleSeconds(now - last_time);
    printf("loadgen: agents=%d connected=%lld sent=%.0f samples/s acked=%.0f batches/s\n", agents,
           static_cast<long long>(t.connected),
           dt > 0 ? static_cast<double>(t.samples - last.samples) / dt : 0,
           dt > 0 ? static_cast<double>(t.acked - last.acked) / dt : 0);
    fflush(stdout);
    last = t;
    last_time = now;
    if (now >= end) break;
  }
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - began);
  for (auto& w : workers) w->StopAndJoin();
  const Totals t = Sum(workers);
  printf("loadgen summary: agents=%d series=%d seconds=%.1f samples_sent=%llu "
         "samples_per_s=%.0f batches_sent=%llu batches_acked=%llu batches_skipped=%llu "
         "streams_started=%llu streams_failed=%llu\n",
         agents, series, elapsed, static_cast<unsigned long long>(t.samples),
         elapsed > 0 ? static_cast<double>(t.samples) / elapsed : 0,
         static_cast<unsigned long long>(t.batches), static_cast<unsigned long long>(t.acked),
         static_cast<unsigned long long>(t.skipped), static_cast<unsigned long long>(t.started),
         static_cast<unsigned long long>(t.failed));
  fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace railwatch::loadgen

int main(int argc, char** argv) {
  static absl::Notification stop_signal;
  railwatch::StartProgram(
      argc, argv,
      {.name = "railwatch-loadgen",
       .summary = "plays many railwatch host agents over real gRPC Ingest streams (bench/ingest.sh).",
       .usage = "Usage: railwatch-loadgen --server=HOST:PORT [--agents=1024] [--series=1000] [--interval=1s] [--duration=60s]",
       .groups = {
          {"Load", {"server", "agents", "series", "interval", "duration", "host_prefix", "threads", "first_host"}},
          {"Logging", {"log_level"}},
       }},
      stop_signal);
  return railwatch::loadgen::Main(stop_signal);
}
