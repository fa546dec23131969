// The nccl_ras collector's MONITOR connections (NCCL 2.29+; collectors/nccl_ras_collector.h):
// one thread per endpoint keeps one open and turns NCCL's events into nccl_ras.event as they
// come.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectors/log_event_record.h"
#include "collectors/nccl_ras_collector.h"
#include "collectors/nccl_ras_wire.h"
#include "common/logging.h"
#include "logs/ras_json.h"

namespace railwatch {
namespace nccl_ras_monitor {

using nccl_ras_wire::Connect;
using nccl_ras_wire::Exchange;
using nccl_ras_wire::Fd;

// NCCL formats a MONITOR event into 2 KiB (rasClientsNotifyEvent): far more is not RAS.
constexpr size_t kMaxMonitorEventBytes = size_t{64} << 10;
// What the agent asks MONITOR for: LIFECYCLE (a peer joins, a peer is dead) and TRACE (the RAS
// network's connections, where "unresponsive" and "recovered" are).
constexpr char kMonitorCommand[] = "MONITOR lifecycle,trace";

// Connects and subscribes: the greeting, SET FORMAT json, MONITOR. What the server sent after
// its "OK" stays in `buffer`. FailedPrecondition: the endpoint has no MONITOR (or no JSON).
absl::StatusOr<int> OpenMonitor(const RasEndpoint& endpoint, absl::Duration timeout,
                                std::string& buffer) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<int> fd = Connect(endpoint, deadline);
  if (!fd.ok()) return fd.status();
  Fd socket(*fd);
  absl::StatusOr<std::string> line = Exchange(socket.get(), buffer, "CLIENT PROTOCOL 2", deadline);
  if (!line.ok()) return line.status();
  if (!absl::StartsWith(*line, "SERVER PROTOCOL ")) {
    return absl::FailedPreconditionError(
        absl::StrCat("not an NCCL RAS endpoint: it answered \"", line->substr(0, 80), "\""));
  }
  line = Exchange(socket.get(), buffer, "SET FORMAT json", deadline);
  if (!line.ok()) return line.status();
  if (*line != "OK") {
    return absl::FailedPreconditionError(
        absl::StrCat("SET FORMAT json answered \"", line->substr(0, 120), "\""));
  }
  line = Exchange(socket.get(), buffer, kMonitorCommand, deadline);
  if (!line.ok()) return line.status();
  if (*line != "OK") {
    return absl::FailedPreconditionError(
        absl::StrCat(kMonitorCommand, " answered \"", line->substr(0, 120), "\""));
  }
  return socket.release();
}

// Cuts a MONITOR stream into its top-level JSON objects (one per event, over several lines).
// A line outside an object that is not blank is handed over as garbage, and so is an object
// cut short: NCCL starts each event's "{" at the start of a line and nests none there, so one
// found there inside an object begins the next event.
class JsonObjectFramer {
 public:
  explicit JsonObjectFramer(std::string buffer) : buffer_(std::move(buffer)) {}

  template <typename Object, typename Garbage>
  void Feed(std::string_view data, const Object& object, const Garbage& garbage) {
    buffer_.append(data);
    size_t i = scanned_, consumed = 0;
    while (i < buffer_.size()) {
      const char c = buffer_[i];
      if (depth_ == 0) {
        if (c == '{') {
          start_ = i++;
          depth_ = 1;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
          consumed = ++i;
        } else {
          const size_t nl = buffer_.find('\n', i);
          if (nl == std::string::npos) break;  // the rest of the line is still to come
          garbage(std::string_view(buffer_).substr(i, nl - i));
          consumed = i = nl + 1;
        }
        continue;
      }
      if (c == '{' && buffer_[i - 1] == '\n') {
        garbage(std::string_view(buffer_).substr(start_, i - start_));
        start_ = i++;
        consumed = start_;
        depth_ = 1;
        in_string_ = escaped_ = false;
        continue;
      }
      ++i;
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
        }
      } else if (c == '"') {
        in_string_ = true;
      } else if (c == '{') {
        ++depth_;
      } else if (c == '}' && --depth_ == 0) {
        object(std::string_view(buffer_).substr(start_, i - start_));
        consumed = i;
      }
    }
    buffer_.erase(0, consumed);
    scanned_ = i - consumed;
    if (depth_ > 0) start_ -= consumed;
  }
  // Bytes of an object (or a line) not finished yet.
  size_t pending() const { return buffer_.size(); }

 private:
  std::string buffer_;
  size_t scanned_ = 0, start_ = 0;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

}  // namespace nccl_ras_monitor

bool RasSupportsMonitor(const std::string& version) {
  std::vector<absl::string_view> parts = absl::StrSplit(version, absl::MaxSplits('.', 2));
  int major = 0, minor = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor)) {
    return false;
  }
  return major > 2 || (major == 2 && minor >= 29);
}

bool RasMonitorEventSent(std::string_view event) {
  // src/ras/peers.cc and rasnet.cc (NCCL 2.29-2.30).
  static constexpr std::string_view kSent[] = {
      "PEER_DEAD",               // LIFECYCLE: declared dead, by every process of the job
      "PEER_UNRESPONSIVE",       // no keep-alive for 5 s, or no connection for 5 s
      "PEER_RECOVERED",          // answers again after that
      "PEER_KEEPALIVE_TIMEOUT",  // no keep-alive for 20 s: connection closed
      "PEER_SEND_STUCK",         // a send stuck for 20 s
      "PEER_INIT_TIMEOUT",       // a connection's handshake not done in 20 s
      "PEER_TIMEOUT_DEAD",       // no connection for 60 s: about to be declared dead
  };
  for (std::string_view e : kSent) {
    if (e == event) return true;
  }
  return false;
}

bool NcclRasCollector::Sleep(absl::Duration d) {
  return !stop_.WaitForNotificationWithTimeout(d);
}

bool NcclRasCollector::MonitorAllowed(const EndpointState& state, absl::Time now) const {
  return options_.monitor && !state.sockets.empty() &&
         now - state.listening_since >= options_.init_grace &&
         RasSupportsMonitor(state.nccl_version) && !state.monitor_refused;
}

void NcclRasCollector::StartMonitors() {
  if (!options_.monitor) return;
  std::vector<std::string> allowed;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_.Now();
    for (const auto& [address, state] : endpoints_) {
      if (MonitorAllowed(state, now)) allowed.push_back(address);
    }
  }
  absl::MutexLock lock(&monitors_mu_);
  for (auto it = monitors_.begin(); it != monitors_.end();) {
    if (it->second->done) {
      it->second->thread.join();
      it = monitors_.erase(it);
    } else {
      ++it;
    }
  }
  if (stop_.HasBeenNotified()) return;
  for (const std::string& address : allowed) {
    if (monitors_.count(address) != 0) continue;
    auto monitor = std::make_unique<Monitor>();
    Monitor* m = monitor.get();
    m->thread = std::thread([this, address, m] {
      RunMonitor(address);
      m->done = true;
    });
    monitors_.emplace(address, std::move(monitor));
  }
}

void NcclRasCollector::RunMonitor(const std::string& address) {
  absl::Duration backoff = options_.monitor_backoff_initial;
  while (!stop_.HasBeenNotified()) {
    RasEndpoint endpoint;
    {
      absl::MutexLock lock(&mu_);
      auto it = endpoints_.find(address);
      // Forgotten, not listening, a new job in its init grace: QueryOnce starts a new thread
      // once it may connect again.
      if (it == endpoints_.end() || !MonitorAllowed(it->second, clock_.Now())) return;
      endpoint = it->second.endpoint;
    }
    // The job ended since the last round (nothing listens on the port): QueryOnce will see it.
    const auto listening = [&] {
      return ListeningSockets(options_.proc_root).count(endpoint.port) != 0;
    };
    if (!listening()) return;
    std::string buffer;
    absl::StatusOr<int> fd = nccl_ras_monitor::OpenMonitor(endpoint, options_.timeout, buffer);
    if (!fd.ok()) {
      absl::MutexLock lock(&mu_);
      auto it = endpoints_.find(address);
      if (it == endpoints_.end()) return;
      EndpointState& state = it->second;
      if (absl::IsFailedPrecondition(fd.status())) {
        // Not again until a new socket (a new job) listens there.
        ++state.monitor_unsupported;
        state.monitor_refused = true;
        spdlog::warn("nccl_ras: {} (NCCL {}) has no MONITOR mode: {}; STATUS polling goes on",
                     address, state.nccl_version, fd.status().message());
        return;
      }
      ++state.monitor_failed;
      spdlog::log(state.monitor_failed == 1 ? spdlog::level::warn : spdlog::level::debug,
                  "nccl_ras: {} MONITOR connection: {}; trying again in {}", address,
                  fd.status().message(), absl::FormatDuration(backoff));
    } else {
      nccl_ras_wire::Fd socket(*fd);
      const absl::Time opened = absl::Now();
      {
        absl::MutexLock lock(&mu_);
        auto it = endpoints_.find(address);
        if (it == endpoints_.end()) return;
        ++it->second.monitor_connections;
        it->second.monitor_up = true;
      }
      spdlog::info("nccl_ras: {} MONITOR connection open: NCCL's RAS events come as they happen",
                   address);
      const absl::Status ended = StreamMonitor(socket.get(), std::move(buffer), endpoint);
      // Closed with the job (its RAS threads exit with its processes): not an error.
      const bool job_ended = !ended.ok() && !listening();
      {
        absl::MutexLock lock(&mu_);
        auto it = endpoints_.find(address);
        if (it != endpoints_.end()) {
          it->second.monitor_up = false;
          if (!ended.ok() && !job_ended) ++it->second.monitor_dropped;
        }
      }
      if (ended.ok()) return;  // stopping
      if (job_ended) {
        spdlog::info("nccl_ras: {} MONITOR connection closed: the job ended", address);
        return;
      }
      if (absl::Now() - opened >= absl::Minutes(1)) backoff = options_.monitor_backoff_initial;
      spdlog::warn("nccl_ras: {} MONITOR connection lost: {}; opened again in {} (STATUS "
                   "polling goes on)",
                   address, ended.message(), absl::FormatDuration(backoff));
    }
    if (!Sleep(backoff)) return;
    backoff = std::min(backoff * 2, options_.monitor_backoff_max);
  }
}

absl::Status NcclRasCollector::StreamMonitor(int fd, std::string buffer,
                                             const RasEndpoint& endpoint) {
  const std::string address = endpoint.Address();
  uint64_t number = 0;
  nccl_ras_monitor::JsonObjectFramer framer("");
  const auto object = [&](std::string_view text) { MonitorEvents(endpoint, text, ++number); };
  const auto garbage = [&](std::string_view line) {
    ++number;
    spdlog::warn("nccl_ras: {} MONITOR event #{}: not a JSON event: \"{}\"", address, number,
                 absl::StrReplaceAll(absl::string_view(line.data(), std::min<size_t>(line.size(), 120)),
                                     {{"\n", " "}}));
    absl::MutexLock lock(&mu_);
    auto it = endpoints_.find(address);
    if (it != endpoints_.end()) ++it->second.monitor_malformed;
  };
  framer.Feed(buffer, object, garbage);
  char chunk[16 * 1024];
  while (true) {
    if (framer.pending() > nccl_ras_monitor::kMaxMonitorEventBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "an event over ", nccl_ras_monitor::kMaxMonitorEventBytes >> 10, " KiB: not what NCCL writes"));
    }
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    if (p[1].revents != 0 || stop_.HasBeenNotified()) return absl::OkStatus();
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n == 0) return absl::UnavailableError("closed by the NCCL job");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
    }
    framer.Feed(std::string_view(chunk, static_cast<size_t>(n)), object, garbage);
  }
}

void NcclRasCollector::MonitorEvents(const RasEndpoint& endpoint, std::string_view object,
                                     uint64_t number) {
  const std::string address = endpoint.Address();
  const std::string source = absl::StrCat("nccl-ras://", address);
  std::vector<std::string> problems;
  // Problems read "nccl-ras://HOST:PORT/monitor#N:LINE:COLUMN: why": event N of the connection.
  std::vector<logs::LogEvent> events =
      logs::ParseRasJson(object, absl::StrCat(source, "/monitor#", number), problems);
  const int64_t t = clock_.NowNanos();
  absl::MutexLock lock(&mu_);
  auto found = endpoints_.find(address);
  if (found == endpoints_.end()) return;
  EndpointState& state = found->second;
  for (const std::string& p : problems) {
    ++state.monitor_malformed;
    spdlog::warn("nccl_ras: MONITOR event is malformed: {}", p);
  }
  for (logs::LogEvent& e : events) {
    if (e.kind != "nccl_ras.event") {
      ++state.monitor_malformed;
      spdlog::warn("nccl_ras: {}/monitor#{}: a {} where an event was expected", source, number,
                   e.kind);
      continue;
    }
    if (!RasMonitorEventSent(e.Value("event"))) {
      ++state.monitor_ignored;
      continue;
    }
    ++state.monitor_sent;
    // The communicators and ranks the last report gave this process.
    auto p = state.processes.find(absl::StrCat(e.Value("node"), "/", e.Value("pid")));
    if (p != state.processes.end()) {
      e.Set("comm_hash", p->second.comm_hashes);
      e.Set("ranks", p->second.ranks);
    }
    e.Set("endpoint", address);
    // When the agent heard it: NCCL's timestamp (the `timestamp` field) is the job's local
    // time without a zone.
    e.time_unix_nano = 0;
    pending_.push_back(LogEventRecord(std::move(e), "nccl_ras", source, t, false));
  }
}

}  // namespace railwatch
