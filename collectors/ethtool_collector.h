#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/ethtool_backend.h"
#include "collectors/ethtool_mapping.h"
#include "collectors/link_netdevs.h"
#include "common/clock.h"

namespace railwatch {

// ethtool statistics of the selected netdevs, named in the canonical vocabulary (the
// `ethtool` sources in common/vocabulary.cc: PFC pause frames and durations per priority,
// pause storm events, discards, per-priority traffic ...).
//
// At discovery each netdev is opened once (driver and statistic names) and its names are
// resolved to series ids; a cycle is then one EthtoolDevice::Read() per netdev and a copy of
// the mapped values, with no string work and no allocation. Only statistics the table maps
// are emitted; a netdev whose driver has none is not read at all. A netdev is discovered again
// when its statistics count changes (new channels, PFC turned on), when it disappears, and
// every `rescan_interval` (to find new netdevs).
class EthtoolCollector final : public Collector {
 public:
  struct Options {
    absl::Duration rescan_interval = absl::Seconds(30);
  };

  // `mapping` must outlive the collector (EthtoolMapping::Canonical() does).
  EthtoolCollector(Options options, NetdevSelector selector,
                   std::unique_ptr<EthtoolBackend> backend, const Clock& clock,
                   const EthtoolMapping& mapping = EthtoolMapping::Canonical());

  std::string_view name() const override { return "ethtool"; }
  absl::Status Collect(Emitter& emitter) override;

  // Netdevs read each cycle, and the statistics read from them (for tests and logs).
  size_t netdevs() const { return netdevs_.size(); }
  size_t mapped_stats() const;

 private:
  struct MappedStat {
    size_t index;
    uint32_t series_id;
  };
  struct Netdev {
    std::string name;
    std::unique_ptr<EthtoolDevice> device;
    std::vector<MappedStat> stats;
  };

  void Discover(Emitter& emitter);
  // nullopt when the netdev has nothing to collect.
  std::optional<Netdev> OpenNetdev(const std::string& name, Emitter& emitter);

  Options options_;
  NetdevSelector selector_;
  std::unique_ptr<EthtoolBackend> backend_;
  const Clock& clock_;
  const EthtoolMapping& mapping_;
  std::vector<Netdev> netdevs_;
  absl::Time next_rescan_ = absl::InfinitePast();
};

}  // namespace railwatch
