#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collectors/log_tailer.h"
#include "common/clock.h"

namespace railwatch::testing {

// Appends to a file through one descriptor, one write(2) per call, like a logger does.
class LogWriter {
 public:
  // `append` = O_APPEND (Python logging, most loggers); without it the descriptor keeps its own
  // offset, the way NCCL's fopen(NCCL_DEBUG_FILE, "w") does.
  explicit LogWriter(const std::string& path, bool append = true) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : 0), 0644);
    if (fd_ < 0) std::abort();
  }
  ~LogWriter() { ::close(fd_); }
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  void Write(absl::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) std::abort();
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  void Line(absl::string_view text) { Write(absl::StrCat(text, "\n")); }

 private:
  int fd_ = -1;
};

// "tag 000042": numbered lines whose order and uniqueness tests can check.
inline std::string Seq(absl::string_view tag, int i) { return absl::StrFormat("%s %06d", tag, i); }

inline std::vector<std::string> Seqs(absl::string_view tag, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(Seq(tag, i));
  return out;
}

// Everything drained from a tailer so far.
struct Received {
  std::vector<TailedLine> items;

  std::vector<std::string> Texts() const {
    std::vector<std::string> out;
    for (const TailedLine& l : items) {
      if (!l.end_of_stream) out.push_back(l.text);
    }
    return out;
  }
  size_t Lines() const { return Texts().size(); }
  size_t EndsOfStream() const {
    size_t n = 0;
    for (const TailedLine& l : items) n += l.end_of_stream ? 1 : 0;
    return n;
  }
};

// Drains `tailer` into `got` until `done` holds; false if it did not within the deadline. The
// deadline is generous (sanitizers, a loaded CI machine): only a failing test waits for it.
inline bool DrainUntil(LogTailer& tailer, Received& got, const std::function<bool()>& done,
                       const std::function<void()>& each_poll = nullptr) {
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (true) {
    tailer.Drain(got.items, SIZE_MAX);
    if (done()) return true;
    if (absl::Now() > deadline) return false;
    if (each_poll) each_poll();
    absl::SleepFor(absl::Milliseconds(1));
  }
}

// Waits, without draining, until the tailer's stats satisfy `done`.
inline bool StatsReach(const LogTailer& tailer,
                       const std::function<bool(const LogTailer::Stats&)>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (!done(tailer.stats())) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// Options for a test: a fast poll so that FakeClock advances are noticed promptly.
inline LogTailer::Options TestOptions(std::vector<std::string> patterns, std::string state_dir) {
  LogTailer::Options o;
  o.patterns = std::move(patterns);
  o.state_dir = std::move(state_dir);
  o.max_poll_wait = absl::Milliseconds(5);
  return o;
}

}  // namespace railwatch::testing
