#include "sim/ras_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
  for (const Listener& l : listeners_) ::close(l.fd);
}

std::string RasServer::PortFile(const std::string& root, const std::string& host) {
  return (fs::path(root) / host / "nccl" / "ras_port").string();
}

absl::Status RasServer::Start() {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(errno)));
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
  std::vector<pollfd> fds;
  for (const Listener& l : listeners_) fds.push_back({l.fd, POLLIN, 0});
  fds.push_back({stop_fd_, POLLIN, 0});
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::warn("RAS endpoints: poll: {}", std::strerror(errno));
      return;
    }
    if (fds.back().revents != 0) return;
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      const int c = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      Answer(c, listeners_[i].job);
      ::close(c);
    }
  }
}

void RasServer::Answer(int fd, int job) {
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
      if (left_ms <= 0) return;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) return;
      const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return;
      buffer.append(chunk, static_cast<size_t>(n));
      if (buffer.size() >= kMaxRequestBytes) return;
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
      // Text reports are what NCCL before 2.28.7 writes; this endpoint is a 2.28.9.
      SendAll(fd, json ? Report(job) : "ERROR: this simulated endpoint reports in JSON only\n");
      return;  // NCCL closes after the report
    } else {
      SendAll(fd, absl::StrCat("ERROR: Unknown command ", command, "\n"));
    }
  }
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
      "{\n  \"nccl_version\": \"2.28.9\",\n  \"cuda_runtime_version\": 12090,\n"
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
