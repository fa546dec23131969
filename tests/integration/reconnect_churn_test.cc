// 1,000 reconnects of an agent's Sender to an in-process daemon leave the process (agent and
// daemon both live in it) with the threads, file descriptors and memory it had after a warm-up:
// a leaked stream reactor, channel, socket or thread per reconnect would show here.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "agent/batch_builder.h"
#include "agent/sender.h"
#include "gnmi_test_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "liveness_util.h"
#include "loopback_daemon.h"
#include "railwatch/v1/query.grpc.pb.h"
#include "support/freezing_proxy.h"
#include "support/sanitizers.h"

// Allocators keep freed memory in per-thread caches and arenas that grow and shrink with the
// work gRPC's threads happen to do; 8 MB over 1,000 reconnects is 8 KB a reconnect, less than
// one stream's buffers, so a leak of any per-connection object still fails it. Under
// AddressSanitizer (a small quarantine, as in tests/unit/gnmi_client/resilience_test.cc, whose
// comment says why) redzones make every connection cost far more: a wider bound.
#if RAILWATCH_ASAN
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=4"; }
constexpr long kRssSlackKb = 48 * 1024;
#else
constexpr long kRssSlackKb = 8 * 1024;
#endif

namespace railwatch::testing {
namespace reconnect_churn_test {

constexpr int64_t kT0 = 1'800'000'000'000'000'000;

// Threads of this process by name (/proc/self/task/*/comm). gRPC's executor
// ("default-executor") starts threads when work queues up, up to twice the cores, and keeps
// them: it is counted apart from the rest, which must come back exactly.
struct Threads {
  int executor = 0;
  int other = 0;
};
Threads CountThreads() {
  Threads t;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    (name.rfind("default-executo", 0) == 0 ? t.executor : t.other) += 1;
  }
  return t;
}

TEST(ReconnectChurnTest, AThousandReconnectsLeaveThreadsFdsAndRssFlat) {
  std::unique_ptr<Daemon> daemon = StartLoopbackDaemon();
  ASSERT_NE(daemon, nullptr);
  auto query = QueryStub(*daemon);
  FreezingProxy path(daemon->grpc_address());
  ASSERT_TRUE(path.Start().ok());

  SeriesRegistry registry(Labels{{"host", "churn-node"}});
  const uint32_t id = registry.Define("fabric_rdma_port_transmit_bytes_total",
                                      MetricKind::kCounter,
                                      {{"device", "mlx5_0"}, {"port", "1"}}, 64);
  Sender::Options so = HostSenderOptions("churn-node", path.address(), 42);
  so.backoff.initial = absl::Milliseconds(1);
  so.backoff.max = absl::Milliseconds(5);
  Sender sender(so, registry);
  sender.Start();

  // One reconnect: a batch goes over the current stream and is stored, then the proxy cuts
  // the connection under both ends and the sender comes back on a new one.
  uint64_t sequence = 0;
  auto reconnect = [&] {
    ++sequence;
    auto batch = std::make_shared<v1::Batch>();
    batch->set_sequence(sequence);
    v1::Point* p = batch->add_points();
    p->set_series_id(id);
    p->set_time_unix_nano(kT0 + static_cast<int64_t>(sequence) * 1'000'000'000);
    p->set_counter(sequence * 1000);
    sender.Enqueue(std::move(batch));
    const bool stored = WaitUntil(
        [&] {
          return sender.stats().connects >= sequence &&
                 AgentLastSequence(*query, "churn-node") >= sequence;
        },
        absl::Seconds(10), absl::Milliseconds(1));
    path.CutAll();
    return stored;
  };
  // The same state for both measurements: every stream cut so far freed by the daemon, and
  // the sender welcomed on its next one (one connection open: two sockets in the proxy, one
  // at each end).
  auto settled = [&] {
    return WaitUntil(
        [&] {
          return ScrapeValue(*daemon, "railwatch_ingest_streams_aborted_total") >=
                     static_cast<double>(sequence) &&
                 sender.stats().connects > sequence && path.forwarding() == 1;
        },
        absl::Seconds(10));
  };

  constexpr int kWarmUp = 50;
  constexpr int kReconnects = 1000;
  for (int i = 0; i < kWarmUp; ++i) ASSERT_TRUE(reconnect()) << "warm-up reconnect " << i;
  ASSERT_TRUE(settled());
  const Threads threads = CountThreads();
  const int fds = OpenFdCount();
  const long rss = RssKb();

  const absl::Time start = absl::Now();
  for (int i = 0; i < kReconnects; ++i) ASSERT_TRUE(reconnect()) << "reconnect " << i;
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(settled());
  // gRPC closes a dead connection's socket shortly after the stream's end reaches us.
  WaitUntil([&] { return OpenFdCount() <= fds && CountThreads().other <= threads.other; },
            absl::Seconds(5));
  const Threads threads_after = CountThreads();
  const int fds_after = OpenFdCount();
  const long rss_after = RssKb();

  std::printf("%d reconnects: threads %d -> %d (gRPC executor %d -> %d), fds %d -> %d, "
              "RSS %ld -> %ld kB\n",
              kReconnects, threads.other + threads.executor,
              threads_after.other + threads_after.executor, threads.executor,
              threads_after.executor, fds, fds_after, rss, rss_after);
  std::printf("FIGURE reconnect_churn_ms_per_reconnect %.2f ms\n",
              absl::ToDoubleMilliseconds(took) / kReconnects);
  std::printf("FIGURE reconnect_churn_threads_growth %d threads\n",
              threads_after.other - threads.other);
  std::printf("FIGURE reconnect_churn_executor_threads_growth %d threads\n",
              threads_after.executor - threads.executor);
  std::printf("FIGURE reconnect_churn_fds_growth %d fds\n", fds_after - fds);
  std::printf("FIGURE reconnect_churn_rss_growth %ld kB\n", rss_after - rss);
  EXPECT_EQ(threads_after.other, threads.other);
  EXPECT_LE(threads_after.executor,
            std::max(4, 2 * static_cast<int>(std::thread::hardware_concurrency())));
  EXPECT_LE(std::abs(fds_after - fds), 2);
  EXPECT_LT(rss_after - rss, kRssSlackKb);
  // The daemon saw every stream, stored every batch once, and holds the agent connected.
  EXPECT_EQ(ScrapeValue(*daemon, "railwatch_ingest_samples_total"), sequence);
  EXPECT_GE(ScrapeValue(*daemon, "railwatch_ingest_streams_opened_total"), sequence + 1);
  EXPECT_TRUE(AgentConnected(*query, "churn-node"));
  EXPECT_EQ(ScrapeValue(*daemon, "railwatch_agents_connected"), 1);

  sender.Stop(absl::ZeroDuration());
  daemon->Stop();
}

}  // namespace
}  // namespace railwatch::testing
