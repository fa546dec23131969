#pragma once

// Shared pieces of the fault flags' parsers (each kind's in sim/faults/, traffic_model.cc): every
// fault flag's value is BODY@OFFSET[:EXTRA...], its BODY names a NIC, a host or a switch, and a bad
// value gets one error that names the flag, the value, what is wrong and the expected form.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace railwatch::sim {

// "bad --FLAG value \"SPEC\": WHY; expected FORM".
absl::Status SpecError(absl::string_view flag, absl::string_view spec, absl::string_view why,
                       absl::string_view form);

// A flag value split as BODY@OFFSET[:EXTRA]...; views into the value.
struct TimedSpec {
  absl::string_view body;
  absl::Duration at;
  std::vector<absl::string_view> extras;
};

// Splits `spec`, parses OFFSET (a duration, at or after 0) and allows at most `max_extras`
// ':'-separated parts after it.
absl::StatusOr<TimedSpec> SplitTimedSpec(absl::string_view flag, absl::string_view spec,
                                         absl::string_view form, size_t max_extras);

// BODY as HOST/DEVICE, both non-empty.
absl::Status ParseNicBody(absl::string_view flag, absl::string_view spec, absl::string_view form,
                          absl::string_view body, std::string& host, std::string& device);

// HOST@OFFSET[:EXTRA...] for the faults of a whole host (no /DEVICE).
absl::StatusOr<TimedSpec> ParseHostSpec(absl::string_view flag, absl::string_view spec,
                                        absl::string_view form, size_t max_extras);

// SWITCH/PORT@OFFSET[:EXTRA...] for the faults of one switch port (PORT a number from 1).
absl::Status ParseSwitchPortSpec(absl::string_view flag, absl::string_view spec,
                                 absl::string_view form, size_t max_extras,
                                 std::string& switch_name, int& port, TimedSpec& parts);

// extras[i] as a number, when present (`value` keeps its default otherwise).
absl::Status ParseExtraNumber(absl::string_view flag, absl::string_view spec,
                              absl::string_view form, const TimedSpec& parts, size_t i,
                              double& value);

// HOST/DEVICE@OFFSET, or HOST/DEVICE@OFFSET[:NUMBER] when `number` is given (it keeps its
// default when the part is absent): the common shape of the per-NIC faults.
absl::Status ParseNicSpec(absl::string_view flag, absl::string_view spec, absl::string_view form,
                          std::string& host, std::string& device, absl::Duration& at,
                          double* number);

// A per-NIC fault T {host, device, at, ...}: HOST/DEVICE@OFFSET, plus [:NUMBER] into
// `T::*number` when it is given, which must then pass `valid` (else the error says `why`).
template <typename T>
absl::StatusOr<T> ParseNicFault(absl::string_view flag, absl::string_view spec,
                                absl::string_view form, double T::*number = nullptr,
                                bool (*valid)(double) = nullptr, absl::string_view why = "") {
  T fault;
  double* value = number != nullptr ? &(fault.*number) : nullptr;
  if (absl::Status s = ParseNicSpec(flag, spec, form, fault.host, fault.device, fault.at, value);
      !s.ok()) {
    return s;
  }
  if (value != nullptr && valid != nullptr && !valid(*value))
    return SpecError(flag, spec, why, form);
  return fault;
}

}  // namespace railwatch::sim
