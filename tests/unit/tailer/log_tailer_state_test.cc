#include "collectors/log_tailer_state.h"

#include <filesystem>

#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace log_tailer_state_test {

namespace fs = std::filesystem;
using ::railwatch::testing::TempDir;

TailerStateEntry Entry(std::string path, uint64_t inode, uint64_t offset) {
  TailerStateEntry e;
  e.path = std::move(path);
  e.device = 2049;
  e.inode = inode;
  e.offset = offset;
  e.next_line = 42;
  e.head_len = static_cast<uint32_t>(std::min<uint64_t>(offset, kTailerHeadBytes));
  e.head_hash = Fnv1a64("head") ^ inode;
  e.tail_len = static_cast<uint32_t>(std::min<uint64_t>(offset, kTailerTailBytes));
  e.tail_hash = ~e.head_hash;
  return e;
}

TEST(TailerState, FormatThenParseGivesBackTheSameEntries) {
  // Paths with a tab, a newline and non-ASCII bytes survive the round trip.
  std::vector<TailerStateEntry> entries = {
      Entry("/var/log/nccl/rank0.log", 1234567, 8192),
      Entry("/var/log/odd\tname\nwith newline \xc3\xa9.log", 7, 10),
      Entry("relative.log", UINT64_MAX, 0),
  };
  const std::string text = FormatTailerState(entries);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  int bad = -1;
  absl::StatusOr<std::vector<TailerStateEntry>> parsed = ParseTailerState(text, &bad);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(*parsed, entries);
}

TEST(TailerState, MalformedLinesAreSkippedAndCounted) {
  std::string text = FormatTailerState({Entry("/a.log", 1, 100)});
  text += "garbage\n";
  text += "1\t2\t3\n";
  text += "1\t2\tnotanumber\t4\t5\tff\t6\tff\t/b.log\n";
  // A tail longer than the offset cannot have been written by the tailer.
  text += "1\t2\t3\t4\t3\tff\t60\tff\t/c.log\n";
  const std::string more = FormatTailerState({Entry("/d.log", 4, 5000)});
  text += more.substr(more.find('\n') + 1);  // without its header
  int bad = 0;
  absl::StatusOr<std::vector<TailerStateEntry>> parsed = ParseTailerState(text, &bad);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(bad, 4);
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].path, "/a.log");
  EXPECT_EQ((*parsed)[1].path, "/d.log");
}

TEST(TailerState, AnotherVersionIsRejectedAndEmptyIsNothing) {
  int bad = 0;
  EXPECT_FALSE(ParseTailerState("# railwatch log tailer state v2\n1\t2\n", &bad).ok());
  absl::StatusOr<std::vector<TailerStateEntry>> empty = ParseTailerState("", &bad);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(TailerState, WriteFileAtomicallyReplacesTheWholeFile) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  ASSERT_TRUE(WriteFileAtomically(path, std::string(1000, 'a')).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "short").ok());
  absl::StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "short");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(WriteFileAtomically(dir.path() + "/missing/state", "x").ok());
}

TEST(TailerState, Fnv1aIsTheStandardFunction) {
  // Published FNV-1a 64 test vectors: the hashes in state files must not change across builds.
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

}  // namespace
}  // namespace railwatch
