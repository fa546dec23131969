#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_field.h"
#include "railwatch/v1/query.pb.h"

// The words and numbers the CLI's tables share. Times are UTC, like FormatTime's.
namespace railwatch {

// "3m12s ago", "now", or "-" for 0.
std::string Ago(int64_t unix_nanos);

// "12:03:04.250" (UTC).
std::string ClockTime(int64_t unix_nanos);

std::string StateName(v1::DiagnosisState state);
std::string RoleName(v1::AgentRole role);

// name=value pairs joined by spaces: "device=mlx5_3 host=gpu-node-004".
std::string LabelsText(const google::protobuf::RepeatedPtrField<v1::Label>& labels);
// The value of one label, or "".
std::string LabelValue(const google::protobuf::RepeatedPtrField<v1::Label>& labels,
                       absl::string_view name);

// A readable number: integers as integers, others with up to 4 significant digits (1.235e+06
// for large ones), as a rate table wants them.
std::string ShortNumber(double value);

// A time flag: RFC 3339 ("2024-05-01T12:00:00Z") or a duration meaning that long before `now`
// ("1h", "90s"). The error says which forms are accepted.
absl::StatusOr<int64_t> ParseTimeFlag(absl::string_view flag, absl::string_view text,
                                      absl::Time now);

}  // namespace railwatch
