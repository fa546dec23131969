#include "collectors/lldp_collector.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/logging.h"

namespace railwatch {
namespace {

class LldpcliProgram final : public LldpSource {
 public:
  LldpcliProgram(std::string program, absl::Duration timeout)
      : program_(std::move(program)), timeout_(timeout) {}
  std::string name() const override { return program_; }

  absl::StatusOr<std::string> Read() override {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0)
      return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
    if (pipe2(err, O_CLOEXEC) != 0) {
      close(out[0]);
      close(out[1]);
      return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
    }
    const pid_t pid = fork();
    if (pid < 0) {
      for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
      return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
    }
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, STDIN_FILENO);
      const char* argv[] = {program_.c_str(), "-f", "json0", "show", "neighbors", nullptr};
      execvp(argv[0], const_cast<char* const*>(argv));
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    std::string stdout_text, stderr_text;
    const absl::Time deadline = absl::Now() + timeout_;
    bool timed_out = false;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&stdout_text, &stderr_text};
    int open_fds = 2;
    while (open_fds > 0) {
      const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left <= 0) {
        timed_out = true;
        break;
      }
      const int n = poll(fds, 2, static_cast<int>(left));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buf[16384];
        const ssize_t got = read(fds[i].fd, buf, sizeof buf);
        if (got > 0 && sinks[i]->size() < (size_t{16} << 20)) {
          sinks[i]->append(buf, static_cast<size_t>(got));
        } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
    for (pollfd& p : fds) {
      if (p.fd >= 0) close(p.fd);
    }
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return absl::DeadlineExceededError(
          absl::StrCat(program_, " did not answer within ", absl::FormatDuration(timeout_)));
    }
    const std::string said(absl::StripAsciiWhitespace(stderr_text.substr(0, 300)));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
      return absl::NotFoundError(
          absl::StrCat(program_,
                       " not found: install lldpd (Debian: apt-get install lldpd) to learn which "
                       "switch port each NIC is cabled to, or run with --lldp_source=off"));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return absl::UnavailableError(
          absl::StrCat(program_, " -f json0 show neighbors failed (",
                       WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status))
                                         : absl::StrCat("signal ", WTERMSIG(status)),
                       said.empty() ? "" : ": ", said, "); is lldpd running?"));
    }
    return stdout_text;
  }

 private:
  const std::string program_;
  const absl::Duration timeout_;
};

class LldpFile final : public LldpSource {
 public:
  explicit LldpFile(std::string path) : path_(std::move(path)) {}
  std::string name() const override { return path_; }
  absl::StatusOr<std::string> Read() override {
    std::ifstream in(path_);
    if (!in) return absl::NotFoundError(absl::StrCat(path_, ": ", strerror(errno)));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  const std::string path_;
};

Labels NeighborLabels(const LldpNeighbor& n) {
  Labels labels = {{"interface", n.local_interface},
                   {"neighbor_system", n.system_name},
                   {"neighbor_port", n.PortName()},
                   {"neighbor_chassis_id", n.chassis_id}};
  if (!n.management_addresses.empty()) {
    labels.push_back({"neighbor_mgmt_address", n.management_addresses.front()});
  }
  return labels;
}

std::string Describe(const LldpNeighbor& n) {
  return absl::StrCat(n.system_name.empty() ? n.chassis_id : n.system_name, " port ", n.PortName());
}

bool Same(const LldpNeighbor& a, const LldpNeighbor& b) {
  return a.system_name == b.system_name && a.PortName() == b.PortName() &&
         a.chassis_id == b.chassis_id && a.management_addresses == b.management_addresses;
}

}  // namespace

std::unique_ptr<LldpSource> LldpcliSource(std::string program, absl::Duration timeout) {
  return std::make_unique<LldpcliProgram>(std::move(program), timeout);
}

std::unique_ptr<LldpSource> LldpFileSource(std::string path) {
  return std::make_unique<LldpFile>(std::move(path));
}

absl::StatusOr<std::unique_ptr<LldpSource>> LldpSourceFromFlag(std::string_view flag,
                                                               bool real_host) {
  const absl::string_view f(flag.data(), flag.size());
  if (f == "off" || (f == "auto" && !real_host)) return std::unique_ptr<LldpSource>();
  if (f == "auto") return LldpcliSource();
  if (f == "lldpcli" || f.empty()) return LldpcliSource();
  if (absl::StartsWith(f, "lldpcli:") && f.size() > 8) {
    return LldpcliSource(std::string(f.substr(8)));
  }
  if (absl::StartsWith(f, "file:") && f.size() > 5) return LldpFileSource(std::string(f.substr(5)));
  return absl::InvalidArgumentError(absl::StrCat(
      "--lldp_source=", f, ": expected auto, lldpcli, lldpcli:PROGRAM, file:PATH or off"));
}

LldpCollector::LldpCollector(Options options, std::unique_ptr<LldpSource> source,
                             const Clock& clock)
    : options_(options), source_(std::move(source)), clock_(clock) {}

absl::Status LldpCollector::Collect(Emitter& emitter) {
  const int64_t now = clock_.NowNanos();
  if (now >= next_refresh_) {
    next_refresh_ = now + absl::ToInt64Nanoseconds(options_.refresh);
    Refresh(emitter, now);
  }
  for (const auto& [interface, known] : by_interface_) emitter.Gauge(known.series, 1, now);
  return absl::OkStatus();
}

void LldpCollector::Refresh(Emitter& emitter, int64_t now) {
  ++stats_.reads;
  absl::StatusOr<std::string> text = source_->Read();
  if (!text.ok()) {
    // What was known stays known: lldpd restarting is not a cable moving.
    ++stats_.read_errors;
    if (!unavailable_logged_) {
      // lldpd is optional: its absence is news, not a fault.
      if (absl::IsNotFound(text.status())) {
        spdlog::info("LLDP neighbours: {}", text.status().message());
      } else {
        spdlog::warn(
            "LLDP neighbours: {} (switch ports of this host's NICs unknown until it "
            "answers)",
            text.status().message());
      }
      unavailable_logged_ = true;
    }
    return;
  }
  if (unavailable_logged_) spdlog::info("LLDP neighbours: {} answers again", source_->name());
  unavailable_logged_ = false;
  LldpParseResult parsed = ParseLldpNeighbors(*text, source_->name());
  stats_.parse_problems += parsed.problems.size();
  for (const LldpProblem& p : parsed.problems) spdlog::warn("LLDP neighbours: {}", p.ToString());
  if (!parsed.problems.empty() && parsed.neighbors.empty()) return;  // keep what was known

  std::map<std::string, LldpNeighbor> fresh;
  for (LldpNeighbor& n : parsed.neighbors) fresh.try_emplace(n.local_interface, std::move(n));
  auto event = [&](const char* kind, const std::string& interface, std::string raw,
                   std::vector<std::pair<std::string, std::string>> attributes) {
    EventRecord e;
    e.kind = kind;
    e.time_unix_nano = now;
    e.labels = {{"interface", interface}};
    e.attributes = std::move(attributes);
    e.raw = std::move(raw);
    emitter.Event(std::move(e));
  };
  for (auto it = by_interface_.begin(); it != by_interface_.end();) {
    if (fresh.count(it->first) == 0) {
      event("lldp.neighbor_lost", it->first,
            absl::StrCat(it->first, ": LLDP neighbour ", Describe(it->second.neighbor),
                         " no longer heard"),
            {{"was", Describe(it->second.neighbor)}});
      it = by_interface_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [interface, n] : fresh) {
    auto known = by_interface_.find(interface);
    if (known != by_interface_.end() && Same(known->second.neighbor, n)) continue;
    if (known != by_interface_.end()) {
      event("lldp.neighbor_changed", interface,
            absl::StrCat(interface, ": LLDP neighbour was ", Describe(known->second.neighbor),
                         ", is ", Describe(n)),
            {{"was", Describe(known->second.neighbor)}, {"is", Describe(n)}});
    }
    const uint32_t series =
        emitter.DefineSeries("fabric_lldp_neighbor_info", MetricKind::kGauge, NeighborLabels(n));
    by_interface_[interface] = Known{std::move(n), series};
  }
  stats_.neighbors = by_interface_.size();
}

}  // namespace railwatch
