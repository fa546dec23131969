#pragma once

// Internal to the log tailer, shared by its two halves: log_tailer.cc (which files, where they
// went: inotify, discovery, rotation) and log_tailer_lines.cc (their bytes as lines, the queue
// and the saved offsets).

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectors/log_tailer.h"

namespace railwatch {

struct LogTailer::File {
  uint64_t device = 0;
  uint64_t inode = 0;
  int fd = -1;
  int wd = -1;
  std::string origin_path;  // the path it was opened under: what its lines are labelled with
  std::string pattern;
  std::string current_path;  // empty once it has left every followed path
  uint64_t stream = 0;
  uint64_t offset = 0;      // bytes consumed
  uint64_t line_start = 0;  // where the line being assembled in `partial` starts
  int64_t next_line = 0;    // number of that line; 0 = unknown
  std::string partial;
  // Started in the middle of a line: drop bytes up to the first newline.
  bool skip_to_newline = false;
  // At the start of a stream: a writer without O_APPEND keeps writing at its old offset after
  // copytruncate, leaving a hole of zero bytes in front; skip them.
  bool skip_nuls = false;
  // The last bytes before `offset`, compared with the file on every read: if they changed, the
  // file was truncated and written again (possibly past our offset) since we last looked.
  std::string tail;
  bool more = false;  // the read budget ran out with data left
  absl::Time last_activity;
  // Hashes for the state file, recomputed only when the saved offset moves.
  uint64_t hashed_offset = UINT64_MAX;
  uint32_t head_len = 0;
  uint64_t head_hash = 0;
  uint32_t tail_len = 0;
  uint64_t tail_hash = 0;
};

namespace tailer_internal {

// Reads exactly `size` bytes at `offset` unless the file is shorter; returns the bytes read.
size_t PreadUpTo(int fd, char* buf, size_t size, uint64_t offset);

// Hash (Fnv1a64) of [offset, offset + len), or nullopt when the file is shorter than that.
std::optional<uint64_t> HashRange(int fd, uint64_t offset, uint32_t len);

// Joins a directory and a name the way glob(3) does, so that paths built from inotify names
// compare equal to glob's output ("." + "a" is "a").
std::string Join(const std::string& dir, absl::string_view name);

}  // namespace tailer_internal
}  // namespace railwatch
