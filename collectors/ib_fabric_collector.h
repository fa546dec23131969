#pragma once

// The InfiniBand fabric scanner's collector (railwatch-agent --role=ib-fabric,
// docs/INFINIBAND.md): each cycle it asks its source for a scan of the subnet and turns every
// switch port's PMA counters into the canonical fabric_rdma_* series the host agents use for
// HCA ports, labelled {switch, guid, interface} instead of {host, device, port} (a switch port is
// `interface` everywhere, the fabric map included; on InfiniBand its value is the port number), so that one query
// or playbook condition reads both ends of a cable.
//
// Counters keep the PMA's meaning: PortXmitData/PortRcvData count 4-octet words (scaled to
// bytes here); a 4- to 32-bit counter that reaches all ones stops counting, which
// fabric_rdma_counter_saturated{switch,guid,interface,counter} says (1 while it sits there) and the
// rate functions must not take for a count; a counter that goes down was cleared (by the
// subnet manager's PerfMgr or `perfquery -R`) and the store takes it as a reset.
//
// The subnet's cabling, as the topology in the scan says it, goes out as
// fabric_ib_link_info{switch, guid, interface, neighbor_system, neighbor_port, neighbor_guid, width,
// speed}, one per switch port with a link: the fabric map's InfiniBand facts (docs/TOPOLOGY.md).
// An HCA neighbour is named by its host (the first word of its node description, "luna-0196
// mlx5_0") and its port GUID, which the host agent reports for the HCA's port
// (fabric_rdma_port_info's port_guid); a switch neighbour by its name and port number.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/ib_fabric_source.h"

namespace railwatch {
namespace ib_fabric_internal {
class NodeIndex;
}  // namespace ib_fabric_internal

// The canonical series a PMA counter (as perfquery and ibqueryerrors name it) feeds, and its
// scale to the series' unit; nullptr for a counter with no canonical series.
struct PmaCounterMapping {
  std::string_view pma_name;
  std::string_view series;
  uint64_t scale = 1;
};
const PmaCounterMapping* FindPmaCounterMapping(std::string_view pma_name);

// The name operators use for a switch from its node description: NVIDIA's
// "MF0;<hostname>:<model>/<unit>" gives the hostname; any other description, trimmed, as it is;
// an empty one gives "".
std::string IbSwitchName(std::string_view node_description);

// The host an HCA's node description names: its first word ("luna-0196 mlx5_0", NVIDIA's
// "<hostname> <device>" convention; older "o0001 HCA-1").
std::string IbHostOfDescription(std::string_view node_description);

class IbFabricCollector final : public Collector {
 public:
  struct Options {
    // Labels of the collector's own railwatch_ib_* series (agent=<id>).
    Labels self_labels;
  };
  IbFabricCollector(Options options, std::unique_ptr<IbFabricSource> source);

  std::string_view name() const override { return "ib_fabric"; }
  absl::Status Collect(Emitter& emitter) override;

 private:
  // The cabling (fabric_ib_link_info) and each switch port's rate from its link's width and
  // speed (fabric_rdma_port_rate_bytes_per_second), every scan.
  void EmitLinks(const IbFabricScan& scan, const ib_fabric_internal::NodeIndex& nodes,
                 Emitter& emitter, int64_t now);
  // Each switch port's module (ibdiagnet2.cables): fabric_ib_cable_{info, temperature_celsius,
  // temperature_alarm_high_celsius, alarm_flags, rx_power_dbm}, and each switch's temperature
  // (db_csv's TEMP_SENSING: fabric_ib_node_temperature_celsius), every scan.
  void EmitCables(const IbFabricScan& scan, const ib_fabric_internal::NodeIndex& nodes,
                  Emitter& emitter, int64_t now);
  // A gauge, defined the first time its name and labels are seen.
  void EmitGauge(Emitter& emitter, std::string_view name, Labels labels, double value,
                 int64_t now);
  struct Series {
    uint32_t id = 0;
    int64_t last_time = 0;
  };
  struct Saturation {
    int32_t id = -1;  // defined the first time the counter saturates
  };
  Options options_;
  std::unique_ptr<IbFabricSource> source_;
  std::map<std::string, Series> series_;        // "name\0labels..."
  std::map<std::string, Saturation> saturated_;  // "switch\0guid\0port\0counter"
  std::map<std::string, uint32_t> links_;  // link info series by their labels
  std::map<std::string, uint32_t> rates_;  // port rate series by "guid\0port"
  std::map<std::string, uint32_t> gauges_;  // EmitGauge's series by name and labels
  std::set<std::string> unplaced_logged_;  // LIDs and GUIDs said to be unplaced once
  bool self_defined_ = false;
  uint32_t self_inputs_ = 0, self_unrecognised_ = 0, self_problems_ = 0, self_unplaced_ = 0,
           self_switch_ports_ = 0;
  uint64_t problems_total_ = 0, unplaced_total_ = 0;
};

}  // namespace railwatch
