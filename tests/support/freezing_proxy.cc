#include "support/freezing_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace railwatch::testing {
namespace {

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int ConnectTo(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port)) {
    return -1;
  }
  std::string host = host_port.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

// One proxied connection: bytes read from one side wait in `to_*` until the other side takes
// them; a side is read only while its previous bytes are still unsent (back-pressure).
struct FreezingProxy::Pipe {
  int client = -1, upstream = -1;
  std::string to_client, to_upstream;
  ~Pipe() {
    if (client >= 0) close(client);
    if (upstream >= 0) close(upstream);
  }
};

FreezingProxy::FreezingProxy(std::string upstream) : upstream_(std::move(upstream)) {}

FreezingProxy::~FreezingProxy() {
  if (thread_.joinable()) {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  live_.clear();
  frozen_.clear();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status FreezingProxy::Start() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::InternalError(absl::StrCat("proxy cannot listen: ", std::strerror(errno)));
  }
  port_ = ntohs(addr.sin_port);
  SetNonBlocking(listen_fd_);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::InternalError("proxy: no eventfd");
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

std::string FreezingProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

int FreezingProxy::accepted() const {
  absl::MutexLock lock(&mu_);
  return accepted_;
}

int FreezingProxy::forwarding() const {
  absl::MutexLock lock(&mu_);
  return forwarding_;
}

void FreezingProxy::Freeze() { Do(Command::kFreeze); }
void FreezingProxy::CutAll() { Do(Command::kCut); }

void FreezingProxy::Do(Command c) {
  absl::MutexLock lock(&mu_);
  // One command at a time: wait for the previous one to be taken.
  mu_.Await(absl::Condition(
      +[](Command* pending) { return *pending == Command::kNone; }, &command_));
  command_ = c;
  const uint64_t target = done_ + 1;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  auto carried_out = [this, target]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return done_ >= target || stopping_;
  };
  mu_.Await(absl::Condition(&carried_out));
}

void FreezingProxy::Accept() {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    auto p = std::make_unique<Pipe>();
    p->client = fd;
    p->upstream = ConnectTo(upstream_);
    if (p->upstream < 0) continue;  // closes the client: as a refused connection would
    const int on = 1;
    setsockopt(p->client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    setsockopt(p->upstream, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    SetNonBlocking(p->client);
    SetNonBlocking(p->upstream);
    live_.push_back(std::move(p));
    absl::MutexLock lock(&mu_);
    ++accepted_;
  }
}

bool FreezingProxy::Pump(Pipe& p, short client_events, short upstream_events) {
  // Reads one side into the other's buffer; false at EOF or an error.
  auto read_into = [](int from, std::string& buffer) {
    char chunk[64 << 10];
    const ssize_t n = read(from, chunk, sizeof chunk);
    if (n > 0) buffer.append(chunk, static_cast<size_t>(n));
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
  };
  auto write_from = [](int to, std::string& buffer) {
    const ssize_t n = send(to, buffer.data(), buffer.size(), MSG_NOSIGNAL);
    if (n > 0) buffer.erase(0, static_cast<size_t>(n));
    return n >= 0 || errno == EAGAIN || errno == EINTR;
  };
  if ((client_events & (POLLERR | POLLNVAL)) || (upstream_events & (POLLERR | POLLNVAL))) {
    return false;
  }
  if ((client_events & (POLLIN | POLLHUP)) && !read_into(p.client, p.to_upstream)) return false;
  if ((upstream_events & (POLLIN | POLLHUP)) && !read_into(p.upstream, p.to_client)) return false;
  if (!p.to_upstream.empty() && !write_from(p.upstream, p.to_upstream)) return false;
  if (!p.to_client.empty() && !write_from(p.client, p.to_client)) return false;
  return true;
}

void FreezingProxy::Run() {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& p : live_) {
      // Read a side only when the bytes it sent before have gone on.
      fds.push_back({p->client,
                     static_cast<short>((p->to_upstream.empty() ? POLLIN : 0) |
                                        (p->to_client.empty() ? 0 : POLLOUT)),
                     0});
      fds.push_back({p->upstream,
                     static_cast<short>((p->to_client.empty() ? POLLIN : 0) |
                                        (p->to_upstream.empty() ? 0 : POLLOUT)),
                     0});
    }
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return;
    if (fds[0].revents & POLLIN) {
      uint64_t n;
      (void)!read(wake_fd_, &n, sizeof n);
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (command_ == Command::kFreeze) {
        for (auto& p : live_) frozen_.push_back(std::move(p));
        live_.clear();
      } else if (command_ == Command::kCut) {
        live_.clear();
      }
      if (command_ != Command::kNone) {
        command_ = Command::kNone;
        ++done_;
        forwarding_ = 0;
      }
      continue;  // the poll set changed
    }
    // Pipes first (their revents are indexed by position), then new connections.
    std::vector<std::unique_ptr<Pipe>> still;
    for (size_t i = 0; i < live_.size(); ++i) {
      if (Pump(*live_[i], fds[2 + 2 * i].revents, fds[3 + 2 * i].revents)) {
        still.push_back(std::move(live_[i]));
      }
    }
    live_ = std::move(still);
    if (fds[1].revents & POLLIN) Accept();
    absl::MutexLock lock(&mu_);
    forwarding_ = static_cast<int>(live_.size());
  }
}

}  // namespace railwatch::testing
