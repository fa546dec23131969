#include "cli/format.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/text.h"

namespace railwatch {

std::string Ago(int64_t unix_nanos) {
  if (unix_nanos == 0) return "-";
  absl::Duration d = absl::Now() - absl::FromUnixNanos(unix_nanos);
  if (d < absl::Seconds(1)) return "now";
  return HumanDuration(absl::Trunc(d, absl::Seconds(1))) + " ago";
}

std::string ClockTime(int64_t unix_nanos) {
  return absl::FormatTime("%H:%M:%E3S", absl::FromUnixNanos(unix_nanos), absl::UTCTimeZone());
}

std::string StateName(v1::DiagnosisState state) {
  switch (state) {
    case v1::DIAGNOSIS_STATE_PENDING: return "pending";
    case v1::DIAGNOSIS_STATE_FIRING: return "firing";
    case v1::DIAGNOSIS_STATE_RESOLVED: return "resolved";
    default: return "unknown";
  }
}

std::string RoleName(v1::AgentRole role) {
  switch (role) {
    case v1::AGENT_ROLE_HOST: return "host";
    case v1::AGENT_ROLE_SWITCH: return "switch";
    case v1::AGENT_ROLE_IB_FABRIC: return "ib-fabric";
    default: return "unknown";
  }
}

std::string LabelsText(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  std::vector<std::string> parts;
  parts.reserve(labels.size());
  for (const v1::Label& l : labels) parts.push_back(absl::StrCat(l.name(), "=", l.value()));
  return absl::StrJoin(parts, " ");
}

std::string LabelValue(const google::protobuf::RepeatedPtrField<v1::Label>& labels,
                       absl::string_view name) {
  for (const v1::Label& l : labels) {
    if (l.name() == name) return l.value();
  }
  return "";
}

std::string ShortNumber(double value) {
  if (std::isfinite(value) && std::fabs(value) < 1e15 && value == std::floor(value)) {
    return absl::StrFormat("%.0f", value);
  }
  if (std::fabs(value) >= 100 && std::fabs(value) < 1e15) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.4g", value);
}

absl::StatusOr<int64_t> ParseTimeFlag(absl::string_view flag, absl::string_view text,
                                      absl::Time now) {
  absl::Time t;
  std::string rfc3339_error;
  if (absl::ParseTime(absl::RFC3339_full, text, &t, &rfc3339_error)) return absl::ToUnixNanos(t);
  absl::StatusOr<absl::Duration> ago = ParseDuration(text);
  if (ago.ok() && *ago >= absl::ZeroDuration()) return absl::ToUnixNanos(now - *ago);
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, "=", text,
                   ": want a duration before now (30s, 15m, 1h, 2d) or an RFC 3339 time "
                   "(2024-05-01T12:00:00Z)"));
}

}  // namespace railwatch
