#pragma once

// What the InfiniBand switch-port fault kinds (ib_bad_cable, ib_xmit_discards,
// ib_width_degrade, ib_link_flap) share: a fault of one switch port, SWITCH/PORT@OFFSET[:NUMBER]
// as a flag and {switch, port} in a scenario, handed to the IB switches (sim/ib_switches.h)
// with a ground-truth line that names the port as the diagnoses do ({switch, interface}).

#include <string>

#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/scenario.h"
#include "sim/spec_parsing.h"

namespace railwatch::sim {

class IbPortFaultKind : public FaultKind {
 public:
  struct Number {
    double ScenarioFault::*field = nullptr;  // where [:NUMBER] goes
    const char* why = "";                    // what a bad one is told
    double lo = 0, hi = 0;                   // (lo, hi]
  };
  IbPortFaultKind(FaultKindInfo info, IbPortFault::Type type, const char* form,
                  std::optional<Number> number, bool switch_links_only)
      : FaultKind(std::move(info)),
        type_(type),
        form_(form),
        number_(number),
        switch_links_only_(switch_links_only) {}

  void Read(ScenarioMap& map, const Scenario& s, ScenarioFault& f) const override {
    const auto [ports, host_ports] = SimSwitchPorts(s.topology, f.switch_name);
    if (switch_links_only_ && ports > 0 && f.port <= host_ports) {
      map.Problem("port", "bad-value",
                  absl::StrCat(f.switch_name, " port ", f.port,
                               " faces a host; a ", kind,
                               " is of a switch-to-switch link (ports ", host_ports + 1, "-",
                               ports, "); an HCA's link: link_degrade, link_flap"));
    }
    ReadOwn(map, f);
  }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    ScenarioFault f = NewFault("", "", absl::ZeroDuration());
    TimedSpec parts;
    if (absl::Status st = ParseSwitchPortSpec(flag, spec, form_, number_ ? 1 : 0, f.switch_name,
                                              f.port, parts);
        !st.ok()) {
      return st;
    }
    f.at = parts.at;
    if (number_) {
      double& value = f.*(number_->field);
      if (absl::Status st = ParseExtraNumber(flag, spec, form_, parts, 0, value); !st.ok()) {
        return st;
      }
      if (!(value > number_->lo && value <= number_->hi)) {
        return SpecError(flag, spec, number_->why, form_);
      }
    }
    return f;
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    IbPortFault fault;
    fault.type = type_;
    fault.switch_name = f.switch_name;
    fault.port = f.port;
    fault.at = f.at;
    fault.per_minute = f.per_minute;
    fault.width = f.width;
    fault.down_for = f.down_for;
    const std::string extra = TruthExtra(f);
    fault.truth = Truth([this, extra](const FaultStarted& s) {
      return TruthLine(absl::StrFormat("\"switch\": \"%s\", \"interface\": \"%s\"%s",
                                       s.switch_name, s.interface, extra),
                       s.now);
    });
    sim.ib.port_faults.push_back(std::move(fault));
    return absl::OkStatus();
  }

 protected:
  // The kind's own scenario keys, and its own fields of the ground-truth line (", \"k\": v").
  virtual void ReadOwn(ScenarioMap& map, ScenarioFault& f) const = 0;
  virtual std::string TruthExtra(const ScenarioFault& f) const = 0;

 private:
  IbPortFault::Type type_;
  const char* form_;
  std::optional<Number> number_;
  bool switch_links_only_;
};

}  // namespace railwatch::sim
