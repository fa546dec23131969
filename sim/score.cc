// Ground truth + diagnoses + scenario -> per-fault results and false diagnoses.
#include "sim/score.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace railwatch::sim {
namespace {

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) return absl::StrCat(v.get<double>());
  return v.dump();
}

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string CulpritValue(const v1::Diagnosis& d, absl::string_view name) {
  for (const v1::Label& l : d.culprit()) {
    if (l.name() == name) return l.value();
  }
  return "";
}

// Whether the culprit names `wanted`: each label with its value, or, for host+device and
// switch+interface, a `link` label ("gpu-node-002/mlx5_1 <-> leaf-r1/Ethernet2") with that end:
// a link flap seen first from the switch's end names the cable, not the host's labels.
bool Carries(const v1::Diagnosis& d, const Labels& wanted) {
  std::map<std::string, std::string> want(wanted.begin(), wanted.end());
  const std::vector<std::string> ends = absl::StrSplit(CulpritValue(d, "link"), " <-> ");
  for (const auto& [first, second] :
       {std::pair<std::string, std::string>{"host", "device"}, {"switch", "interface"}}) {
    if (want.count(first) == 0 || want.count(second) == 0) continue;
    const std::string end = absl::StrCat(want[first], "/", want[second]);
    if (std::find(ends.begin(), ends.end(), end) != ends.end()) {
      want.erase(first);
      want.erase(second);
    }
  }
  for (const auto& [name, value] : want) {
    if (CulpritValue(d, name) != value) return false;
  }
  return !wanted.empty();
}

std::string LabelsLine(const v1::Diagnosis& d) {
  std::string out;
  for (const v1::Label& l : d.culprit()) {
    absl::StrAppend(&out, out.empty() ? "" : " ", l.name(), "=", l.value());
  }
  return out;
}

// Whether a ground-truth fault line is (part of) this scenario fault: same kind and the same
// host/device/switch (and port, and repeated or not, for flaps).
bool SameFault(const ScenarioFault& f, const TruthRecord& r) {
  if (r.noise || r.Has("caused_by") || r.kind != f.info->truth_kind) return false;
  if (!f.host.empty() && r.Field("host") != f.host) return false;
  if (!f.device.empty() && r.Field("device") != f.device) return false;
  if (!f.switch_name.empty() && r.Field("switch") != f.switch_name) return false;
  if (f.info->truth_kind == "link_flap") {
    if (r.Has("port") && r.Field("port") != std::to_string(f.port)) return false;
    if (r.Has("repeat") != (f.kind == "link_flap_repeated")) return false;
  }
  return true;
}

struct Assigned {
  const ScenarioFault* fault;
  std::vector<const TruthRecord*> lines;
};

// Each scenario fault takes its ground-truth lines, in time order (a repeated flap takes
// `count` of them).
std::vector<Assigned> AssignTruth(const Scenario& s, const std::vector<TruthRecord>& truth) {
  std::vector<const ScenarioFault*> order;
  for (const ScenarioFault& f : s.faults) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const ScenarioFault* a, const ScenarioFault* b) { return a->at < b->at; });
  std::vector<bool> used(truth.size());
  std::vector<Assigned> out;
  for (const ScenarioFault* f : order) {
    Assigned a{f, {}};
    const size_t want = f->kind == "link_flap_repeated" ? static_cast<size_t>(f->count) : 1;
    for (size_t i = 0; i < truth.size() && a.lines.size() < want; ++i) {
      if (!used[i] && SameFault(*f, truth[i])) {
        used[i] = true;
        a.lines.push_back(&truth[i]);
      }
    }
    out.push_back(std::move(a));
  }
  // Back to the scenario's order.
  std::stable_sort(out.begin(), out.end(), [&s](const Assigned& x, const Assigned& y) {
    return x.fault - s.faults.data() < y.fault - s.faults.data();
  });
  return out;
}

FaultScore ScoreFault(const Assigned& a, const std::vector<const v1::Diagnosis*>& paged) {
  const ScenarioFault& f = *a.fault;
  FaultScore score;
  score.kind = f.kind;
  score.at = HumanDuration(f.at);
  score.playbook = std::string(f.info->playbook);
  if (f.info->target_delay) score.target_ms = absl::ToInt64Milliseconds(*f.info->target_delay);
  score.injected = !a.lines.empty();
  if (!score.injected) {
    if (!f.host.empty()) score.culprit.emplace_back("host", f.host);
    if (!f.device.empty()) score.culprit.emplace_back("device", f.device);
    if (!f.switch_name.empty()) score.culprit.emplace_back("switch", f.switch_name);
    return score;
  }
  const TruthRecord& first = *a.lines.front();
  score.injected_at_unix_nano = first.at_unix_nano;
  for (absl::string_view label : f.info->culprit) {
    score.culprit.emplace_back(std::string(label), first.Field(std::string(label)));
  }
  const v1::Diagnosis* best = nullptr;
  bool best_right = false;
  for (const v1::Diagnosis* d : paged) {
    if (d->playbook() != f.info->playbook || d->fired_at_unix_nano() < first.at_unix_nano) continue;
    const bool right = Carries(*d, score.culprit);
    if (best == nullptr || (right && !best_right) ||
        (right == best_right && d->fired_at_unix_nano() < best->fired_at_unix_nano())) {
      best = d;
      best_right = right;
    }
  }
  if (best == nullptr) return score;
  score.detected = true;
  score.right_culprit = best_right;
  score.delay_ms = (best->fired_at_unix_nano() - first.at_unix_nano) / 1000000;
  score.diagnosis_id = best->id();
  score.diagnosis_culprit = LabelsLine(*best);
  return score;
}

}  // namespace

absl::StatusOr<std::vector<TruthRecord>> ParseGroundTruth(absl::string_view text,
                                                          const std::string& file) {
  std::vector<TruthRecord> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line_no, ": not a JSON object: ", line.substr(0, 120)));
    }
    TruthRecord r;
    r.line = line_no;
    r.noise = j.contains("noise");
    const char* kind_key = r.noise ? "noise" : "fault";
    const char* time_key = r.noise ? "at_unix_nano" : "injected_at_unix_nano";
    if (!j.contains(kind_key) || !j[kind_key].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line_no, ": no \"fault\" or \"noise\" kind"));
    }
    r.kind = j[kind_key].get<std::string>();
    if (!j.contains(time_key) || !j[time_key].is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line_no, ": no \"", time_key, "\" (an integer)"));
    }
    r.at_unix_nano = j[time_key].get<int64_t>();
    for (const auto& [key, value] : j.items()) {
      if (!value.is_structured()) r.fields[key] = ScalarText(value);
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<v1::ListDiagnosesResponse> ParseDiagnosesJson(absl::string_view text,
                                                             const std::string& file) {
  v1::ListDiagnosesResponse response;
  if (absl::StripAsciiWhitespace(text).empty()) return response;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(text), &response, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not the JSON of `railwatch diagnoses --json`: ", status.ToString()));
  }
  return response;
}

ScenarioScore ScoreScenario(const ScoreInput& in) {
  const Scenario& s = *in.scenario;
  ScenarioScore out;
  out.name = s.name;
  out.system = in.system;
  out.hosts = s.topology.hosts;
  const absl::Duration duration = in.duration > absl::ZeroDuration() ? in.duration : s.duration;
  out.duration_s = absl::ToDoubleSeconds(duration);
  out.sim_start_unix_nano = in.sim_start_unix_nano;

  // What paged: fired, and not folded into another diagnosis as its evidence.
  std::vector<const v1::Diagnosis*> paged;
  for (const v1::Diagnosis& d : in.diagnoses.diagnoses()) {
    if (d.fired_at_unix_nano() > 0 && d.explained_by().empty()) paged.push_back(&d);
  }
  std::sort(paged.begin(), paged.end(), [](const v1::Diagnosis* a, const v1::Diagnosis* b) {
    return a->fired_at_unix_nano() < b->fired_at_unix_nano();
  });

  int64_t first_fault = std::numeric_limits<int64_t>::max();
  for (const TruthRecord& r : in.truth) {
    if (!r.noise && !r.Has("caused_by")) first_fault = std::min(first_fault, r.at_unix_nano);
  }
  for (const Assigned& a : AssignTruth(s, in.truth)) {
    out.faults.push_back(ScoreFault(a, paged));
    const FaultScore& f = out.faults.back();
    if (out.sim_start_unix_nano == 0 && f.injected) {
      out.sim_start_unix_nano = f.injected_at_unix_nano - absl::ToInt64Nanoseconds(a.fault->at);
    }
  }

  for (const v1::Diagnosis* d : paged) {
    if (std::find(s.expect.tolerated.begin(), s.expect.tolerated.end(), d->playbook()) !=
        s.expect.tolerated.end()) {
      continue;
    }
    const int64_t fired = d->fired_at_unix_nano();
    std::string why;
    if (fired < first_fault) {
      why = first_fault == std::numeric_limits<int64_t>::max() ? "no fault was injected"
                                                               : "before the first fault";
    } else {
      bool explained = false;
      for (const FaultScore& f : out.faults) {
        explained = explained || (f.injected && d->playbook() == f.playbook &&
                                  fired >= f.injected_at_unix_nano && Carries(*d, f.culprit));
      }
      for (const TruthRecord& r : in.truth) {
        if (explained || !r.Has("caused_by") || r.noise) continue;
        const FaultKind* k = FindFaultKindByTruth(r.kind);
        // On the rank's host, or on the fault's (a playbook that names the fabric cause).
        const std::string host = CulpritValue(*d, "host");
        explained = k != nullptr && d->playbook() == k->playbook && fired >= r.at_unix_nano &&
                    !host.empty() && (host == r.Field("host") || host == r.Field("cause_host"));
      }
      if (explained) continue;
      why = "matches no fault";
    }
    FalseDiagnosis fd{d->id(), d->playbook(), d->summary(), {}, fired, why};
    for (const v1::Label& l : d->culprit()) fd.culprit.emplace_back(l.name(), l.value());
    out.false_diagnoses.push_back(std::move(fd));
  }
  const double host_hours = out.hosts * out.duration_s / 3600;
  out.false_per_host_hour = host_hours > 0 ? out.false_diagnoses.size() / host_hours : 0;

  for (size_t i = 0; i < out.faults.size(); ++i) {
    const FaultScore& f = out.faults[i];
    const std::string what = absl::StrCat(f.kind, " ", s.faults[i].Where(), " at ", f.at);
    if (!f.injected) {
      out.problems.push_back(absl::StrCat(what, ": not in the ground truth (never injected)"));
    } else if (s.expect.all_detected && !f.detected) {
      out.problems.push_back(absl::StrCat(what, ": not detected (no ", f.playbook, " fired)"));
    } else if (s.expect.all_detected && !f.right_culprit) {
      out.problems.push_back(absl::StrCat(what, ": ", f.playbook, " named the wrong culprit (",
                                          f.diagnosis_culprit, ")"));
    }
    if (s.expect.within_target && f.within_target() == false) {
      out.problems.push_back(
          absl::StrCat(what, ": detected in ", f.delay_ms, " ms, target ", *f.target_ms, " ms"));
    }
  }
  if (static_cast<int>(out.false_diagnoses.size()) > s.expect.max_false) {
    out.problems.push_back(absl::StrCat(out.false_diagnoses.size(), " false diagnoses (at most ",
                                        s.expect.max_false, ")"));
  }
  out.passed = out.problems.empty();
  return out;
}

}  // namespace railwatch::sim
