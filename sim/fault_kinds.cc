// The registry of the simulator's fault kinds (sim/fault_kinds.h): the list of kinds, the
// scenario file's mappings read on common/yaml_reader.h, and the two ways faults reach the
// models (the flags of a command line, a scenario).
#include "sim/fault_kinds.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"
#include "sim/scenario.h"

namespace railwatch::sim {

// The registration: each kind's function (in its file under sim/faults/) and its place in the
// list below, in the order of docs/SCENARIOS.md's table.
const FaultKind& PfcStormKind();
const FaultKind& PfcDeadlockKind();
const FaultKind& LinkFlapKind();
const FaultKind& LinkFlapRepeatedKind();
const FaultKind& BitErrorsKind();
const FaultKind& LinkDegradeKind();
const FaultKind& StragglerKind();
const FaultKind& SlowRankKind();
const FaultKind& RankHangKind();
const FaultKind& EcnMisconfigKind();
const FaultKind& WrongPriorityKind();
const FaultKind& NicGoneKind();
const FaultKind& PacketLossKind();
const FaultKind& NcclErrorKind();
const FaultKind& IbSlowReceiverKind();
const FaultKind& IbBadCableKind();
const FaultKind& IbWidthDegradeKind();
const FaultKind& IbLinkFlapKind();
const FaultKind& IbXmitDiscardsKind();
const FaultKind& BerRisingKind();
const FaultKind& OpticsDriftKind();
const FaultKind& OpticsHotKind();
const FaultKind& NicHealthKind();
const FaultKind& PcieAerKind();

const std::vector<const FaultKind*>& FaultKinds() {
  static const std::vector<const FaultKind*> kinds = {
      &PfcStormKind(),      &PfcDeadlockKind(), &LinkFlapKind(),   &LinkFlapRepeatedKind(),
      &BitErrorsKind(),     &LinkDegradeKind(), &StragglerKind(),  &EcnMisconfigKind(),
      &WrongPriorityKind(), &NicGoneKind(),     &PacketLossKind(), &NcclErrorKind(),
      &IbSlowReceiverKind(), &IbBadCableKind(), &IbWidthDegradeKind(), &IbLinkFlapKind(),
      &IbXmitDiscardsKind(), &SlowRankKind(), &RankHangKind(),
      &BerRisingKind(), &OpticsDriftKind(), &OpticsHotKind(), &NicHealthKind(), &PcieAerKind(),
  };
  return kinds;
}

const FaultKind* FindFaultKind(absl::string_view kind) {
  for (const FaultKind* k : FaultKinds()) {
    if (k->kind == kind) return k;
  }
  return nullptr;
}

const FaultKind* FindFaultKindByTruth(absl::string_view truth_kind) {
  for (const FaultKind* k : FaultKinds()) {
    if (k->truth_kind == truth_kind) return k;
  }
  return nullptr;
}

std::vector<std::string> FaultKindNames() {
  std::vector<std::string> names;
  for (const FaultKind* k : FaultKinds()) names.emplace_back(k->kind);
  return names;
}

void FaultKind::Read(ScenarioMap&, const Scenario&, ScenarioFault&) const {}

ScenarioFault FaultKind::NewFault(std::string host, std::string device, absl::Duration at) const {
  ScenarioFault f;
  f.kind = std::string(kind);
  f.info = this;
  f.host = std::move(host);
  f.device = std::move(device);
  f.at = at;
  return f;
}

absl::StatusOr<ScenarioFault> FaultKind::Own(absl::StatusOr<ScenarioFault> fault) const {
  if (fault.ok()) {
    fault->kind = std::string(kind);
    fault->info = this;
  }
  return fault;
}

FaultTruth FaultKind::Truth(std::function<std::string(const FaultStarted&)> line) const {
  FaultTruth truth;
  truth.line = std::move(line);
  truth.cause = std::string(kind);
  return truth;
}

std::string FaultKind::TruthLine(absl::string_view fields, absl::Time now) const {
  return absl::StrCat("{\"fault\": \"", truth_kind, "\", ", fields,
                      ", \"injected_at_unix_nano\": ", absl::ToUnixNanos(now), "}");
}

std::string FaultKind::NicFields(const ScenarioFault& fault) {
  return absl::StrFormat("\"host\": \"%s\", \"device\": \"%s\"", fault.host, fault.device);
}

absl::Duration ScenarioFault::last_at() const { return info != nullptr ? info->LastAt(*this) : at; }

std::string ScenarioFault::Where() const {
  if (!switch_name.empty()) {
    return info != nullptr && info->target == FaultTarget::kSwitchPort
               ? absl::StrCat(switch_name, "/", port)
               : switch_name;
  }
  return device.empty() ? host : absl::StrCat(host, "/", device);
}

absl::string_view FaultFabricName(FaultFabric f) {
  switch (f) {
    case FaultFabric::kRoce:
      return "RoCE";
    case FaultFabric::kInfiniband:
      return "InfiniBand";
    case FaultFabric::kAny:
      break;
  }
  return "any";
}

namespace {

// A kind of the other fabric: an error that says which fabric it needs.
absl::Status CheckFabric(const FaultKind& k, bool infiniband) {
  const FaultFabric on = infiniband ? FaultFabric::kInfiniband : FaultFabric::kRoce;
  if (k.fabric == FaultFabric::kAny || k.fabric == on) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      k.kind, " is a fault of ", FaultFabricName(k.fabric), " fabrics, and this one is ",
      FaultFabricName(on), k.fabric == FaultFabric::kInfiniband ? " (--fabric=ib)" : ""));
}

}  // namespace

absl::Status ApplyFaultFlags(SimFaultTargets& sim) {
  for (const FaultKind* k : FaultKinds()) {
    for (const std::string& spec : k->FlagValues()) {
      absl::StatusOr<ScenarioFault> f = k->ParseFlag(spec);
      if (!f.ok()) return f.status();
      if (absl::Status s = CheckFabric(*k, sim.infiniband); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--", k->flag, "=", spec, ": ", s.message()));
      }
      if (absl::Status s = k->Apply(*f, sim); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyScenarioFaults(const Scenario& scenario, SimFaultTargets& sim) {
  for (const ScenarioFault& f : scenario.faults) {
    absl::Status s = CheckFabric(*f.info, sim.infiniband);
    if (s.ok()) s = f.info->Apply(f, sim);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(scenario.file, ":", f.line, ": ", s.message()));
    }
  }
  for (const DriverReloadNoise& r : scenario.noise.driver_reloads) {
    sim.hosts.driver_reloads.push_back({r.host, r.device, r.at});
  }
  return absl::OkStatus();
}

ScenarioMap::ScenarioMap(const YAML::Node& node, std::string what, YamlProblems& problems,
                         std::string_view expected)
    : map_(node, what, problems, expected), what_(std::move(what)), problems_(problems) {}

YAML::Node ScenarioMap::Get(std::string_view key) {
  YAML::Node n = map_.Get(key);
  if (n.IsDefined() && n.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  return n;
}

bool ScenarioMap::Require(std::string_view key) {
  if (Has(key)) return true;
  if (ok()) {
    problems_.Error(node(), "missing-key",
                    absl::StrCat(what_, ": `", std::string(key), "` is required"));
  }
  return false;
}

void ScenarioMap::Problem(std::string_view key, std::string_view code, std::string message) {
  const YAML::Node at = Get(key);
  problems_.Error(at.IsDefined() ? at : node(), code, std::move(message));
}

bool ScenarioMap::String(std::string_view key, std::string& out) {
  return Has(key) && map_.String(key, out);  // null is absent here
}

bool ScenarioMap::Int(std::string_view key, int min, int max, int& out) {
  std::string text;
  if (!String(key, text) || text.empty()) return false;
  int v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < min || v > max) {
    Problem(key, "bad-value",
            absl::StrCat("`", std::string(key), "` must be a whole number from ", min, " to ", max,
                         ", not \"", text, "\""));
    return false;
  }
  out = v;
  return true;
}

bool ScenarioMap::Number(std::string_view key, double lo, double hi, bool lo_open, double& out) {
  std::string text;
  if (!String(key, text) || text.empty()) return false;
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || (lo_open ? v <= lo : v < lo) || v > hi) {
    Problem(key, "bad-value",
            absl::StrCat("`", std::string(key), "` must be a number in ", lo_open ? "(" : "[", lo,
                         ", ", hi, "], not \"", text, "\""));
    return false;
  }
  out = v;
  return true;
}

bool ScenarioMap::Bool(std::string_view key, bool& out) {
  std::string text;
  if (!String(key, text) || text.empty()) return false;
  if (text != "true" && text != "false") {
    Problem(key, "bad-value",
            absl::StrCat("`", std::string(key), "` must be true or false, not \"", text, "\""));
    return false;
  }
  out = text == "true";
  return true;
}

bool ScenarioMap::Duration(std::string_view key, absl::Duration& out) {
  std::string text;
  if (!String(key, text) || text.empty()) return false;
  absl::StatusOr<absl::Duration> d = ParseDuration(text);
  if (!d.ok()) {
    Problem(key, "bad-value",
            absl::StrCat("`", std::string(key), "`: ", d.status().message(),
                         " (a duration such as 20s, 1m30s or 500ms)"));
    return false;
  }
  out = *d;
  return true;
}

}  // namespace railwatch::sim
