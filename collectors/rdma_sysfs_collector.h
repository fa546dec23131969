#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/pread_file.h"
#include "collectors/verbs_devices.h"
#include "common/clock.h"

namespace railwatch {

// RDMA NICs: every counter of every port, port state and rate, and what the device is.
//
// Reads <sysfs_root>/class/infiniband/<dev>/:
//   ports/<n>/{counters,counters_ext,hw_counters}/*  counters; the canonical table
//       (common/vocabulary.cc) names those it knows, per driver (mlx5, mlx4, bnxt_re, irdma,
//       efa, hfi1); every other file becomes fabric_rdma_driver_stat_total{counter=...}
//   hw_counters/*                                  device-wide driver counters
//   ports/<n>/{state,phys_state,rate,link_layer}   port attributes
//   fw_ver, board_id, hca_type, node_guid, device -> PCI function (address, driver, NUMA node,
//       net/*), ports/<n>/gid_attrs/ndevs/*      device info and the NIC -> netdev mapping
//
// Files are opened when the device is discovered and read with pread every cycle. A counter
// whose file is missing or reads "N/A (no PMA)" is absent: no series is defined for it. A
// narrow IB PMA counter that sits at its maximum is reported as saturated. Devices are
// discovered again every `rescan_interval` and whenever a read fails, so a NIC that appears
// or goes away is followed without a restart.
//
// Where the kernel has RDMA and the root is the real /sys, devices are enumerated and port
// state is queried through libibverbs; where ibv_get_device_list fails (ENOSYS: no RDMA in
// the kernel) the collector reads sysfs alone, quietly.
class RdmaSysfsCollector final : public Collector {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    absl::Duration rescan_interval = absl::Seconds(30);
    // Use libibverbs when sysfs_root is "/sys". Tests and the simulator use other roots, where
    // verbs (which always describes the real machine) would disagree with the tree.
    bool use_verbs = true;
    // Also collect counters that have no canonical name.
    bool driver_counters = true;
    // How often detail counters are read: the canonical series the vocabulary marks `detail`
    // (no shipped playbook or dashboard reads them) and the driver's own counters. Every other
    // counter, port state and rate are read every cycle. Zero: every cycle. The first cycle
    // after each discovery reads them all.
    absl::Duration detail_interval = absl::ZeroDuration();
  };

  RdmaSysfsCollector(Options options, const Clock& clock);
  ~RdmaSysfsCollector() override;

  std::string_view name() const override { return "rdma_sysfs"; }
  absl::Status Collect(Emitter& emitter) override;

  // For tests, logs and the benchmark.
  size_t open_counters() const { return counters_.size(); }
  size_t ports() const { return ports_.size(); }
  bool using_verbs() const { return !verbs_devices_.empty(); }

 private:
  struct OpenCounter {
    PreadFile file;
    uint32_t series_id;
    uint32_t scale;
    bool gauge;
    bool detail;  // read every detail_interval only
    // Raw value at which a PMA counter stops counting; 0 when it cannot saturate.
    uint64_t saturated_at;
    // fabric_rdma_counter_saturated, defined the first time the counter saturates.
    int64_t saturated_series = -1;
    Labels saturation_labels;
  };
  struct PortState {
    std::string device;
    int port = 0;
    const VerbsDevice* verbs = nullptr;  // owned by verbs_devices_
    std::unique_ptr<PreadFile> state_file, physical_state_file, rate_file;
    uint32_t state_id, physical_state_id, rate_id;
  };

  absl::Status Discover(Emitter& emitter);
  std::vector<std::string> DeviceNames();
  void DiscoverPort(Emitter& emitter, const std::string& device, const std::string& port_dir,
                    int port, const std::vector<std::string>& device_netdevs);
  void AddDriverCounters(Emitter& emitter, const std::string& dir, const Labels& labels);
  absl::Status ReadPort(Emitter& emitter, const PortState& port, int64_t t, bool read_detail);

  Options options_;
  const Clock& clock_;
  std::vector<OpenCounter> counters_;
  std::vector<PortState> ports_;
  std::vector<std::unique_ptr<VerbsDevice>> verbs_devices_;
  // fabric_rdma_device_info and fabric_rdma_port_info: 1 every cycle.
  std::vector<uint32_t> info_series_;
  bool verbs_unavailable_logged_ = false;
  absl::Time next_rescan_ = absl::InfinitePast();
  absl::Time next_detail_ = absl::InfinitePast();
};

}  // namespace railwatch
