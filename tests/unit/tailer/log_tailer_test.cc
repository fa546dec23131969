#include "collectors/log_tailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "unit/tailer/tailer_test_util.h"

namespace railwatch {
namespace log_tailer_test {

namespace fs = std::filesystem;
using ::railwatch::testing::DrainUntil;
using ::railwatch::testing::LogWriter;
using ::railwatch::testing::Received;
using ::railwatch::testing::Seq;
using ::railwatch::testing::Seqs;
using ::railwatch::testing::StatsReach;
using ::railwatch::testing::TempDir;
using ::railwatch::testing::TestOptions;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

class LogTailerTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  std::string StateDir() const { return dir_.path() + "/state"; }
  std::unique_ptr<LogTailer> StartTailer(LogTailer::Options options) {
    auto tailer = std::make_unique<LogTailer>(std::move(options), clock_);
    EXPECT_TRUE(tailer->Start().ok());
    return tailer;
  }
  std::unique_ptr<LogTailer> StartTailer(const std::string& pattern) {
    return StartTailer(TestOptions({pattern}, StateDir()));
  }

  TempDir dir_;
  FakeClock clock_;
};

TEST_F(LogTailerTest, ReadsExistingAndAppendedLinesInOrderWithLineNumbers) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  for (int i = 0; i < 3; ++i) w.Line(Seq("line", i));
  auto tailer = StartTailer(path);
  for (int i = 3; i < 100; ++i) w.Line(Seq("line", i));

  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 100; })) << got.Lines();
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 0, 100)));
  for (size_t i = 0; i < got.items.size(); ++i) {
    EXPECT_EQ(got.items[i].line_number, static_cast<int64_t>(i + 1));
    EXPECT_EQ(got.items[i].path, path);
    EXPECT_EQ(got.items[i].pattern, path);
    EXPECT_EQ(got.items[i].stream, got.items[0].stream);
    EXPECT_EQ(got.items[i].read_unix_nano, clock_.NowNanos());
  }
  const LogTailer::Stats stats = tailer->stats();
  EXPECT_EQ(stats.lines, 100u);
  EXPECT_EQ(stats.bytes, fs::file_size(path));
  EXPECT_EQ(stats.open_files, 1u);
  EXPECT_EQ(stats.dropped_lines, 0u);
}

TEST_F(LogTailerTest, PartialLineIsHeldUntilItsNewlineArrives) {
  const std::string path = Path("app.log");
  LogWriter w(path);
  auto tailer = StartTailer(path);
  w.Write("first\nsec");
  // Once the tailer has read all 9 bytes, only the complete line may have come out.
  ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.bytes == 9; }));
  Received got;
  tailer->Drain(got.items, SIZE_MAX);
  EXPECT_THAT(got.Texts(), ElementsAre("first"));

  w.Write("ond");
  ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.bytes == 12; }));
  tailer->Drain(got.items, SIZE_MAX);
  EXPECT_THAT(got.Texts(), ElementsAre("first"));

  w.Write("\nthird\n");
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 3; }));
  EXPECT_THAT(got.Texts(), ElementsAre("first", "second", "third"));
  EXPECT_EQ(got.items[1].line_number, 2);
}

TEST_F(LogTailerTest, LongLinesAreSplitAtTheLimitAndCounted) {
  const std::string path = Path("app.log");
  LogTailer::Options options = TestOptions({path}, StateDir());
  options.max_line_bytes = 100;
  auto tailer = StartTailer(options);
  LogWriter w(path);
  const std::string long_line(250, 'x');
  w.Line(long_line);
  w.Line(std::string(100, 'y'));  // exactly the limit: one line
  w.Line("short");

  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 5; }));
  EXPECT_THAT(got.Texts(), ElementsAre(std::string(100, 'x'), std::string(100, 'x'),
                                       std::string(50, 'x'), std::string(100, 'y'), "short"));
  EXPECT_EQ(tailer->stats().long_line_splits, 2u);
  // The pieces of one line share its number.
  EXPECT_EQ(got.items[0].line_number, 1);
  EXPECT_EQ(got.items[2].line_number, 1);
  EXPECT_EQ(got.items[3].line_number, 2);
}

TEST_F(LogTailerTest, RenameRotationReadsTheOldFileToItsEndThenTheNewFile) {
  const std::string path = Path("app.log");
  auto tailer = StartTailer(path);
  auto old_writer = std::make_unique<LogWriter>(path);
  for (int i = 0; i < 10; ++i) old_writer->Line(Seq("a", i));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 10; }));

  ASSERT_EQ(::rename(path.c_str(), Path("app.log.1").c_str()), 0);
  // The writer has not reopened yet: these land in the renamed file.
  for (int i = 10; i < 15; ++i) old_writer->Line(Seq("a", i));
  LogWriter new_writer(path);
  for (int i = 0; i < 5; ++i) new_writer.Line(Seq("b", i));
  // Still late writes to the old file, after the new one exists, and a last line that never
  // gets its newline.
  for (int i = 15; i < 20; ++i) old_writer->Line(Seq("a", i));
  old_writer->Write("a unterminated");
  old_writer.reset();

  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 25; })) << got.Lines();
  std::map<uint64_t, std::vector<std::string>> by_stream;
  for (const TailedLine& l : got.items) {
    ASSERT_FALSE(l.end_of_stream);
    by_stream[l.stream].push_back(l.text);
    EXPECT_EQ(l.path, path);  // a rotated file keeps the name it was followed under
  }
  ASSERT_EQ(by_stream.size(), 2u);
  EXPECT_THAT(by_stream.begin()->second, ElementsAreArray(Seqs("a", 0, 20)));
  EXPECT_THAT(by_stream.rbegin()->second, ElementsAreArray(Seqs("b", 0, 5)));
  EXPECT_EQ(tailer->stats().rotations, 1u);
  EXPECT_EQ(tailer->stats().open_files, 2u);

  // Once the rotated file has been idle long enough it is closed: its last partial line comes
  // out, then the end of its stream. (Idle since its last read: wait for that read first.)
  const uint64_t old_stream = by_stream.begin()->first;
  ASSERT_TRUE(StatsReach(*tailer, [&](const auto& s) {
    return s.bytes == fs::file_size(path) + fs::file_size(Path("app.log.1"));
  }));
  clock_.Advance(absl::Seconds(6));
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.EndsOfStream() == 1; }));
  ASSERT_GE(got.items.size(), 27u);
  const TailedLine& last_line = got.items[got.items.size() - 2];
  const TailedLine& end = got.items.back();
  EXPECT_EQ(last_line.text, "a unterminated");
  EXPECT_EQ(last_line.stream, old_stream);
  EXPECT_TRUE(end.end_of_stream);
  EXPECT_EQ(end.stream, old_stream);
  EXPECT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.open_files == 1; }));

  // The new file is still followed.
  new_writer.Line("after");
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Texts().back() == "after"; }));
}

TEST_F(LogTailerTest, FilesCreatedAndRotatedFasterThanTheTailerLooksAreStillRead) {
  // Whether the tailer opens each file before its rename or only learns of it from the rename
  // event (when it is behind), every line must come out once.
  const std::string path = Path("app.log");
  auto tailer = StartTailer(path);
  constexpr int kFiles = 20, kLines = 50;
  std::vector<std::string> expected;
  uint64_t bytes = 0;
  for (int f = 0; f < kFiles; ++f) {
    {
      LogWriter w(path);
      for (int i = 0; i < kLines; ++i) {
        expected.push_back(Seq(absl::StrCat("f", f), i));
        w.Line(expected.back());
      }
    }
    bytes += fs::file_size(path);
    ASSERT_EQ(::rename(path.c_str(), Path(absl::StrCat("app.log.", f)).c_str()), 0);
  }
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= expected.size(); }))
      << got.Lines();
  ASSERT_TRUE(StatsReach(*tailer, [&](const auto& s) { return s.bytes == bytes; }));
  tailer->Drain(got.items, SIZE_MAX);
  std::vector<std::string> texts = got.Texts();
  std::sort(texts.begin(), texts.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_THAT(texts, ElementsAreArray(expected));
  // The last rename may be handled after its file has been read to the end.
  EXPECT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.rotations == kFiles; }))
      << tailer->stats().rotations;
}

TEST_F(LogTailerTest, CopyTruncateLosesNothingAndDuplicatesNothing) {
  const std::string path = Path("app.log");
  auto tailer = StartTailer(path);
  LogWriter w(path);
  constexpr int kN = 50, kM = 80;
  for (int i = 0; i < kN; ++i) w.Line(Seq("line", i));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= kN; }));

  // logrotate's copytruncate: copy, then truncate in place; the writer goes on at offset 0.
  fs::copy_file(path, Path("app.log.1"));
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  for (int i = kN; i < kN + kM; ++i) w.Line(Seq("line", i));

  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= kN + kM; }));
  // Whether the tailer saw the empty file or only the regrown one, the same lines come out.
  ASSERT_TRUE(StatsReach(*tailer, [&](const auto& s) {
    return s.bytes == fs::file_size(Path("app.log.1")) + fs::file_size(path);
  }));
  tailer->Drain(got.items, SIZE_MAX);
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 0, kN + kM)));
  EXPECT_EQ(tailer->stats().truncations, 1u);
  // The content before the truncation is its own stream, ended; the rest is a new stream
  // whose line numbers start again at 1.
  EXPECT_EQ(got.EndsOfStream(), 1u);
  const TailedLine& first_after = got.items[kN + 1];
  EXPECT_EQ(first_after.text, Seq("line", kN));
  EXPECT_EQ(first_after.line_number, 1);
  EXPECT_NE(first_after.stream, got.items[0].stream);
}

TEST_F(LogTailerTest, CopyTruncateWithAWriterWithoutAppendSkipsTheHole) {
  // NCCL opens NCCL_DEBUG_FILE with fopen(.., "w"): after the truncation its next write lands at
  // its old offset, leaving a hole of zero bytes in front.
  const std::string path = Path("nccl.log");
  auto tailer = StartTailer(path);
  LogWriter w(path, /*append=*/false);
  for (int i = 0; i < 200; ++i) w.Line(Seq("line", i));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 200; }));

  const uint64_t old_size = fs::file_size(path);
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  for (int i = 200; i < 230; ++i) w.Line(Seq("line", i));
  ASSERT_GT(fs::file_size(path), old_size);  // the hole is there

  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 230; }));
  ASSERT_TRUE(StatsReach(*tailer, [&](const auto& s) { return s.truncations == 1; }));
  tailer->Drain(got.items, SIZE_MAX);
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 0, 230)));
}

TEST_F(LogTailerTest, ZerosReadBeforeTheirWriteLandedAreReadAgainInTheSameStream) {
  // The tailer can read a block as zeros a moment before the write that fills it lands (seen
  // under load right after a copytruncate), or a writer can fill a preallocated file in place.
  // Nothing but zeros went out, so the bytes are read again: the same stream, no truncation.
  const std::string path = Path("nccl.log");
  {
    LogWriter zeros(path);
    zeros.Write(std::string(4096, '\0'));
  }
  auto tailer = StartTailer(path);
  ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.bytes == 4096; }));

  const std::string first = Seq("line", 0) + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, first.data(), first.size(), static_cast<off_t>(4096 - first.size())),
            static_cast<ssize_t>(first.size()));
  ::close(fd);
  LogWriter w(path);
  for (int i = 1; i < 5; ++i) w.Line(Seq("line", i));

  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 5; }));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("line", 0, 5)));
  EXPECT_EQ(got.EndsOfStream(), 0u);
  EXPECT_EQ(got.items.front().line_number, 1);
  EXPECT_EQ(tailer->stats().truncations, 0u);
}

TEST_F(LogTailerTest, DeletedFileIsFinishedAndARecreatedOneReadFromItsStart) {
  const std::string path = Path("app.log");
  auto tailer = StartTailer(path);
  {
    LogWriter w(path);
    for (int i = 0; i < 3; ++i) w.Line(Seq("old", i));
  }
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 3; }));
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.rotations == 1; }));
  {
    LogWriter w(path);
    for (int i = 0; i < 4; ++i) w.Line(Seq("new", i));
  }
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 7; }));
  std::vector<std::string> expected = Seqs("old", 0, 3);
  for (const std::string& s : Seqs("new", 0, 4)) expected.push_back(s);
  EXPECT_THAT(got.Texts(), ElementsAreArray(expected));
  EXPECT_EQ(got.items[3].line_number, 1);

  clock_.Advance(absl::Seconds(6));
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.EndsOfStream() == 1; }));
  EXPECT_EQ(got.items.back().stream, got.items[0].stream);
  EXPECT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.open_files == 1; }));
  EXPECT_EQ(tailer->stats().lines, 7u);
}

TEST_F(LogTailerTest, FileThatAppearsAfterStartIsReadFromItsBeginning) {
  const std::string path = Path("late.log");
  auto tailer = StartTailer(path);
  LogWriter w(path);
  for (int i = 0; i < 5; ++i) w.Line(Seq("late", i));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 5; }));
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("late", 0, 5)));
}

TEST_F(LogTailerTest, DirectoryThatAppearsLaterIsFoundByTheRescanThenWatched) {
  const std::string sub = Path("jobs");
  auto tailer = StartTailer(sub + "/*.log");
  ASSERT_TRUE(fs::create_directory(sub));
  {
    LogWriter w(sub + "/a.log");
    w.Line("from a");
  }
  Received got;
  // No directory to watch yet: only the periodic rescan can find it.
  ASSERT_TRUE(DrainUntil(
      *tailer, got, [&] { return got.Lines() >= 1; }, [&] { clock_.Advance(absl::Seconds(1)); }));
  EXPECT_THAT(got.Texts(), ElementsAre("from a"));
  // From now on the directory is watched: a new file comes without another rescan.
  LogWriter b(sub + "/b.log");
  b.Line("from b");
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 2; }));
  EXPECT_THAT(got.Texts(), ElementsAre("from a", "from b"));
}

TEST_F(LogTailerTest, GlobPicksUpNewMatchingFilesOnly) {
  {
    LogWriter a(Path("a.log"));
    a.Line("a0");
  }
  auto tailer = StartTailer(Path("*.log"));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 1; }));
  {
    LogWriter txt(Path("c.txt"));
    txt.Line("not a log");
    LogWriter hidden(Path(".hidden.log"));
    hidden.Line("hidden");
    LogWriter b(Path("b.log"));
    b.Line("b0");
  }
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 2; }));
  {
    LogWriter a(Path("a.log"));
    a.Line("a1");
  }
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 3; }));
  EXPECT_THAT(got.Texts(), ElementsAre("a0", "b0", "a1"));
  EXPECT_EQ(tailer->stats().open_files, 2u);
  std::set<std::string> patterns;
  for (const TailedLine& l : got.items) patterns.insert(l.pattern);
  EXPECT_THAT(patterns, ElementsAre(Path("*.log")));
}

TEST_F(LogTailerTest, FileReplacedByAnotherInodeIsReadFromItsStart) {
  const std::string path = Path("app.log");
  auto tailer = StartTailer(path);
  {
    LogWriter w(path);
    for (int i = 0; i < 3; ++i) w.Line(Seq("first", i));
  }
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 3; }));
  {
    LogWriter w(Path("app.tmp"));
    for (int i = 0; i < 4; ++i) w.Line(Seq("second", i));
  }
  ASSERT_EQ(::rename(Path("app.tmp").c_str(), path.c_str()), 0);
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 7; }));
  std::vector<std::string> expected = Seqs("first", 0, 3);
  for (const std::string& s : Seqs("second", 0, 4)) expected.push_back(s);
  EXPECT_THAT(got.Texts(), ElementsAreArray(expected));
  EXPECT_NE(got.items[3].stream, got.items[0].stream);
  EXPECT_EQ(tailer->stats().rotations, 1u);
}

TEST_F(LogTailerTest, FileRenamedToAnotherMatchingNameIsNotReadTwice) {
  // A pattern that also matches the rotated names: the renamed file is the same stream.
  auto tailer = StartTailer(Path("app.log*"));
  auto writer = std::make_unique<LogWriter>(Path("app.log"));
  for (int i = 0; i < 5; ++i) writer->Line(Seq("a", i));
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 5; }));
  ASSERT_EQ(::rename(Path("app.log").c_str(), Path("app.log.1").c_str()), 0);
  for (int i = 5; i < 8; ++i) writer->Line(Seq("a", i));
  writer = std::make_unique<LogWriter>(Path("app.log"));
  writer->Line(Seq("b", 0));
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 9; }));
  // A rescan that sees app.log.1 again must not start it over either.
  clock_.Advance(absl::Seconds(6));
  writer->Line(Seq("b", 1));
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 10; }));
  ASSERT_TRUE(StatsReach(*tailer, [&](const auto& s) {
    return s.bytes == fs::file_size(Path("app.log")) + fs::file_size(Path("app.log.1"));
  }));
  tailer->Drain(got.items, SIZE_MAX);
  std::vector<std::string> expected = Seqs("a", 0, 8);
  expected.push_back(Seq("b", 0));
  expected.push_back(Seq("b", 1));
  std::vector<std::string> texts = got.Texts();
  std::sort(texts.begin(), texts.end());
  EXPECT_THAT(texts, ElementsAreArray(expected));
}

TEST_F(LogTailerTest, QueueFullDropsLinesAndCountsThem) {
  const std::string path = Path("app.log");
  LogTailer::Options options = TestOptions({path}, StateDir());
  options.max_queued_bytes = 100;  // ten 10-byte lines
  auto tailer = StartTailer(options);
  LogWriter w(path);
  for (int i = 0; i < 50; ++i) w.Line(Seq("l", i));  // "l 000000": 8 bytes
  ASSERT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.lines == 50; }));
  Received got;
  tailer->Drain(got.items, SIZE_MAX);
  const LogTailer::Stats stats = tailer->stats();
  EXPECT_EQ(got.Lines(), 12u);  // 12 * 8 bytes fit in 100
  EXPECT_EQ(stats.dropped_lines, 38u);
  EXPECT_THAT(got.Texts(), ElementsAreArray(Seqs("l", 0, 12)));
  // Once drained there is room again.
  w.Line("again");
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 13; }));
  EXPECT_EQ(got.Texts().back(), "again");
}

TEST_F(LogTailerTest, StateDirThatCannotBeCreatedIsAnErrorButTailingGoesOn) {
  { LogWriter blocker(Path("not_a_dir")); }
  const std::string path = Path("app.log");
  LogTailer::Options options = TestOptions({path}, Path("not_a_dir/state"));
  auto tailer = StartTailer(options);
  LogWriter w(path);
  w.Line("still read");
  Received got;
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 1; }));
  clock_.Advance(absl::Seconds(2));  // a state write is due
  EXPECT_TRUE(StatsReach(*tailer, [](const auto& s) { return s.errors >= 1; }));
  w.Line("and more");
  ASSERT_TRUE(DrainUntil(*tailer, got, [&] { return got.Lines() >= 2; }));
}

TEST_F(LogTailerTest, StartFailsTwiceButStopIsIdempotent) {
  LogTailer tailer(TestOptions({Path("x.log")}, ""), clock_);
  ASSERT_TRUE(tailer.Start().ok());
  EXPECT_FALSE(tailer.Start().ok());
  tailer.Stop();
  tailer.Stop();
  EXPECT_FALSE(tailer.Start().ok());
}

}  // namespace
}  // namespace railwatch
