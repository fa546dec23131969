// The simulated jobs' NCCL / PyTorch logs, read by the real log parser: init lines that name
// every rank's host, GPU and NIC, and the failures of --nccl_error and of the faults that hurt
// ranks (a NIC gone, a PFC deadlock), each with its ground truth, at the time it is due.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "logs/log_parser.h"
#include "sim/nccl_log_writer.h"
#include "unit/sim_host/sim_host_util.h"

namespace railwatch::sim {
namespace sim_nccl_logs_test {

using testing::HostSim;
using testing::OneJob;

struct ParsedLog {
  std::vector<logs::LogEvent> events;
  logs::LogParser::Stats stats;
};

ParsedLog Parse(const HostSim& sim, int host, const std::string& job = "train") {
  ParsedLog out;
  const std::string path = NcclLogs::LogPath(sim.root(), SysfsFabric::HostName(host), job);
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return out;
  logs::LogParser parser(path);
  std::string_view rest = *text;
  for (absl::string_view line : absl::StrSplit(absl::string_view(rest.data(), rest.size()), '\n')) {
    parser.Feed(std::string_view(line.data(), line.size()), out.events);
  }
  parser.Finish(out.events);
  out.stats = parser.stats();
  return out;
}

std::string Field(const logs::LogEvent& e, std::string_view key) {
  const std::string* v = e.Get(key);
  return v == nullptr ? "" : *v;
}

std::vector<const logs::LogEvent*> OfKind(const ParsedLog& log, std::string_view kind) {
  std::vector<const logs::LogEvent*> out;
  for (const logs::LogEvent& e : log.events) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

TEST(SimNcclLogs, InitLinesNameEveryRanksHostGpuAndNic) {
  SysfsFabric::Options o = OneJob(4, 2);
  o.jobs = {{"train", 1, 3, 0.8}};
  HostSim sim(o);
  std::set<std::string> comm_ids;
  for (int h = 1; h <= 3; ++h) {
    ParsedLog log = Parse(sim, h);
    EXPECT_EQ(log.stats.unknown, 0u) << h;
    EXPECT_EQ(log.stats.malformed, 0u) << h;
    std::map<std::string, std::string> gpu_of_rank;  // rank -> cuda_dev of Init COMPLETE
    for (const logs::LogEvent* e : OfKind(log, "nccl.comm_init")) {
      EXPECT_EQ(Field(*e, "host"), SysfsFabric::HostName(h));
      EXPECT_EQ(Field(*e, "nranks"), "6");
      comm_ids.insert(Field(*e, "comm_id"));
      if (Field(*e, "phase") == "COMPLETE") gpu_of_rank[Field(*e, "rank")] = Field(*e, "cuda_dev");
    }
    // Ranks are host-major: host h has ranks 2(h-1) (GPU 0) and 2(h-1)+1 (GPU 1).
    EXPECT_EQ(gpu_of_rank, (std::map<std::string, std::string>{
                               {absl::StrCat(2 * (h - 1)), "0"}, {absl::StrCat(2 * (h - 1) + 1), "1"}}));
    std::vector<const logs::LogEvent*> nets = OfKind(log, "nccl.net");
    ASSERT_FALSE(nets.empty());
    EXPECT_EQ(Field(*nets[0], "device_names"), "mlx5_0,mlx5_1");
    // GPU k's rank talks to the next host over NET/IB/k: the NIC of rail k.
    bool send_on_rail1 = false;
    for (const logs::LogEvent* e : OfKind(log, "nccl.channel")) {
      if (Field(*e, "direction") == "send" && Field(*e, "from_rank") == absl::StrCat(2 * (h - 1) + 1)) {
        EXPECT_EQ(Field(*e, "net_dev"), "1");
        EXPECT_EQ(Field(*e, "to_rank"), absl::StrCat((2 * h + 1) % 6));
        send_on_rail1 = true;
      }
    }
    EXPECT_TRUE(send_on_rail1) << h;
  }
  EXPECT_EQ(comm_ids.size(), 1u);
  // A host in no job has no log.
  EXPECT_FALSE(ReadFile(NcclLogs::LogPath(sim.root(), "gpu-node-004", "train")).ok());
}

TEST(SimNcclLogs, NcclErrorsWriteWatchdogTimeoutsAndIbCompletionErrors) {
  SysfsFabric::Options o = OneJob(3, 2);
  o.nccl_errors = {{"gpu-node-002", absl::Seconds(2), "timeout"},
                   {"gpu-node-003", absl::Seconds(3), "ib_completion"}};
  HostSim sim(o);
  sim.RunTo(absl::Milliseconds(1900));
  EXPECT_TRUE(OfKind(Parse(sim, 2), "pytorch.watchdog_timeout").empty());
  EXPECT_TRUE(sim.Truth().empty());
  sim.RunTo(absl::Seconds(3));

  ParsedLog two = Parse(sim, 2);
  EXPECT_EQ(two.stats.malformed, 0u);
  std::set<std::string> ranks;
  for (const logs::LogEvent* e : OfKind(two, "pytorch.watchdog_timeout")) {
    ranks.insert(Field(*e, "global_rank"));
    EXPECT_EQ(Field(*e, "timeout_ms"), "10000");
    EXPECT_EQ(Field(*e, "op_type"), "ALLREDUCE");
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"2", "3"}));
  EXPECT_EQ(OfKind(two, "pytorch.watchdog_exception").size(), 2u);

  ParsedLog three = Parse(sim, 3);
  std::vector<const logs::LogEvent*> ib = OfKind(three, "nccl.ib_completion_error");
  ASSERT_EQ(ib.size(), 2u);
  for (const logs::LogEvent* e : ib) {
    EXPECT_EQ(Field(*e, "status"), "12");
    EXPECT_EQ(Field(*e, "status_name"), "IBV_WC_RETRY_EXC_ERR");
    EXPECT_EQ(Field(*e, "dev"), "mlx5_0");
    EXPECT_EQ(Field(*e, "host"), "gpu-node-003");
  }
  EXPECT_FALSE(OfKind(three, "nccl.error_chain").empty());

  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 2u);
  EXPECT_EQ(truth[0]["fault"], "nccl_error");
  EXPECT_EQ(truth[0]["host"], "gpu-node-002");
  EXPECT_EQ(truth[0]["job"], "train");
  EXPECT_EQ(truth[0]["error"], "timeout");
  EXPECT_EQ(truth[0]["injected_at_unix_nano"], absl::ToUnixNanos(sim.t0 + absl::Seconds(2)));
  EXPECT_FALSE(truth[0].contains("caused_by"));
  EXPECT_EQ(truth[1]["error"], "ib_completion");
}

TEST(SimNcclLogs, ANicGoneMakesItsRankFailThreeSecondsLater) {
  SysfsFabric::Options o = OneJob(3, 2);
  o.nics_gone = {{"gpu-node-002", "mlx5_1", absl::Seconds(2)}};
  HostSim sim(o);
  sim.RunTo(absl::Milliseconds(4900));
  EXPECT_TRUE(OfKind(Parse(sim, 2), "nccl.ib_completion_error").empty());
  sim.RunTo(absl::Seconds(5));
  const auto parsed = Parse(sim, 2);  // OfKind points into it: it must outlive `ib`
  std::vector<const logs::LogEvent*> ib = OfKind(parsed, "nccl.ib_completion_error");
  ASSERT_FALSE(ib.empty());
  EXPECT_EQ(Field(*ib[0], "dev"), "mlx5_1");
  EXPECT_EQ(Field(*ib[0], "cuda_dev"), "1");
  // Only the rank that used the NIC.
  for (int h : {1, 3}) EXPECT_TRUE(OfKind(Parse(sim, h), "nccl.ib_completion_error").empty()) << h;

  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 2u);
  EXPECT_EQ(truth[0]["fault"], "nic_gone");
  EXPECT_EQ(truth[1]["fault"], "nccl_error");
  EXPECT_EQ(truth[1]["host"], "gpu-node-002");
  EXPECT_EQ(truth[1]["error"], "ib_completion");
  EXPECT_EQ(truth[1]["caused_by"], "nic_gone");
  EXPECT_EQ(truth[1]["cause_host"], "gpu-node-002");
  EXPECT_EQ(truth[1]["cause_device"], "mlx5_1");
  EXPECT_EQ(truth[1]["injected_at_unix_nano"], absl::ToUnixNanos(sim.t0 + absl::Seconds(5)));
}

TEST(SimNcclLogs, ADeadlockStallsTheJobAndEveryRankTimesOut) {
  SysfsFabric::Options o = OneJob(4, 2);
  o.jobs = {{"train", 1, 3, 0.8}};
  o.deadlocks = {{"gpu-node-001", "mlx5_0", absl::Seconds(2)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(2));
  const uint64_t job_tx = sim.Sysfs(3, 1, "counters/port_xmit_data");
  const uint64_t idle_tx = sim.Sysfs(4, 1, "counters/port_xmit_data");
  sim.RunTo(absl::Milliseconds(11900));
  // The job's NICs (all of them, not just the deadlocked one) move next to nothing; a host
  // outside the job keeps its rhythm.
  EXPECT_LT((sim.Sysfs(3, 1, "counters/port_xmit_data") - job_tx) * 4 / 9.9, 1e6);
  EXPECT_GT((sim.Sysfs(4, 1, "counters/port_xmit_data") - idle_tx) * 4 / 9.9, 1e9);
  for (int h = 1; h <= 3; ++h) EXPECT_TRUE(OfKind(Parse(sim, h), "pytorch.watchdog_timeout").empty());
  sim.RunTo(absl::Seconds(12));
  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 3u);
  for (int h = 1; h <= 3; ++h) {
    EXPECT_EQ(OfKind(Parse(sim, h), "pytorch.watchdog_timeout").size(), 2u) << h;
    EXPECT_EQ(truth[h - 1]["host"], SysfsFabric::HostName(h));
    EXPECT_EQ(truth[h - 1]["error"], "timeout");
    EXPECT_EQ(truth[h - 1]["caused_by"], "pfc_deadlock");
    EXPECT_EQ(truth[h - 1]["cause_host"], "gpu-node-001");
    EXPECT_EQ(truth[h - 1]["cause_device"], "mlx5_0");
  }
}

TEST(SimNcclLogs, ADeadlockThatClearsInTimeTimesNothingOut) {
  SysfsFabric::Options o = OneJob(2, 1);
  o.deadlocks = {{"gpu-node-002", "mlx5_0", absl::Seconds(2), absl::Seconds(5)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(8));
  const uint64_t tx = sim.Sysfs(1, 0, "counters/port_xmit_data");
  sim.RunTo(absl::Seconds(15));
  EXPECT_GT((sim.Sysfs(1, 0, "counters/port_xmit_data") - tx) * 4 / 7.0, 1e10);  // running again
  EXPECT_TRUE(sim.Truth().empty());
  EXPECT_TRUE(OfKind(Parse(sim, 1), "pytorch.watchdog_timeout").empty());
}

TEST(SimNcclLogs, OffWritesNoLogsAndRefusesNcclErrors) {
  SysfsFabric::Options o = OneJob(2, 1);
  o.nccl_logs = false;
  o.nics_gone = {{"gpu-node-002", "mlx5_0", absl::Seconds(1)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(5));
  EXPECT_FALSE(ReadFile(NcclLogs::LogPath(sim.root(), "gpu-node-001", "train")).ok());
  ASSERT_EQ(sim.Truth().size(), 1u);  // the NIC gone, and no NCCL error nobody could see

  o.nccl_errors = {{"gpu-node-001", absl::Seconds(1), "timeout"}};
  o.root = "/nonexistent-unused";
  SysfsFabric fabric(o);
  absl::Status s = fabric.Create(absl::Now());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--nccl_logs"), std::string::npos) << s;
}

}  // namespace
}  // namespace railwatch::sim
