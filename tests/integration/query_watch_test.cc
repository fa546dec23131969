// WatchDiagnoses: initial diagnoses, SYNCED, then changes in order; ends of sent diagnoses;
// a watcher that falls behind ends with RESOURCE_EXHAUSTED while the others go on; cancel,
// Close and Daemon::Stop end open watches.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon/daemon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"
#include "support/ttar.h"

namespace railwatch::testing {
namespace query_watch_test {

using Kind = v1::DiagnosisEvent::Kind;
using ::testing::ElementsAre;

using Reader = grpc::ClientReader<v1::DiagnosisEvent>;

std::string Describe(const v1::DiagnosisEvent& e) {
  return v1::DiagnosisEvent::Kind_Name(e.kind()) +
         (e.kind() == v1::DiagnosisEvent::KIND_SYNCED ? "" : " " + e.diagnosis().playbook());
}

class QueryWatchTest : public ::testing::Test {
 protected:
  std::unique_ptr<Reader> Watch(grpc::ClientContext& ctx, v1::Query::Stub& stub,
                                const v1::DiagnosisFilter& filter, bool send_initial) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::WatchDiagnosesRequest req;
    *req.mutable_filter() = filter;
    req.set_send_initial(send_initial);
    return stub.WatchDiagnoses(&ctx, req);
  }
  std::unique_ptr<Reader> Watch(grpc::ClientContext& ctx, const v1::DiagnosisFilter& filter,
                                bool send_initial) {
    return Watch(ctx, server_.stub(), filter, send_initial);
  }

  // The next `n` events, described as "KIND playbook".
  static std::vector<std::string> Next(Reader& reader, int n) {
    std::vector<std::string> out;
    v1::DiagnosisEvent e;
    for (int i = 0; i < n && reader.Read(&e); ++i) out.push_back(Describe(e));
    return out;
  }

  // `seconds` ticks: the link counter stays (its flap resolves after the 1m window), the
  // relay keeps pausing (pending -> firing after 10 s), the peer's carrier keeps changing.
  void Run(int seconds, double relay_per_second = 200) {
    for (int i = 0; i < seconds; ++i) {
      relay_ += relay_per_second;
      server_.Tick({{server_.link_downed, 1},
                    {server_.relay, relay_},
                    {server_.carrier, static_cast<double>(++carrier_)}});
    }
  }

  template <typename Pred>
  static bool Eventually(Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  QueryTestServer server_;
  double relay_ = 1000;
  int carrier_ = 2;
};

TEST_F(QueryWatchTest, InitialThenSyncedThenChangesInOrder) {
  server_.RaiseThree();
  v1::DiagnosisFilter f;
  f.add_playbooks("link_flap");
  f.add_playbooks("switch_relay");
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, f, true);
  v1::DiagnosisEvent e;
  ASSERT_TRUE(reader->Read(&e));
  EXPECT_EQ(e.kind(), v1::DiagnosisEvent::KIND_INITIAL);
  EXPECT_EQ(e.diagnosis().playbook(), "switch_relay");
  EXPECT_EQ(e.diagnosis().state(), v1::DIAGNOSIS_STATE_PENDING);
  EXPECT_EQ(e.time_unix_nano(), server_.clock.NowNanos());
  EXPECT_THAT(Next(*reader, 2), ElementsAre("KIND_INITIAL link_flap", "KIND_SYNCED"));

  Run(10);  // the relay fires
  ASSERT_TRUE(reader->Read(&e));
  EXPECT_EQ(Describe(e), "KIND_FIRING switch_relay");
  EXPECT_EQ(e.diagnosis().state(), v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_EQ(e.diagnosis().id(), server_.IdOf("switch_relay"));
  EXPECT_EQ(e.time_unix_nano(), e.diagnosis().fired_at_unix_nano());
  Run(60);  // the link flap leaves its window
  ASSERT_TRUE(reader->Read(&e));
  EXPECT_EQ(Describe(e), "KIND_RESOLVED link_flap");
  EXPECT_EQ(e.diagnosis().state(), v1::DIAGNOSIS_STATE_RESOLVED);
  EXPECT_GT(e.diagnosis().resolved_at_unix_nano(), 0);
  ctx.TryCancel();
}

TEST_F(QueryWatchTest, WithoutInitialOnlySyncedThenEveryTransition) {
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, {}, false);
  EXPECT_THAT(Next(*reader, 1), ElementsAre("KIND_SYNCED"));
  server_.RaiseThree();
  EXPECT_THAT(Next(*reader, 3), ElementsAre("KIND_FIRING link_flap", "KIND_PENDING switch_relay",
                                            "KIND_FIRING peer_flap"));
  // The relay stops before its `for` (its 5 s rate falls to 0): the pending diagnosis is
  // cleared.
  Run(62, 0);
  EXPECT_THAT(Next(*reader, 2),
              ElementsAre("KIND_CLEARED switch_relay", "KIND_RESOLVED link_flap"));
  ctx.TryCancel();
}

TEST_F(QueryWatchTest, EndOfASentDiagnosisIsSentWhateverTheStates) {
  server_.RaiseThree();
  v1::DiagnosisFilter f;
  f.add_states(v1::DIAGNOSIS_STATE_FIRING);
  f.set_host("gpu-node-001");
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, f, true);
  EXPECT_THAT(Next(*reader, 2), ElementsAre("KIND_INITIAL link_flap", "KIND_SYNCED"));
  Run(70);
  EXPECT_THAT(Next(*reader, 1), ElementsAre("KIND_RESOLVED link_flap"));
  ctx.TryCancel();
}

TEST_F(QueryWatchTest, SlowWatcherEndsWithResourceExhaustedOthersGoOn) {
  QueryTestServer small({.watch_queue_limit = 4});
  v1::DiagnosisFilter slow_filter, fast_filter;
  slow_filter.add_playbooks("link_flap");
  fast_filter.add_playbooks("peer_flap");
  grpc::ClientContext slow_ctx, fast_ctx;
  auto slow = Watch(slow_ctx, small.stub(), slow_filter, false);
  auto fast = Watch(fast_ctx, small.stub(), fast_filter, false);
  ASSERT_THAT(Next(*slow, 1), ElementsAre("KIND_SYNCED"));
  ASSERT_THAT(Next(*fast, 1), ElementsAre("KIND_SYNCED"));

  // 300 large events (30 MB, beyond any HTTP/2 flow-control window) for a client that does not
  // read: the engine's calls must return at once all the same.
  AlertRecord big;
  big.playbook = "link_flap";
  big.state = AlertState::kFiring;
  big.description = std::string(100'000, 'x');
  for (int i = 0; i < 300; ++i) {
    big.id = "flap-" + std::to_string(i);
    small.watches->OnFiring(big);
  }
  EXPECT_EQ(small.watches->stats().fell_behind, 1u);

  AlertRecord peer;
  peer.id = "peer-1";
  peer.playbook = "peer_flap";
  peer.state = AlertState::kFiring;
  small.watches->OnFiring(peer);
  EXPECT_THAT(Next(*fast, 1), ElementsAre("KIND_FIRING peer_flap"));

  int delivered = 0;
  v1::DiagnosisEvent e;
  while (slow->Read(&e)) ++delivered;
  EXPECT_LT(delivered, 300) << "the stream ends instead of delivering everything";
  grpc::Status s = slow->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "watcher fell behind; reconnect");
  EXPECT_TRUE(Eventually([&] { return small.watches->stats().open == 1; }));
  fast_ctx.TryCancel();
}

TEST_F(QueryWatchTest, CancelEndsTheWatch) {
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, {}, true);
  ASSERT_THAT(Next(*reader, 1), ElementsAre("KIND_SYNCED"));
  EXPECT_EQ(server_.watches->stats().open, 1u);
  ctx.TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(Eventually([&] { return server_.watches->stats().open == 0; }));
  server_.RaiseThree();  // events with no one to send them to
  EXPECT_EQ(server_.watches->stats().started, 1u);
}

TEST_F(QueryWatchTest, CloseEndsWatchesAndRefusesNewOnes) {
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, {}, false);
  ASSERT_THAT(Next(*reader, 1), ElementsAre("KIND_SYNCED"));
  server_.watches->Close();
  v1::DiagnosisEvent e;
  EXPECT_FALSE(reader->Read(&e));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  grpc::ClientContext again;
  auto refused = Watch(again, {}, false);
  EXPECT_FALSE(refused->Read(&e));
  grpc::Status s = refused->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(s.error_message(), "railwatchd is shutting down");
}

TEST_F(QueryWatchTest, BadFilterIsInvalidArgument) {
  v1::DiagnosisFilter f;
  f.add_severities(static_cast<v1::Severity>(12));
  grpc::ClientContext ctx;
  auto reader = Watch(ctx, f, true);
  v1::DiagnosisEvent e;
  EXPECT_FALSE(reader->Read(&e));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// A real daemon: Stop() returns with a watch open, and the watch ends.
TEST(DaemonWatchTest, StopEndsOpenWatches) {
  TempDir dir;
  DaemonOptions options = QueryTestDaemonOptions(dir.path());
  Daemon daemon(options);
  ASSERT_TRUE(daemon.Start().ok());
  auto stub = v1::Query::NewStub(
      grpc::CreateChannel(daemon.grpc_address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::WatchDiagnosesRequest req;
  req.set_send_initial(true);
  auto reader = stub->WatchDiagnoses(&ctx, req);
  v1::DiagnosisEvent e;
  ASSERT_TRUE(reader->Read(&e));
  EXPECT_EQ(e.kind(), v1::DiagnosisEvent::KIND_SYNCED);
  daemon.Stop();
  EXPECT_FALSE(reader->Read(&e));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace query_watch_test
}  // namespace railwatch::testing
