// railwatch_spool_driver: an agent whose only series is a known counter, for the spool's
// end-to-end test (tests/e2e/agent_spool_e2e.sh). It is wired like railwatch-agent (the real
// SeriesRegistry, BatchBuilder, Spool and Sender, the spool's instance id and sequences) and
// every --interval it produces one sample of railwatch_e2e_tick_total: value k at time
// k x interval, k from the wall clock, so that a later process never repeats an earlier one's.
// After the batch holding tick k is handed to the sender, "k" goes to --produced (a line,
// flushed): what the daemon must end up with, once each.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/program.h"
#include "agent/batch_builder.h"
#include "agent/sender.h"
#include "agent/spool.h"
#include "common/logging.h"
#include "common/signals.h"

ABSL_FLAG(std::string, server, "", "railwatchd address");
ABSL_FLAG(std::string, agent_id, "spool-e2e", "agent id (and host label)");
ABSL_FLAG(std::string, spool_dir, "", "spool directory");
ABSL_FLAG(std::string, produced, "", "file the produced ticks are appended to");
ABSL_FLAG(absl::Duration, interval, absl::Milliseconds(20), "one tick per interval");
ABSL_FLAG(int, max_queued_batches, 50, "batches kept in memory");

int main(int argc, char** argv) {
  static absl::Notification stop;
  railwatch::NotifyOnTerminationSignal(stop);
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "railwatch_spool_driver",
       .summary = "the agent's real Sender and Spool sending a known counter, for e2e.agent_spool.",
       .usage = "Usage: railwatch_spool_driver --server=ADDR --spool_dir=DIR --produced=FILE",
       .groups = {
          {"Driver", {"server", "agent_id", "spool_dir", "produced", "interval", "max_queued_batches"}},
       }});
  if (absl::Status s = railwatch::InitLogging("railwatch_spool_driver", "info"); !s.ok()) return 2;
  const std::string id = absl::GetFlag(FLAGS_agent_id);
  FILE* produced = fopen(absl::GetFlag(FLAGS_produced).c_str(), "a");
  if (produced == nullptr) {
    spdlog::critical("--produced: cannot open {}", absl::GetFlag(FLAGS_produced));
    return 2;
  }

  railwatch::SeriesRegistry registry(railwatch::Labels{{"host", id}});
  railwatch::BatchBuilder builder(registry);
  railwatch::Sender::Options options;
  options.server = absl::GetFlag(FLAGS_server);
  options.max_queued_batches = static_cast<size_t>(absl::GetFlag(FLAGS_max_queued_batches));
  options.backoff.initial = absl::Milliseconds(100);
  options.backoff.max = absl::Milliseconds(500);
  options.hello.set_agent_id(id);
  options.hello.set_hostname(id);
  options.hello.set_role(railwatch::v1::AGENT_ROLE_HOST);
  railwatch::Spool::Options spool_options;
  spool_options.dir = absl::GetFlag(FLAGS_spool_dir);
  std::unique_ptr<railwatch::Spool> spool = railwatch::OpenAgentSpool(
      spool_options, options.hello, builder, railwatch::RealClock::Get());
  if (!spool) return 2;
  const uint32_t tick_id =
      registry.Define("railwatch_e2e_tick_total", railwatch::MetricKind::kCounter, {}, 64);
  railwatch::Sender sender(options, registry, std::move(spool));
  sender.Start();

  const int64_t interval = absl::ToInt64Nanoseconds(absl::GetFlag(FLAGS_interval));
  // Ticks start after the current one: a driver started within the same tick as the one
  // SIGKILLed before it must not produce that tick again (the daemon would drop the repeat as
  // out of order, and the test count it).
  int64_t last = absl::GetCurrentTimeNanos() / interval;
  while (!stop.HasBeenNotified()) {
    const int64_t k = std::max(last + 1, absl::GetCurrentTimeNanos() / interval);
    last = k;
    builder.Counter(tick_id, static_cast<uint64_t>(k), k * interval);
    sender.Enqueue(builder.Take(sender.SpareBatch()));
    fprintf(produced, "%lld\n", static_cast<long long>(k));
    fflush(produced);
    stop.WaitForNotificationWithDeadline(absl::FromUnixNanos((k + 1) * interval));
  }
  sender.Stop(absl::Seconds(5));
  const railwatch::Spool::Stats s = sender.spool()->stats();
  const railwatch::Sender::Stats t = sender.stats();
  printf("spooled %llu recovered %llu replayed %llu dropped %llu sent %llu from_spool %llu\n",
         static_cast<unsigned long long>(s.batches_spooled),
         static_cast<unsigned long long>(s.batches_recovered),
         static_cast<unsigned long long>(s.batches_replayed),
         static_cast<unsigned long long>(s.batches_dropped),
         static_cast<unsigned long long>(t.batches_sent),
         static_cast<unsigned long long>(t.batches_from_spool));
  return 0;
}
