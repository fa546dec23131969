// A writer thread logs numbered lines while the test rotates the file under it, alternating
// rename rotation (the writer reopens a moment later) and copytruncate.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "collectors/log_tailer.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "unit/tailer/tailer_test_util.h"

namespace railwatch {
namespace log_tailer_stress_test {

namespace fs = std::filesystem;
using ::railwatch::testing::DrainUntil;
using ::railwatch::testing::LogWriter;
using ::railwatch::testing::Received;
using ::railwatch::testing::TempDir;
using ::railwatch::testing::TestOptions;

constexpr int kTotal = 20000;
constexpr int kRotations = 8;
constexpr int kSegment = kTotal / (kRotations + 1);
// How far the writer may run past a rotation point before that rotation is done: rotations
// happen while it writes, but never all after it has finished.
constexpr int kSlack = kSegment / 4;

struct Shared {
  absl::Mutex mu;
  absl::CondVar cv;
  bool reopen ABSL_GUARDED_BY(mu) = false;
  int rotations_done ABSL_GUARDED_BY(mu) = 0;
  int written ABSL_GUARDED_BY(mu) = 0;
};

int RotationsNeededBefore(int line) {
  return std::clamp((line - kSlack) / kSegment, 0, kRotations);
}

// Every line received, by sequence number, and the order within each stream.
struct Tally {
  std::vector<int> count = std::vector<int>(kTotal, 0);
  std::map<uint64_t, std::vector<int>> by_stream;
  int received = 0;
  size_t absorbed = 0;
  int bad = 0;

  void Absorb(const Received& got) {
    for (; absorbed < got.items.size(); ++absorbed) {
      const TailedLine& l = got.items[absorbed];
      if (l.end_of_stream) continue;
      int seq = -1;
      if (!absl::SimpleAtoi(absl::string_view(l.text).substr(4), &seq) || seq < 0 ||
          seq >= kTotal) {
        ++bad;
        continue;
      }
      if (count[seq]++ == 0) ++received;
      by_stream[l.stream].push_back(seq);
    }
  }
  int FirstMissing() const {
    for (int i = 0; i < kTotal; ++i) {
      if (count[i] == 0) return i;
    }
    return kTotal;
  }
  bool AllBelow(int n) const {
    for (int i = 0; i < n; ++i) {
      if (count[i] == 0) return false;
    }
    return true;
  }
};

TEST(LogTailerStress, EveryLineArrivesOnceAndInOrderThroughRenameAndCopyTruncate) {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.path() + "/app.log";
  LogTailer tailer(TestOptions({path}, dir.path() + "/state"), clock);
  ASSERT_TRUE(tailer.Start().ok());

  Shared shared;
  std::thread writer([&] {
    auto w = std::make_unique<LogWriter>(path);
    for (int i = 0; i < kTotal; ++i) {
      absl::MutexLock lock(&shared.mu);
      while (shared.rotations_done < RotationsNeededBefore(i)) shared.cv.Wait(&shared.mu);
      if (shared.reopen) {
        // What a logger does on SIGHUP from logrotate's postrotate.
        w = std::make_unique<LogWriter>(path);
        shared.reopen = false;
      }
      w->Line(absl::StrFormat("seq %06d", i));
      shared.written = i + 1;
    }
  });

  // On an early failed assertion, release the writer so that the test ends instead of hanging.
  struct ReleaseWriter {
    Shared& shared;
    std::thread& writer;
    ~ReleaseWriter() {
      {
        absl::MutexLock lock(&shared.mu);
        shared.rotations_done = kRotations;
        shared.cv.SignalAll();
      }
      if (writer.joinable()) writer.join();
    }
  } release{shared, writer};

  Received got;
  Tally tally;
  auto written = [&] {
    absl::MutexLock lock(&shared.mu);
    return shared.written;
  };
  int renames = 0, copytruncates = 0;
  for (int r = 0; r < kRotations; ++r) {
    ASSERT_TRUE(DrainUntil(tailer, got, [&] { return written() >= (r + 1) * kSegment; }));
    const std::string rotated = absl::StrFormat("%s.%d", path, r + 1);
    if (r % 2 == 0) {
      // The writer keeps writing into the renamed file until it sees `reopen`.
      ASSERT_EQ(::rename(path.c_str(), rotated.c_str()), 0);
      absl::MutexLock lock(&shared.mu);
      shared.reopen = true;
      ++renames;
    } else {
      // The writer is held while the file is copied and truncated; everything it wrote before
      // must have been read by then (copytruncate's own window, between copy and truncate, is
      // out of anyone's hands).
      absl::MutexLock lock(&shared.mu);
      const int before = shared.written;
      ASSERT_TRUE(DrainUntil(tailer, got,
                             [&] {
                               tally.Absorb(got);
                               return tally.AllBelow(before);
                             }))
          << "lines before the truncation at " << before << " were not all read; first missing "
          << tally.FirstMissing() << ", rotations " << tailer.stats().rotations << ", truncations "
          << tailer.stats().truncations << ", lines " << tailer.stats().lines << ", open files "
          << tailer.stats().open_files;
      fs::copy_file(path, rotated);
      ASSERT_EQ(::truncate(path.c_str(), 0), 0);
      ++copytruncates;
    }
    absl::MutexLock lock(&shared.mu);
    shared.rotations_done = r + 1;
    shared.cv.SignalAll();
  }
  writer.join();
  ASSERT_TRUE(DrainUntil(tailer, got,
                         [&] {
                           tally.Absorb(got);
                           return tally.received == kTotal;
                         }))
      << tally.received << " of " << kTotal << "; first missing " << tally.FirstMissing();

  EXPECT_EQ(tally.bad, 0);
  for (int i = 0; i < kTotal; ++i) ASSERT_EQ(tally.count[i], 1) << "line " << i;
  for (const auto& [stream, seqs] : tally.by_stream) {
    EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end())) << "stream " << stream;
  }
  const LogTailer::Stats stats = tailer.stats();
  EXPECT_EQ(stats.rotations, static_cast<uint64_t>(renames));
  EXPECT_EQ(stats.truncations, static_cast<uint64_t>(copytruncates));
  EXPECT_EQ(stats.dropped_lines, 0u);
  EXPECT_EQ(stats.lines, static_cast<uint64_t>(kTotal));
}

}  // namespace
}  // namespace railwatch
