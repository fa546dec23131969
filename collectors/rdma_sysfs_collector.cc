#include "collectors/rdma_sysfs_collector.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {
namespace fs = std::filesystem;

RdmaSysfsCollector::RdmaSysfsCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

namespace {

std::vector<fs::path> SortedChildren(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

absl::Status RdmaSysfsCollector::Discover(Emitter& emitter) {
  counters_.clear();
  ports_found_ = 0;
  const fs::path class_dir = fs::path(options_.sysfs_root) / "class" / "infiniband";
  std::error_code ec;
  if (!fs::is_directory(class_dir, ec)) {
    // No RDMA devices (or no RDMA in this kernel): nothing to collect, not a failure.
    return absl::OkStatus();
  }
  for (const fs::path& device_dir : SortedChildren(class_dir)) {
    const std::string device = device_dir.filename().string();
    for (const fs::path& port_dir : SortedChildren(device_dir / "ports")) {
      const std::string port = port_dir.filename().string();
      uint32_t port_number;
      if (!absl::SimpleAtoi(port, &port_number)) continue;
      ++ports_found_;
      for (const MetricSpec& spec : CanonicalMetrics()) {
        for (const SysfsSource& source : spec.sysfs) {
          absl::StatusOr<PreadFile> file = PreadFile::Open((port_dir / source.path).string());
          if (!file.ok()) {
            if (!absl::IsNotFound(file.status())) spdlog::warn("{}", file.status().message());
            continue;
          }
          absl::StatusOr<std::optional<uint64_t>> value = file->ReadCounter();
          // "N/A (no PMA)" and friends: the device does not have this counter.
          if (!value.ok() || !value->has_value()) continue;
          uint32_t id = emitter.DefineSeries(spec.name, spec.kind,
                                             {{"device", device}, {"port", port}});
          counters_.push_back({std::move(*file), id, source.scale});
          break;  // the first present source wins
        }
      }
    }
  }
  spdlog::debug("rdma_sysfs: {} ports, {} counters under {}", ports_found_, counters_.size(),
                class_dir.string());
  return absl::OkStatus();
}

absl::Status RdmaSysfsCollector::Collect(Emitter& emitter) {
  absl::Time now = clock_.Now();
  if (now >= next_rescan_) {
    if (absl::Status s = Discover(emitter); !s.ok()) return s;
    next_rescan_ = now + options_.rescan_interval;
  }
  const int64_t t = absl::ToUnixNanos(now);
  size_t failed = 0;
  absl::Status first_error;
  for (const OpenCounter& c : counters_) {
    absl::StatusOr<std::optional<uint64_t>> value = c.file.ReadCounter();
    if (!value.ok()) {
      if (failed++ == 0) first_error = value.status();
      continue;
    }
    if (!value->has_value()) continue;  // became unavailable: absent this cycle
    emitter.Counter(c.series_id, **value * c.scale, t);
  }
  if (failed > 0) {
    // Most likely the device went away; find out what is there now on the next cycle.
    next_rescan_ = absl::InfinitePast();
    return absl::UnavailableError(
        absl::StrCat(failed, " counter reads failed, first: ", first_error.message()));
  }
  return absl::OkStatus();
}

}  // namespace railwatch
