#include "sim/ras_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "sim/nccl_log_writer.h"
#include "sim/sysfs_fabric.h"
#include "spdlog/spdlog.h"

namespace railwatch::sim {
namespace fs = std::filesystem;

namespace {

// What one connection may send before STATUS, and how long the whole exchange may take (the
// one thread answers every host: a client that stalls must not hold the others for long).
constexpr size_t kMaxRequestBytes = 4096;
constexpr absl::Duration kConnectionDeadline = absl::Seconds(2);

void SendAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

RasServer::RasServer(std::string root, std::vector<SimJob> jobs, int gpus_per_host,
                     const NcclLogs& logs)
    : root_(std::move(root)), jobs_(std::move(jobs)), gpus_(gpus_per_host), logs_(logs) {
  counts_.resize(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    counts_[j].assign((jobs_[j].last_host - jobs_[j].first_host + 1) * gpus_, 0);
  }
}

RasServer::~RasServer() {
  if (thread_.joinable()) {
    stop_ = true;
    Wake();
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  for (const Listener& l : listeners_) ::close(l.fd);
  for (const MonitorClient& c : monitors_) ::close(c.fd);
}

void RasServer::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
}

std::string RasServer::PortFile(const std::string& root, const std::string& host) {
  return (fs::path(root) / host / "nccl" / "ras_port").string();
}

absl::Status RasServer::Start() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(errno)));
  for (size_t j = 0; j < jobs_.size(); ++j) {
    for (int h = jobs_[j].first_host; h <= jobs_[j].last_host; ++h) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof(addr);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
          ::listen(fd, 16) != 0 ||
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        return absl::UnavailableError(absl::StrCat("RAS listener: ", why));
      }
      listeners_.push_back({fd, static_cast<int>(j)});
      const std::string host = SysfsFabric::HostName(h);
      const std::string path = PortFile(root_, host);
      std::error_code ec;
      fs::create_directories(fs::path(path).parent_path(), ec);
      // Written whole under another name and renamed: a reader never sees half a number.
      {
        std::ofstream out(path + ".tmp");
        out << ntohs(addr.sin_port) << "\n";
        if (!out) return absl::UnavailableError(absl::StrCat(path, ": cannot write"));
      }
      fs::rename(path + ".tmp", path, ec);
      if (ec) return absl::UnavailableError(absl::StrCat(path, ": ", ec.message()));
    }
  }
  thread_ = std::thread([this] { Serve(); });
  return absl::OkStatus();
}

void RasServer::SetCounts(int job, std::vector<int64_t> counts) {
  std::lock_guard<std::mutex> lock(mu_);
  counts_[job] = std::move(counts);
}

void RasServer::Serve() {
  while (true) {
    const absl::Duration next = Deliver(absl::Now());
    std::vector<pollfd> fds;
    for (const Listener& l : listeners_) fds.push_back({l.fd, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const MonitorClient& c : monitors_) fds.push_back({c.fd, POLLIN, 0});
    const int timeout_ms =
        next == absl::InfiniteDuration()
            ? -1
            : static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(next) + 1));
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      spdlog::warn("RAS endpoints: poll: {}", std::strerror(errno));
      return;
    }
    const size_t wake = listeners_.size();
    if (fds[wake].revents != 0) {
      uint64_t n;
      (void)!::read(wake_fd_, &n, sizeof(n));
      if (stop_) return;
    }
    // A MONITOR client that closes (or sends more: NCCL would read it as commands; nothing
    // the agent sends) is read; closed ones are dropped.
    std::vector<MonitorClient> kept;
    for (size_t i = 0; i < monitors_.size(); ++i) {
      const short revents = fds[wake + 1 + i].revents;
      if (revents != 0) {
        char chunk[512];
        const ssize_t n = ::recv(monitors_[i].fd, chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          ::close(monitors_[i].fd);
          continue;
        }
      }
      kept.push_back(monitors_[i]);
    }
    monitors_.swap(kept);
    for (size_t i = 0; i < listeners_.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      const int c = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      const Outcome o = Answer(c, listeners_[i].job);
      if (o.monitor) {
        monitors_.push_back({c, listeners_[i].job, o.groups, o.json});
      } else {
        ::close(c);
      }
    }
    monitor_count_ = static_cast<int>(monitors_.size());
  }
}

absl::Duration RasServer::Deliver(absl::Time now) {
  std::vector<Event> due;
  absl::Duration next = absl::InfiniteDuration();
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Event> later;
    for (Event& e : events_) {
      if (e.due <= now) {
        due.push_back(std::move(e));
      } else {
        next = std::min(next, e.due - now);
        later.push_back(std::move(e));
      }
    }
    events_.swap(later);
  }
  std::sort(due.begin(), due.end(), [](const Event& a, const Event& b) { return a.due < b.due; });
  for (const Event& e : due) {
    std::vector<MonitorClient> kept;
    for (const MonitorClient& c : monitors_) {
      if (c.job == e.job && (c.groups & e.group) != 0) {
        // NCCL queues what a client does not take at once; a client this far behind is
        // dropped instead (the one thread serves every host).
        const std::string text = Format(e, c.json);
        const ssize_t n = ::send(c.fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n != static_cast<ssize_t>(text.size())) {
          ::close(c.fd);
          continue;
        }
      }
      kept.push_back(c);
    }
    monitors_.swap(kept);
  }
  monitor_count_ = static_cast<int>(monitors_.size());
  return next;
}

void RasServer::PeerEvent(int job, int host, int local_rank, const std::string& event,
                          const std::string& details, uint8_t group) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({absl::Now(), job, host, local_rank, event, details, group});
  }
  Wake();
}

void RasServer::ProcessFrozen(int job, int host, int local_rank, absl::Time at) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto add = [&](absl::Duration after, const char* event, const char* details, uint8_t g) {
      events_.push_back({at + after, job, host, local_rank, event, details, g});
    };
    // src/ras/rasnet.cc: RAS_KEEPALIVE_TIMEOUT_WARN (5 s), RAS_KEEPALIVE_TIMEOUT_ERROR (20 s),
    // RAS_PEER_DEAD_TIMEOUT (60 s, counted from the last keep-alive).
    add(absl::Seconds(5), "PEER_UNRESPONSIVE", "peer not responding for 5s (keepalive warning)",
        kTrace);
    add(absl::Seconds(20), "PEER_KEEPALIVE_TIMEOUT",
        "keepalive timeout after 20s, terminating connection", kTrace);
    add(absl::Seconds(60), "PEER_TIMEOUT_DEAD", "peer failed to respond for 60s, declaring dead",
        kTrace);
    add(absl::Seconds(60), "PEER_DEAD", "", kLifecycle);
  }
  Wake();
}

int RasServer::MonitorClients() const { return monitor_count_; }

std::string RasServer::Format(const Event& e, bool json) const {
  const std::string stamp = absl::FormatTime("%Y-%m-%d %H:%M:%S", e.due, absl::UTCTimeZone());
  const int pid = logs_.Pid(e.job, e.host, e.local_rank);
  const std::string host = HostAddress(e.host);
  if (!json) {
    // "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1 "
    return absl::StrFormat("[%s] %s: Process %d on node %s managing GPU %d %s\n", stamp, e.event,
                           pid, host, e.local_rank, e.details);
  }
  return absl::StrFormat(
      "{\n  \"timestamp\": \"%s\",\n  \"group\": \"%s\",\n  \"event\": \"%s\",\n"
      "  \"peer\": {\n    \"host\": \"%s\",\n    \"pid\": %d,\n    \"cuda_devs\": [%d],\n"
      "    \"nvml_devs\": [%d]\n  },\n  \"details\": \"%s\"\n}\n",
      stamp, e.group == kLifecycle ? "LIFECYCLE" : "TRACE", e.event, host, pid, e.local_rank,
      e.local_rank, e.details);
}

RasServer::Outcome RasServer::Answer(int fd, int job) {
  const absl::Time deadline = absl::Now() + kConnectionDeadline;
  // A client that does not read the report gives up the thread at the deadline too.
  timeval send_timeout = absl::ToTimeval(kConnectionDeadline);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  std::string buffer;
  bool json = false;
  char chunk[512];
  while (buffer.size() < kMaxRequestBytes) {
    size_t nl;
    while ((nl = buffer.find('\n')) == std::string::npos) {
      const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left_ms <= 0) return {};
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) return {};
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return {};
      buffer.append(chunk, static_cast<size_t>(n));
      if (buffer.size() >= kMaxRequestBytes) return {};
    }
    const std::string command(absl::StripAsciiWhitespace(buffer.substr(0, nl)));
    buffer.erase(0, nl + 1);
    if (absl::StartsWithIgnoreCase(command, "CLIENT PROTOCOL ")) {
      SendAll(fd, "SERVER PROTOCOL 2\n");
    } else if (absl::StartsWithIgnoreCase(command, "TIMEOUT ")) {
      SendAll(fd, "OK\n");
    } else if (absl::EqualsIgnoreCase(command, "SET FORMAT json")) {
      json = true;
      SendAll(fd, "OK\n");
    } else if (absl::EqualsIgnoreCase(command, "STATUS") ||
               absl::EqualsIgnoreCase(command, "VERBOSE STATUS")) {
      // Text reports are what NCCL before 2.28.7 writes; this endpoint is a 2.30.7.
      SendAll(fd, json ? Report(job) : "ERROR: this simulated endpoint reports in JSON only\n");
      return {};  // NCCL closes after the report
    } else if (absl::EqualsIgnoreCase(command, "MONITOR") ||
               absl::StartsWithIgnoreCase(command, "MONITOR ")) {
      // As client_support.cc parses it: a comma list of groups, LIFECYCLE when none.
      uint8_t groups = 0;
      std::string bad;
      const std::string spec(absl::StripAsciiWhitespace(command.substr(7)));
      for (absl::string_view g : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
        if (absl::EqualsIgnoreCase(g, "lifecycle")) {
          groups |= kLifecycle;
        } else if (absl::EqualsIgnoreCase(g, "trace")) {
          groups |= kTrace;
        } else if (absl::EqualsIgnoreCase(g, "all")) {
          groups |= 0xFF;
        } else {
          bad = std::string(g);
          break;
        }
      }
      if (!bad.empty()) {
        SendAll(fd, absl::StrCat("ERROR: Invalid event group '", bad, "'\n"));
        continue;
      }
      SendAll(fd, "OK\n");
      // Events are sent without blocking the thread: a client that does not read is dropped.
      timeval none{};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
      return {.monitor = true, .groups = groups == 0 ? kLifecycle : groups, .json = json};
    } else {
      SendAll(fd, absl::StrCat("ERROR: Unknown command ", command, "\n"));
    }
  }
  return {};
}

std::string RasServer::Report(int job) const {
  std::vector<int64_t> counts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts = counts_[job];
  }
  const SimJob& sj = jobs_[job];
  std::string ranks;
  for (size_t r = 0; r < counts.size(); ++r) {
    const int host = sj.first_host + static_cast<int>(r) / gpus_;
    const int k = static_cast<int>(r) % gpus_;
    absl::StrAppendFormat(
        &ranks,
        "%s\n        {\n          \"rank\": %d,\n          \"host\": \"%s\",\n"
        "          \"pid\": %d,\n          \"cuda_dev\": %d,\n          \"nvml_dev\": %d,\n"
        "          \"status\": {\n            \"init_state\": 0,\n"
        "            \"async_error\": 0,\n            \"finalize_called\": false,\n"
        "            \"destroy_flag\": false,\n            \"abort_flag\": false\n          },\n"
        "          \"collective_counts\": {\n            \"Broadcast\": 0,\n"
        "            \"Reduce\": 0,\n            \"AllGather\": 0,\n"
        "            \"ReduceScatter\": 0,\n            \"AllReduce\": %d\n          }\n        }",
        r == 0 ? "" : ",", r, HostAddress(host), logs_.Pid(job, host, k), k, k, counts[r]);
  }
  const absl::Time now = absl::Now();
  return absl::StrFormat(
      "{\n  \"nccl_version\": \"2.30.7\",\n  \"cuda_runtime_version\": 12090,\n"
      "  \"cuda_driver_version\": 13000,\n  \"timestamp\": \"%s\",\n"
      "  \"communicators_count\": 1,\n  \"communicators\": [\n    {\n"
      "      \"hash\": \"%s\",\n      \"secondary_hash\": \"0x0:0x0\",\n      \"size\": %d,\n"
      "      \"ranks_count\": %d,\n      \"missing_ranks_count\": 0,\n      \"ranks\": [%s\n      ],\n"
      "      \"missing_ranks\": [\n\n      ]\n    }\n  ],\n"
      "  \"ras\": {\n    \"collection_time_sec\": 0.001,\n    \"timeouts_count\": 0\n  }\n}\n",
      absl::FormatTime("%Y-%m-%d %H:%M:%S", now, absl::UTCTimeZone()), logs_.CommId(job),
      counts.size(), counts.size(), ranks);
}

}  // namespace railwatch::sim
