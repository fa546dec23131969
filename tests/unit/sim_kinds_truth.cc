#include "unit/sim_kinds_truth.h"

#include <string>

#include "gtest/gtest.h"
#include "sim/fault_kinds.h"

namespace railwatch::sim {

FaultTruth LinkFlapTruth(const FaultKind& kind, const LinkFlap& flap);  // sim/faults/link_flap.cc

namespace testing {
namespace {

ScenarioFault Fault(absl::string_view kind, std::string host, std::string device,
                    absl::Duration at) {
  ScenarioFault f;
  f.kind = std::string(kind);
  f.info = FindFaultKind(kind);
  EXPECT_NE(f.info, nullptr) << kind;
  f.host = std::move(host);
  f.device = std::move(device);
  f.at = at;
  return f;
}

bool Untold(const FaultTruth& t) { return t.line == nullptr && t.cause.empty(); }

// What the kind of `f` hands the models.
struct Handed {
  SysfsFabric::Options hosts;
  SwitchFabric::Options switches;
  IbSwitchModel::Options ib;
};
Handed Apply(const ScenarioFault& f) {
  Handed h;
  SimFaultTargets targets{h.hosts, h.switches, h.ib};
  if (f.info != nullptr) {
    absl::Status s = f.info->Apply(f, targets);
    EXPECT_TRUE(s.ok()) << s;
  }
  return h;
}

}  // namespace

void GiveKindsTruth(SysfsFabric::Options& o, SwitchFabric::Options* so) {
  for (LinkFlap& x : o.flaps) {
    if (Untold(x.truth)) {
      x.truth = LinkFlapTruth(*FindFaultKind(x.of > 0 ? "link_flap_repeated" : "link_flap"), x);
    }
  }
  for (NicDegrade& x : o.degrades) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("link_degrade", x.host, x.device, x.at);
    f.factor = x.factor;
    x.truth = Apply(f).hosts.degrades.at(0).truth;
  }
  for (EcnMisconfig& x : o.ecn_misconfigs) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("ecn_misconfig", "", "", x.at);
    f.switch_name = x.switch_name;
    f.offset_kb = x.threshold_offset_kb;
    x.truth = Apply(f).hosts.ecn_misconfigs.at(0).truth;
  }
  for (PfcDeadlock& x : o.deadlocks) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("pfc_deadlock", x.host, x.device, x.at);
    f.duration = x.duration;
    x.truth = Apply(f).hosts.deadlocks.at(0).truth;
  }
  for (BitErrors& x : o.bit_errors) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("bit_errors", x.host, x.device, x.at);
    f.per_minute = x.per_minute;
    x.truth = Apply(f).hosts.bit_errors.at(0).truth;
  }
  for (Straggler& x : o.stragglers) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("straggler", x.host, x.device, x.at);
    f.factor = x.factor;
    x.truth = Apply(f).hosts.stragglers.at(0).truth;
  }
  for (WrongPriority& x : o.wrong_priorities) {
    if (!Untold(x.truth)) continue;
    x.truth = Apply(Fault("wrong_priority", x.host, "", x.at)).hosts.wrong_priorities.at(0).truth;
  }
  for (NicGone& x : o.nics_gone) {
    if (!Untold(x.truth)) continue;
    x.truth = Apply(Fault("nic_gone", x.host, x.device, x.at)).hosts.nics_gone.at(0).truth;
  }
  for (PacketLoss& x : o.packet_losses) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("packet_loss", x.host, x.device, x.at);
    f.per_second = x.per_second;
    x.truth = Apply(f).hosts.packet_losses.at(0).truth;
  }
  for (NcclError& x : o.nccl_errors) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("nccl_error", x.host, "", x.at);
    f.error = x.kind;
    x.truth = Apply(f).hosts.nccl_errors.at(0).truth;
  }
  for (LinkAtRisk& x : o.links_at_risk) {
    if (!Untold(x.truth)) continue;
    const char* kind = x.what == LinkAtRisk::What::kBer        ? "ber_rising"
                       : x.what == LinkAtRisk::What::kRxPower ? "optics_drift"
                                                               : "optics_hot";
    ScenarioFault f = Fault(kind, x.host, x.device, x.at);
    f.to = x.to;
    f.ramp = x.ramp;
    f.fails_after = x.fails_after;
    x.truth = Apply(f).hosts.links_at_risk.at(0).truth;
  }
  for (NicHealth& x : o.nic_health) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("nic_health", x.host, x.device, x.at);
    f.count = x.count;
    f.period = x.period;
    x.truth = Apply(f).hosts.nic_health.at(0).truth;
  }
  for (PcieAer& x : o.pcie_aer) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("pcie_aer", x.host, x.device, x.at);
    f.per_minute = x.per_minute;
    x.truth = Apply(f).hosts.pcie_aer.at(0).truth;
  }
  if (so == nullptr) return;
  for (PfcStorm& x : so->storms) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("pfc_storm", x.host, x.device, x.at);
    f.duration = x.duration;
    x.truth = Apply(f).switches.storms.at(0).truth;
  }
  for (PfcDeadlock& x : so->deadlocks) {
    if (!Untold(x.truth)) continue;
    ScenarioFault f = Fault("pfc_deadlock", x.host, x.device, x.at);
    f.duration = x.duration;
    x.truth = Apply(f).switches.deadlocks.at(0).truth;
  }
}

}  // namespace testing
}  // namespace railwatch::sim
