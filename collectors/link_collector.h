#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/link_netdevs.h"
#include "collectors/netlink_link_monitor.h"
#include "collectors/pread_file.h"
#include "common/clock.h"

namespace railwatch {

// Link state of the selected netdevs: the carrier counters in <root>/class/net/<if>/
// (carrier_changes, carrier_up_count, carrier_down_count; the `netdev_sysfs` sources of the
// vocabulary), opened at discovery and read with pread each cycle, and, when a
// NetlinkLinkMonitor is given, its carrier events plus railwatch_netlink_overruns_total and
// railwatch_link_events_dropped_total.
//
// Netdevs are discovered again every `rescan_interval` and after a failed read.
class LinkCollector final : public Collector {
 public:
  struct Options {
    absl::Duration rescan_interval = absl::Seconds(30);
    // How often the detail counters (the vocabulary's `detail`: carrier changes and ups; the
    // playbooks read carrier downs) are read; zero: every cycle (docs/COLLECTORS.md, "Cadence").
    absl::Duration detail_interval = absl::ZeroDuration();
  };

  // `monitor` may be null: counters only.
  LinkCollector(Options options, NetdevSelector selector,
                std::unique_ptr<NetlinkLinkMonitor> monitor, const Clock& clock);

  std::string_view name() const override { return "link"; }
  absl::Status Collect(Emitter& emitter) override;

  size_t open_counters() const { return counters_.size(); }
  NetlinkLinkMonitor* monitor() const { return monitor_.get(); }

 private:
  struct OpenCounter {
    PreadFile file;
    uint32_t series_id;
    bool detail;
  };

  void Discover(Emitter& emitter);

  Options options_;
  NetdevSelector selector_;
  std::unique_ptr<NetlinkLinkMonitor> monitor_;
  const Clock& clock_;
  std::vector<OpenCounter> counters_;
  absl::Time next_rescan_ = absl::InfinitePast();
  absl::Time next_detail_ = absl::InfinitePast();
  // Reused every cycle so that a cycle without events allocates nothing.
  std::vector<EventRecord> events_;
  bool self_series_defined_ = false;
  uint32_t overruns_id_ = 0;
  uint32_t dropped_id_ = 0;
};

}  // namespace railwatch
