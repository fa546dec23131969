// The second half of LogTailer (see log_tailer_file.h): bytes as lines, the queue between the
// tailer thread and the consumer, and the offsets saved across restarts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "collectors/log_tailer.h"
#include "collectors/log_tailer_file.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {
namespace fs = std::filesystem;

namespace {

constexpr size_t kReadChunk = 64 << 10;
// Per file and pass, so that one file with a long backlog does not starve the others or Stop.
constexpr uint64_t kMaxReadPerPass = 1 << 20;

}  // namespace

namespace tailer_internal {

size_t PreadUpTo(int fd, char* buf, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

std::optional<uint64_t> HashRange(int fd, uint64_t offset, uint32_t len) {
  char buf[kTailerHeadBytes];
  if (len > sizeof(buf)) return std::nullopt;
  if (PreadUpTo(fd, buf, len, offset) != len) return std::nullopt;
  return Fnv1a64(absl::string_view(buf, len));
}

std::string Join(const std::string& dir, absl::string_view name) {
  if (dir == ".") return std::string(name);
  if (!dir.empty() && dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

}  // namespace tailer_internal

using tailer_internal::HashRange;
using tailer_internal::Join;
using tailer_internal::PreadUpTo;

size_t LogTailer::Drain(std::vector<TailedLine>& out, size_t max_items) {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (; n < max_items && !queue_.empty(); ++n) {
    Queued& q = queue_.front();
    if (q.line.end_of_stream) {
      progress_.erase(q.line.stream);
    } else {
      StreamProgress& p = progress_[q.line.stream];
      --p.queued;
      p.delivered_offset = q.end_offset;
      p.delivered_next_line = q.next_line;
      queued_bytes_ -= q.line.text.size();
    }
    out.push_back(std::move(q.line));
    queue_.pop_front();
  }
  return n;
}

LogTailer::Stats LogTailer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

// ---- reading ----------------------------------------------------------------------------------

bool LogTailer::ReadNew(File& f) {
  f.more = false;
  if (f.fd < 0) return false;
  struct stat st;
  if (::fstat(f.fd, &st) != 0) {
    ReportError(f.origin_path, absl::StrCat("fstat ", f.origin_path, ": ", std::strerror(errno)));
    return false;
  }
  read_time_ = clock_.NowNanos();
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  bool rewritten = size < f.offset;
  if (!rewritten && !f.tail.empty()) {
    char buf[kTailerTailBytes];
    rewritten = PreadUpTo(f.fd, buf, f.tail.size(), f.offset - f.tail.size()) != f.tail.size() ||
                absl::string_view(buf, f.tail.size()) != f.tail;
  }
  if (rewritten && f.skip_nuls) {
    // Nothing but NUL bytes read of this stream yet (a hole in front of a writer without
    // O_APPEND, or a block read a moment before its write landed), and now they differ: read them
    // again from the start. Nothing of the stream went out, so it is the same stream and no
    // truncation.
    SkipTo(f, 0);
    rewritten = false;
  }
  if (rewritten) {
    spdlog::debug(
        "log tailer: {} was truncated (size {}, read up to {}); reading it from the start",
        f.origin_path, size, f.offset);
    EndStream(f);
    StartStream(f, 0, 1);
    absl::MutexLock lock(&mu_);
    ++stats_.truncations;
  }
  if (f.skip_nuls && size > f.offset) {
    // Jump over the hole rather than read it: it can be as long as the file was.
    const off_t data = ::lseek(f.fd, static_cast<off_t>(f.offset), SEEK_DATA);
    if (data > static_cast<off_t>(f.offset)) SkipTo(f, static_cast<uint64_t>(data));
  }
  if (read_buf_.empty()) read_buf_.resize(kReadChunk);
  uint64_t budget = kMaxReadPerPass;
  while (budget > 0) {
    const ssize_t n = ::pread(f.fd, read_buf_.data(), std::min<uint64_t>(read_buf_.size(), budget),
                              static_cast<off_t>(f.offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ReportError(f.origin_path, absl::StrCat("read ", f.origin_path, ": ", std::strerror(errno)));
      break;
    }
    if (n == 0) break;
    Consume(f, read_buf_.data(), static_cast<size_t>(n));
    budget -= static_cast<uint64_t>(n);
    f.last_activity = clock_.Now();
  }
  f.more = budget == 0;
  Publish();
  return f.more;
}

void LogTailer::Consume(File& f, const char* data, size_t size) {
  const uint64_t base = f.offset;  // file offset of data[0]
  size_t i = 0;
  if (f.skip_nuls) {
    while (i < size && data[i] == '\0') ++i;
    if (i < size) f.skip_nuls = false;
    f.line_start = base + i;
  }
  while (i < size) {
    const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', size - i));
    const size_t end = nl != nullptr ? static_cast<size_t>(nl - data) : size;
    if (f.skip_to_newline) {
      if (nl == nullptr) break;
      f.skip_to_newline = false;
      i = end + 1;
      f.line_start = base + i;
      continue;
    }
    absl::string_view segment(data + i, end - i);
    while (f.partial.size() + segment.size() > options_.max_line_bytes) {
      const size_t take = options_.max_line_bytes - f.partial.size();
      f.partial.append(segment.data(), take);
      segment.remove_prefix(take);
      EmitLine(f, std::move(f.partial), base + static_cast<size_t>(segment.data() - data),
               /*complete=*/false);
      f.partial.clear();
    }
    f.partial.append(segment.data(), segment.size());
    if (nl == nullptr) break;
    EmitLine(f, std::move(f.partial), base + end + 1, /*complete=*/true);
    f.partial.clear();
    i = end + 1;
  }
  f.offset = base + size;
  if (size >= kTailerTailBytes) {
    f.tail.assign(data + size - kTailerTailBytes, kTailerTailBytes);
  } else {
    f.tail.append(data, size);
    if (f.tail.size() > kTailerTailBytes) f.tail.erase(0, f.tail.size() - kTailerTailBytes);
  }
  pending_bytes_ += size;
}

void LogTailer::EmitLine(File& f, std::string text, uint64_t end_offset, bool complete) {
  Queued q;
  q.line.stream = f.stream;
  q.line.path = f.origin_path;
  q.line.pattern = f.pattern;
  q.line.text = std::move(text);
  q.line.line_number = f.next_line;
  q.line.read_unix_nano = read_time_;
  if (complete && f.next_line > 0) ++f.next_line;
  q.end_offset = end_offset;
  q.next_line = f.next_line;
  f.line_start = end_offset;
  pending_.push_back(std::move(q));
  if (!complete) {
    absl::MutexLock lock(&mu_);
    ++stats_.long_line_splits;
  }
}

void LogTailer::StartStream(File& f, uint64_t offset, int64_t next_line) {
  f.stream = ++next_stream_;
  f.next_line = next_line;
  f.partial.clear();
  f.skip_to_newline = false;
  f.skip_nuls = offset == 0;
  SkipTo(f, offset);
  absl::MutexLock lock(&mu_);
  progress_[f.stream] = {0, offset, next_line};
}

void LogTailer::SkipTo(File& f, uint64_t offset) {
  f.offset = f.line_start = offset;
  const size_t tail_len = static_cast<size_t>(std::min<uint64_t>(offset, kTailerTailBytes));
  f.tail.resize(tail_len);
  f.tail.resize(PreadUpTo(f.fd, f.tail.data(), tail_len, offset - tail_len));
}

void LogTailer::EndStream(File& f) {
  // A last line without its newline: the writer is gone (or the file was cut under it), so the
  // newline is not coming.
  if (!f.partial.empty() && !f.skip_to_newline) {
    EmitLine(f, std::move(f.partial), f.offset, /*complete=*/true);
  }
  f.partial.clear();
  Queued q;
  q.line.stream = f.stream;
  q.line.path = f.origin_path;
  q.line.pattern = f.pattern;
  q.line.read_unix_nano = clock_.NowNanos();
  q.line.end_of_stream = true;
  pending_.push_back(std::move(q));
}

void LogTailer::Publish() {
  if (pending_.empty() && pending_bytes_ == 0) return;
  bool started_dropping = false;
  bool stopped_dropping = false;
  {
    absl::MutexLock lock(&mu_);
    stats_.bytes += pending_bytes_;
    for (Queued& q : pending_) {
      if (!q.line.end_of_stream) {
        ++stats_.lines;
        // End-of-stream items are never dropped: the consumer needs them to free its state.
        if (queued_bytes_ + q.line.text.size() > options_.max_queued_bytes) {
          ++stats_.dropped_lines;
          started_dropping |= !dropping_;
          dropping_ = true;
          continue;
        }
        stopped_dropping |= dropping_;
        dropping_ = false;
        queued_bytes_ += q.line.text.size();
        ++progress_[q.line.stream].queued;
      }
      queue_.push_back(std::move(q));
    }
  }
  pending_.clear();
  pending_bytes_ = 0;
  if (started_dropping) {
    spdlog::warn("log tailer: queue full ({} bytes), dropping lines until the collector catches up",
                 options_.max_queued_bytes);
  } else if (stopped_dropping) {
    spdlog::info("log tailer: queue has room again");
  }
}

// ---- state ------------------------------------------------------------------------------------

std::vector<TailerStateEntry> LogTailer::SnapshotState() {
  struct Resume {
    File* file;
    uint64_t offset;
    int64_t next_line;
  };
  std::vector<Resume> resume;
  {
    absl::MutexLock lock(&mu_);
    for (auto& f : files_) {
      // Mid-way through skipping a partial first line there is no line start to resume at; the
      // next start applies the start policy again.
      if (f->fd < 0 || f->skip_to_newline) continue;
      // Lines still queued have not been taken by the consumer: resume before them.
      auto p = progress_.find(f->stream);
      if (p != progress_.end() && p->second.queued > 0) {
        resume.push_back({f.get(), p->second.delivered_offset, p->second.delivered_next_line});
      } else {
        resume.push_back({f.get(), f->line_start, f->next_line});
      }
    }
  }
  std::vector<TailerStateEntry> entries;
  for (const Resume& r : resume) {
    File& f = *r.file;
    if (f.hashed_offset != r.offset) {
      f.head_len = static_cast<uint32_t>(std::min<uint64_t>(r.offset, kTailerHeadBytes));
      f.tail_len = static_cast<uint32_t>(std::min<uint64_t>(r.offset, kTailerTailBytes));
      std::optional<uint64_t> head = HashRange(f.fd, 0, f.head_len);
      std::optional<uint64_t> tail = HashRange(f.fd, r.offset - f.tail_len, f.tail_len);
      if (!head || !tail) continue;  // truncated under us; the next read notices
      f.head_hash = *head;
      f.tail_hash = *tail;
      f.hashed_offset = r.offset;
    }
    TailerStateEntry e;
    e.path = f.current_path.empty() ? f.origin_path : f.current_path;
    e.device = f.device;
    e.inode = f.inode;
    e.offset = r.offset;
    e.next_line = r.next_line;
    e.head_len = f.head_len;
    e.head_hash = f.head_hash;
    e.tail_len = f.tail_len;
    e.tail_hash = f.tail_hash;
    entries.push_back(std::move(e));
  }
  return entries;
}

void LogTailer::MaybeWriteState(bool force) {
  if (options_.state_dir.empty()) return;
  const absl::Time now = clock_.Now();
  if (!force && now < next_state_write_) return;
  next_state_write_ = now + options_.state_write_interval;
  std::string content = FormatTailerState(SnapshotState());
  if (content == last_state_) return;
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  const std::string path = Join(options_.state_dir, kStateFileName);
  if (absl::Status s = WriteFileAtomically(path, content); !s.ok()) {
    ReportError("state", absl::StrCat("cannot save read offsets: ", s.message()));
    return;
  }
  ClearError("state");
  last_state_ = std::move(content);
}

void LogTailer::LoadState() {
  if (options_.state_dir.empty()) return;
  const std::string path = Join(options_.state_dir, kStateFileName);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    spdlog::info("log tailer: no saved offsets in {}; starting fresh", path);
    return;
  }
  absl::StatusOr<std::string> text = railwatch::ReadFile(path);
  if (!text.ok()) {
    ReportError("state", absl::StrCat("cannot read saved offsets: ", text.status().message()));
    return;
  }
  int bad_lines = 0;
  absl::StatusOr<std::vector<TailerStateEntry>> entries = ParseTailerState(*text, &bad_lines);
  if (!entries.ok()) {
    ReportError("state", absl::StrCat(path, ": ", entries.status().message()));
    return;
  }
  if (bad_lines > 0) {
    ReportError("state", absl::StrCat(path, ": skipped ", bad_lines, " malformed lines"));
  }
  restored_ = std::move(*entries);
  last_state_ = *text;
}

}  // namespace railwatch
