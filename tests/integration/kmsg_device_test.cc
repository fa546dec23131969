// The real /dev/kmsg: a record written to it (as root: writing injects a record into the
// kernel's log, with facility 1, "user") is read back by KmsgReader and counted by the
// collector, which resumes after a restart where it stopped in the same boot.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectors/kmsg_collector.h"
#include "collectors/kmsg_reader.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace kmsg_device_test {

// Writes one record to /dev/kmsg; the marker makes it ours.
void WriteKmsg(const std::string& text) {
  const int fd = ::open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << "open /dev/kmsg for writing (needs root): " << std::strerror(errno);
  const std::string record = "<4>" + text + "\n";
  EXPECT_EQ(::write(fd, record.data(), record.size()), static_cast<ssize_t>(record.size()))
      << std::strerror(errno);
  ::close(fd);
}

std::string Marker(const std::string& what) {
  return absl::StrCat("railwatch-kmsg-test ", what, " pid ", getpid(), " at ",
                      absl::ToUnixNanos(absl::Now()));
}

TEST(KmsgDevice, ReaderReadsBackARecordWrittenToDevKmsg) {
  const std::string marker = Marker("reader");
  WriteKmsg(marker);
  KmsgReader reader("/dev/kmsg");
  ASSERT_TRUE(reader.Open().ok());
  EXPECT_TRUE(reader.device());
  std::vector<logs::KmsgRecord> records;
  bool drained = false;
  // The whole ring buffer, a few thousand records at most, then EAGAIN.
  for (int i = 0; i < 1000 && !drained; ++i) ASSERT_TRUE(reader.Read(256, records, &drained).ok());
  ASSERT_TRUE(drained);
  const logs::KmsgRecord* found = nullptr;
  for (const logs::KmsgRecord& r : records) {
    if (r.message == marker) found = &r;
  }
  ASSERT_NE(found, nullptr) << "the record written was not read back among " << records.size();
  EXPECT_EQ(found->facility, 1);  // user space, enforced by the kernel
  EXPECT_EQ(found->level, 4);
  EXPECT_GT(found->timestamp_usec, 0);
  // Sequence numbers increase by one from record to record (nothing lost between them).
  for (size_t i = 1; i < records.size(); ++i) EXPECT_GT(records[i].seq, records[i - 1].seq);
}

TEST(KmsgDevice, CollectorCountsItAndResumesInTheSameBoot) {
  testing::TempDir dir;
  KmsgCollector::Options o;
  o.path = "/dev/kmsg";
  o.sysfs_root = dir.path();
  o.state_dir = dir.path() + "/state";
  uint64_t first_records = 0;
  {
    WriteKmsg(Marker("first"));
    KmsgCollector c(o, RealClock::Get());
    testing::RecordingEmitter em;
    ASSERT_TRUE(c.Collect(em).ok());
    first_records = c.stats().records;
    EXPECT_GE(first_records, 1u);
    EXPECT_GE(c.stats().skipped_user, 1u);  // ours: written by a process
    EXPECT_EQ(c.stats().read_errors, 0u);
  }
  // Restarted in the same boot: the records read before are skipped, the new one is read.
  WriteKmsg(Marker("second"));
  KmsgCollector c(o, RealClock::Get());
  testing::RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  EXPECT_GE(c.stats().skipped_read, first_records);
  EXPECT_GE(c.stats().skipped_user, 1u);
  EXPECT_EQ(c.stats().skipped_lookback, 0u);  // a resume, not a first start
  EXPECT_EQ(c.stats().lost, 0u);
  EXPECT_EQ(em.Get("railwatch_kmsg_read_errors_total"), 0u);
}

}  // namespace kmsg_device_test
}  // namespace railwatch
