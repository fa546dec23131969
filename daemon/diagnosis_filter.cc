#include "daemon/diagnosis_filter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace railwatch {
namespace {

bool CulpritHas(const v1::Diagnosis& d, std::initializer_list<std::string_view> names,
                const std::string& value) {
  for (const v1::Label& l : d.culprit()) {
    if (l.value() != value) continue;
    for (std::string_view n : names) {
      if (l.name() == n) return true;
    }
  }
  return false;
}

template <typename Values, typename Value>
bool OneOf(const Values& values, const Value& v) {
  return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

absl::Status DiagnosisFilter::Validate(const v1::DiagnosisFilter& filter,
                                       const std::vector<std::string>& known_playbooks) {
  for (int s : filter.states()) {
    if (!v1::DiagnosisState_IsValid(s) || s == v1::DIAGNOSIS_STATE_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter.states: ", s, " is not a diagnosis state (PENDING=1, FIRING=2, RESOLVED=3)"));
    }
  }
  for (int s : filter.severities()) {
    if (!v1::Severity_IsValid(s) || s == v1::SEVERITY_UNSPECIFIED) {
      return absl::InvalidArgumentError(absl::StrCat(
          "filter.severities: ", s, " is not a severity (INFO=1, WARNING=2, CRITICAL=3)"));
    }
  }
  if (filter.since_unix_nano() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("filter.since_unix_nano: ",
                                                   filter.since_unix_nano(),
                                                   " is negative (0 means no limit)"));
  }
  if (!known_playbooks.empty()) {
    for (const std::string& p : filter.playbooks()) {
      if (std::find(known_playbooks.begin(), known_playbooks.end(), p) == known_playbooks.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter.playbooks: no playbook \"", p,
                         "\" is loaded (loaded: ", absl::StrJoin(known_playbooks, ", "), ")"));
      }
    }
  }
  return absl::OkStatus();
}

bool DiagnosisFilter::Matches(const v1::Diagnosis& d) const {
  if (!OneOf(filter_.states(), static_cast<int>(d.state()))) return false;
  if (!OneOf(filter_.severities(), static_cast<int>(d.severity()))) return false;
  if (!OneOf(filter_.playbooks(), d.playbook())) return false;
  if (!filter_.host().empty() && !CulpritHas(d, {"host", "peer_host"}, filter_.host())) {
    return false;
  }
  if (!filter_.switch_().empty() &&
      !CulpritHas(d, {"switch", "leaf", "peer_switch", "peer_leaf"}, filter_.switch_())) {
    return false;
  }
  if (!filter_.job().empty() && !CulpritHas(d, {"job"}, filter_.job()) &&
      std::none_of(d.blast_radius().jobs().begin(), d.blast_radius().jobs().end(),
                   [&](const v1::JobImpact& j) { return j.job() == filter_.job(); })) {
    return false;
  }
  if (filter_.since_unix_nano() > 0 && d.state() == v1::DIAGNOSIS_STATE_RESOLVED &&
      d.resolved_at_unix_nano() < filter_.since_unix_nano()) {
    return false;
  }
  return true;
}

}  // namespace railwatch
