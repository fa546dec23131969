// The simulator's NCCL RAS endpoint (sim/ras_server.h) asked by the host agent's RAS client
// (collectors/nccl_ras_collector.h): the protocol, the JSON report, and a hung rank behind.
#include "sim/ras_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "collectors/nccl_ras_collector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/nccl_log_writer.h"

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

}  // namespace sim_ras_server_test
}  // namespace railwatch::sim
