#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace railwatch {

// Where the log tailer stopped in one file, as kept in its state file across agent restarts.
//
// A file is recognised by (device, inode); because inode numbers are reused after a delete, the
// entry also holds a hash of the file's first bytes (`head`) and of the bytes just before
// `offset` (`tail`). Both must still match for the tailer to resume at `offset`: a head that
// differs means another file took the inode, a tail that differs means the file was truncated
// and written again while the agent was down.
struct TailerStateEntry {
  std::string path;  // where the file was found; its directory is searched after a rename
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t offset = 0;    // first byte not yet handed out (the start of a line)
  int64_t next_line = 0;  // 1-based number of the line at `offset`; 0 = unknown
  uint32_t head_len = 0;  // bytes covered by head_hash: min(offset, kHeadBytes)
  uint64_t head_hash = 0;
  uint32_t tail_len = 0;  // bytes covered by tail_hash: min(offset, kTailBytes), ending at offset
  uint64_t tail_hash = 0;

  friend bool operator==(const TailerStateEntry&, const TailerStateEntry&) = default;
};

inline constexpr uint32_t kTailerHeadBytes = 1024;
inline constexpr uint32_t kTailerTailBytes = 64;

// 64-bit FNV-1a: stable across processes and builds, unlike absl::Hash, so it can be stored.
uint64_t Fnv1a64(absl::string_view data);

// Text, one entry per line, so that an operator can read it and a partial write is obvious:
//   # railwatch log tailer state v1
//   <device> <inode> <offset> <next_line> <head_len> <head_hash> <tail_len> <tail_hash> <path>
// separated by tabs, hashes in hex, the path C-escaped and last.
std::string FormatTailerState(const std::vector<TailerStateEntry>& entries);

// Parses FormatTailerState's output. Malformed lines are skipped and counted in `*bad_lines`;
// a file of another version is an error (its offsets cannot be trusted).
absl::StatusOr<std::vector<TailerStateEntry>> ParseTailerState(absl::string_view text,
                                                               int* bad_lines);

// Replaces `path` with `content` so that a reader (or a crash) sees the old file or the new one,
// never a mix: writes `path`.tmp, fsyncs it and renames it over `path`.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view content);

}  // namespace railwatch
