// No input is fatal: garbage, NULs, enormous lines and every truncation of every real sample
// line parse without crashing, and the counters always add up.

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "logs/log_parser.h"
#include "support/ttar.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch::logs::testing {
namespace robustness_test {

// Every line is counted exactly once.
void ExpectCountsAddUp(const LogParser::Stats& s) {
  EXPECT_EQ(s.recognized + s.known + s.blank + s.unknown + s.malformed, s.lines);
}

void ExpectEventsWellFormed(const std::vector<LogEvent>& events, uint64_t lines) {
  for (const LogEvent& e : events) {
    EXPECT_FALSE(e.kind.empty());
    EXPECT_GE(e.line, 1);
    EXPECT_LE(static_cast<uint64_t>(e.line), lines);
    EXPECT_LE(e.raw.size(), 4096u);
    for (const auto& [key, value] : e.fields) EXPECT_FALSE(key.empty()) << e.kind;
  }
}

TEST(LogParserRobustness, RandomBytesAndNuls) {
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> len(0, 300);
  LogParser parser("random.bin");
  std::vector<LogEvent> out;
  for (int i = 0; i < 5000; ++i) {
    std::string line(len(rng), '\0');
    for (char& c : line) c = static_cast<char>(byte(rng));
    parser.Feed(line, out);
  }
  parser.Finish(out);
  const LogParser::Stats& s = parser.stats();
  EXPECT_EQ(s.lines, 5000u);
  ExpectCountsAddUp(s);
  ExpectEventsWellFormed(out, s.lines);
}

TEST(LogParserRobustness, VeryLongLinesAreCutAndCounted) {
  LogParser parser("long.log");
  std::vector<LogEvent> out;
  parser.Feed(std::string(1 << 20, 'x'), out);
  std::string warn = "h:1:2 [0] net_ib.cc:1 NCCL WARN ";
  while (warn.size() < (200 << 10)) warn += "NET/IB : Got completion from peer ";
  parser.Feed(warn, out);
  std::string row = "1024 256 float sum";
  while (row.size() < (100 << 10)) row += " 1.0";
  parser.Feed(row, out);
  parser.Finish(out);
  EXPECT_EQ(parser.stats().truncated, 3u);
  EXPECT_EQ(parser.stats().lines, 3u);
  ExpectCountsAddUp(parser.stats());
  ExpectEventsWellFormed(out, 3);
}

TEST(LogParserRobustness, HalfFormedLinesOfEveryFormat) {
  const std::vector<std::string> lines = {
      "NCCL WARN",
      " NCCL INFO ",
      "[",
      "[1,",
      "[1,2]<stdout>",
      "]",
      "host:1:2 [",
      "host:1:2 [] NCCL INFO x",
      "host:1:2 [x] NCCL INFO x",
      ":: [0] NCCL INFO comm 0x",
      "h:1:2 [0] NCCL INFO comm 0x1 rank",
      "h:1:2 [0] NCCL INFO comm 0x1 rank 1 nranks - Init",
      "h:1:2 [0] NCCL INFO Channel 00 : -> [send] via",
      "h:1:2 [0] NCCL INFO Channel 00/",
      "h:1:2 [0] NCCL INFO NET/IB : Using [0",
      "h:1:2 [0] NCCL INFO NET/",
      "h:1:2 [0] NCCL INFO Bootstrap : Using ",
      "h:1:2 [0] NCCL INFO NET/Plugin",
      "h:1:2 [0] NCCL INFO Init timings - x",
      "h:1:2 [0] NCCL INFO  set by environment to ",
      "h:1:2 [0] NCCL INFO x.cc:1 -> ",
      "h:1:2 [0] x.cc:1 (f NCCL WARN y",
      "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion",
      "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer <1> with status=",
      "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion with error x, vendor err",
      "h:1:2 [0] x.cc:1 NCCL WARN Call to",
      "h:1:2 [0] x.cc:1 NCCL WARN Call to ibv_modify_qp failed with",
      "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got async event",
      "h:1:2 [0] x.cc:1 NCCL WARN Got async event",
      "NCCL version ",
      "NCCL version 2.26.2 compiled with CUDA",
      "  30 ranks",
      "#0-",
      "#",
      "# nThread",
      "#  Rank",
      "# Avg bus bandwidth",
      "# Avg bus bandwidth : x",
      "# Out of bounds values",
      "1 2 float",
      "1 2 float sum -1 1 2 3 4 5 6 7",
      "[E",
      "[E321",
      "[E321 99:99:99.x ProcessGroupNCCL.cpp:1]",
      "[E1399 02:07:08.1 ProcessGroupNCCL.cpp:1] x",
      "[rank",
      "[rank1]:",
      "[rank1]:[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout: WorkNCCL(",
      "WorkNCCL(SeqNum=1, OpType=X, Timeout(ms)=1",
      "terminate called after throwing an instance of '",
      "  what():",
      "frame #",
      "Exception raised from",
      "NCCL error in: ",
      "Last error:",
      "",
      "2024-13-45T99:99:99Z x",
      "2024-06-10T08:15:30.",
      "[2024-06-10 08:15:30",
  };
  // Twice, so that state left by the first round (a RAS report, a pending block) meets them.
  LogParser parser("half.log");
  std::vector<LogEvent> out;
  for (int round = 0; round < 2; ++round) {
    for (const std::string& line : lines) parser.Feed(line, out);
  }
  parser.Finish(out);
  EXPECT_EQ(parser.stats().lines, 2 * lines.size());
  ExpectCountsAddUp(parser.stats());
  ExpectEventsWellFormed(out, parser.stats().lines);
  // Malformed lines say where and why.
  EXPECT_GT(parser.stats().malformed, 0u);
  ASSERT_FALSE(parser.stats().problems.empty());
  for (const auto& problem : parser.stats().problems) {
    EXPECT_GE(problem.line, 1);
    EXPECT_FALSE(problem.reason.empty());
  }
}

// Every prefix of every line of every sample, fed in order: a log cut at any byte.
TEST(LogParserRobustness, EveryTruncationOfTheRealSamples) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(railwatch::testing::FixturePath("logs"))) {
    std::ifstream in(entry.path(), std::ios::binary);
    LogParser parser(entry.path().filename().string());
    std::vector<LogEvent> out;
    std::string line;
    while (std::getline(in, line)) {
      for (size_t n = 0; n <= line.size(); ++n)
        parser.Feed(std::string_view(line).substr(0, n), out);
    }
    parser.Finish(out);
    ExpectCountsAddUp(parser.stats());
    ExpectEventsWellFormed(out, parser.stats().lines);
    ++files;
  }
  EXPECT_GE(files, 18);
}

}  // namespace
}  // namespace railwatch::logs::testing
