#pragma once

// Whole records of the kernel's log, from /dev/kmsg or from a regular file of records in the
// same format appended over time (the simulator's <root>/<host>/kmsg), without blocking.
//
// /dev/kmsg (Documentation/ABI/testing/dev-kmsg): opened O_NONBLOCK, each read(2) returns one
// record; EAGAIN means nothing more for now; EPIPE means the record at the reader's position
// was overwritten before it was read (the ring buffer wrapped), and the next read goes on from
// the oldest record still there: the records lost show as a gap in sequence numbers, which the
// caller counts. A new descriptor starts at the oldest record in the buffer.
//
// A file: read with pread from where the last whole record ended; a record is whole when its
// header line and dictionary lines are followed by the next record or by the end of the file
// with a newline. A file replaced (another inode) or truncated is read again from its start,
// and `restarted()` says so once.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "logs/kernel_line.h"

namespace railwatch {

// Where reading stopped, kept in the agent's state directory across restarts.
struct KmsgPosition {
  std::string source;       // the path read
  std::string boot_id;      // /dev/kmsg: the boot its sequence numbers belong to
  uint64_t next_seq = 0;    // the first record not yet read
  uint64_t inode = 0;       // a file: which file, and the byte after its last whole record
  uint64_t offset = 0;

  friend bool operator==(const KmsgPosition&, const KmsgPosition&) = default;
};

// "# railwatch kmsg state v1" then "key<TAB>value" lines.
std::string FormatKmsgPosition(const KmsgPosition& position);
absl::StatusOr<KmsgPosition> ParseKmsgPosition(std::string_view text);

class KmsgReader {
 public:
  struct Stats {
    uint64_t overruns = 0;   // EPIPE: the reader fell behind the ring buffer
    uint64_t malformed = 0;  // records that are not PRI,SEQ,TS,FLAGS;MESSAGE (skipped)
    uint64_t restarts = 0;   // a file replaced or truncated
  };

  explicit KmsgReader(std::string path);
  ~KmsgReader();
  KmsgReader(const KmsgReader&) = delete;
  KmsgReader& operator=(const KmsgReader&) = delete;

  // Opens the path: a character device is read as /dev/kmsg, anything else as a file. NotFound
  // when it does not exist.
  absl::Status Open();
  bool is_open() const { return fd_ >= 0; }
  bool device() const { return device_; }
  const std::string& path() const { return path_; }

  // A file: continue at `offset` when the file is still the one with `inode` and at least that
  // long; false (reading starts at the beginning) otherwise.
  bool ResumeFile(uint64_t inode, uint64_t offset);

  // The newest record's kernel timestamp in the file (from its last 64 KiB); nullopt for the
  // device or a file without a whole record.
  std::optional<int64_t> NewestTimestampUsec() const;

  // Appends up to `max` whole records to `out`. `*drained` is true when there was nothing more
  // to read now (EAGAIN, or the end of the file).
  absl::Status Read(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained);

  // A file: its inode and the byte after the last record Read returned.
  uint64_t inode() const { return inode_; }
  uint64_t offset() const { return offset_; }

  // True once after the file was found replaced or truncated (and read again from its start).
  bool TakeRestarted();

  const Stats& stats() const { return stats_; }

 private:
  absl::Status ReadDevice(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained);
  absl::Status ReadFile(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained);
  void Close();

  std::string path_;
  int fd_ = -1;
  bool device_ = false;
  uint64_t inode_ = 0;
  uint64_t offset_ = 0;
  bool restarted_ = false;
  std::string buffer_;
  Stats stats_;
};

}  // namespace railwatch
