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
#include "common/run_program.h"

namespace railwatch {
namespace {

class LldpcliProgram final : public LldpSource {
 public:
  LldpcliProgram(std::string program, absl::Duration timeout)
      : program_(std::move(program)), timeout_(timeout) {}
  std::string name() const override { return program_; }

  absl::StatusOr<std::string> Read() override {
    absl::StatusOr<ProgramOutput> run =
        RunProgram({program_, "-f", "json0", "show", "neighbors"}, timeout_);
    if (absl::IsDeadlineExceeded(run.status())) {
      return absl::DeadlineExceededError(
          absl::StrCat(program_, " did not answer within ", absl::FormatDuration(timeout_)));
    }
    if (absl::IsNotFound(run.status())) {
      return absl::NotFoundError(
          absl::StrCat(program_,
                       " not found: install lldpd (Debian: apt-get install lldpd) to learn which "
                       "switch port each NIC is cabled to, or run with --lldp_source=off"));
    }
    if (!run.ok()) return run.status();
    const std::string said(absl::StripAsciiWhitespace(run->err.substr(0, 300)));
    if (run->exit_code != 0) {
      return absl::UnavailableError(
          absl::StrCat(program_, " -f json0 show neighbors failed (",
                       run->signal == 0 ? absl::StrCat("exit ", run->exit_code)
                                        : absl::StrCat("signal ", run->signal),
                       said.empty() ? "" : ": ", said, "); is lldpd running?"));
    }
    return std::move(run->out);
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
