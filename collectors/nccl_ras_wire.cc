#include "collectors/nccl_ras_wire.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace railwatch::nccl_ras_wire {
namespace {

int MillisLeft(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  return left <= absl::ZeroDuration() ? 0 : static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
}

}  // namespace

// Waits for `events` on `fd` until `deadline`.
absl::Status Wait(int fd, short events, absl::Time deadline, absl::string_view what) {
  pollfd p{fd, events, 0};
  while (true) {
    const int ms = MillisLeft(deadline);
    if (ms == 0) return absl::DeadlineExceededError(absl::StrCat("no answer ", what));
    const int n = poll(&p, 1, ms);
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    }
  }
}

absl::Status SendLine(int fd, const std::string& line, absl::Time deadline) {
  const std::string text = line + "\n";
  size_t sent = 0;
  while (sent < text.size()) {
    if (absl::Status s = Wait(fd, POLLOUT, deadline, "while sending"); !s.ok()) return s;
    const ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR && errno != EAGAIN) {
      return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    }
    if (n > 0) sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Reads into `buffer` until it holds a newline (`until_close`: until the peer closes).
absl::Status Receive(int fd, std::string& buffer, bool until_close, absl::Time deadline,
                     absl::string_view what) {
  char chunk[64 * 1024];
  while (until_close || buffer.find('\n') == std::string::npos) {
    if (buffer.size() > kMaxReportBytes) {
      return absl::ResourceExhaustedError(absl::StrCat("answer over ", kMaxReportBytes >> 20, " MiB"));
    }
    if (absl::Status s = Wait(fd, POLLIN, deadline, what); !s.ok()) return s;
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n == 0) {
      if (until_close) return absl::OkStatus();
      return absl::UnavailableError(absl::StrCat("connection closed ", what));
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
    }
    buffer.append(chunk, static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// The first line of `buffer`, taken out of it (without "\r\n").
std::string TakeLine(std::string& buffer) {
  const size_t nl = buffer.find('\n');
  std::string line = buffer.substr(0, nl);
  buffer.erase(0, nl == std::string::npos ? buffer.size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

absl::StatusOr<std::string> Exchange(int fd, std::string& buffer, const std::string& command,
                                     absl::Time deadline) {
  if (absl::Status s = SendLine(fd, command, deadline); !s.ok()) return s;
  if (absl::Status s = Receive(fd, buffer, false, deadline, "to " + command); !s.ok()) return s;
  return TakeLine(buffer);
}

// Tries every address of the endpoint in turn: NCCL binds the first getaddrinfo("localhost")
// answer, which may be ::1 or 127.0.0.1.
absl::StatusOr<int> Connect(const RasEndpoint& e, absl::Time deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(e.port);
  if (int rc = getaddrinfo(e.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat(e.host, ": ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  absl::Status last = absl::UnavailableError("no address");
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
      continue;
    }
    Fd guard(fd);
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = absl::UnavailableError(absl::StrCat("connect: ", std::strerror(errno)));
      continue;
    }
    if (absl::Status s = Wait(fd, POLLOUT, deadline, "to connect"); !s.ok()) return s;
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      last = absl::UnavailableError(absl::StrCat("connect: ", std::strerror(error)));
      continue;
    }
    return guard.release();
  }
  return last;
}

}  // namespace railwatch::nccl_ras_wire
