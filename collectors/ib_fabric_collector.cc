#include "collectors/ib_fabric_collector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {
namespace ib_fabric_internal {

// What the scan says a node is, found by GUID or LID.
struct NodeRef {
  ib::IbNodeType type = ib::IbNodeType::kUnknown;
  std::string guid;  // canonical 0x + 16 hex digits
  std::string description;
};

class NodeIndex {
 public:
  explicit NodeIndex(const IbFabricScan& scan) {
    for (const ib::IbNode& n : scan.nodes) {
      const std::string guid = ib::GuidString(n.guid);
      if (guid.empty()) continue;
      NodeRef ref{n.type, guid, n.description};
      by_guid_[guid] = ref;
      if (n.lid && n.type == ib::IbNodeType::kSwitch) by_lid_[*n.lid] = ref;
    }
    // Port lines know more: a CA's port GUID and LID, and the nodes of a -p report.
    for (const ib::IbLink& l : scan.links) {
      Learn(l.local);
      if (l.peer) Learn(*l.peer);
    }
  }

  const NodeRef* ByGuid(const ib::IbGuid& g) const {
    if (!g.valid()) return nullptr;
    auto it = by_guid_.find(ib::GuidString(g));
    return it != by_guid_.end() ? &it->second : nullptr;
  }

  const NodeRef* Find(const ib::IbPortCounters& c) const {
    for (const ib::IbGuid* g : {&c.node_guid, &c.guid}) {
      if (const NodeRef* n = ByGuid(*g)) return n;
    }
    if (c.lid) {
      if (auto it = by_lid_.find(*c.lid); it != by_lid_.end()) return &it->second;
    }
    return nullptr;
  }

 private:
  void Learn(const ib::IbLinkEnd& end) {
    // A -p report names a CA by its port's GUID only.
    std::string node = ib::GuidString(end.node_guid);
    if (node.empty()) node = ib::GuidString(end.port_guid);
    if (node.empty()) return;
    auto [it, inserted] = by_guid_.try_emplace(node, NodeRef{end.type, node, end.description});
    if (!inserted && it->second.type == ib::IbNodeType::kUnknown) it->second.type = end.type;
    if (const std::string port = ib::GuidString(end.port_guid); !port.empty()) {
      by_guid_.try_emplace(port, it->second);
    }
    if (end.lid && !ib::IsUnassignedLid(*end.lid)) by_lid_.try_emplace(*end.lid, it->second);
  }

  std::map<std::string, NodeRef> by_guid_;
  std::map<uint32_t, NodeRef> by_lid_;
};

}  // namespace ib_fabric_internal

namespace {

using ib_fabric_internal::NodeIndex;
using ib_fabric_internal::NodeRef;

// PMA counter names (IBA vol. 1 ch. 16.1.3, as perfquery and ibqueryerrors print them) onto
// the series of common/vocabulary.cc that HCA ports feed from sysfs.
constexpr PmaCounterMapping kPmaCounters[] = {
    {"PortXmitData", "fabric_rdma_port_transmit_bytes_total", 4},
    {"PortRcvData", "fabric_rdma_port_receive_bytes_total", 4},
    {"PortXmitPkts", "fabric_rdma_port_transmit_packets_total"},
    {"PortRcvPkts", "fabric_rdma_port_receive_packets_total"},
    {"PortUnicastXmitPkts", "fabric_rdma_port_unicast_transmit_packets_total"},
    {"PortUnicastRcvPkts", "fabric_rdma_port_unicast_receive_packets_total"},
    {"PortMulticastXmitPkts", "fabric_rdma_port_multicast_transmit_packets_total"},
    {"PortMulticastRcvPkts", "fabric_rdma_port_multicast_receive_packets_total"},
    {"SymbolErrorCounter", "fabric_rdma_symbol_errors_total"},
    {"LinkErrorRecoveryCounter", "fabric_rdma_link_error_recovery_total"},
    {"LinkDownedCounter", "fabric_rdma_link_downed_total"},
    {"PortRcvErrors", "fabric_rdma_port_receive_errors_total"},
    {"PortRcvRemotePhysicalErrors", "fabric_rdma_port_receive_remote_physical_errors_total"},
    {"PortRcvSwitchRelayErrors", "fabric_rdma_port_receive_switch_relay_errors_total"},
    {"PortXmitDiscards", "fabric_rdma_port_transmit_discards_total"},
    {"PortXmitConstraintErrors", "fabric_rdma_port_transmit_constraint_errors_total"},
    {"PortRcvConstraintErrors", "fabric_rdma_port_receive_constraint_errors_total"},
    {"LocalLinkIntegrityErrors", "fabric_rdma_local_link_integrity_errors_total"},
    {"ExcessiveBufferOverrunErrors", "fabric_rdma_excessive_buffer_overrun_errors_total"},
    {"VL15Dropped", "fabric_rdma_vl15_dropped_total"},
    {"PortXmitWait", "fabric_rdma_port_transmit_wait_total"},
};

std::string Join(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (std::string_view p : parts) {
    key.append(p);
    key.push_back('\0');
  }
  return key;
}

// The value to send for one series this scan: the newest reading, and between two of the
// same time the wider counter (PortCountersExtended over PortCounters).
struct Reading {
  const PmaCounterMapping* mapping = nullptr;
  Labels labels;
  std::string counter;
  ib::IbCounter value;
  int64_t time = 0;
};

}  // namespace

const PmaCounterMapping* FindPmaCounterMapping(std::string_view pma_name) {
  for (const PmaCounterMapping& m : kPmaCounters) {
    if (m.pma_name == pma_name) return &m;
  }
  return nullptr;
}

std::string IbSwitchName(std::string_view description) {
  std::string_view d = description;
  while (!d.empty() && absl::ascii_isspace(static_cast<unsigned char>(d.front()))) d.remove_prefix(1);
  while (!d.empty() && absl::ascii_isspace(static_cast<unsigned char>(d.back()))) d.remove_suffix(1);
  // "MF0;ib-switch-sequoia:MQM9700/U1", "MF0;sat11-0101-0901-01ib1-A:MCS8500/L20/U2"
  if (const size_t semi = d.find(';'); d.starts_with("MF0;") && semi != std::string_view::npos) {
    std::string_view rest = d.substr(semi + 1);
    if (const size_t colon = rest.find(':'); colon != std::string_view::npos && colon > 0) {
      return std::string(rest.substr(0, colon));
    }
  }
  return std::string(d);
}

std::string IbHostOfDescription(std::string_view description) {
  size_t begin = 0;
  while (begin < description.size() && description[begin] == ' ') ++begin;
  size_t end = begin;
  while (end < description.size() && description[end] != ' ') ++end;
  return std::string(description.substr(begin, end - begin));
}

void IbFabricCollector::EmitLinks(const IbFabricScan& scan, const NodeIndex& nodes,
                                  Emitter& emitter, int64_t now) {
  struct Port {
    Labels info;        // fabric_ib_link_info's labels
    double rate = 0;    // bytes/s; 0 when the width or speed is unknown
  };
  std::map<std::string, Port> links;  // one per switch port, whichever file said it last
  auto add = [&](const ib::IbLinkEnd& here, const ib::IbLinkEnd& there, const ib::IbLinkSpeed& speed) {
    const std::string guid = ib::GuidString(here.node_guid);
    if (here.type != ib::IbNodeType::kSwitch || guid.empty()) return;
    std::string name = IbSwitchName(here.description);
    if (name.empty()) {
      // A switch-block port line describes the peer; the switch's own description is its node's.
      if (const NodeRef* n = nodes.ByGuid(here.node_guid)) name = IbSwitchName(n->description);
    }
    if (name.empty()) name = guid;
    std::string peer_guid = ib::GuidString(there.node_guid);
    std::string peer_system, peer_port;
    ib::IbNodeType peer_type = there.type;
    if (peer_type == ib::IbNodeType::kUnknown) {  // iblinkinfo does not say; the topology may
      if (const NodeRef* n = nodes.ByGuid(there.node_guid)) peer_type = n->type;
    }
    if (peer_type == ib::IbNodeType::kSwitch) {
      std::string peer_description = there.description;
      if (const NodeRef* n = nodes.ByGuid(there.node_guid); n != nullptr && !n->description.empty()) {
        peer_description = n->description;
      }
      peer_system = IbSwitchName(peer_description);
      if (peer_system.empty()) peer_system = peer_guid;
      peer_port = std::to_string(there.port);
    } else {
      peer_system = IbHostOfDescription(there.description);
      peer_port = ib::GuidString(there.port_guid);
      if (peer_guid.empty()) peer_guid = peer_port;  // a -p report gives the port's GUID only
      if (peer_port.empty()) peer_port = std::to_string(there.port);
    }
    Labels labels = {{"guid", guid},
                     {"interface", std::to_string(here.port)},
                     {"neighbor_guid", peer_guid},
                     {"neighbor_port", peer_port},
                     {"neighbor_system", peer_system},
                     {"speed", speed.generation},
                     {"switch", name},
                     {"width", speed.width_lanes > 0 ? absl::StrCat(speed.width_lanes, "x") : ""}};
    links[Join({guid, std::to_string(here.port)})] =
        Port{std::move(labels), speed.known() ? speed.aggregate_gbps() * 1e9 / 8 : 0};
  };
  // From both ends: a file may hold only one side of a cable (the CA blocks of an excerpt).
  for (const ib::IbLink& l : scan.links) {
    if (!l.peer) continue;  // an unconnected port
    add(l.local, *l.peer, l.speed);
    add(*l.peer, l.local, l.speed);
  }
  for (auto& [key, port] : links) {
    const std::string series = FormatSeries("fabric_ib_link_info", port.info);
    auto [it, inserted] = links_.try_emplace(series);
    if (inserted) {
      it->second = emitter.DefineSeries("fabric_ib_link_info", MetricKind::kGauge, port.info);
    }
    emitter.Gauge(it->second, 1, now);
    if (port.rate <= 0) continue;
    // The port's rate as a host agent gives an HCA's (sysfs `rate`): what playbooks compare
    // (a link trained below its peers) and what bounds the port's counters in the store.
    Labels labels;
    for (const Label& l : port.info) {
      if (l.name == "guid" || l.name == "interface" || l.name == "switch") labels.push_back(l);
    }
    auto [r, defined] = rates_.try_emplace(key);
    if (defined) {
      r->second = emitter.DefineSeries("fabric_rdma_port_rate_bytes_per_second",
                                       MetricKind::kGauge, std::move(labels));
    }
    emitter.Gauge(r->second, port.rate, now);
  }
}

void IbFabricCollector::EmitGauge(Emitter& emitter, std::string_view name, Labels labels,
                                  double value, int64_t now) {
  std::sort(labels.begin(), labels.end(),
            [](const Label& a, const Label& b) { return a.name < b.name; });
  const std::string key = FormatSeries(name, labels);
  auto [it, inserted] = gauges_.try_emplace(key);
  if (inserted) it->second = emitter.DefineSeries(name, MetricKind::kGauge, std::move(labels));
  emitter.Gauge(it->second, value, now);
}

void IbFabricCollector::EmitCables(const IbFabricScan& scan, const NodeIndex& nodes,
                                   Emitter& emitter, int64_t now) {
  // Switches' own temperatures (TEMP_SENSING) come with them.
  for (const ib::IbdiagnetTemperature& t : scan.temperatures) {
    const NodeRef* node = nodes.ByGuid(t.node_guid);
    if (node == nullptr || node->type != ib::IbNodeType::kSwitch) continue;
    std::string name = IbSwitchName(node->description);
    if (name.empty()) name = node->guid;
    EmitGauge(emitter, "fabric_ib_node_temperature_celsius",
              {{"guid", node->guid}, {"switch", name}}, t.celsius, now);
  }
  for (const ib::IbCableRecord& cable : scan.cables) {
    // A switch port's module; an HCA's is its host's (the host agent's optics, issue 24).
    const NodeRef* node = nodes.ByGuid(cable.guid);
    if (node == nullptr || node->type != ib::IbNodeType::kSwitch || cable.port <= 0) continue;
    std::string name = IbSwitchName(node->description);
    if (name.empty()) name = node->guid;
    const Labels port = {{"guid", node->guid}, {"interface", std::to_string(cable.port)},
                         {"switch", name}};
    auto with = [&](std::initializer_list<Label> extra) {
      Labels labels = port;
      for (const Label& l : extra) {
        if (!l.value.empty()) labels.push_back(l);
      }
      return labels;
    };
    EmitGauge(emitter, "fabric_ib_cable_info",
              with({{"vendor", cable.vendor},
                    {"part_number", cable.pn},
                    {"serial_number", cable.sn},
                    {"type", cable.type},
                    {"length", cable.length}}),
              1, now);
    if (cable.temperature_c) {
      EmitGauge(emitter, "fabric_ib_cable_temperature_celsius", port, *cable.temperature_c, now);
    }
    if (cable.thresholds.alarm_temperature_high_c) {
      EmitGauge(emitter, "fabric_ib_cable_temperature_alarm_high_celsius", port,
                *cable.thresholds.alarm_temperature_high_c, now);
    }
    for (const auto& [flag, value] : ib::NamedFlags(cable.flags)) {
      if (!value) continue;
      EmitGauge(emitter, "fabric_ib_cable_alarm_flags", with({{"flags", std::string(flag)}}),
                static_cast<double>(*value), now);
    }
    for (const auto& [lane, reading] : cable.lanes) {
      if (!reading.rx_power_dbm) continue;
      EmitGauge(emitter, "fabric_ib_cable_rx_power_dbm", with({{"lane", std::to_string(lane)}}),
                *reading.rx_power_dbm, now);
    }
  }
}

IbFabricCollector::IbFabricCollector(Options options, std::unique_ptr<IbFabricSource> source)
    : options_(std::move(options)), source_(std::move(source)) {}

absl::Status IbFabricCollector::Collect(Emitter& emitter) {
  const int64_t now = absl::ToUnixNanos(absl::Now());
  if (!self_defined_) {
    auto define = [&](std::string_view name, MetricKind kind) {
      return emitter.DefineSeries(name, kind, options_.self_labels);
    };
    self_inputs_ = define("railwatch_ib_scan_inputs", MetricKind::kGauge);
    self_unrecognised_ = define("railwatch_ib_scan_unrecognised_inputs", MetricKind::kGauge);
    self_problems_ = define("railwatch_ib_scan_problems_total", MetricKind::kCounter);
    self_unplaced_ = define("railwatch_ib_scan_unplaced_records_total", MetricKind::kCounter);
    self_switch_ports_ = define("railwatch_ib_scan_switch_ports", MetricKind::kGauge);
    self_defined_ = true;
  }
  absl::StatusOr<IbFabricScan> scan = source_->Scan();
  if (!scan.ok()) return scan.status();

  // Problems are reported when an input is (re)read: each once.
  constexpr size_t kLogged = 20;
  for (size_t i = 0; i < scan->problems.size() && i < kLogged; ++i) {
    spdlog::warn("ib_fabric: {}", scan->problems[i].ToString());
  }
  if (scan->problems.size() > kLogged) {
    spdlog::warn("ib_fabric: ... and {} more problems", scan->problems.size() - kLogged);
  }
  problems_total_ += scan->problems.size();

  const NodeIndex nodes(*scan);
  std::map<std::string, Reading> readings;  // by series key
  std::map<std::string, bool> ports;        // switch ports with counters
  for (const IbFabricScan::Counters& record : scan->counters) {
    const ib::IbPortCounters& c = record.port;
    if (c.all_ports || !c.port) continue;  // an aggregate: its ports are read one by one
    const NodeRef* node = nodes.Find(c);
    if (node == nullptr) {
      // Counters of a LID or GUID no topology names: which switch they belong to is unknown.
      ++unplaced_total_;
      const std::string who = c.node_guid.valid() ? ib::GuidString(c.node_guid)
                              : c.guid.valid()    ? ib::GuidString(c.guid)
                              : c.lid             ? absl::StrCat("LID ", *c.lid)
                                                  : std::string("a port without LID or GUID");
      if (unplaced_logged_.insert(who).second) {
        spdlog::warn("ib_fabric: {} ({}) is in no topology the scanner has read: its counters "
                     "are not reported until an ibnetdiscover output names it",
                     who, c.where);
      }
      continue;
    }
    if (node->type != ib::IbNodeType::kSwitch) continue;  // HCAs: their host agents report them
    std::string name = IbSwitchName(node->description);
    if (name.empty()) name = node->guid;
    const std::string port = std::to_string(*c.port);
    ports[Join({node->guid, port})] = true;
    for (const auto& [counter, value] : c.counters) {
      const PmaCounterMapping* m = FindPmaCounterMapping(counter);
      if (m == nullptr) continue;
      Reading r{m, {{"guid", node->guid}, {"interface", port}, {"switch", name}}, counter, value,
                record.time_unix_nano};
      const std::string key = Join({m->series, node->guid, port});
      auto [it, inserted] = readings.try_emplace(key, r);
      if (!inserted && (r.time > it->second.time ||
                        (r.time == it->second.time && ib::MoreOfTheCount(r.value, it->second.value)))) {
        it->second = std::move(r);
      }
    }
  }

  for (auto& [key, r] : readings) {
    auto [it, inserted] = series_.try_emplace(key);
    if (inserted) {
      it->second.id = emitter.DefineSeries(r.mapping->series, MetricKind::kCounter, r.labels);
    }
    // An input read before (a file that has not changed) brings nothing new.
    if (r.time <= it->second.last_time) continue;
    emitter.Counter(it->second.id, r.value.value * r.mapping->scale, r.time);
    it->second.last_time = r.time;
    // Saturation: defined the first time a counter sits at all ones, then 1 or 0 each reading.
    const std::string skey = Join({key, r.counter});
    auto s = saturated_.find(skey);
    if (r.value.saturated && s == saturated_.end()) {
      const std::string& guid = r.labels[0].value;
      const std::string& port = r.labels[1].value;
      const std::string& sw = r.labels[2].value;
      spdlog::warn("ib_fabric: {} of switch {} ({}) port {} is saturated at {}: it no longer "
                   "counts until cleared",
                   r.counter, sw, guid, port, r.value.value);
      Labels labels = r.labels;
      labels.insert(labels.begin(), {"counter", r.counter});
      const uint32_t id = emitter.DefineSeries("fabric_rdma_counter_saturated",
                                               MetricKind::kGauge, std::move(labels));
      s = saturated_.emplace(skey, Saturation{static_cast<int32_t>(id)}).first;
    }
    if (s != saturated_.end()) {
      emitter.Gauge(static_cast<uint32_t>(s->second.id), r.value.saturated ? 1 : 0, r.time);
    }
  }

  EmitLinks(*scan, nodes, emitter, now);
  EmitCables(*scan, nodes, emitter, now);
  emitter.Gauge(self_inputs_, scan->inputs_read, now);
  emitter.Gauge(self_unrecognised_, scan->inputs_unrecognised, now);
  emitter.Counter(self_problems_, problems_total_, now);
  emitter.Counter(self_unplaced_, unplaced_total_, now);
  emitter.Gauge(self_switch_ports_, static_cast<double>(ports.size()), now);
  return absl::OkStatus();
}

}  // namespace railwatch
