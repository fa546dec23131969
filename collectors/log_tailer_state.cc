#include "collectors/log_tailer_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace railwatch {

namespace {

constexpr absl::string_view kHeader = "# railwatch log tailer state v1";

absl::Status ErrnoError(absl::string_view what, const std::string& path, int err) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

uint64_t Fnv1a64(absl::string_view data) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string FormatTailerState(const std::vector<TailerStateEntry>& entries) {
  std::string out = absl::StrCat(kHeader, "\n");
  for (const TailerStateEntry& e : entries) {
    absl::StrAppend(&out, e.device, "\t", e.inode, "\t", e.offset, "\t", e.next_line, "\t",
                    e.head_len, "\t", absl::Hex(e.head_hash), "\t", e.tail_len, "\t",
                    absl::Hex(e.tail_hash), "\t", absl::CEscape(e.path), "\n");
  }
  return out;
}

absl::StatusOr<std::vector<TailerStateEntry>> ParseTailerState(absl::string_view text,
                                                               int* bad_lines) {
  *bad_lines = 0;
  std::vector<TailerStateEntry> out;
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty()) return out;
  if (absl::StripAsciiWhitespace(lines[0]) != kHeader) {
    return absl::FailedPreconditionError(
        absl::StrCat("not a v1 tailer state file (first line \"", lines[0], "\")"));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], '\t');
    TailerStateEntry e;
    if (f.size() != 9 || !absl::SimpleAtoi(f[0], &e.device) || !absl::SimpleAtoi(f[1], &e.inode) ||
        !absl::SimpleAtoi(f[2], &e.offset) || !absl::SimpleAtoi(f[3], &e.next_line) ||
        !absl::SimpleAtoi(f[4], &e.head_len) || !absl::SimpleHexAtoi(f[5], &e.head_hash) ||
        !absl::SimpleAtoi(f[6], &e.tail_len) || !absl::SimpleHexAtoi(f[7], &e.tail_hash) ||
        !absl::CUnescape(f[8], &e.path) || e.path.empty() || e.head_len > kTailerHeadBytes ||
        e.tail_len > kTailerTailBytes || e.tail_len > e.offset) {
      ++*bad_lines;
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view content) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", tmp, errno);
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  const bool ok = WriteAll(fd, content) && ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    return ErrnoError("cannot write", tmp, write_errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot rename over", path, rename_errno);
  }
  return absl::OkStatus();
}

}  // namespace railwatch
