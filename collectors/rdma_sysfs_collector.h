#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/pread_file.h"
#include "common/clock.h"

namespace railwatch {

// RDMA port counters from <sysfs_root>/class/infiniband/<dev>/ports/<port>/{counters,
// counters_ext,hw_counters}, named in the canonical vocabulary (common/vocabulary.cc).
//
// Files are opened when the device is discovered and read with pread every cycle. A counter
// whose file is missing or reads "N/A (no PMA)" is absent: no series is defined for it.
// Devices are discovered again every `rescan_interval` and whenever a read fails, so a NIC
// that appears or goes away is followed without a restart.
class RdmaSysfsCollector final : public Collector {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    absl::Duration rescan_interval = absl::Seconds(30);
  };

  RdmaSysfsCollector(Options options, const Clock& clock);

  std::string_view name() const override { return "rdma_sysfs"; }
  absl::Status Collect(Emitter& emitter) override;

  // For tests and logs: how many counter files are open.
  size_t open_counters() const { return counters_.size(); }
  size_t ports() const { return ports_found_; }

 private:
  struct OpenCounter {
    PreadFile file;
    uint32_t series_id;
    uint32_t scale;
  };

  absl::Status Discover(Emitter& emitter);

  Options options_;
  const Clock& clock_;
  std::vector<OpenCounter> counters_;
  size_t ports_found_ = 0;
  absl::Time next_rescan_ = absl::InfinitePast();
};

}  // namespace railwatch
