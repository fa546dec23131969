#include "collectors/kmsg_collector.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "collectors/log_event_record.h"
#include "collectors/log_tailer_state.h"
#include "spdlog/spdlog.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

// Records taken from the reader at a time.
constexpr size_t kBatch = 256;

int64_t ClockNanos(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Entries of `dir` (sorted), "" when it has none.
std::string FirstEntry(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names.empty() ? "" : names.front();
}

// The NIC in a PCI device's own directory.
PciNic NicIn(const fs::path& dir, const std::string& pci) {
  PciNic nic;
  nic.device = FirstEntry(dir / "infiniband");
  nic.interface = FirstEntry(dir / "net");
  if (!nic.device.empty() || !nic.interface.empty()) nic.pci = pci;
  return nic;
}

// A bridge's NICs below it (PCI functions are subdirectories named by their address), at most
// `depth` bridges down.
void NicsBelow(const fs::path& dir, int depth, std::vector<PciNic>& out) {
  std::error_code ec;
  std::vector<fs::path> children;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (logs::kernel::IsPciAddress(name) && e.is_directory(ec)) children.push_back(e.path());
  }
  std::sort(children.begin(), children.end());
  for (const fs::path& child : children) {
    PciNic nic = NicIn(child, child.filename().string());
    if (!nic.pci.empty()) {
      out.push_back(std::move(nic));
    } else if (depth > 0) {
      NicsBelow(child, depth - 1, out);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> KmsgPathFromFlag(const std::string& flag, bool real_host) {
  if (flag.empty()) {
    return absl::InvalidArgumentError("--kmsg: expected auto, off, /dev/kmsg or a file's path");
  }
  if (flag == "off") return std::string();
  if (flag != "auto") return flag;
  if (!real_host) return std::string();
  // Reading /dev/kmsg needs CAP_SYSLOG where kernel.dmesg_restrict is 1.
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    spdlog::warn("--kmsg=auto: /dev/kmsg cannot be read ({}): no kernel messages",
                 std::strerror(errno));
    return std::string();
  }
  ::close(fd);
  return std::string("/dev/kmsg");
}

PciNic PciNicResolver::Lookup(const std::string& pci) const {
  const fs::path dir = fs::path(root_) / "bus" / "pci" / "devices" / pci;
  PciNic nic = NicIn(dir, pci);
  if (!nic.pci.empty()) return nic;
  // A root port or switch port: the NIC below it, when the NICs there are one adapter.
  std::vector<PciNic> below;
  NicsBelow(dir, 2, below);
  if (below.empty()) return {};
  const std::string adapter(logs::kernel::PciAdapter(below.front().pci));
  for (const PciNic& n : below) {
    if (logs::kernel::PciAdapter(n.pci) != adapter) return {};
  }
  return below.front();
}

PciNic PciNicResolver::ForPci(const std::string& pci) {
  const absl::Time now = clock_.Now();
  auto it = cache_.find(pci);
  if (it != cache_.end() && (!it->second.nic.pci.empty() || now - it->second.looked_up < retry_)) {
    return it->second.nic;
  }
  // A bounded cache: a host has a few dozen PCI functions that log anything.
  if (cache_.size() >= 4096) cache_.clear();
  PciNic nic = Lookup(pci);
  cache_[pci] = {nic, now};
  return nic;
}

std::string PciNicResolver::PciOfDevice(const std::string& device) {
  if (device.empty() || device.find('/') != std::string::npos) return "";
  std::error_code ec;
  const fs::path link = fs::path(root_) / "class" / "infiniband" / device / "device";
  const fs::path target = fs::read_symlink(link, ec);
  if (ec) return "";
  const std::string pci = target.filename().string();
  return logs::kernel::IsPciAddress(pci) ? pci : "";
}

KmsgCollector::KmsgCollector(Options options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      reader_(options_.path),
      parser_(options_.path, clock),
      resolver_(options_.sysfs_root, clock, options_.resolve_retry) {}

KmsgCollector::~KmsgCollector() { SaveState(); }

KmsgPosition KmsgCollector::Position() const {
  KmsgPosition p;
  p.source = options_.path;
  p.next_seq = next_seq_.value_or(0);
  if (reader_.device()) {
    p.boot_id = boot_id_;
  } else {
    p.inode = reader_.inode();
    p.offset = reader_.offset();
  }
  return p;
}

void KmsgCollector::SaveState() {
  if (options_.state_dir.empty() || !have_saved_ || saved_ == written_) return;
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  last_write_ = clock_.Now();  // a failed write is tried again after the interval, not every cycle
  if (absl::Status s =
          WriteFileAtomically(options_.state_dir + "/kmsg.state", FormatKmsgPosition(saved_));
      !s.ok()) {
    if (!warned_state_)
      spdlog::warn("kmsg: {} (a restart reads back --kmsg_lookback)", s.message());
    warned_state_ = true;
    return;
  }
  warned_state_ = false;
  written_ = saved_;
}

void KmsgCollector::BeginLookback() {
  next_seq_.reset();
  file_offset_ns_.reset();
  const int64_t lookback_usec = absl::ToInt64Microseconds(options_.lookback);
  if (reader_.device()) {
    lookback_floor_usec_ = ClockNanos(CLOCK_MONOTONIC) / 1000 - lookback_usec;
  } else if (std::optional<int64_t> newest = reader_.NewestTimestampUsec()) {
    lookback_floor_usec_ = *newest - lookback_usec;
  } else {
    lookback_floor_usec_.reset();
  }
}

absl::Status KmsgCollector::Start() {
  if (absl::Status s = reader_.Open(); !s.ok()) return s;
  if (reader_.device()) {
    boot_id_ = std::string(absl::StripAsciiWhitespace(ReadSmallFile(options_.boot_id_path)));
  }
  std::optional<KmsgPosition> state;
  if (!options_.state_dir.empty()) {
    const std::string file = options_.state_dir + "/kmsg.state";
    std::error_code ec;
    if (fs::exists(file, ec)) {
      absl::StatusOr<KmsgPosition> p = ParseKmsgPosition(ReadSmallFile(file));
      if (p.ok()) {
        state = *p;
      } else {
        spdlog::warn("kmsg: {}: {}; reading from --kmsg_lookback", file, p.status().message());
      }
    }
  }
  bool resumed = false;
  if (state.has_value() && state->source == options_.path) {
    if (reader_.device()) {
      resumed = !boot_id_.empty() && state->boot_id == boot_id_;
    } else {
      resumed = reader_.ResumeFile(state->inode, state->offset);
    }
  }
  if (resumed) {
    next_seq_ = state->next_seq;
    lookback_floor_usec_.reset();
  } else {
    BeginLookback();
  }
  started_ = true;
  written_ = state.value_or(KmsgPosition{});
  // Until the first cycle that reads everything there is, the state file keeps what it had.
  if (resumed) {
    saved_ = *state;
    have_saved_ = true;
  }
  spdlog::info("kmsg: reading {} ({}){}", options_.path, reader_.device() ? "kernel log" : "file",
               resumed ? absl::StrCat(", from sequence number ", *next_seq_,
                                      " where the last run "
                                      "stopped")
                       : absl::StrCat(", the last ", absl::FormatDuration(options_.lookback)));
  return absl::OkStatus();
}

int64_t KmsgCollector::WallTime(const logs::KmsgRecord& r, int64_t now_ns) {
  const int64_t ts_ns = r.timestamp_usec * 1000;
  if (reader_.device()) {
    return ClockNanos(CLOCK_REALTIME) - ClockNanos(CLOCK_MONOTONIC) + ts_ns;
  }
  if (!file_offset_ns_.has_value() || now_ns - ts_ns < *file_offset_ns_) {
    file_offset_ns_ = now_ns - ts_ns;
  }
  return *file_offset_ns_ + ts_ns;
}

void KmsgCollector::Handle(const logs::KmsgRecord& r, int64_t now_ns, Emitter& emitter) {
  ++stats_.records;
  if (next_seq_.has_value()) {
    if (r.seq < *next_seq_) {
      ++stats_.skipped_read;  // read before a restart
      return;
    }
    if (r.seq > *next_seq_) stats_.lost += r.seq - *next_seq_;
  }
  next_seq_ = r.seq + 1;
  if (lookback_floor_usec_.has_value() && r.timestamp_usec < *lookback_floor_usec_) {
    ++stats_.skipped_lookback;
    return;
  }
  if (r.facility != 0) {
    ++stats_.skipped_user;
    return;
  }
  parser_.FeedRecord(r, WallTime(r, now_ns), events_);
  EmitEvents(now_ns, emitter);
}

void KmsgCollector::EmitEvents(int64_t now_ns, Emitter& emitter) {
  for (logs::LogEvent& e : events_) {
    // The NIC behind the message's PCI function, or the function of the RDMA device it names.
    std::string pci = e.Value("pci");
    if (pci.empty() && !e.Value("device").empty()) {
      pci = resolver_.PciOfDevice(e.Value("device"));
      if (!pci.empty()) {
        e.Set("pci", pci);
        e.Set("adapter", std::string(logs::kernel::PciAdapter(pci)));
      }
    }
    if (!pci.empty()) {
      const PciNic nic = resolver_.ForPci(pci);
      if (e.Value("device").empty() && !nic.device.empty()) e.Set("device", nic.device);
      if (e.Value("interface").empty() && !nic.interface.empty()) e.Set("interface", nic.interface);
      if (!nic.pci.empty() && nic.pci != pci) e.Set("nic_pci", nic.pci);
    }
    ++stats_.events[e.kind];
    emitter.Event(LogEventRecord(std::move(e), "kmsg", options_.path, now_ns, false));
  }
  events_.clear();
}

absl::Status KmsgCollector::Collect(Emitter& emitter) {
  if (!defined_) {
    DefineSeries(emitter);
    defined_ = true;
  }
  if (!started_) {
    absl::Status s = Start();
    if (!s.ok()) {
      if (absl::IsNotFound(s)) {
        // A file not written yet (a simulated host starting): nothing to read, not a failure.
        if (!warned_missing_) spdlog::warn("kmsg: {} (waiting for it)", s.message());
        warned_missing_ = true;
        EmitSelfMetrics(emitter);
        return absl::OkStatus();
      }
      ++stats_.read_errors;
      EmitSelfMetrics(emitter);
      return s;
    }
  }
  const int64_t now_ns = clock_.NowNanos();
  size_t handled = 0;
  uint64_t events_at_start = 0;
  for (const auto& [kind, n] : stats_.events) events_at_start += n;
  auto events_now = [&] {
    uint64_t total = 0;
    for (const auto& [kind, n] : stats_.events) total += n;
    return total - events_at_start;
  };
  absl::Status status;
  bool drained = false;
  bool limited = false;
  while (!limited) {
    // Records taken from the reader but not handled last cycle come first.
    if (records_.empty()) {
      const size_t want =
          std::min(kBatch, options_.max_records - std::min(handled, options_.max_records));
      if (want == 0) {
        ++stats_.limited_records;
        break;
      }
      status = reader_.Read(want, records_, &drained);
      if (!status.ok()) {
        ++stats_.read_errors;
        break;
      }
      if (reader_.TakeRestarted()) {
        spdlog::info("kmsg: {} was replaced or truncated: reading it again from its start",
                     options_.path);
        BeginLookback();
      }
      if (!reader_.device()) {
        for (const logs::KmsgRecord& r : records_)
          WallTime(r, now_ns);  // the newest sets the clock
      }
    }
    size_t i = 0;
    for (; i < records_.size(); ++i) {
      if (handled >= options_.max_records) {
        ++stats_.limited_records;
        limited = true;
        break;
      }
      if (events_now() >= options_.max_events) {
        ++stats_.limited_events;
        limited = true;
        break;
      }
      Handle(records_[i], now_ns, emitter);
      ++handled;
    }
    records_.erase(records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(i));
    if (!records_.empty()) break;
    if (drained) {
      // Nothing more for now: events still open (a print_health_info block) are complete.
      parser_.Flush(events_);
      EmitEvents(now_ns, emitter);
      saved_ = Position();
      have_saved_ = true;
      break;
    }
  }
  // Problems: records that are not records, kernel lines that did not parse.
  const uint64_t problems = reader_.stats().malformed + parser_.stats().malformed;
  if (problems > stats_.problems) {
    const auto& list = parser_.stats().problems;
    for (size_t k = reported_problems_; k < list.size(); ++k) {
      spdlog::warn("kmsg: {} (seq {}): {}", options_.path, list[k].line, list[k].reason);
    }
    reported_problems_ = list.size();
    stats_.problems = problems;
  }
  if (clock_.Now() - last_write_ >= options_.state_write_interval) SaveState();
  EmitSelfMetrics(emitter);
  return status;
}

void KmsgCollector::DefineSeries(Emitter& emitter) {
  auto counter = [&](std::string_view name, Labels labels = {}) {
    return emitter.DefineSeries(name, MetricKind::kCounter, std::move(labels));
  };
  ids_.records = counter("railwatch_kmsg_records_total");
  ids_.lost = counter("railwatch_kmsg_lost_records_total");
  ids_.problems = counter("railwatch_kmsg_parse_problems_total");
  ids_.read_errors = counter("railwatch_kmsg_read_errors_total");
  ids_.skipped_lookback = counter("railwatch_kmsg_skipped_records_total", {{"reason", "lookback"}});
  ids_.skipped_user = counter("railwatch_kmsg_skipped_records_total", {{"reason", "user"}});
  ids_.skipped_read = counter("railwatch_kmsg_skipped_records_total", {{"reason", "already_read"}});
  ids_.limited_records = counter("railwatch_kmsg_limited_cycles_total", {{"limit", "records"}});
  ids_.limited_events = counter("railwatch_kmsg_limited_cycles_total", {{"limit", "events"}});
  for (std::string_view kind : logs::KernelEventKinds()) {
    ids_.events[std::string(kind)] =
        counter("railwatch_kmsg_events_total", {{"kind", std::string(kind)}});
  }
}

void KmsgCollector::EmitSelfMetrics(Emitter& emitter) {
  const int64_t t = clock_.NowNanos();
  emitter.Counter(ids_.records, stats_.records, t);
  emitter.Counter(ids_.lost, stats_.lost, t);
  emitter.Counter(ids_.problems, stats_.problems, t);
  emitter.Counter(ids_.read_errors, stats_.read_errors, t);
  emitter.Counter(ids_.skipped_lookback, stats_.skipped_lookback, t);
  emitter.Counter(ids_.skipped_user, stats_.skipped_user, t);
  emitter.Counter(ids_.skipped_read, stats_.skipped_read, t);
  emitter.Counter(ids_.limited_records, stats_.limited_records, t);
  emitter.Counter(ids_.limited_events, stats_.limited_events, t);
  for (const auto& [kind, id] : ids_.events) {
    auto it = stats_.events.find(kind);
    emitter.Counter(id, it == stats_.events.end() ? 0 : it->second, t);
  }
}

}  // namespace railwatch
