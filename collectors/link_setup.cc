#include "collectors/link_setup.h"

#include <filesystem>
#include <utility>

#include "collectors/ethtool_collector.h"
#include "collectors/ethtool_dir_backend.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/link_collector.h"
#include "collectors/link_netdevs.h"
#include "collectors/netlink_link_monitor.h"
#include "common/logging.h"

namespace railwatch {

absl::Status AddNetdevCollectors(const NetdevCollectorsOptions& options, const Clock& clock,
                                 std::vector<std::unique_ptr<Collector>>& collectors) {
  absl::StatusOr<NetdevSelector> selector =
      NetdevSelector::Create({options.sysfs_root, options.netdevs});
  if (!selector.ok()) return selector.status();

  if (options.ethtool) {
    absl::StatusOr<std::unique_ptr<EthtoolBackend>> backend;
    if (!options.ethtool_dumps.empty()) {
      if (!std::filesystem::is_directory(options.ethtool_dumps)) {
        spdlog::warn("--ethtool_dumps={}: no such directory (yet); its netdevs count as absent",
                     options.ethtool_dumps);
      }
      backend = std::make_unique<DirEthtoolBackend>(options.ethtool_dumps);
    } else {
      backend = IoctlEthtoolBackend::Create();
    }
    if (backend.ok()) {
      collectors.push_back(
          std::make_unique<EthtoolCollector>(EthtoolCollector::Options{options.rescan_interval},
                                             *selector, std::move(*backend), clock));
    } else {
      spdlog::warn("ethtool statistics off: {}", backend.status().message());
    }
  }

  std::unique_ptr<NetlinkLinkMonitor> monitor;
  if (options.link_events) {
    NetlinkLinkMonitor::Options monitor_options;
    monitor_options.selected = [s = *selector](const std::string& name) {
      return s.Selected(name);
    };
    absl::StatusOr<std::unique_ptr<NetlinkLinkMonitor>> started =
        NetlinkLinkMonitor::Start(std::move(monitor_options));
    if (started.ok()) {
      monitor = std::move(*started);
    } else {
      spdlog::warn("link events off: {}", started.status().message());
    }
  }
  collectors.push_back(
      std::make_unique<LinkCollector>(LinkCollector::Options{options.rescan_interval, options.detail_interval},
                                      std::move(*selector), std::move(monitor), clock));
  return absl::OkStatus();
}

}  // namespace railwatch
