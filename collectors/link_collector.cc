#include "collectors/link_collector.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/vocabulary.h"

namespace railwatch {
namespace fs = std::filesystem;

LinkCollector::LinkCollector(Options options, NetdevSelector selector,
                             std::unique_ptr<NetlinkLinkMonitor> monitor, const Clock& clock)
    : options_(std::move(options)),
      selector_(std::move(selector)),
      monitor_(std::move(monitor)),
      clock_(clock) {}

void LinkCollector::Discover(Emitter& emitter) {
  counters_.clear();
  const fs::path class_dir = fs::path(selector_.sysfs_root()) / "class" / "net";
  const std::vector<std::string> netdevs = selector_.List();
  for (const std::string& netdev : netdevs) {
    for (const MetricSpec& spec : CanonicalMetrics()) {
      for (std::string_view file : spec.netdev_sysfs) {
        absl::StatusOr<PreadFile> f = PreadFile::Open((class_dir / netdev / file).string());
        if (!f.ok()) {
          // Kernels before 4.16 have carrier_changes but not the up/down counts.
          if (!absl::IsNotFound(f.status())) spdlog::warn("{}", f.status().message());
          continue;
        }
        absl::StatusOr<std::optional<uint64_t>> value = f->ReadCounter();
        if (!value.ok() || !value->has_value()) continue;
        counters_.push_back({std::move(*f),
                             emitter.DefineSeries(spec.name, spec.kind, {{"interface", netdev}}),
                             spec.detail});
        break;
      }
    }
  }
  spdlog::debug("link: {} netdevs, {} counters", netdevs.size(), counters_.size());
}

absl::Status LinkCollector::Collect(Emitter& emitter) {
  const absl::Time now = clock_.Now();
  if (now >= next_rescan_) {
    Discover(emitter);
    next_rescan_ = now + options_.rescan_interval;
    next_detail_ = absl::InfinitePast();
  }
  const bool read_detail = now >= next_detail_;
  if (read_detail) next_detail_ = now + options_.detail_interval;
  const int64_t t = absl::ToUnixNanos(now);
  size_t failed = 0;
  absl::Status first_error;
  for (const OpenCounter& c : counters_) {
    if (c.detail && !read_detail) continue;
    absl::StatusOr<std::optional<uint64_t>> value = c.file.ReadCounter();
    if (!value.ok()) {
      if (failed++ == 0) first_error = value.status();
      continue;
    }
    if (value->has_value()) emitter.Counter(c.series_id, **value, t);
  }

  if (monitor_ != nullptr) {
    if (!self_series_defined_) {
      overruns_id_ =
          emitter.DefineSeries("railwatch_netlink_overruns_total", MetricKind::kCounter, {});
      dropped_id_ =
          emitter.DefineSeries("railwatch_link_events_dropped_total", MetricKind::kCounter, {});
      self_series_defined_ = true;
    }
    monitor_->Drain(events_);
    for (EventRecord& e : events_) emitter.Event(std::move(e));
    events_.clear();
    emitter.Counter(overruns_id_, monitor_->overruns(), t);
    emitter.Counter(dropped_id_, monitor_->dropped_events(), t);
  }

  if (failed > 0) {
    // Most likely a netdev went away (its sysfs files answer ENODEV): look again next cycle.
    next_rescan_ = absl::InfinitePast();
    return absl::UnavailableError(
        absl::StrCat(failed, " netdev counter reads failed, first: ", first_error.message()));
  }
  return absl::OkStatus();
}

}  // namespace railwatch
