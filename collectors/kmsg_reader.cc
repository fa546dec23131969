#include "collectors/kmsg_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace railwatch {
namespace {

constexpr absl::string_view kStateHeader = "# railwatch kmsg state v1";
// A file is read this much at a time, more (up to kMaxRecordBytes) for a longer record.
constexpr size_t kFileChunk = 64 * 1024;
constexpr size_t kMaxRecordBytes = 1 << 20;
// One /dev/kmsg record is at most about 1 KiB of text plus its dictionary (and \xNN escapes).
constexpr size_t kDeviceRecordBytes = 16 * 1024;

absl::Status ErrnoStatus(absl::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(path, ": ", what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

// Reads [offset, offset + n) (less at the end of the file).
ssize_t PreadAll(int fd, char* data, size_t n, uint64_t offset) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, data + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

std::string FormatKmsgPosition(const KmsgPosition& p) {
  return absl::StrCat(kStateHeader, "\nsource\t", p.source, "\nboot_id\t", p.boot_id,
                      "\nnext_seq\t", p.next_seq, "\ninode\t", p.inode, "\noffset\t", p.offset,
                      "\n");
}

absl::StatusOr<KmsgPosition> ParseKmsgPosition(std::string_view text) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(text.data(), text.size()), '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != kStateHeader) {
    return absl::FailedPreconditionError("not a kmsg state file (v1)");
  }
  KmsgPosition p;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(lines[i], '\t');
    bool ok = true;
    if (kv.first == "source") {
      p.source = std::string(kv.second);
    } else if (kv.first == "boot_id") {
      p.boot_id = std::string(kv.second);
    } else if (kv.first == "next_seq") {
      ok = absl::SimpleAtoi(kv.second, &p.next_seq);
    } else if (kv.first == "inode") {
      ok = absl::SimpleAtoi(kv.second, &p.inode);
    } else if (kv.first == "offset") {
      ok = absl::SimpleAtoi(kv.second, &p.offset);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("line ", i + 1, ": bad ", kv.first));
    }
  }
  return p;
}

KmsgReader::KmsgReader(std::string path) : path_(std::move(path)) {}

KmsgReader::~KmsgReader() { Close(); }

void KmsgReader::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::Status KmsgReader::Open() {
  Close();
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus("cannot open", path_, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus("cannot stat", path_, err);
  }
  fd_ = fd;
  device_ = S_ISCHR(st.st_mode);
  inode_ = device_ ? 0 : static_cast<uint64_t>(st.st_ino);
  offset_ = 0;
  return absl::OkStatus();
}

bool KmsgReader::ResumeFile(uint64_t inode, uint64_t offset) {
  struct stat st;
  if (device_ || fd_ < 0 || ::fstat(fd_, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_ino) != inode || static_cast<uint64_t>(st.st_size) < offset) {
    return false;
  }
  offset_ = offset;
  return true;
}

bool KmsgReader::TakeRestarted() {
  const bool r = restarted_;
  restarted_ = false;
  return r;
}

std::optional<int64_t> KmsgReader::NewestTimestampUsec() const {
  struct stat st;
  if (device_ || fd_ < 0 || ::fstat(fd_, &st) != 0 || st.st_size == 0) return std::nullopt;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t start = size > kFileChunk ? size - kFileChunk : 0;
  std::string tail(size - start, '\0');
  const ssize_t n = PreadAll(fd_, tail.data(), tail.size(), start);
  if (n <= 0) return std::nullopt;
  tail.resize(static_cast<size_t>(n));
  std::vector<absl::string_view> lines = absl::StrSplit(tail, '\n', absl::SkipEmpty());
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->empty() || (*it)[0] == ' ') continue;
    std::optional<logs::KmsgRecord> r = logs::ParseKmsgRecord(*it);
    if (r.has_value()) return r->timestamp_usec;
  }
  return std::nullopt;
}

absl::Status KmsgReader::Read(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained) {
  *drained = false;
  if (fd_ < 0) {
    if (absl::Status s = Open(); !s.ok()) return s;
  }
  return device_ ? ReadDevice(max, out, drained) : ReadFile(max, out, drained);
}

absl::Status KmsgReader::ReadDevice(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained) {
  buffer_.resize(kDeviceRecordBytes);
  size_t taken = 0;
  while (taken < max) {
    const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *drained = true;
        return absl::OkStatus();
      }
      if (errno == EINTR) continue;
      if (errno == EPIPE) {
        // Overwritten before it was read; the next read returns the oldest record left.
        ++stats_.overruns;
        continue;
      }
      return ErrnoStatus("read", path_, errno);
    }
    if (n == 0) {
      *drained = true;
      return absl::OkStatus();
    }
    std::optional<logs::KmsgRecord> r =
        logs::ParseKmsgRecord(absl::string_view(buffer_.data(), static_cast<size_t>(n)));
    if (!r.has_value()) {
      ++stats_.malformed;
      continue;
    }
    out.push_back(*std::move(r));
    ++taken;
  }
  return absl::OkStatus();
}

absl::Status KmsgReader::ReadFile(size_t max, std::vector<logs::KmsgRecord>& out, bool* drained) {
  // Replaced (a new file at the path) or truncated: from the start of what is there now.
  struct stat by_path, st;
  if (::stat(path_.c_str(), &by_path) == 0 && static_cast<uint64_t>(by_path.st_ino) != inode_) {
    if (absl::Status s = Open(); !s.ok()) return s;
    restarted_ = true;
    ++stats_.restarts;
  }
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("cannot stat", path_, errno);
  if (static_cast<uint64_t>(st.st_size) < offset_) {
    offset_ = 0;
    restarted_ = true;
    ++stats_.restarts;
  }
  size_t taken = 0;
  size_t chunk = kFileChunk;
  while (taken < max) {
    buffer_.resize(chunk);
    const ssize_t n = PreadAll(fd_, buffer_.data(), chunk, offset_);
    if (n < 0) return ErrnoStatus("read", path_, errno);
    const bool eof = static_cast<size_t>(n) < chunk;
    absl::string_view buf(buffer_.data(), static_cast<size_t>(n));
    size_t pos = 0;
    bool incomplete = false;
    while (pos < buf.size() && taken < max) {
      if (buf[pos] == ' ' || buf[pos] == '\n') {
        // A dictionary line whose record was read before, or a blank line.
        const size_t nl = buf.find('\n', pos);
        if (nl == absl::string_view::npos) {
          incomplete = true;
          break;
        }
        pos = nl + 1;
        continue;
      }
      size_t end = buf.find('\n', pos);
      if (end == absl::string_view::npos) {
        incomplete = true;
        break;
      }
      ++end;
      while (end < buf.size() && buf[end] == ' ') {
        const size_t nl = buf.find('\n', end);
        if (nl == absl::string_view::npos) break;
        end = nl + 1;
      }
      if ((end < buf.size() && buf[end] == ' ') || (end == buf.size() && !eof)) {
        incomplete = true;  // its dictionary may go on in what was not read yet
        break;
      }
      std::optional<logs::KmsgRecord> r = logs::ParseKmsgRecord(buf.substr(pos, end - pos));
      if (r.has_value()) {
        out.push_back(*std::move(r));
        ++taken;
      } else {
        ++stats_.malformed;
      }
      pos = end;
    }
    offset_ += pos;
    if (pos == 0 && incomplete && !eof) {
      if (chunk < kMaxRecordBytes) {
        chunk *= 2;  // one record longer than the chunk
        continue;
      }
      // Not a record: skip it.
      ++stats_.malformed;
      offset_ += static_cast<uint64_t>(n);
      chunk = kFileChunk;
      continue;
    }
    chunk = kFileChunk;
    if (eof && (pos == buf.size() || incomplete)) {
      *drained = true;
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace railwatch
