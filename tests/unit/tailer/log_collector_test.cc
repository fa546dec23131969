#include "collectors/log_collector.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"
#include "unit/tailer/tailer_test_util.h"

namespace railwatch {
namespace log_collector_test {

namespace fs = std::filesystem;
using ::railwatch::testing::FixturePath;
using ::railwatch::testing::LogWriter;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::StatsReach;
using ::railwatch::testing::TempDir;
using ::railwatch::testing::TestOptions;

std::vector<std::string> SampleLines(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(FixturePath("logs/" + name));
  EXPECT_TRUE(text.ok()) << text.status();
  std::vector<std::string> lines = absl::StrSplit(text.value_or(""), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// What the collector must emit for a file: the parser's events on its own, fed every line.
std::vector<logs::LogEvent> ParseAlone(const std::string& path,
                                       const std::vector<std::string>& lines, const Clock& clock) {
  logs::LogParser parser(path, clock);
  std::vector<logs::LogEvent> out;
  for (const std::string& line : lines) parser.Feed(line, out);
  parser.Finish(out);
  return out;
}

// The EventRecord a LogEvent becomes, minus the time (checked separately).
std::tuple<std::string, std::string, Labels, std::vector<std::pair<std::string, std::string>>>
Expected(const logs::LogEvent& ev, const std::string& pattern) {
  std::vector<std::pair<std::string, std::string>> attributes = ev.fields;
  attributes.emplace_back("file", ev.source);
  attributes.emplace_back("line", absl::StrCat(ev.line));
  return {ev.kind, ev.raw, Labels{{"log", pattern}}, attributes};
}

std::tuple<std::string, std::string, Labels, std::vector<std::pair<std::string, std::string>>>
Actual(const EventRecord& r) {
  return {r.kind, r.raw, r.labels, r.attributes};
}

class LogCollectorTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  LogCollector::Options Options(const std::string& pattern) const {
    LogCollector::Options o;
    o.tailer = TestOptions({pattern}, dir_.path() + "/state");
    return o;
  }
  // Collects until `done` holds (or a generous deadline passes).
  bool CollectUntil(LogCollector& c, RecordingEmitter& e, const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (true) {
      if (absl::Status s = c.Collect(e); !s.ok()) {
        ADD_FAILURE() << s;
        return false;
      }
      if (done()) return true;
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  uint64_t Count(const RecordingEmitter& e, const std::string& name, const std::string& pattern) {
    return e.Get(absl::StrCat(name, "{log=\"", pattern, "\"}")).value_or(0);
  }

  TempDir dir_;
  FakeClock clock_;
};

TEST_F(LogCollectorTest, EmitsTheParsersEventsWithFileLinePatternAndReadTime) {
  const std::vector<std::string> lines =
      SampleLines("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log");
  const std::string path = Path("rank0.log");
  const std::string pattern = Path("*.log");
  const std::vector<logs::LogEvent> expected = ParseAlone(path, lines, clock_);
  ASSERT_FALSE(expected.empty());

  LogCollector collector(Options(pattern), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  const int64_t read_time = clock_.NowNanos();
  {
    LogWriter w(path);
    for (const std::string& line : lines) w.Line(line);
  }
  ASSERT_TRUE(CollectUntil(collector, e, [&] {
    return Count(e, "railwatch_log_lines_total", pattern) == lines.size();
  }));
  // The sample ends inside an error chain: that event is pending until the file goes quiet.
  EXPECT_LT(e.events.size(), expected.size());
  clock_.Advance(absl::Seconds(11));
  ASSERT_TRUE(collector.Collect(e).ok());

  ASSERT_EQ(e.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Actual(e.events[i]), Expected(expected[i], pattern)) << i;
    if (expected[i].time_unix_nano != 0) {
      EXPECT_EQ(e.events[i].time_unix_nano, expected[i].time_unix_nano);
    } else {
      // No time in the log: when it was read, or when the idle file was flushed.
      EXPECT_THAT(
          e.events[i].time_unix_nano,
          ::testing::AnyOf(read_time, read_time + absl::ToInt64Nanoseconds(absl::Seconds(11))));
    }
  }
  EXPECT_EQ(Count(e, "railwatch_log_events_total", pattern), expected.size());
  EXPECT_EQ(e.Get("railwatch_log_tailer_bytes_total"), fs::file_size(path));
  EXPECT_EQ(e.GetGauge("railwatch_log_tailer_open_files"), 1.0);
  EXPECT_EQ(e.Get("railwatch_log_tailer_dropped_lines_total"), 0u);
}

TEST_F(LogCollectorTest, LogTimestampsBecomeEventTimes) {
  const std::vector<std::string> lines =
      SampleLines("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log");
  const std::string path = Path("train.log");
  const std::vector<logs::LogEvent> expected = ParseAlone(path, lines, clock_);
  const bool any_timestamp = std::any_of(expected.begin(), expected.end(),
                                         [](const auto& ev) { return ev.time_unix_nano != 0; });
  ASSERT_TRUE(any_timestamp);

  LogCollector collector(Options(path), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  {
    LogWriter w(path);
    for (const std::string& line : lines) w.Line(line);
  }
  ASSERT_TRUE(CollectUntil(
      collector, e, [&] { return Count(e, "railwatch_log_lines_total", path) == lines.size(); }));
  clock_.Advance(absl::Seconds(11));
  ASSERT_TRUE(collector.Collect(e).ok());
  ASSERT_EQ(e.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Actual(e.events[i]), Expected(expected[i], path)) << i;
    if (expected[i].time_unix_nano != 0) {
      EXPECT_EQ(e.events[i].time_unix_nano, expected[i].time_unix_nano) << i;
    }
  }
}

TEST_F(LogCollectorTest, TwoFilesInterleavedKeepSeparateParsers) {
  // An nccl-tests table in one file while another file gets PyTorch errors: one parser for
  // both would see the table cut by foreign lines.
  const std::vector<std::string> table =
      SampleLines("nccltests_05_single_node_a10g_header_error_column.txt");
  const std::vector<std::string> torch =
      SampleLines("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log");
  const std::string a = Path("a.log"), b = Path("b.log"), pattern = Path("*.log");
  std::vector<logs::LogEvent> expected = ParseAlone(a, table, clock_);
  for (logs::LogEvent& ev : ParseAlone(b, torch, clock_)) expected.push_back(std::move(ev));

  LogCollector collector(Options(pattern), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  LogWriter wa(a), wb(b);
  // One line at a time, each collected before the next is written, so that the collector
  // really receives them interleaved.
  size_t written = 0;
  for (size_t i = 0; i < std::max(table.size(), torch.size()); ++i) {
    for (auto [w, lines] : {std::pair{&wa, &table}, std::pair{&wb, &torch}}) {
      if (i >= lines->size()) continue;
      w->Line((*lines)[i]);
      ++written;
      ASSERT_TRUE(CollectUntil(
          collector, e, [&] { return Count(e, "railwatch_log_lines_total", pattern) == written; }));
    }
  }
  clock_.Advance(absl::Seconds(11));
  ASSERT_TRUE(collector.Collect(e).ok());

  // Across files the order depends on reading; compare as sets.
  std::vector<decltype(Expected(expected[0], pattern))> want, got;
  for (const logs::LogEvent& ev : expected) want.push_back(Expected(ev, pattern));
  for (const EventRecord& r : e.events) got.push_back(Actual(r));
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(Count(e, "railwatch_log_lines_total", pattern), table.size() + torch.size());
}

TEST_F(LogCollectorTest, RotatedFileHasItsParserFinishedWhenItCloses) {
  const std::vector<std::string> lines =
      SampleLines("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log");
  const std::string path = Path("rank0.log");
  const std::vector<logs::LogEvent> expected = ParseAlone(path, lines, clock_);
  LogCollector::Options options = Options(path);
  options.idle_flush_after = absl::Hours(24);  // only the end of the file may flush
  LogCollector collector(options, clock_);
  RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  {
    LogWriter w(path);
    for (const std::string& line : lines) w.Line(line);
  }
  ASSERT_TRUE(CollectUntil(
      collector, e, [&] { return Count(e, "railwatch_log_lines_total", path) == lines.size(); }));
  ASSERT_LT(e.events.size(), expected.size());
  ASSERT_EQ(::rename(path.c_str(), Path("rank0.log.1").c_str()), 0);
  ASSERT_TRUE(StatsReach(collector.tailer(), [](const auto& s) { return s.rotations == 1; }));
  clock_.Advance(absl::Seconds(6));  // past rotated_close_after
  ASSERT_TRUE(CollectUntil(collector, e, [&] { return e.events.size() >= expected.size(); }));
  ASSERT_EQ(e.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Actual(e.events[i]), Expected(expected[i], path)) << i;
  }
  EXPECT_EQ(e.Get("railwatch_log_tailer_rotations_total"), 1u);
}

TEST_F(LogCollectorTest, LineNumbersStayTrueToTheFileAcrossARestart) {
  const std::vector<std::string> lines =
      SampleLines("nccl_05_ib_error4_vendor81_linklocal_gid_h100.log");
  const std::string path = Path("rank0.log");
  // The second error block starts after the first block and its blank line.
  const auto blank = std::find(lines.begin(), lines.end(), "");
  ASSERT_NE(blank, lines.end());
  const size_t first_part = static_cast<size_t>(blank - lines.begin()) + 1;
  LogWriter w(path);
  for (size_t i = 0; i < first_part; ++i) w.Line(lines[i]);
  {
    LogCollector collector(Options(path), clock_);
    RecordingEmitter e;
    ASSERT_TRUE(CollectUntil(
        collector, e, [&] { return Count(e, "railwatch_log_lines_total", path) == first_part; }));
  }
  for (size_t i = first_part; i < lines.size(); ++i) w.Line(lines[i]);

  LogCollector collector(Options(path), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(CollectUntil(collector, e, [&] {
    return Count(e, "railwatch_log_lines_total", path) == lines.size() - first_part;
  }));
  clock_.Advance(absl::Seconds(11));
  ASSERT_TRUE(collector.Collect(e).ok());
  std::vector<logs::LogEvent> expected;
  for (logs::LogEvent& ev : ParseAlone(path, lines, clock_)) {
    if (ev.line > static_cast<int>(first_part)) expected.push_back(std::move(ev));
  }
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(e.events.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(Actual(e.events[i]), Expected(expected[i], path)) << i;
  }
}

TEST_F(LogCollectorTest, SelfMetricsCountLinesAndUnparsedLinesPerPattern) {
  const std::string path = Path("app.log");
  LogCollector collector(Options(path), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  // Defined from the first cycle, before any line.
  EXPECT_EQ(e.Get(absl::StrCat("railwatch_log_lines_total{log=\"", path, "\"}")), 0u);
  EXPECT_EQ(e.Get("railwatch_log_tailer_errors_total"), 0u);
  {
    LogWriter w(path);
    w.Line("nothing any parser knows");
    w.Line("still nothing");
  }
  ASSERT_TRUE(
      CollectUntil(collector, e, [&] { return Count(e, "railwatch_log_lines_total", path) == 2; }));
  logs::LogParser alone(path, clock_);
  std::vector<logs::LogEvent> ignored;
  alone.Feed("nothing any parser knows", ignored);
  alone.Feed("still nothing", ignored);
  EXPECT_EQ(Count(e, "railwatch_log_lines_unparsed_total", path), alone.stats().skipped());
  EXPECT_EQ(Count(e, "railwatch_log_lines_malformed_total", path), alone.stats().malformed);
  EXPECT_EQ(Count(e, "railwatch_log_events_total", path), ignored.size());
}

}  // namespace
}  // namespace railwatch
