// The agent restarts: a new LogTailer resumes from the state file the previous one left.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_format.h"
#include "collectors/log_tailer.h"
#include "collectors/log_tailer_state.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "unit/tailer/tailer_test_util.h"

namespace railwatch {
namespace log_tailer_restart_test {

namespace fs = std::filesystem;
using ::railwatch::testing::DrainUntil;
using ::railwatch::testing::LogWriter;
using ::railwatch::testing::Received;
using ::railwatch::testing::Seq;
using ::railwatch::testing::Seqs;
using ::railwatch::testing::StatsReach;
using ::railwatch::testing::TempDir;
using ::railwatch::testing::TestOptions;
using ::testing::ElementsAreArray;
using ::testing::UnorderedElementsAreArray;

uint64_t Bytes(const std::vector<std::string>& lines) {
  uint64_t n = 0;
  for (const std::string& l : lines) n += l.size() + 1;
  return n;
}

class LogTailerRestartTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  LogTailer::Options Options(const std::string& pattern) const {
    return TestOptions({pattern}, dir_.path() + "/state");
  }
  std::unique_ptr<LogTailer> StartTailer(const std::string& pattern) {
    return StartTailer(Options(pattern));
  }
  std::unique_ptr<LogTailer> StartTailer(LogTailer::Options options) {
    auto tailer = std::make_unique<LogTailer>(std::move(options), clock_);
    EXPECT_TRUE(tailer->Start().ok());
    return tailer;
  }
  // Runs a tailer until it has handed out `lines` lines, then stops it.
  void RunUntil(const std::string& pattern, size_t lines) {
    auto tailer = StartTailer(pattern);
    Received got;
    ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= lines; }));
    tailer->Stop();
    ASSERT_EQ(got.Lines(), lines);
  }
  // Drains a new tailer until it has read `bytes`, and returns what it handed out.
  Received ReadBytes(LogTailer& tailer, uint64_t bytes) {
    Received got;
    EXPECT_TRUE(StatsReach(tailer, [&](const auto& s) { return s.bytes >= bytes; }));
    tailer.Drain(got.items, SIZE_MAX);
    EXPECT_EQ(tailer.stats().bytes, bytes);
    return got;
  }

  TempDir dir_;
  FakeClock clock_;
};

TEST_F(LogTailerRestartTest, ResumesAtTheSavedOffsetWithNothingLostOrRepeated) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  for (int i = 0; i < 5; ++i) w.Line(Seq("line", i));
  RunUntil(path, 5);

  // The state names this file at its end.
  absl::StatusOr<std::string> text = ReadFile(dir_.path() + "/state/" + LogTailer::kStateFileName);
  ASSERT_TRUE(text.ok());
  int bad = 0;
  absl::StatusOr<std::vector<TailerStateEntry>> state = ParseTailerState(*text, &bad);
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_EQ(state->size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ((*state)[0].inode, st.st_ino);
  EXPECT_EQ((*state)[0].offset, static_cast<uint64_t>(st.st_size));
  EXPECT_EQ((*state)[0].next_line, 6);

  // Written while the agent was down.
  for (int i = 5; i < 12; ++i) w.Line(Seq("line", i));
  auto tailer = StartTailer(path);
  Received got = ReadBytes(*tailer, Bytes(Seqs("line", 5, 12)));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 5, 12)));
  ASSERT_FALSE(got.items.empty());
  EXPECT_EQ(got.items[0].line_number, 6);
}

TEST_F(LogTailerRestartTest, LinesNotTakenBeforeStopAreReadAgain) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  for (int i = 0; i < 5; ++i) w.Line(Seq("line", i));
  {
    auto tailer = StartTailer(path);
    ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.lines == 5; }));
    std::vector<TailedLine> taken;
    ASSERT_EQ(tailer->Drain(taken, 2), 2u);
    tailer->Stop();
  }
  w.Line(Seq("line", 5));
  auto tailer = StartTailer(path);
  Received got = ReadBytes(*tailer, Bytes(Seqs("line", 2, 6)));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 2, 6)));
}

TEST_F(LogTailerRestartTest, PartialLastLineAtStopIsReadWholeAfterRestart) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  w.Write("whole\nhal");
  {
    auto tailer = StartTailer(path);
    Received got;
    ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return tailer->stats().bytes == 9; }));
    ASSERT_EQ(got.Lines(), 1u);
  }
  w.Write("f\n");
  auto tailer = StartTailer(path);
  Received got = ReadBytes(*tailer, 5);
  EXPECT_THAT(got.Texts(), ElementsAreArray({"half"}));
}

TEST_F(LogTailerRestartTest, FileRenamedWhileDownIsReadToItsEndAndTheNewOneFromItsStart) {
  const std::string path = Path("app.log");
  {
    LogWriter w(path);
    for (int i = 0; i < 5; ++i) w.Line(Seq("old", i));
  }
  RunUntil(path, 5);
  {
    LogWriter w(path);
    for (int i = 5; i < 8; ++i) w.Line(Seq("old", i));
  }
  ASSERT_EQ(::rename(path.c_str(), Path("app.log.1").c_str()), 0);
  {
    LogWriter w(path);
    for (int i = 0; i < 4; ++i) w.Line(Seq("new", i));
  }
  auto tailer = StartTailer(path);
  std::vector<std::string> expected = Seqs("old", 5, 8);
  for (const std::string& s : Seqs("new", 0, 4)) expected.push_back(s);
  Received got = ReadBytes(*tailer, Bytes(expected));
  EXPECT_THAT(got.Texts(), UnorderedElementsAreArray(expected));
  for (const TailedLine& l : got.items) EXPECT_EQ(l.path, path);
}

TEST_F(LogTailerRestartTest, FileRewrittenInPlaceIsReadFromItsStart) {
  // Same device and inode as the saved entry (as after inode reuse), other content.
  const std::string path = Path("app.log");
  {
    LogWriter w(path);
    for (int i = 0; i < 5; ++i) w.Line(Seq("old", i));
  }
  RunUntil(path, 5);
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  {
    LogWriter w(path, /*append=*/false);  // overwrites from offset 0, no truncation
    for (int i = 0; i < 8; ++i) w.Line(Seq("new", i));
  }
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(st.st_ino, before.st_ino);
  auto tailer = StartTailer(path);
  Received got = ReadBytes(*tailer, Bytes(Seqs("new", 0, 8)));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("new", 0, 8)));
}

TEST_F(LogTailerRestartTest, FileTruncatedWhileDownIsReadFromItsStart) {
  const std::string path = Path("app.log");
  {
    LogWriter w(path);
    for (int i = 0; i < 5; ++i) w.Line(Seq("old", i));
  }
  RunUntil(path, 5);
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  {
    LogWriter w(path);
    for (int i = 0; i < 2; ++i) w.Line(Seq("new", i));
  }
  auto tailer = StartTailer(path);
  Received got = ReadBytes(*tailer, Bytes(Seqs("new", 0, 2)));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("new", 0, 2)));
}

TEST_F(LogTailerRestartTest, FirstStartReadsOnlyTheLastBacklogBytesFromALineStart) {
  const std::string path = Path("big.log");
  LogWriter w(path);
  for (int i = 0; i < 100; ++i) w.Line(Seq("line", i));  // 12 bytes a line
  LogTailer::Options options = Options(path);
  options.start_backlog_bytes = 12 * 10 + 6;  // starts mid-way through line 89
  auto tailer = StartTailer(options);
  Received got = ReadBytes(*tailer, 12 * 10 + 6);
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 90, 100)));
  for (const TailedLine& l : got.items) EXPECT_EQ(l.line_number, 0);  // unknown

  w.Line(Seq("line", 100));
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 11; }));
  EXPECT_EQ(got.Texts().back(), Seq("line", 100));
  // A backlog that starts exactly at a line start keeps that line.
  tailer->Stop();
  ASSERT_TRUE(fs::remove_all(dir_.path() + "/state"));
  options.start_backlog_bytes = 12 * 3;
  tailer = StartTailer(options);
  got = ReadBytes(*tailer, 12 * 3);
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 98, 101)));
}

TEST_F(LogTailerRestartTest, StateIsWrittenPeriodicallyNotOnlyAtStop) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  w.Line("one");
  auto tailer = StartTailer(path);
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 1; }));
  const std::string state_path = dir_.path() + "/state/" + LogTailer::kStateFileName;
  // The clock decides when a write is due; advance it until the tailer has written.
  auto saved_offset = [&]() -> uint64_t {
    absl::StatusOr<std::string> text = ReadFile(state_path);
    if (!text.ok()) return 0;
    int bad = 0;
    absl::StatusOr<std::vector<TailerStateEntry>> state = ParseTailerState(*text, &bad);
    return state.ok() && state->size() == 1 ? (*state)[0].offset : 0;
  };
  ASSERT_TRUE(DrainUntil(
      *tailer, got, [&] { return saved_offset() == 4; },
      [&] { clock_.Advance(absl::Milliseconds(500)); }));
  EXPECT_FALSE(fs::exists(state_path + ".tmp"));
}

}  // namespace
}  // namespace railwatch
