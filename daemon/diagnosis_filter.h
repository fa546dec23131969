#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// Which diagnoses a ListDiagnoses or WatchDiagnoses call wants (v1::DiagnosisFilter): every
// field that is set must match; an empty list matches everything.
//   states, severities, playbooks: one of the values;
//   host:   the culprit label host or peer_host;
//   switch: the culprit label switch, leaf, peer_switch or peer_leaf;
//   since:  still pending or firing, or resolved at or after it.
class DiagnosisFilter {
 public:
  // Checks the request's filter: enum values the proto does not define (or UNSPECIFIED), a
  // negative time, and, when `known_playbooks` is not empty, playbook names not in it. The
  // error says which field and why, for INVALID_ARGUMENT.
  static absl::Status Validate(const v1::DiagnosisFilter& filter,
                               const std::vector<std::string>& known_playbooks = {});

  // `filter` must have passed Validate.
  explicit DiagnosisFilter(v1::DiagnosisFilter filter) : filter_(std::move(filter)) {}

  bool Matches(const v1::Diagnosis& d) const;

 private:
  v1::DiagnosisFilter filter_;
};

}  // namespace railwatch
