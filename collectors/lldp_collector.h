#pragma once

// The host agent's view of its cabling: which switch port each of its interfaces is plugged
// into, as lldpd hears it (collectors/lldp_neighbors.h). The daemon joins it with the NICs'
// identity (fabric_rdma_port_info's netdev) to build the fabric map (docs/TOPOLOGY.md).
//
// Every `refresh` the collector asks its source for lldpd's neighbours; every cycle it emits
// fabric_lldp_neighbor_info{interface, neighbor_system, neighbor_port, neighbor_chassis_id,
// neighbor_mgmt_address} = 1 for each neighbour it knows. A neighbour that changes (a cable
// moved, a switch replaced) defines a new series, and the old one, no longer emitted, goes
// stale; an lldp.neighbor_changed event says what it was and what it is. A neighbour that goes
// away gives lldp.neighbor_lost. No lldpd (lldpcli missing, its socket refused): the collector
// says so once, emits nothing, and asks again at the next refresh; the NICs' identity comes
// from the RDMA collector all the same.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/lldp_neighbors.h"
#include "common/clock.h"

namespace railwatch {

// Where lldpd's neighbour list comes from.
class LldpSource {
 public:
  virtual ~LldpSource() = default;
  // The output of `lldpcli -f json0 show neighbors` (or a file in any format
  // ParseLldpNeighbors reads); an error when there is none to be had.
  virtual absl::StatusOr<std::string> Read() = 0;
  // For problems: "lldpcli", or the file's path.
  virtual std::string name() const = 0;
};

// Runs `<program> -f json0 show neighbors` (Debian's lldpd package), at most `timeout`.
std::unique_ptr<LldpSource> LldpcliSource(std::string program = "lldpcli",
                                          absl::Duration timeout = absl::Seconds(5));
// Reads a file lldpd's output was written to (the simulator's hosts, a capture).
std::unique_ptr<LldpSource> LldpFileSource(std::string path);

// --lldp_source: "auto" (the default: lldpcli on a real host, that is when the agent reads the
// machine's own /sys, else off: a simulated or fixture tree is not this machine's cabling),
// "lldpcli", "lldpcli:PROGRAM", "file:PATH", or "off" (null).
absl::StatusOr<std::unique_ptr<LldpSource>> LldpSourceFromFlag(std::string_view flag,
                                                               bool real_host = true);

class LldpCollector final : public Collector {
 public:
  struct Options {
    absl::Duration refresh = absl::Seconds(30);  // lldpd's own transmit interval
  };
  struct Stats {
    uint64_t reads = 0;
    uint64_t read_errors = 0;     // the source failed (no lldpd)
    uint64_t parse_problems = 0;  // problems in what it gave
    size_t neighbors = 0;
  };

  LldpCollector(Options options, std::unique_ptr<LldpSource> source, const Clock& clock);

  std::string_view name() const override { return "lldp"; }
  absl::Status Collect(Emitter& emitter) override;
  const Stats& stats() const { return stats_; }

 private:
  struct Known {
    LldpNeighbor neighbor;
    uint32_t series = 0;
  };
  void Refresh(Emitter& emitter, int64_t now);

  const Options options_;
  std::unique_ptr<LldpSource> source_;
  const Clock& clock_;
  int64_t next_refresh_ = 0;
  bool unavailable_logged_ = false;
  std::map<std::string, Known> by_interface_;  // the neighbours known now
  Stats stats_;
};

}  // namespace railwatch
