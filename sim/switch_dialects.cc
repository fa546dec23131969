#include "sim/switch_dialects.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/labels.h"

namespace railwatch::sim {
namespace {

// One value a port has, in the simulator's terms; each dialect names it its own way.
enum class Field {
  kInOctets, kOutOctets, kInPkts, kOutPkts, kInUcast, kOutUcast, kInMcast, kOutMcast,
  kInBcast, kOutBcast, kInDiscards, kOutDiscards, kInErrors, kOutErrors, kInCrcErrors,
  kCarrierTransitions, kInMacPause, kOutMacPause, kInPfc, kOutPfc, kInPfcOn2Off,
  kQueuePkts, kQueueOctets, kQueueDropped, kQueueEcnMarked, kWdDetected, kWdRestored,
  kFecCorrected, kFecUncorrectable, kFecSymbolErrors, kFecCorrectedBits, kFecCodewords,
  // Module readings and the PHY's BER (doubles, sampled like the counters). Lanes are indexed
  // from 0; kOptThreshold's index is quantity x 4 + level (alarm_high, warning_high,
  // warning_low, alarm_low).
  kOptTemperature, kOptVoltage, kOptTxBias, kOptTxPower, kOptRxPower, kOptThreshold, kPreFecBer,
  // Strings
  kOperStatus, kOperStatusJsonIetf, kLldpSystemName, kLldpPortId, kLldpChassisId, kPortMac,
  kPortSpeed, kOptComponent, kOptFormFactor, kOptVendor, kOptPartNumber, kOptSerial, kOptPmd,
};

// A threshold of the module by Field::kOptThreshold's index; 0 where the module has none.
double ThresholdOf(const optics::ModuleReading& m, int index) {
  const optics::Thresholds& t = m.threshold(static_cast<optics::Quantity>(index / 4));
  const std::optional<double>* level[] = {&t.alarm_high, &t.warning_high, &t.warning_low,
                                          &t.alarm_low};
  return level[index % 4]->value_or(0);
}

// The module's form factor and media as openconfig-transport-types identities.
std::string OpenConfigFormFactor(std::string_view form_factor) {
  if (form_factor == "QSFP-DD") return "openconfig-transport-types:QSFP56_DD";
  if (form_factor == "QSFP+") return "openconfig-transport-types:QSFP_PLUS";
  return absl::StrCat("openconfig-transport-types:", AsAbsl(form_factor));
}
std::string OpenConfigPmd(std::string_view media) {
  std::string id = absl::StrCat("ETH_", AsAbsl(media));
  std::replace(id.begin(), id.end(), '-', '_');
  return absl::StrCat("openconfig-transport-types:", id);
}

// openconfig-if-ethernet's ETHERNET_SPEED identity for a speed in Gb/s.
std::string OpenConfigSpeed(double gbps) {
  if (gbps <= 0 || gbps != static_cast<double>(static_cast<int64_t>(gbps))) return "SPEED_UNKNOWN";
  return absl::StrCat("SPEED_", static_cast<int64_t>(gbps), "GB");
}

uint64_t Sum(const std::array<uint64_t, kPriorities>& a) {
  uint64_t s = 0;
  for (uint64_t v : a) s += v;
  return s;
}

uint64_t CounterOf(const PortCounters& c, Field f, int i) {
  switch (f) {
    case Field::kInOctets: return c.in_octets;
    case Field::kOutOctets: return c.out_octets;
    case Field::kInPkts: return c.in_ucast_pkts + c.in_multicast_pkts + c.in_broadcast_pkts;
    case Field::kOutPkts: return c.out_ucast_pkts + c.out_multicast_pkts + c.out_broadcast_pkts;
    case Field::kInUcast: return c.in_ucast_pkts;
    case Field::kOutUcast: return c.out_ucast_pkts;
    case Field::kInMcast: return c.in_multicast_pkts;
    case Field::kOutMcast: return c.out_multicast_pkts;
    case Field::kInBcast: return c.in_broadcast_pkts;
    case Field::kOutBcast: return c.out_broadcast_pkts;
    case Field::kInDiscards: return c.in_discards;
    case Field::kOutDiscards: return c.out_discards;
    case Field::kInErrors: return c.in_errors;
    case Field::kOutErrors: return c.out_errors;
    case Field::kInCrcErrors: return c.in_crc_errors;
    case Field::kCarrierTransitions: return c.carrier_transitions;
    // The MAC counts every pause frame it sees, PFC ones included (simulator's choice).
    case Field::kInMacPause: return Sum(c.in_pfc);
    case Field::kOutMacPause: return Sum(c.out_pfc);
    case Field::kInPfc: return c.in_pfc[i];
    case Field::kOutPfc: return c.out_pfc[i];
    case Field::kInPfcOn2Off: return c.in_pfc[i] / 2;
    case Field::kQueuePkts: return c.queue_pkts[i];
    case Field::kQueueOctets: return c.queue_octets[i];
    case Field::kQueueDropped: return c.queue_dropped[i];
    case Field::kQueueEcnMarked: return c.queue_ecn_marked[i];
    case Field::kWdDetected: return c.wd_detected[i];
    case Field::kWdRestored: return c.wd_restored[i];
    case Field::kFecCorrected: return c.fec_corrected;
    case Field::kFecUncorrectable: return c.fec_uncorrectable;
    case Field::kFecSymbolErrors: return c.fec_symbol_errors;
    case Field::kFecCorrectedBits: return c.fec_corrected_bits;
    case Field::kFecCodewords: return c.fec_codewords[i];
    default: return 0;
  }
}

void FillValue(const SwitchPort& p, Field f, int i, ::gnmi::TypedValue& v) {
  switch (f) {
    case Field::kOperStatus: v.set_string_val(p.up ? "UP" : "DOWN"); return;
    case Field::kOperStatusJsonIetf:
      v.set_json_ietf_val(absl::StrCat("{\"openconfig-interfaces:oper-status\":\"",
                                       p.up ? "UP" : "DOWN", "\"}"));
      return;
    case Field::kLldpSystemName: v.set_string_val(p.lldp_system_name); return;
    case Field::kLldpPortId: v.set_string_val(p.lldp_port_id); return;
    case Field::kLldpChassisId: v.set_string_val(p.lldp_chassis_id); return;
    case Field::kPortMac: v.set_string_val(p.mac); return;
    // An identityref: JSON_IETF names its module.
    case Field::kPortSpeed:
      v.set_string_val(absl::StrCat("openconfig-if-ethernet:", OpenConfigSpeed(p.speed_gbps)));
      return;
    case Field::kOptTemperature: v.set_double_val(p.optics.temperature_c); return;
    case Field::kOptVoltage: v.set_double_val(p.optics.supply_voltage_v); return;
    case Field::kOptTxBias: v.set_double_val(p.optics.tx_bias_ma[i]); return;
    case Field::kOptTxPower: v.set_double_val(p.optics.tx_power_dbm[i]); return;
    case Field::kOptRxPower: v.set_double_val(p.optics.rx_power_dbm[i]); return;
    case Field::kOptThreshold: v.set_double_val(ThresholdOf(p.optics.module.module, i)); return;
    case Field::kPreFecBer: v.set_double_val(p.optics.pre_fec_ber); return;
    case Field::kOptComponent: v.set_string_val(p.optics.component); return;
    case Field::kOptFormFactor:
      v.set_string_val(OpenConfigFormFactor(p.optics.module.module.form_factor));
      return;
    case Field::kOptVendor: v.set_string_val(p.optics.module.module.vendor); return;
    case Field::kOptPartNumber: v.set_string_val(p.optics.module.module.part_number); return;
    case Field::kOptSerial: v.set_string_val(p.optics.module.module.serial); return;
    case Field::kOptPmd: v.set_string_val(OpenConfigPmd(p.optics.module.module.media)); return;
    default: v.set_uint_val(CounterOf(p.c, f, i)); return;
  }
}

std::string_view StripModule(std::string_view name) {
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool ElemMatches(const ::gnmi::PathElem& pattern, const ::gnmi::PathElem& leaf) {
  if (pattern.name() != "*" && StripModule(pattern.name()) != StripModule(leaf.name())) {
    return false;
  }
  for (const auto& [key, value] : pattern.key()) {
    auto it = leaf.key().find(key);
    if (it == leaf.key().end()) return false;
    if (value != "*" && it->second != value) return false;
  }
  return true;
}

// Pattern elements against a leaf's: a shorter pattern selects the subtree under it.
template <typename Pattern, typename LeafElems>
bool PathMatches(const Pattern& pattern, size_t pi, const LeafElems& leaf, size_t li) {
  if (pi == static_cast<size_t>(pattern.size())) return true;
  if (pattern[pi].name() == "...") {
    for (size_t skip = li; skip <= static_cast<size_t>(leaf.size()); ++skip) {
      if (PathMatches(pattern, pi + 1, leaf, skip)) return true;
    }
    return false;
  }
  if (li == static_cast<size_t>(leaf.size()) || !ElemMatches(pattern[pi], leaf[li])) return false;
  return PathMatches(pattern, pi + 1, leaf, li + 1);
}

// ---- OpenConfig-shaped dialects: a table of leaves, each a full path and where its value is.

struct Leaf {
  ::gnmi::Path path;
  int port = 0;
  Field field = Field::kInOctets;
  int index = 0;
};

class LeafTable {
 public:
  explicit LeafTable(std::vector<Leaf>& out) : out_(out) {}
  // Starts a path: name, or name[key=value].
  LeafTable& Root() {
    base_.Clear();
    return *this;
  }
  LeafTable& Elem(std::string_view name, std::string_view key = {}, std::string_view value = {}) {
    ::gnmi::PathElem* e = base_.add_elem();
    e->set_name(std::string(name));
    if (!key.empty()) (*e->mutable_key())[std::string(key)] = std::string(value);
    return *this;
  }
  // A leaf under the current path.
  LeafTable& Add(std::string_view name, int port, Field f, int index = 0) {
    Leaf& l = out_.emplace_back();
    l.path = base_;
    l.path.add_elem()->set_name(std::string(name));
    l.port = port;
    l.field = f;
    l.index = index;
    return *this;
  }
  ::gnmi::Path Save() const { return base_; }
  void Restore(const ::gnmi::Path& p) { base_ = p; }

 private:
  std::vector<Leaf>& out_;
  ::gnmi::Path base_;
};

// The quantities of openconfig-platform-transceiver's thresholds, in optics::Quantity order.
constexpr std::string_view kThresholdLeaves[] = {"module-temperature", "supply-voltage",
                                                 "laser-bias-current", "output-power",
                                                 "input-power"};

// The port's module as openconfig-platform-transceiver has it, under its transceiver
// component. EOS serves no thresholds (featureprofiles' transceiver_thresholds_unsupported);
// the simulated Cumulus writes the severity keys as identityrefs with their module.
void AddTransceiverLeaves(const SimSwitch& sw, int port, std::vector<Leaf>& out) {
  const Dialect d = sw.dialect;
  const std::string& component = sw.ports[port].optics.component;
  LeafTable t(out);
  auto root = [&]() -> LeafTable& {
    return t.Root().Elem("components").Elem("component", "name", component);
  };
  root().Elem("state");
  t.Add("part-no", port, Field::kOptPartNumber).Add("serial-no", port, Field::kOptSerial);
  t.Add("mfg-name", port, Field::kOptVendor);
  t.Elem("temperature").Add("instant", port, Field::kOptTemperature);
  root().Elem("transceiver").Elem("state");
  t.Add("form-factor", port, Field::kOptFormFactor).Add("vendor", port, Field::kOptVendor);
  t.Add("ethernet-pmd", port, Field::kOptPmd);
  t.Elem("supply-voltage").Add("instant", port, Field::kOptVoltage);
  for (int lane = 0; lane < NicOptics::kLanes; ++lane) {
    const std::string index = std::to_string(lane);
    root().Elem("transceiver").Elem("physical-channels").Elem("channel", "index", index)
        .Elem("state").Elem("input-power").Add("instant", port, Field::kOptRxPower, lane);
    root().Elem("transceiver").Elem("physical-channels").Elem("channel", "index", index)
        .Elem("state").Elem("output-power").Add("instant", port, Field::kOptTxPower, lane);
    root().Elem("transceiver").Elem("physical-channels").Elem("channel", "index", index)
        .Elem("state").Elem("laser-bias-current").Add("instant", port, Field::kOptTxBias, lane);
  }
  if (d == Dialect::kAristaEos) return;
  const std::string prefix = d == Dialect::kCumulus ? "openconfig-alarm-types:" : "";
  for (const bool critical : {true, false}) {
    root().Elem("transceiver").Elem("thresholds")
        .Elem("threshold", "severity", absl::StrCat(prefix, critical ? "CRITICAL" : "WARNING"))
        .Elem("state");
    for (int q = 0; q < optics::kQuantityCount; ++q) {
      const std::string_view leaf = kThresholdLeaves[q];
      t.Add(absl::StrCat(AsAbsl(leaf), "-upper"), port, Field::kOptThreshold,
            q * 4 + (critical ? 0 : 1));
      t.Add(absl::StrCat(AsAbsl(leaf), "-lower"), port, Field::kOptThreshold,
            q * 4 + (critical ? 3 : 2));
    }
  }
}

void AddInterfaceLeaves(const SimSwitch& sw, int port, std::vector<Leaf>& out) {
  const Dialect d = sw.dialect;
  const std::string& name = sw.ports[port].name;
  const bool module = sw.ports[port].optics.present;
  LeafTable t(out);
  t.Root().Elem("interfaces").Elem("interface", "name", name).Elem("state");
  t.Add("oper-status", port, Field::kOperStatus);
  // openconfig-platform-transceiver's reference from the interface to its module.
  if (module) t.Add("transceiver", port, Field::kOptComponent);
  const ::gnmi::Path state = t.Save();
  t.Elem("counters");
  t.Add("in-octets", port, Field::kInOctets).Add("out-octets", port, Field::kOutOctets);
  t.Add("in-pkts", port, Field::kInPkts).Add("out-pkts", port, Field::kOutPkts);
  t.Add("out-unicast-pkts", port, Field::kOutUcast);
  if (d != Dialect::kCumulus) t.Add("in-unicast-pkts", port, Field::kInUcast);
  t.Add("in-multicast-pkts", port, Field::kInMcast).Add("out-multicast-pkts", port, Field::kOutMcast);
  t.Add("in-broadcast-pkts", port, Field::kInBcast).Add("out-broadcast-pkts", port, Field::kOutBcast);
  t.Add("in-discards", port, Field::kInDiscards).Add("out-discards", port, Field::kOutDiscards);
  t.Add("in-errors", port, Field::kInErrors).Add("out-errors", port, Field::kOutErrors);
  // openconfig-interfaces keeps carrier-transitions in state/counters; Cumulus documents it
  // under ethernet/state/counters.
  if (d != Dialect::kCumulus) t.Add("carrier-transitions", port, Field::kCarrierTransitions);
  t.Restore(state);

  t.Root().Elem("interfaces").Elem("interface", "name", name).Elem("ethernet").Elem("state");
  // The port's own identity. The simulated Cumulus switch does not serve these two leaves, so
  // that every run with one exercises the switch agent's optional subscriptions (a target
  // that refuses a path); what a real NVUE serves here is not known to us.
  if (d != Dialect::kCumulus) {
    t.Add("mac-address", port, Field::kPortMac).Add("port-speed", port, Field::kPortSpeed);
  }
  t.Elem("counters");
  t.Add("in-mac-pause-frames", port, Field::kInMacPause);
  // openconfig-if-ethernet's FCS error count (Arista and Cumulus serve that model too).
  t.Add("in-crc-errors", port, Field::kInCrcErrors);
  if (d != Dialect::kCumulus) t.Add("out-mac-pause-frames", port, Field::kOutMacPause);
  if (d == Dialect::kCumulus) t.Add("carrier-transitions", port, Field::kCarrierTransitions);
  // openconfig-if-ethernet 2.16: the PHY's FEC codewords, and (not on the simulated EOS) the
  // pre-FEC BER it measured.
  if (module) {
    t.Add("fec-corrected-blocks", port, Field::kFecCorrected)
        .Add("fec-uncorrectable-blocks", port, Field::kFecUncorrectable);
    if (d != Dialect::kAristaEos) {
      t.Root().Elem("interfaces").Elem("interface", "name", name).Elem("ethernet").Elem("state")
          .Elem("pre-fec-ber").Add("instant", port, Field::kPreFecBer);
    }
  }

  if (d == Dialect::kAristaEos) {
    for (int p = 0; p < kPriorities; ++p) {
      t.Root().Elem("interfaces").Elem("interface", "name", name).Elem("ethernet").Elem("pfc")
          .Elem("priorities").Elem("priority", "index", std::to_string(p)).Elem("state");
      t.Add("in-frames", port, Field::kInPfc, p).Add("out-frames", port, Field::kOutPfc, p);
    }
    for (int wq : kWatchdogQueues) {
      t.Root().Elem("interfaces").Elem("interface", "name", name).Elem("ethernet").Elem("pfc")
          .Elem("watchdog").Elem("tx-queues").Elem("tx-queue", "queue", std::to_string(wq)).Elem("state");
      t.Add("stuck-count", port, Field::kWdDetected, wq).Add("recovery-count", port, Field::kWdRestored, wq);
    }
  }
  if (d == Dialect::kCumulus) {
    for (int p = 0; p < kPriorities; ++p) {
      t.Root().Elem("qos").Elem("interfaces").Elem("interface", "interface-id", name).Elem("state")
          .Elem("switch-priority", "priority", std::to_string(p)).Elem("counters");
      t.Add("in-pause-pkts", port, Field::kInPfc, p).Add("out-pause-pkts", port, Field::kOutPfc, p);
    }
  }
  for (int queue = 0; queue < kQueues; ++queue) {
    t.Root().Elem("qos").Elem("interfaces").Elem("interface", "interface-id", name).Elem("output")
        .Elem("queues").Elem("queue", "name", std::to_string(queue)).Elem("state");
    t.Add("transmit-pkts", port, Field::kQueuePkts, queue)
        .Add("transmit-octets", port, Field::kQueueOctets, queue)
        .Add("ecn-marked-pkts", port, Field::kQueueEcnMarked, queue);
    t.Add(d == Dialect::kCumulus ? "wred-dropped-pkts" : "dropped-pkts", port, Field::kQueueDropped, queue);
  }
  t.Root().Elem("lldp").Elem("interfaces").Elem("interface", "name", name).Elem("neighbors")
      .Elem("neighbor", "id", "1").Elem("state");
  t.Add("system-name", port, Field::kLldpSystemName)
      .Add("port-id", port, Field::kLldpPortId)
      .Add("chassis-id", port, Field::kLldpChassisId);
  if (module) AddTransceiverLeaves(sw, port, out);
}

class LeafQuery : public PathQuery {
 public:
  LeafQuery(std::vector<Leaf> leaves, std::string target)
      : leaves_(std::move(leaves)), target_(std::move(target)) {}

  bool StateOnly() const override {
    for (const Leaf& l : leaves_) {
      if (l.field < Field::kOperStatus) return false;
    }
    return true;
  }

  void Render(const SimSwitch& sw, ::gnmi::Notification& n) override {
    if (n.update_size() != static_cast<int>(leaves_.size())) {
      n.Clear();
      if (!target_.empty()) n.mutable_prefix()->set_target(target_);
      for (const Leaf& l : leaves_) *n.add_update()->mutable_path() = l.path;
    }
    for (size_t i = 0; i < leaves_.size(); ++i) {
      const Leaf& l = leaves_[i];
      FillValue(sw.ports[l.port], l.field, l.index, *n.mutable_update(static_cast<int>(i))->mutable_val());
    }
  }

 private:
  std::vector<Leaf> leaves_;
  std::string target_;
};

absl::StatusOr<std::unique_ptr<PathQuery>> ResolveLeaves(
    std::vector<Leaf> table, const std::vector<::gnmi::PathElem>& pattern, std::string target,
    const std::string& shown) {
  std::vector<Leaf> matched;
  for (Leaf& l : table) {
    if (PathMatches(pattern, 0, l.path.elem(), 0)) {
      matched.push_back(std::move(l));
    }
  }
  if (matched.empty()) return absl::NotFoundError(absl::StrCat("no data at ", shown));
  return std::make_unique<LeafQuery>(std::move(matched), std::move(target));
}

// ---- SONiC: COUNTERS_DB virtual paths answered with JSON blobs of string counters.

struct SonicField {
  std::string name;
  Field field;
  int index = 0;
};

const std::vector<SonicField>& SonicPortFields() {
  static const std::vector<SonicField>* fields = [] {
    auto* f = new std::vector<SonicField>{
        {"SAI_PORT_STAT_IF_IN_OCTETS", Field::kInOctets},
        {"SAI_PORT_STAT_IF_OUT_OCTETS", Field::kOutOctets},
        {"SAI_PORT_STAT_IF_IN_UCAST_PKTS", Field::kInUcast},
        {"SAI_PORT_STAT_IF_OUT_UCAST_PKTS", Field::kOutUcast},
        {"SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS", Field::kInMcast},
        {"SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS", Field::kOutMcast},
        {"SAI_PORT_STAT_IF_IN_DISCARDS", Field::kInDiscards},
        {"SAI_PORT_STAT_IF_OUT_DISCARDS", Field::kOutDiscards},
        {"SAI_PORT_STAT_IF_IN_ERRORS", Field::kInErrors},
        {"SAI_PORT_STAT_IF_OUT_ERRORS", Field::kOutErrors},
        {"SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS", Field::kInCrcErrors},
        {"SAI_PORT_STAT_PAUSE_RX_PKTS", Field::kInMacPause},
        {"SAI_PORT_STAT_PAUSE_TX_PKTS", Field::kOutMacPause},
        {"SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", Field::kFecCorrected},
        {"SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", Field::kFecUncorrectable},
        {"SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS", Field::kFecSymbolErrors},
        {"SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS", Field::kFecCorrectedBits}};
    for (int k = 0; k < kFecBins; ++k) {
      f->push_back({absl::StrCat("SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S", k),
                    Field::kFecCodewords, k});
    }
    for (int p = 0; p < kPriorities; ++p) {
      f->push_back({absl::StrCat("SAI_PORT_STAT_PFC_", p, "_RX_PKTS"), Field::kInPfc, p});
      f->push_back({absl::StrCat("SAI_PORT_STAT_PFC_", p, "_TX_PKTS"), Field::kOutPfc, p});
      f->push_back({absl::StrCat("SAI_PORT_STAT_PFC_", p, "_ON2OFF_RX_PKTS"), Field::kInPfcOn2Off, p});
    }
    return f;
  }();
  return *fields;
}

bool Glob(std::string_view pattern, std::string_view s) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == s;
  if (s.substr(0, star) != pattern.substr(0, star)) return false;
  std::string_view rest = pattern.substr(star + 1);
  for (size_t i = star; i <= s.size(); ++i) {
    if (Glob(rest, s.substr(i))) return true;
  }
  return false;
}

void AppendField(std::string& json, bool& first, std::string_view name, std::string_view value) {
  absl::StrAppend(&json, first ? "" : ",", "\"", AsAbsl(name), "\":\"", AsAbsl(value), "\"");
  first = false;
}

void AppendQueue(std::string& json, const SwitchPort& p, int q, bool watchdog_only) {
  const PortCounters& c = p.c;
  bool first = true;
  absl::StrAppend(&json, "\"", p.name, ":", q, "\":{");
  const bool watched = q == kWatchdogQueues[0] || q == kWatchdogQueues[1];
  if (watched) {
    AppendField(json, first, "PFC_WD_ACTION", "drop");
    AppendField(json, first, "PFC_WD_DETECTION_TIME", "200000");
    AppendField(json, first, "PFC_WD_DETECTION_TIME_LEFT", "200000");
    AppendField(json, first, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", std::to_string(c.wd_detected[q]));
    AppendField(json, first, "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", std::to_string(c.wd_restored[q]));
    AppendField(json, first, "PFC_WD_RESTORATION_TIME", "200000");
    AppendField(json, first, "PFC_WD_STATUS", c.wd_stormed[q] ? "stormed" : "operational");
    AppendField(json, first, "SAI_QUEUE_ATTR_PAUSE_STATUS", c.wd_stormed[q] ? "true" : "false");
  }
  if (!watchdog_only || watched) {
    AppendField(json, first, "SAI_QUEUE_STAT_BYTES", std::to_string(c.queue_octets[q]));
    AppendField(json, first, "SAI_QUEUE_STAT_DROPPED_PACKETS", std::to_string(c.queue_dropped[q]));
    AppendField(json, first, "SAI_QUEUE_STAT_PACKETS", std::to_string(c.queue_pkts[q]));
    if (!watchdog_only) {
      AppendField(json, first, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
                  std::to_string(c.queue_ecn_marked[q]));
    }
  }
  json += "}";
}

class SonicCountersQuery : public PathQuery {
 public:
  enum class Kind { kPort, kField, kQueues, kPfcwd };
  SonicCountersQuery(::gnmi::Path path, std::vector<int> ports, Kind kind, const SonicField* field,
                     bool wildcard)
      : path_(std::move(path)), ports_(std::move(ports)), kind_(kind), field_(field),
        wildcard_(wildcard) {}

  bool StateOnly() const override { return false; }

  void Render(const SimSwitch& sw, ::gnmi::Notification& n) override {
    if (n.update_size() != 1) {
      n.Clear();
      n.mutable_prefix()->set_target("COUNTERS_DB");
      *n.add_update()->mutable_path() = path_;
    }
    ::gnmi::TypedValue& v = *n.mutable_update(0)->mutable_val();
    if (kind_ == Kind::kField && !wildcard_) {
      v.set_string_val(std::to_string(CounterOf(sw.ports[ports_[0]].c, field_->field, field_->index)));
      return;
    }
    std::string& json = scratch_;
    json.clear();
    json += "{";
    bool first_port = true;
    for (int i : ports_) {
      const SwitchPort& p = sw.ports[i];
      if (kind_ == Kind::kQueues || kind_ == Kind::kPfcwd) {
        for (int q = 0; q < kQueues; ++q) {
          const bool watched = q == kWatchdogQueues[0] || q == kWatchdogQueues[1];
          if (kind_ == Kind::kPfcwd && !watched) continue;
          if (!first_port) json += ",";
          first_port = false;
          AppendQueue(json, p, q, kind_ == Kind::kPfcwd);
        }
        continue;
      }
      if (wildcard_) absl::StrAppend(&json, first_port ? "" : ",", "\"", p.name, "\":{");
      first_port = false;
      bool first = true;
      for (const SonicField& f : SonicPortFields()) {
        if (kind_ == Kind::kField && &f != field_) continue;
        AppendField(json, first, f.name, std::to_string(CounterOf(p.c, f.field, f.index)));
      }
      if (wildcard_) json += "}";
    }
    json += "}";
    v.set_json_ietf_val(json);
  }

 private:
  ::gnmi::Path path_;
  std::vector<int> ports_;
  Kind kind_;
  const SonicField* field_;
  bool wildcard_;
  std::string scratch_;
};

absl::StatusOr<std::unique_ptr<PathQuery>> ResolveSonicCounters(
    const SimSwitch& sw, const std::vector<::gnmi::PathElem>& elems, const std::string& shown) {
  auto not_found = [&] { return absl::NotFoundError(absl::StrCat("no data at ", shown, " in COUNTERS_DB")); };
  if (elems.size() < 2 || elems.size() > 3 || elems[0].name() != "COUNTERS") return not_found();
  const std::string& port_pattern = elems[1].name();
  std::vector<int> ports;
  for (size_t i = 0; i < sw.ports.size(); ++i) {
    if (Glob(port_pattern, sw.ports[i].name)) ports.push_back(static_cast<int>(i));
  }
  if (ports.empty()) return not_found();
  auto kind = SonicCountersQuery::Kind::kPort;
  const SonicField* field = nullptr;
  if (elems.size() == 3) {
    const std::string& leaf = elems[2].name();
    if (leaf == "Queues") {
      kind = SonicCountersQuery::Kind::kQueues;
    } else if (leaf == "Pfcwd") {
      kind = SonicCountersQuery::Kind::kPfcwd;
    } else {
      for (const SonicField& f : SonicPortFields()) {
        if (f.name == leaf) field = &f;
      }
      if (field == nullptr) return not_found();
      kind = SonicCountersQuery::Kind::kField;
    }
  }
  ::gnmi::Path path;
  for (const ::gnmi::PathElem& e : elems) *path.add_elem() = e;
  const bool wildcard = port_pattern.find('*') != std::string::npos;
  return std::make_unique<SonicCountersQuery>(std::move(path), std::move(ports), kind, field, wildcard);
}

// ---- SONiC: APPL_DB and STATE_DB, one hash per port answered as JSON blobs of strings like
// the counters: LLDP_ENTRY_TABLE (lldp_syncd's view of lldpd) on ports with a neighbour,
// PORT_TABLE (portsyncd's port state: speed in Mb/s, oper_status) on every port; xcvrd's
// TRANSCEIVER_DOM_SENSOR, TRANSCEIVER_DOM_THRESHOLD and TRANSCEIVER_INFO on ports with a
// module.

// xcvrd's DOM fields have eight lanes; a 4-lane module's others read "N/A".
constexpr int kSonicDomLanes = 8;

std::string SonicFloat(double v) { return absl::StrFormat("%.4f", v); }

// SFF-8024's identifier names, as sonic-platform-common's sff8024.py spells them.
std::string_view SonicTransceiverType(std::string_view form_factor) {
  if (form_factor == "OSFP") return "OSFP 8X Pluggable Transceiver";
  if (form_factor == "QSFP-DD") return "QSFP-DD Double Density 8X Pluggable Transceiver";
  if (form_factor == "QSFP28") return "QSFP28 or later";
  return "SFP/SFP+/SFP28";
}

void AppendDom(std::string& json, const SwitchPortOptics& o) {
  bool first = true;
  AppendField(json, first, "temperature", SonicFloat(o.temperature_c));
  AppendField(json, first, "voltage", SonicFloat(o.supply_voltage_v));
  for (int lane = 0; lane < kSonicDomLanes; ++lane) {
    const bool has = lane < NicOptics::kLanes;
    const int n = lane + 1;
    AppendField(json, first, absl::StrCat("rx", n, "power"),
                has ? SonicFloat(o.rx_power_dbm[lane]) : "N/A");
    AppendField(json, first, absl::StrCat("tx", n, "bias"),
                has ? SonicFloat(o.tx_bias_ma[lane]) : "N/A");
    AppendField(json, first, absl::StrCat("tx", n, "power"),
                has ? SonicFloat(o.tx_power_dbm[lane]) : "N/A");
  }
}

void AppendDomThresholds(std::string& json, const optics::ModuleReading& m) {
  // xcvrd's field stems per quantity, in optics::Quantity order; levels as ThresholdOf's.
  static constexpr std::string_view kStems[] = {"temp", "vcc", "txbias", "txpower", "rxpower"};
  static constexpr std::string_view kLevels[] = {"highalarm", "highwarning", "lowwarning",
                                                 "lowalarm"};
  bool first = true;
  for (int q = 0; q < optics::kQuantityCount; ++q) {
    for (int level = 0; level < 4; ++level) {
      AppendField(json, first, absl::StrCat(AsAbsl(kStems[q]), AsAbsl(kLevels[level])),
                  SonicFloat(ThresholdOf(m, q * 4 + level)));
    }
  }
}

void AppendTransceiverInfo(std::string& json, const optics::ModuleReading& m) {
  bool first = true;
  AppendField(json, first, "type", SonicTransceiverType(m.form_factor));
  AppendField(json, first, "manufacturer", m.vendor);
  AppendField(json, first, "model", m.part_number);
  AppendField(json, first, "serial", m.serial);
  AppendField(json, first, "vendor_rev", m.revision);
  AppendField(json, first, "media_interface_code",
              m.media == "400GBASE-DR4" ? "400GBASE-DR4 (Cl 124)" : m.media);
  AppendField(json, first, "host_electrical_interface", "400GAUI-8 C2M (Annex 120E)");
  AppendField(json, first, "is_replaceable", "True");
}

class SonicApplQuery : public PathQuery {
 public:
  enum class Table { kLldp, kPort, kDom, kDomThreshold, kTransceiverInfo };
  SonicApplQuery(::gnmi::Path path, std::vector<int> ports, bool wildcard, Table table,
                 std::string target)
      : path_(std::move(path)), ports_(std::move(ports)), wildcard_(wildcard), table_(table),
        target_(std::move(target)) {}

  // The DOM is sampled like counters; the rest is state.
  bool StateOnly() const override { return table_ != Table::kDom; }

  void Render(const SimSwitch& sw, ::gnmi::Notification& n) override {
    if (n.update_size() != 1) {
      n.Clear();
      n.mutable_prefix()->set_target(target_);
      *n.add_update()->mutable_path() = path_;
    }
    std::string json = "{";
    bool first_port = true;
    for (int i : ports_) {
      const SwitchPort& p = sw.ports[i];
      if (wildcard_) absl::StrAppend(&json, first_port ? "" : ",", "\"", p.name, "\":{");
      first_port = false;
      bool first = true;
      if (table_ == Table::kLldp) {
        AppendField(json, first, "lldp_rem_chassis_id", p.lldp_chassis_id);
        AppendField(json, first, "lldp_rem_chassis_id_subtype", "4");  // MAC address
        AppendField(json, first, "lldp_rem_index", "1");
        AppendField(json, first, "lldp_rem_port_desc", "");
        AppendField(json, first, "lldp_rem_port_id", p.lldp_port_id);
        AppendField(json, first, "lldp_rem_port_id_subtype", "5");  // interface name
        AppendField(json, first, "lldp_rem_sys_name", p.lldp_system_name);
      } else if (table_ == Table::kPort) {
        AppendField(json, first, "admin_status", "up");
        AppendField(json, first, "mtu", "9100");
        AppendField(json, first, "oper_status", p.up ? "up" : "down");
        AppendField(json, first, "speed", absl::StrCat(static_cast<int64_t>(p.speed_gbps * 1000)));
      } else if (table_ == Table::kDom) {
        AppendDom(json, p.optics);
      } else if (table_ == Table::kDomThreshold) {
        AppendDomThresholds(json, p.optics.module.module);
      } else {
        AppendTransceiverInfo(json, p.optics.module.module);
      }
      if (wildcard_) json += "}";
    }
    json += "}";
    n.mutable_update(0)->mutable_val()->set_json_ietf_val(json);
  }

 private:
  ::gnmi::Path path_;
  std::vector<int> ports_;
  bool wildcard_;
  Table table_;
  std::string target_;
};

absl::StatusOr<std::unique_ptr<PathQuery>> ResolveSonicAppl(
    const SimSwitch& sw, const std::vector<::gnmi::PathElem>& elems, const std::string& target,
    const std::string& shown) {
  auto not_found = [&] {
    return absl::NotFoundError(absl::StrCat("no data at ", shown, " in ", target));
  };
  if (elems.size() != 2) return not_found();
  using Table = SonicApplQuery::Table;
  static constexpr std::pair<std::string_view, Table> kAppl[] = {
      {"LLDP_ENTRY_TABLE", Table::kLldp}, {"PORT_TABLE", Table::kPort}};
  static constexpr std::pair<std::string_view, Table> kState[] = {
      {"TRANSCEIVER_DOM_SENSOR", Table::kDom},
      {"TRANSCEIVER_DOM_THRESHOLD", Table::kDomThreshold},
      {"TRANSCEIVER_INFO", Table::kTransceiverInfo}};
  std::optional<Table> table;
  using Entry = std::pair<std::string_view, Table>;
  const std::span<const Entry> tables =
      target == "APPL_DB" ? std::span<const Entry>(kAppl) : std::span<const Entry>(kState);
  for (const auto& [name, t] : tables) {
    if (elems[0].name() == name) table = t;
  }
  if (!table) return not_found();
  std::vector<int> ports;
  for (size_t i = 0; i < sw.ports.size(); ++i) {
    const SwitchPort& p = sw.ports[i];
    const bool has_row = *table == Table::kPort ||
                         (*table == Table::kLldp ? !p.lldp_system_name.empty() : p.optics.present);
    if (has_row && Glob(elems[1].name(), p.name)) ports.push_back(static_cast<int>(i));
  }
  if (ports.empty()) return not_found();
  ::gnmi::Path path;
  for (const ::gnmi::PathElem& e : elems) *path.add_elem() = e;
  return std::make_unique<SonicApplQuery>(std::move(path), std::move(ports),
                                          elems[1].name().find('*') != std::string::npos, *table,
                                          target);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PathQuery>> ResolvePath(const SimSwitch& sw,
                                                       const ::gnmi::Path& prefix,
                                                       const ::gnmi::Path& path) {
  std::vector<::gnmi::PathElem> elems(prefix.elem().begin(), prefix.elem().end());
  elems.insert(elems.end(), path.elem().begin(), path.elem().end());
  const std::string& target = !path.target().empty() ? path.target() : prefix.target();
  std::string shown;
  for (const ::gnmi::PathElem& e : elems) {
    absl::StrAppend(&shown, "/", e.name());
    for (const auto& [k, v] : e.key()) absl::StrAppend(&shown, "[", k, "=", v, "]");
  }
  if (shown.empty()) shown.push_back('/');  // the root (not `= "/"`: gcc 12's -Wrestrict misfires)

  std::vector<Leaf> table;
  if (sw.dialect == Dialect::kSonic) {
    if (target == "COUNTERS_DB") return ResolveSonicCounters(sw, elems, shown);
    if (target == "APPL_DB" || target == "STATE_DB") {
      return ResolveSonicAppl(sw, elems, target, shown);
    }
    if (target != "OC-YANG") {
      return absl::NotFoundError(absl::StrCat("SONiC serves targets COUNTERS_DB, APPL_DB, "
                                              "STATE_DB and OC-YANG, not \"",
                                              target, "\" (", shown, ")"));
    }
    // Through OC-YANG, the interfaces' oper-status, as a JSON blob.
    for (size_t p = 0; p < sw.ports.size(); ++p) {
      LeafTable t(table);
      t.Root().Elem("openconfig-interfaces:interfaces").Elem("interface", "name", sw.ports[p].name).Elem("state");
      t.Add("oper-status", static_cast<int>(p), Field::kOperStatusJsonIetf);
    }
    return ResolveLeaves(std::move(table), elems, target, shown);
  }
  for (size_t p = 0; p < sw.ports.size(); ++p) AddInterfaceLeaves(sw, static_cast<int>(p), table);
  return ResolveLeaves(std::move(table), elems, target, shown);
}

std::vector<::gnmi::ModelData> SupportedModels(Dialect d) {
  std::vector<::gnmi::ModelData> models;
  auto add = [&models](const char* name, const char* org, const char* version) {
    ::gnmi::ModelData& m = models.emplace_back();
    m.set_name(name);
    m.set_organization(org);
    m.set_version(version);
  };
  if (d == Dialect::kSonic) {
    add("sonic-db", "SONiC", "0.1.0");
    add("openconfig-interfaces", "OpenConfig working group", "2.4.3");
    return models;
  }
  add("openconfig-interfaces", "OpenConfig working group", "3.0.0");
  add("openconfig-if-ethernet", "OpenConfig working group", "2.13.0");
  add("openconfig-qos", "OpenConfig working group", "0.11.0");
  add("openconfig-lldp", "OpenConfig working group", "0.2.1");
  if (d == Dialect::kAristaEos) add("arista-intf-augments", "Arista Networks, Inc.", "1.0.0");
  if (d == Dialect::kCumulus) add("nvidia-if-ethernet-ext", "NVIDIA", "1.0.0");
  return models;
}

std::vector<::gnmi::Encoding> SupportedEncodings(Dialect d) {
  if (d == Dialect::kSonic) return {::gnmi::JSON, ::gnmi::JSON_IETF};
  return {::gnmi::JSON, ::gnmi::JSON_IETF, ::gnmi::PROTO};
}

}  // namespace railwatch::sim
