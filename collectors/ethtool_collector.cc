#include "collectors/ethtool_collector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {

EthtoolCollector::EthtoolCollector(Options options, NetdevSelector selector,
                                   std::unique_ptr<EthtoolBackend> backend, const Clock& clock,
                                   const EthtoolMapping& mapping)
    : options_(std::move(options)),
      selector_(std::move(selector)),
      backend_(std::move(backend)),
      clock_(clock),
      mapping_(mapping) {}

size_t EthtoolCollector::mapped_stats() const {
  size_t n = 0;
  for (const Netdev& netdev : netdevs_) n += netdev.stats.size();
  return n;
}

std::optional<EthtoolCollector::Netdev> EthtoolCollector::OpenNetdev(const std::string& name,
                                                                     Emitter& emitter) {
  absl::StatusOr<std::unique_ptr<EthtoolDevice>> device = backend_->Open(name);
  if (!device.ok()) {
    // Gone since the listing, or a netdev without statistics (bond, lo): nothing to collect.
    if (absl::IsNotFound(device.status()) || absl::IsUnimplemented(device.status())) {
      spdlog::debug("ethtool: {}", device.status().message());
    } else {
      spdlog::warn("ethtool: {}", device.status().message());
    }
    return std::nullopt;
  }
  std::vector<EthtoolMapping::Target> targets =
      mapping_.Map((*device)->driver(), (*device)->stat_names());
  if (targets.empty()) {
    spdlog::debug("ethtool: {} ({}): none of its {} statistics is mapped", name,
                  (*device)->driver(), (*device)->stat_names().size());
    return std::nullopt;
  }
  Netdev netdev{name, std::move(*device), {}};
  netdev.stats.reserve(targets.size());
  for (EthtoolMapping::Target& target : targets) {
    Labels labels = std::move(target.labels);
    labels.push_back({"interface", name});
    netdev.stats.push_back(
        {target.stat_index,
         emitter.DefineSeries(target.spec->name, target.spec->kind, std::move(labels))});
  }
  spdlog::debug("ethtool: {} ({}): {} of {} statistics mapped", name, netdev.device->driver(),
                netdev.stats.size(), netdev.device->stat_names().size());
  return netdev;
}

void EthtoolCollector::Discover(Emitter& emitter) {
  // Netdevs already open stay open: a rescan only opens what is new and drops what is gone.
  // A netdev whose statistics changed shape is reopened by Collect() when its read says so.
  std::vector<Netdev> previous = std::move(netdevs_);
  netdevs_.clear();
  for (const std::string& name : selector_.List()) {
    auto it = std::find_if(previous.begin(), previous.end(),
                           [&](const Netdev& n) { return n.device != nullptr && n.name == name; });
    if (it != previous.end()) {
      netdevs_.push_back(std::move(*it));
    } else if (std::optional<Netdev> netdev = OpenNetdev(name, emitter)) {
      netdevs_.push_back(std::move(*netdev));
    }
  }
}

absl::Status EthtoolCollector::Collect(Emitter& emitter) {
  const absl::Time now = clock_.Now();
  if (now >= next_rescan_) {
    Discover(emitter);
    next_rescan_ = now + options_.rescan_interval;
  }
  const int64_t t = absl::ToUnixNanos(now);
  size_t failed = 0;
  absl::Status first_error;
  for (Netdev& netdev : netdevs_) {
    if (netdev.device == nullptr) continue;  // failed earlier; the next rescan decides
    absl::StatusOr<std::span<const uint64_t>> values = netdev.device->Read();
    if (absl::IsFailedPrecondition(values.status())) {
      // Its statistics changed shape: map the new names now so this cycle has no gap.
      spdlog::info("ethtool: {}, mapping it again", values.status().message());
      if (std::optional<Netdev> reopened = OpenNetdev(netdev.name, emitter)) {
        netdev = std::move(*reopened);
        values = netdev.device->Read();
      }
    }
    if (!values.ok()) {
      // Opened afresh by the rescan this triggers, if it is still there.
      netdev.device.reset();
      next_rescan_ = absl::InfinitePast();
      // Gone, or changing under us, is not a failure of the collector.
      const bool benign =
          absl::IsNotFound(values.status()) || absl::IsFailedPrecondition(values.status());
      if (!benign && failed++ == 0) first_error = values.status();
      continue;
    }
    for (const MappedStat& stat : netdev.stats) {
      emitter.Counter(stat.series_id, (*values)[stat.index], t);
    }
  }
  if (failed > 0) {
    next_rescan_ = absl::InfinitePast();
    return absl::UnavailableError(
        absl::StrCat(failed, " netdevs failed, first: ", first_error.message()));
  }
  return absl::OkStatus();
}

}  // namespace railwatch
