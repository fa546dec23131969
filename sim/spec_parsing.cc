#include "sim/spec_parsing.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace railwatch::sim {

absl::Status SpecError(absl::string_view flag, absl::string_view spec, absl::string_view why,
                       absl::string_view form) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad --", flag, " value \"", spec, "\": ", why, "; expected ", form));
}

absl::StatusOr<TimedSpec> ParseHostSpec(absl::string_view flag, absl::string_view spec,
                                        absl::string_view form, size_t max_extras) {
  absl::StatusOr<TimedSpec> parts = SplitTimedSpec(flag, spec, form, max_extras);
  if (parts.ok() && parts->body.find('/') != absl::string_view::npos) {
    return SpecError(flag, spec, "the fault is a whole host's: HOST without /DEVICE", form);
  }
  return parts;
}

absl::StatusOr<TimedSpec> SplitTimedSpec(absl::string_view flag, absl::string_view spec,
                                         absl::string_view form, size_t max_extras) {
  std::vector<absl::string_view> halves = absl::StrSplit(spec, '@');
  if (halves.size() != 2) {
    return SpecError(flag, spec, halves.size() < 2 ? "no '@OFFSET'" : "more than one '@'", form);
  }
  if (halves[0].empty()) return SpecError(flag, spec, "nothing before '@'", form);
  TimedSpec parts;
  parts.body = halves[0];
  std::vector<absl::string_view> tail = absl::StrSplit(halves[1], ':');
  if (tail.size() - 1 > max_extras) {
    return SpecError(flag, spec,
                     max_extras == 0 ? "nothing may follow OFFSET"
                                     : absl::StrCat("more than ", max_extras, " ':' after '@'"),
                     form);
  }
  absl::StatusOr<absl::Duration> offset = ParseDuration(tail[0]);
  if (!offset.ok()) {
    return SpecError(flag, spec,
                     absl::StrCat("OFFSET \"", tail[0], "\": ", offset.status().message()), form);
  }
  if (*offset < absl::ZeroDuration()) return SpecError(flag, spec, "OFFSET is negative", form);
  parts.at = *offset;
  parts.extras.assign(tail.begin() + 1, tail.end());
  return parts;
}

absl::Status ParseNicBody(absl::string_view flag, absl::string_view spec, absl::string_view form,
                          absl::string_view body, std::string& host, std::string& device) {
  std::vector<absl::string_view> nic = absl::StrSplit(body, '/');
  if (nic.size() != 2 || nic[0].empty() || nic[1].empty()) {
    return SpecError(flag, spec, absl::StrCat("\"", body, "\" is not HOST/DEVICE"), form);
  }
  host = std::string(nic[0]);
  device = std::string(nic[1]);
  return absl::OkStatus();
}

absl::Status ParseExtraNumber(absl::string_view flag, absl::string_view spec,
                              absl::string_view form, const TimedSpec& parts, size_t i,
                              double& value) {
  if (i >= parts.extras.size()) return absl::OkStatus();
  if (!absl::SimpleAtod(parts.extras[i], &value)) {
    return SpecError(flag, spec, absl::StrCat("\"", parts.extras[i], "\" is not a number"), form);
  }
  return absl::OkStatus();
}

absl::Status ParseNicSpec(absl::string_view flag, absl::string_view spec, absl::string_view form,
                          std::string& host, std::string& device, absl::Duration& at,
                          double* number) {
  absl::StatusOr<TimedSpec> parts = SplitTimedSpec(flag, spec, form, number != nullptr ? 1 : 0);
  if (!parts.ok()) return parts.status();
  if (absl::Status s = ParseNicBody(flag, spec, form, parts->body, host, device); !s.ok()) return s;
  at = parts->at;
  if (number != nullptr) return ParseExtraNumber(flag, spec, form, *parts, 0, *number);
  return absl::OkStatus();
}

absl::Status ParseSwitchPortSpec(absl::string_view flag, absl::string_view spec,
                                 absl::string_view form, size_t max_extras,
                                 std::string& switch_name, int& port, TimedSpec& parts) {
  absl::StatusOr<TimedSpec> split = SplitTimedSpec(flag, spec, form, max_extras);
  if (!split.ok()) return split.status();
  const size_t slash = split->body.find('/');
  if (slash == absl::string_view::npos || slash == 0 ||
      !absl::SimpleAtoi(split->body.substr(slash + 1), &port) || port < 1) {
    return SpecError(flag, spec, "SWITCH/PORT needs a switch name and a port number from 1",
                     form);
  }
  switch_name = std::string(split->body.substr(0, slash));
  parts = *split;
  return absl::OkStatus();
}

}  // namespace railwatch::sim
