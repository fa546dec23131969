// Every long-lived stream notices a peer that stops answering without closing its connection,
// within 30 s, on each side, with the production keepalive settings (common/grpc_keepalive.h):
// a FreezingProxy sits on each path and freezes (sockets open, nothing forwarded), which only
// HTTP/2 keepalives can tell from a quiet peer. The four paths freeze at the same moment, so
// the test takes one detection time (about 20 s), not four.
#include <atomic>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/batch_builder.h"
#include "agent/sender.h"
#include "cli/commands.h"
#include "common/grpc_keepalive.h"
#include "fake_gnmi_target.h"
#include "gnmi/switch_collector.h"
#include "gnmi_test_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "liveness_util.h"
#include "loopback_daemon.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "railwatch/v1/query.grpc.pb.h"
#include "support/freezing_proxy.h"

namespace railwatch::testing {
namespace liveness_test {

constexpr absl::Duration kBound = absl::Seconds(30);

// What one side does when it has noticed its dead peer.
struct Detection {
  const char* figure;  // FIGURE liveness_detection_seconds_<figure>
  const char* what;
  std::function<bool()> noticed;
};

TEST(LivenessTest, EverySideOfEveryStreamNoticesAFrozenPeerWithin30Seconds) {
  std::unique_ptr<Daemon> daemon = StartLoopbackDaemon();
  ASSERT_NE(daemon, nullptr);
  auto query = QueryStub(*daemon);

  // 1. A host agent's Sender (production keepalive; reconnects after a short backoff).
  FreezingProxy agent_path(daemon->grpc_address());
  ASSERT_TRUE(agent_path.Start().ok());
  SeriesRegistry registry(Labels{{"host", "live-agent"}});
  Sender sender(HostSenderOptions("live-agent", agent_path.address(), 1), registry);
  sender.Start();

  // 2. A raw Ingest stream whose client has no keepalive at all: only the daemon's own
  //    keepalive can find it dead.
  FreezingProxy raw_path(daemon->grpc_address());
  ASSERT_TRUE(raw_path.Start().ok());
  grpc::ChannelArguments no_keepalive;
  auto raw_stub = v1::Ingest::NewStub(grpc::CreateCustomChannel(
      raw_path.address(), grpc::InsecureChannelCredentials(), no_keepalive));
  grpc::ClientContext raw_ctx;
  auto raw = raw_stub->Stream(&raw_ctx);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id("live-raw");
  hello.mutable_hello()->set_instance_id(2);
  v1::DaemonMessage welcome;
  ASSERT_TRUE(raw->Write(hello));
  ASSERT_TRUE(raw->Read(&welcome) && welcome.has_welcome());

  // 3. `railwatch watch` (the CLI's channel and command, without --reconnect).
  FreezingProxy watch_path(daemon->grpc_address());
  ASSERT_TRUE(watch_path.Start().ok());
  CliOptions cli;
  cli.server = watch_path.address();
  std::ostringstream watch_out, watch_err;
  std::atomic<bool> watch_done{false};
  int watch_exit = -1;
  std::thread watch([&] {
    watch_exit = RunCommand({"watch"}, cli, watch_out, watch_err);
    watch_done = true;
  });

  // 4. The switch agent's gNMI collector against a target (production keepalive).
  FakeGnmiTarget target(FakeGnmiTarget::Options{});
  ASSERT_TRUE(target.Start().ok());
  FreezingProxy gnmi_path(target.address());
  ASSERT_TRUE(gnmi_path.Start().ok());
  GnmiSwitchCollector::Options go;
  go.targets = {TestTarget("leaf-live", gnmi_path.address())};
  go.channel = FastChannel();  // production keepalive, short resubscription backoff
  ASSERT_EQ(go.channel.keepalive_time, absl::Milliseconds(kKeepaliveTimeMs));
  auto collector = GnmiSwitchCollector::Create(std::move(go), ShippedProfiles());
  ASSERT_TRUE(collector.ok()) << collector.status();
  (*collector)->Start();

  auto gnmi = [&] { return (*collector)->target_stats(0).client; };
  auto metric = [&](const std::string& series) { return ScrapeValue(*daemon, series); };
  ASSERT_TRUE(WaitUntil(
      [&] {
        return sender.stats().connected && AgentConnected(*query, "live-agent") &&
               AgentConnected(*query, "live-raw") &&
               metric("railwatch_query_watches_open") == 1 && gnmi().connected;
      },
      absl::Seconds(20)))
      << "set-up: every stream open";
  const double aborted_before = metric("railwatch_ingest_streams_aborted_total");

  for (FreezingProxy* p : {&agent_path, &raw_path, &watch_path, &gnmi_path}) p->Freeze();
  const absl::Time frozen = absl::Now();

  std::vector<Detection> sides = {
      {"agent_reconnected", "agent: stream broken and a new one welcomed",
       [&] { return sender.stats().connects >= 2; }},
      {"daemon_dropped_agent", "daemon: raw agent marked disconnected",
       [&] { return !AgentConnected(*query, "live-raw"); }},
      {"daemon_freed_streams", "daemon: both frozen Ingest streams freed",
       [&] { return metric("railwatch_ingest_streams_aborted_total") >= aborted_before + 2; }},
      {"watch_client_error", "watch client: command ended with an error", [&] { return watch_done.load(); }},
      {"daemon_freed_watch", "daemon: watch stream freed",
       [&] { return metric("railwatch_query_watches_open") == 0; }},
      {"gnmi_stream_failed", "switch agent: gNMI stream failed", [&] { return gnmi().errors >= 1; }},
      {"gnmi_resubscribed", "switch agent: resubscribed with data", [&] { return gnmi().reconnects >= 1; }},
  };
  // When each side noticed, from the freeze (nullopt: not yet).
  std::vector<std::optional<absl::Duration>> after(sides.size());
  while (absl::Now() - frozen < kBound + absl::Seconds(5)) {
    bool all = true;
    for (size_t i = 0; i < sides.size(); ++i) {
      if (!after[i] && sides[i].noticed()) after[i] = absl::Now() - frozen;
      all &= after[i].has_value();
    }
    if (all) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  for (size_t i = 0; i < sides.size(); ++i) {
    ASSERT_TRUE(after[i].has_value()) << sides[i].what << ": not noticed within "
                                      << kBound + absl::Seconds(5);
    std::printf("FIGURE liveness_detection_seconds_%s %.1f s\n", sides[i].figure,
                absl::ToDoubleSeconds(*after[i]));
    EXPECT_LT(*after[i], kBound) << sides[i].what;
  }
  EXPECT_EQ(watch_exit, kExitUnavailable) << watch_err.str();
  EXPECT_NE(watch_err.str().find("cannot reach railwatchd"), std::string::npos)
      << watch_err.str();
  // The agent is back through a fresh connection; the raw one is gone.
  EXPECT_TRUE(AgentConnected(*query, "live-agent"));
  EXPECT_EQ(metric("railwatch_agents_connected"), 1);

  watch.join();
  (*collector)->Stop();
  sender.Stop(absl::ZeroDuration());
  raw_ctx.TryCancel();
  (void)raw->Finish();
  daemon->Stop();
}

}  // namespace
}  // namespace railwatch::testing
