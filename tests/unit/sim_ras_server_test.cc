// The simulator's NCCL RAS endpoint (sim/ras_server.h) asked by the host agent's RAS client
// (collectors/nccl_ras_collector.h): the protocol, the JSON report, and a hung rank behind.
#include "sim/ras_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectors/nccl_ras_collector.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/nccl_log_writer.h"
#include "support/recording_emitter.h"

namespace railwatch::sim {
namespace sim_ras_server_test {

class SimRasServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/sim-ras-" + std::to_string(::getpid());
    std::filesystem::remove_all(root_);
    jobs_ = {{"train", 1, 2, 0.8}};
    logs_ = std::make_unique<NcclLogs>(root_, jobs_, 2, 7);
    ASSERT_TRUE(logs_->Create(absl::Now()).ok());
    server_ = std::make_unique<RasServer>(root_, jobs_, 2, *logs_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    server_.reset();
    logs_.reset();
    std::filesystem::remove_all(root_);
  }
  RasEndpoint Endpoint(const std::string& host) {
    std::ifstream in(RasServer::PortFile(root_, host));
    int port = 0;
    in >> port;
    EXPECT_GT(port, 0);
    return {.host = "127.0.0.1", .port = port, .origin = "test"};
  }

  std::string root_;
  std::vector<SimJob> jobs_;
  std::unique_ptr<NcclLogs> logs_;
  std::unique_ptr<RasServer> server_;
};

TEST_F(SimRasServerTest, EachHostAnswersForTheJobAndAHungRankIsBehind) {
  server_->SetCounts(0, {40, 40, 40, 40});
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(Endpoint("gpu-node-002"), absl::Seconds(2));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->json);
  EXPECT_EQ(answer->protocol, "2");
  std::vector<std::string> problems;
  std::vector<logs::LogEvent> events = RasAnswerEvents(*answer, "sim", problems);
  EXPECT_THAT(problems, ::testing::IsEmpty());
  ASSERT_EQ(events.size(), 1u);  // a healthy job: the report alone
  EXPECT_EQ(events[0].kind, "nccl_ras.report");

  // Rank 3 (gpu-node-002's GPU 1) stopped: the others launched the next AllReduce.
  server_->SetCounts(0, {41, 41, 41, 40});
  answer = QueryRasStatus(Endpoint("gpu-node-001"), absl::Seconds(2));
  ASSERT_TRUE(answer.ok()) << answer.status();
  events = RasAnswerEvents(*answer, "sim", problems);
  ASSERT_EQ(events.size(), 2u);
  const logs::LogEvent& issue = events[1];
  EXPECT_EQ(issue.kind, "nccl_ras.comm_issue");
  EXPECT_EQ(issue.Value("issue"), "MISMATCH");
  EXPECT_EQ(issue.Value("ranks"), "3");
  EXPECT_EQ(issue.Value("op_counts"), "41:3,40:1");
  // The communicator is the job's, as its NCCL logs name it.
  EXPECT_EQ(absl::StrCat("0x", issue.Value("comm_hash")), logs_->CommId(0));
}

TEST_F(SimRasServerTest, TextClientsAreRefusedAndUnknownCommandsAnswered) {
  absl::StatusOr<RasAnswer> answer =
      QueryRasStatus(Endpoint("gpu-node-001"), absl::Seconds(2), /*json=*/false);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(answer->report, ::testing::HasSubstr("ERROR"));
}

// The agent's collector on a simulated endpoint: MONITOR is opened once the report says 2.30.7,
// and NCCL's events about one process come as NCCL writes them, with its rank.
TEST_F(SimRasServerTest, MonitorClientsGetTheEventsOfAProcessThatStopsWhole) {
  server_->SetCounts(0, {40, 40, 40, 40});
  RasEndpoint endpoint = Endpoint("gpu-node-001");
  FakeClock clock;
  NcclRasCollector collector({.endpoints = endpoint.Address(),
                              .proc_root = "/proc",
                              .timeout = absl::Seconds(2),
                              .init_grace = absl::ZeroDuration(),
                              .background = false},
                             clock);
  collector.QueryOnce();
  for (int i = 0; i < 1500 && server_->MonitorClients() == 0; ++i) absl::SleepFor(absl::Milliseconds(2));
  ASSERT_EQ(server_->MonitorClients(), 1);

  // gpu-node-002's GPU 1 (rank 3) stopped 60 s ago: every timer of NCCL's has run out.
  server_->ProcessFrozen(0, 2, 1, absl::Now() - absl::Seconds(60));
  railwatch::testing::RecordingEmitter e;
  for (int i = 0; i < 1500 && e.EventsOfKind("nccl_ras.event").size() < 4; ++i) {
    ASSERT_TRUE(collector.Collect(e).ok());
    absl::SleepFor(absl::Milliseconds(2));
  }
  std::vector<EventRecord> events = e.EventsOfKind("nccl_ras.event");
  ASSERT_EQ(events.size(), 4u);
  std::vector<std::string> kinds;
  for (const EventRecord& r : events) kinds.push_back(railwatch::testing::Attribute(r, "event"));
  EXPECT_THAT(kinds, ::testing::ElementsAre("PEER_UNRESPONSIVE", "PEER_KEEPALIVE_TIMEOUT",
                                            "PEER_TIMEOUT_DEAD", "PEER_DEAD"));
  const EventRecord& dead = events[3];
  EXPECT_EQ(railwatch::testing::Attribute(dead, "group"), "LIFECYCLE");
  EXPECT_EQ(railwatch::testing::Attribute(dead, "node"), HostAddress(2));
  EXPECT_EQ(railwatch::testing::Attribute(dead, "pid"), std::to_string(logs_->Pid(0, 2, 1)));
  EXPECT_EQ(railwatch::testing::Attribute(dead, "ranks"), "3");
  EXPECT_EQ(absl::StrCat("0x", railwatch::testing::Attribute(dead, "comm_hash")), logs_->CommId(0));
  EXPECT_EQ(railwatch::testing::Attribute(events[0], "details"),
            "peer not responding for 5s (keepalive warning)");
}

}  // namespace sim_ras_server_test
}  // namespace railwatch::sim
