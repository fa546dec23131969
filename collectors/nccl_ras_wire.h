#pragma once

// The socket side of NCCL's RAS client protocol (text lines; src/ras/client_support.cc), shared
// by the STATUS queries (nccl_ras_collector.cc) and the MONITOR connections
// (nccl_ras_monitor.cc): every step bounded by a deadline.

#include <unistd.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collectors/nccl_ras_collector.h"

namespace railwatch::nccl_ras_wire {

// The most a STATUS report (or anything read up to a newline) may take.
constexpr size_t kMaxReportBytes = size_t{16} << 20;

// A socket closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};


// Waits for `events` on `fd` until `deadline`.
absl::Status Wait(int fd, short events, absl::Time deadline, absl::string_view what);

absl::Status SendLine(int fd, const std::string& line, absl::Time deadline);

// Reads into `buffer` until it holds a newline (`until_close`: until the peer closes).
absl::Status Receive(int fd, std::string& buffer, bool until_close, absl::Time deadline,
                     absl::string_view what);

// The first line of `buffer`, taken out of it (without "\r\n").
std::string TakeLine(std::string& buffer);

// Sends `command`, returns the first line of the answer; what came after it stays in `buffer`.
absl::StatusOr<std::string> Exchange(int fd, std::string& buffer, const std::string& command,
                                     absl::Time deadline);

// A non-blocking socket connected to the endpoint: every address of it in turn (NCCL binds the
// first getaddrinfo("localhost") answer, which may be ::1 or 127.0.0.1).
absl::StatusOr<int> Connect(const RasEndpoint& e, absl::Time deadline);

}  // namespace railwatch::nccl_ras_wire
