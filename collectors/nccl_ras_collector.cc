#include "collectors/nccl_ras_collector.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectors/log_event_record.h"
#include "collectors/nccl_ras_wire.h"
#include "common/logging.h"
#include "logs/log_parser.h"
#include "logs/ras_json.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

using nccl_ras_wire::Connect;
using nccl_ras_wire::Exchange;
using nccl_ras_wire::Fd;
using nccl_ras_wire::Receive;
using nccl_ras_wire::SendLine;
// A numeric IPv4 or IPv6 address, or "localhost": what an NCCL_RAS_ADDR found in another
// user's environment may name (no DNS name: the agent asks nothing off this host).
bool LocalAddress(const std::string& host) {
  if (host == "localhost") return true;
  in6_addr a6{};
  in_addr a4{};
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string EventKey(const logs::LogEvent& e) { return e.Value("comm_hash"); }

}  // namespace

std::string RasEndpoint::Address() const {
  return host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                             : absl::StrCat(host, ":", port);
}

absl::StatusOr<RasEndpoint> ParseRasAddress(std::string_view text_in, std::string origin) {
  const absl::string_view text(text_in.data(), text_in.size());
  RasEndpoint e;
  e.origin = std::move(origin);
  absl::string_view host = text, port;
  if (absl::StartsWith(text, "[")) {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": no closing ]"));
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 1);
    if (!absl::StartsWith(port, ":")) {
      return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": want [ADDRESS]:PORT"));
    }
    port.remove_prefix(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": want HOST:PORT"));
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty() || !absl::SimpleAtoi(port, &e.port) || e.port <= 0 || e.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": want HOST:PORT, port 1-65535"));
  }
  e.host = std::string(host);
  return e;
}

absl::StatusOr<std::vector<RasEndpoint>> RasEndpoints(std::string_view spec_in,
                                                      const std::string& proc_root) {
  const absl::string_view spec(spec_in.data(), spec_in.size());
  std::vector<RasEndpoint> out;
  auto add = [&out](RasEndpoint e) {
    for (const RasEndpoint& have : out) {
      if (have.Address() == e.Address()) return;
    }
    out.push_back(std::move(e));
  };
  if (spec == "off") return out;
  if (spec != "auto") {
    for (absl::string_view part : absl::StrSplit(std::string(spec), ',', absl::SkipEmpty())) {
      absl::StatusOr<RasEndpoint> e = ParseRasAddress(std::string(absl::StripAsciiWhitespace(part)), "--nccl_ras");
      if (!e.ok()) return e.status();
      add(*std::move(e));
    }
    return out;
  }
  add(*ParseRasAddress("localhost:28028", "default"));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(proc_root, ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(pid[0]))) continue;
    const std::string environ = ReadWhole(entry.path() / "environ");  // unreadable: ""
    for (absl::string_view var : absl::StrSplit(environ, '\0', absl::SkipEmpty())) {
      if (!absl::StartsWith(var, "NCCL_RAS_ADDR=")) continue;
      absl::StatusOr<RasEndpoint> e =
          ParseRasAddress(std::string(var.substr(14)), absl::StrCat("NCCL_RAS_ADDR of pid ", pid));
      if (e.ok() && LocalAddress(e->host)) {
        add(*std::move(e));
      } else if (e.ok()) {
        spdlog::debug("nccl_ras: pid {}: NCCL_RAS_ADDR {} is not a numeric address: not asked",
                      pid, e->Address());
      } else {
        spdlog::debug("nccl_ras: pid {}: NCCL_RAS_ADDR {}", pid, e.status().message());
      }
    }
  }
  return out;
}

std::map<int, std::set<uint64_t>> ListeningSockets(const std::string& proc_root) {
  std::map<int, std::set<uint64_t>> out;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::ifstream in(fs::path(proc_root) / table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // "  0: 0100007F:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  0 0 12345 ..."
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (f.size() < 10 || f[3] != "0A") continue;  // 0A: LISTEN
      const size_t colon = f[1].rfind(':');
      int port = 0;
      uint64_t inode = 0;
      if (colon == absl::string_view::npos ||
          !absl::numbers_internal::safe_strto32_base(f[1].substr(colon + 1), &port, 16) ||
          !absl::SimpleAtoi(f[9], &inode) || inode == 0) {
        continue;
      }
      out[port].insert(inode);
    }
  }
  return out;
}

uint64_t ListeningSocketInode(const std::string& proc_root, int port) {
  const std::map<int, std::set<uint64_t>> all = ListeningSockets(proc_root);
  auto it = all.find(port);
  return it == all.end() ? 0 : *it->second.begin();
}

absl::StatusOr<RasAnswer> QueryRasStatus(const RasEndpoint& endpoint, absl::Duration timeout,
                                         bool json) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::StatusOr<int> fd = Connect(endpoint, deadline);
  if (!fd.ok()) return fd.status();
  Fd socket(*fd);
  std::string buffer;
  RasAnswer answer;
  absl::StatusOr<std::string> line = Exchange(socket.get(), buffer, "CLIENT PROTOCOL 2", deadline);
  if (!line.ok()) return line.status();
  if (!absl::StartsWith(*line, "SERVER PROTOCOL ")) {
    return absl::FailedPreconditionError(
        absl::StrCat("not an NCCL RAS endpoint: it answered \"", line->substr(0, 80), "\""));
  }
  answer.protocol = line->substr(16);
  // RAS's own collective timeout: below ours, so that it answers with what it has. Whole
  // seconds: NCCL before 2.30 reads it with strtol and refuses a fraction.
  const int64_t ras_timeout =
      std::max<int64_t>(1, static_cast<int64_t>(absl::ToDoubleSeconds(timeout) * 0.6));
  line = Exchange(socket.get(), buffer, absl::StrCat("TIMEOUT ", ras_timeout), deadline);
  if (!line.ok()) return line.status();
  if (*line != "OK") {
    spdlog::debug("nccl_ras: {} refused TIMEOUT {}: {}", endpoint.Address(), ras_timeout, *line);
  }
  if (json) {
    line = Exchange(socket.get(), buffer, "SET FORMAT json", deadline);
    if (!line.ok()) return line.status();
    answer.json = *line == "OK";  // before 2.28.7: "ERROR: Unknown command ...": text it is
  }
  if (absl::Status s = SendLine(socket.get(), "STATUS", deadline); !s.ok()) return s;
  if (absl::Status s = Receive(socket.get(), buffer, true, deadline, "to STATUS"); !s.ok()) {
    return s;
  }
  answer.report = std::move(buffer);
  return answer;
}

std::vector<logs::LogEvent> RasAnswerEvents(const RasAnswer& answer, const std::string& source,
                                            std::vector<std::string>& problems) {
  if (answer.json && logs::LooksLikeRasJson(answer.report)) {
    return logs::ParseRasJson(answer.report, source, problems);
  }
  std::vector<logs::LogEvent> events;
  logs::LogParser parser(source);
  for (absl::string_view line : absl::StrSplit(answer.report, '\n')) {
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    parser.Feed(std::string_view(line.data(), line.size()), events);
  }
  parser.Finish(events);
  for (const auto& p : parser.stats().problems) {
    problems.push_back(absl::StrCat(source, ":", p.line, ": ", p.reason));
  }
  return events;
}

NcclRasCollector::NcclRasCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0 && options_.monitor) {
    spdlog::error("nccl_ras: eventfd: {}: no MONITOR connection", std::strerror(errno));
    options_.monitor = false;
  }
}

NcclRasCollector::~NcclRasCollector() {
  stop_.Notify();
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
  {
    absl::MutexLock lock(&monitors_mu_);
    for (auto& [address, monitor] : monitors_) monitor->thread.join();
    monitors_.clear();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

bool NcclRasCollector::OlderThan2273(const std::string& version) {
  std::vector<absl::string_view> parts = absl::StrSplit(version, '.');
  int v[3] = {0, 0, 0};
  for (size_t i = 0; i < 3 && i < parts.size(); ++i) {
    if (!absl::SimpleAtoi(parts[i], &v[i])) return false;  // "2.28.9+cuda12.4" style: newer
  }
  if (v[0] != 2) return v[0] < 2;
  if (v[1] != 27) return v[1] < 27;
  return v[2] < 3;
}

void NcclRasCollector::Query(const RasEndpoint& endpoint, absl::Time now) {
  const std::string source = absl::StrCat("nccl-ras://", endpoint.Address());
  // The network and the parsing happen outside the lock: Collect, on the agent's poll thread,
  // takes it every cycle.
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(endpoint, options_.timeout);
  std::vector<std::string> problems;
  std::vector<logs::LogEvent> events;
  std::map<std::string, logs::RasProcess> processes;
  if (answer.ok()) events = RasAnswerEvents(*answer, source, problems);
  if (answer.ok() && answer->json) processes = logs::RasReportProcesses(answer->report);
  for (const std::string& p : problems) spdlog::warn("nccl_ras: {}", p);

  absl::MutexLock lock(&mu_);
  auto found = endpoints_.find(endpoint.Address());
  if (found == endpoints_.end()) return;
  EndpointState& state = found->second;
  if (!answer.ok()) {
    const bool refused = absl::IsUnavailable(answer.status()) &&
                         absl::StrContains(answer.status().message(), "refused");
    ++(refused ? state.refused : state.failed);
    if (state.up || state.failed + state.refused == 1) {
      spdlog::warn("nccl_ras: {} ({}): {}", endpoint.Address(), endpoint.origin,
                   answer.status().message());
    }
    state.up = false;
    return;
  }
  ++state.ok;
  state.up = true;
  if (answer->json) state.processes = std::move(processes);
  std::map<std::string, Mismatch> mismatch;
  const int64_t t = absl::ToUnixNanos(now);
  for (logs::LogEvent& e : events) {
    if (e.kind == "nccl_ras.report") {
      if (!e.Value("nccl_version").empty() && state.nccl_version != e.Value("nccl_version")) {
        state.nccl_version = e.Value("nccl_version");
        if (OlderThan2273(state.nccl_version)) {
          spdlog::warn("nccl_ras: {} runs NCCL {}, older than 2.27.3, whose RAS can crash when "
                       "asked while a communicator initialises: it is asked only after the "
                       "first {} of the job; a communicator created later in the job is not "
                       "seen coming (docs/JOBS.md)",
                       endpoint.Address(), state.nccl_version,
                       absl::FormatDuration(options_.init_grace));
        }
      }
      const std::string errors = e.Value("errors");
      if (errors == state.last_errors) continue;
      state.last_errors = errors;
    } else if (e.kind == "nccl_ras.comm_issue" && e.Value("issue") == "MISMATCH") {
      // Counts that differ in one answer may be a healthy job caught mid-step; the same counts
      // in the next answer mean the ranks behind stopped launching. Sent at every answer while
      // they stay stopped, so that the playbook keeps seeing the hang.
      const std::string counts = e.Value("op_counts") + "|" + e.Value("status_counts");
      auto it = state.last_mismatch.find(EventKey(e));
      const bool same = it != state.last_mismatch.end() && it->second.counts == counts;
      mismatch[EventKey(e)] = {counts, same ? it->second.since : now};
      if (!same) continue;
      e.Set("stuck_for_s", absl::StrCat(absl::ToInt64Seconds(now - it->second.since)));
    }
    e.Set("endpoint", endpoint.Address());
    pending_.push_back(LogEventRecord(std::move(e), "nccl_ras", source, t, false));
  }
  state.last_mismatch = std::move(mismatch);
}

void NcclRasCollector::QueryOnce() {
  absl::StatusOr<std::vector<RasEndpoint>> found =
      RasEndpoints(options_.endpoints, options_.proc_root);
  if (!found.ok()) {
    spdlog::error("nccl_ras: {}", found.status().message());
    return;
  }
  const std::map<int, std::set<uint64_t>> listening = ListeningSockets(options_.proc_root);
  const absl::Time now = clock_.Now();
  std::vector<RasEndpoint> ready;
  {
    absl::MutexLock lock(&mu_);
    // Endpoints no process names any more (their job ended) are forgotten.
    std::map<std::string, EndpointState> kept;
    for (RasEndpoint& e : *found) {
      const std::string address = e.Address();
      auto it = endpoints_.find(address);
      EndpointState state = it == endpoints_.end() ? EndpointState{} : std::move(it->second);
      state.endpoint = std::move(e);
      kept.emplace(address, std::move(state));
    }
    endpoints_ = std::move(kept);
    for (auto& [address, state] : endpoints_) {
      auto sockets = listening.find(state.endpoint.port);
      if (sockets == listening.end()) {
        // Nobody listens (no job, or NCCL_RAS_ENABLE=0): no connection is made.
        state.sockets.clear();
        state.up = false;
        continue;
      }
      // A socket not seen before is a job starting (jobs of one user share the port through
      // SO_REUSEPORT): its communicators are being set up.
      if (!std::includes(state.sockets.begin(), state.sockets.end(), sockets->second.begin(),
                         sockets->second.end())) {
        state.listening_since = now;
        state.nccl_version.clear();
        state.last_errors.clear();
        state.last_mismatch.clear();
        state.processes.clear();
        state.monitor_refused = false;
      }
      state.sockets = sockets->second;
      if (now - state.listening_since < options_.init_grace) {
        ++state.skipped_init;
        continue;
      }
      ready.push_back(state.endpoint);
    }
  }
  for (const RasEndpoint& endpoint : ready) Query(endpoint, now);
  // After the queries: a report has told each endpoint's NCCL version.
  StartMonitors();
}

void NcclRasCollector::Run() {
  do {
    QueryOnce();
  } while (!stop_.WaitForNotificationWithTimeout(options_.interval));
}

absl::Status NcclRasCollector::Collect(Emitter& emitter) {
  if (options_.background && !thread_.joinable()) thread_ = std::thread([this] { Run(); });
  std::vector<EventRecord> events;
  const int64_t t = clock_.NowNanos();
  absl::MutexLock lock(&mu_);
  events.swap(pending_);
  for (auto& [address, state] : endpoints_) {
    auto [it, added] = series_.try_emplace(address);
    Series& s = it->second;
    if (added) {
      const Labels labels = {{"endpoint", address}};
      auto result = [&](const char* r) {
        Labels l = labels;
        l.push_back({"result", r});
        return emitter.DefineSeries("railwatch_nccl_ras_queries_total", MetricKind::kCounter, l);
      };
      s.ok = result("ok");
      s.failed = result("failed");
      s.refused = result("refused");
      s.up = emitter.DefineSeries("railwatch_nccl_ras_up", MetricKind::kGauge, labels);
    }
    emitter.Counter(s.ok, state.ok, t);
    emitter.Counter(s.failed, state.failed, t);
    emitter.Counter(s.refused, state.refused, t);
    emitter.Gauge(s.up, state.up ? 1 : 0, t);
    if (!options_.monitor) continue;
    if (!s.monitor_defined) {
      s.monitor_defined = true;
      const Labels labels = {{"endpoint", address}};
      auto with = [&](const char* name, const char* key, const char* value) {
        Labels l = labels;
        l.push_back({key, value});
        return emitter.DefineSeries(name, MetricKind::kCounter, l);
      };
      s.m_connections = emitter.DefineSeries("railwatch_nccl_ras_monitor_connections_total",
                                             MetricKind::kCounter, labels);
      s.m_sent = with("railwatch_nccl_ras_monitor_events_total", "result", "sent");
      s.m_ignored = with("railwatch_nccl_ras_monitor_events_total", "result", "ignored");
      s.m_malformed = with("railwatch_nccl_ras_monitor_events_total", "result", "malformed");
      s.m_failed = with("railwatch_nccl_ras_monitor_errors_total", "reason", "failed");
      s.m_unsupported = with("railwatch_nccl_ras_monitor_errors_total", "reason", "unsupported");
      s.m_dropped = with("railwatch_nccl_ras_monitor_errors_total", "reason", "dropped");
      s.m_up = emitter.DefineSeries("railwatch_nccl_ras_monitor_up", MetricKind::kGauge, labels);
    }
    emitter.Counter(s.m_connections, state.monitor_connections, t);
    emitter.Counter(s.m_sent, state.monitor_sent, t);
    emitter.Counter(s.m_ignored, state.monitor_ignored, t);
    emitter.Counter(s.m_malformed, state.monitor_malformed, t);
    emitter.Counter(s.m_failed, state.monitor_failed, t);
    emitter.Counter(s.m_unsupported, state.monitor_unsupported, t);
    emitter.Counter(s.m_dropped, state.monitor_dropped, t);
    emitter.Gauge(s.m_up, state.monitor_up ? 1 : 0, t);
  }
  for (EventRecord& e : events) emitter.Event(std::move(e));
  return absl::OkStatus();
}

}  // namespace railwatch
